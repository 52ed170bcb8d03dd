/* table.c - the census as text: the summary and one table per kind (fallbacks, host-resident
 * ops, transfers), fitted to the terminal or raw for scripts. */
#include "table.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fields.h"
#include "fold.h"
#include "names.h"
#include "pool.h"
#include "text.h"
#include "units.h"

const fbx_choice fbt_bys[] = {{"op", FBM_BY_OP},           {"site", FBM_BY_SITE},
                              {"stack", FBM_BY_STACK},     {"shape", FBM_BY_SHAPE},
                              {"rank", FBM_BY_RANK},       {"host", FBM_BY_HOST},
                              {"process", FBM_BY_PROCESS}, {"backend", FBM_BY_BACKEND}};
const size_t fbt_nbys = FBX_NCHOICES(fbt_bys);
const fbx_choice fbt_sorts[] = {
    {"bytes", FBM_SORT_BYTES}, {"count", FBM_SORT_COUNT}, {"time", FBM_SORT_TIME}};
const size_t fbt_nsorts = FBX_NCHOICES(fbt_sorts);
const fbx_choice fbt_weights[] = {
    {"count", FBM_SORT_COUNT}, {"bytes", FBM_SORT_BYTES}, {"time", FBM_SORT_TIME}};
const size_t fbt_nweights = FBX_NCHOICES(fbt_weights);
const fbx_choice fbt_frame_modes[] = {{"func", FBM_FRAMES_FUNC}, {"line", FBM_FRAMES_LINE}};
const size_t fbt_nframe_modes = FBX_NCHOICES(fbt_frame_modes);

const char *fbt_by_name(fbm_by by)
{
    const char *n = fbx_choice_name(fbt_bys, fbt_nbys, (int)by);
    return n ? n : "?";
}

size_t fbt_term_width(FILE *out)
{
    if (!isatty(fileno(out)))
        return 0;
    const char *env = getenv("COLUMNS");
    long cols = env ? strtol(env, NULL, 10) : 0;
    struct winsize ws;
    if (cols <= 0 && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0)
        cols = ws.ws_col;
    return cols > 0 ? (size_t)cols : 80;
}

/* --- the generic printer --------------------------------------------------------------- */

#define ESC_CELL (FBT_CELL * 4 + 1)

/* Fits the column widths w into width: fixed columns keep theirs; the flexible ones share
 * what is left, the first (the names) taking most of it. */
static void fit(size_t *w, const fbt_col *cols, int ncols, size_t width)
{
    size_t fixed = 2 + 2 * (size_t)(ncols - 1), flexw = 0;
    int flex[2], nf = 0;
    for (int k = 0; k < ncols; k++) {
        if (cols[k].flex && nf < 2) {
            flex[nf++] = k;
            flexw += w[k];
        } else {
            fixed += w[k];
        }
    }
    size_t avail = width > fixed + 16 ? width - fixed : 16;
    if (!nf || flexw <= avail)
        return;
    size_t a = w[flex[0]], b = nf > 1 ? w[flex[1]] : 0;
    size_t fa = a < avail * 3 / 5 ? a
                : a + b <= avail  ? a
                                  : avail - (b < avail * 2 / 5 ? b : avail * 2 / 5);
    if (fa > avail)
        fa = avail;
    w[flex[0]] = fa < 8 ? 8 : fa;
    if (nf > 1)
        w[flex[1]] = avail > w[flex[0]] ? avail - w[flex[0]] : 0;
}

void fbt_print(FILE *out, const fbt_opts *o, const fbt_col *cols, int ncols, size_t nrows,
               fbt_cells_fn fn, void *ctx)
{
    char *mem = malloc((size_t)ncols * FBT_CELL + ESC_CELL);
    if (!mem || ncols > 8) {
        free(mem);
        return;
    }
    char *cells[8], *esc = mem + (size_t)ncols * FBT_CELL;
    for (int k = 0; k < ncols; k++)
        cells[k] = mem + (size_t)k * FBT_CELL;
    if (o->raw) {
        for (size_t i = o->noheadings ? 1 : 0; i <= nrows; i++) {
            if (i)
                fn(ctx, i - 1, cells);
            for (int k = 0; k < ncols; k++) {
                fputs(k ? " " : "", out);
                fputs(fbx_escape(i ? cells[k] : cols[k].title, esc, ESC_CELL, 1), out);
            }
            fputc('\n', out);
        }
        free(mem);
        return;
    }
    size_t w[8] = {0};
    for (int k = 0; k < ncols; k++)
        w[k] = o->noheadings ? 0 : fbx_text_width(cols[k].title);
    for (size_t i = 0; i < nrows; i++) {
        fn(ctx, i, cells);
        for (int k = 0; k < ncols; k++) {
            size_t cw = fbx_text_width(fbx_escape(cells[k], esc, ESC_CELL, 0));
            if (cw > w[k])
                w[k] = cw;
        }
    }
    if (o->width)
        fit(w, cols, ncols, o->width);
    for (size_t i = o->noheadings ? 1 : 0; i <= nrows; i++) {
        if (i)
            fn(ctx, i - 1, cells);
        fputs("  ", out);
        for (int k = 0; k < ncols; k++) {
            const char *s = fbx_escape(i ? cells[k] : cols[k].title, esc, ESC_CELL, 0);
            size_t cw = fbx_text_width(s), len = strlen(s);
            bool cut = o->width && cw > w[k];
            if (cut) {
                len = w[k] > 3 ? fbx_prefix_cols(s, w[k] - 3) : 0;
                cw = w[k];
            }
            size_t pad = w[k] > cw ? w[k] - cw : 0;
            bool last = k + 1 == ncols;
            if (k)
                fputs("  ", out);
            if (cols[k].right)
                fprintf(out, "%*s", (int)pad, "");
            fwrite(s, 1, len, out);
            if (cut)
                fputs(w[k] >= 3 ? "..." : "", out);
            if (!cols[k].right && !last)
                fprintf(out, "%*s", (int)pad, "");
        }
        fputc('\n', out);
    }
    free(mem);
}

/* --- the census tables ----------------------------------------------------------------- */

typedef struct {
    const fbm_row *rows;
    const fbt_opts *o;
    bool time, backend; /* a TIME column; a BACKEND column */
} table_ctx;

static const char *num(bool raw, uint64_t v, bool bytes, char *buf, size_t len)
{
    if (raw || !bytes)
        snprintf(buf, len, "%" PRIu64, v);
    else
        fbr_bytes(v, buf, len);
    return buf;
}

const char *fbt_bytes(uint64_t bytes, uint64_t unknown, uint64_t count, bool raw, char *buf,
                      size_t len)
{
    char b[32];
    if (unknown && unknown >= count)
        snprintf(buf, len, "?");
    else if (unknown)
        snprintf(buf, len, "%s+?", num(raw, bytes, true, b, sizeof b));
    else
        num(raw, bytes, true, buf, len);
    return buf;
}

/* snprintf(buf + o, len - o, "%s", s) without printf, returning o plus s's length as
 * snprintf's count would be: a million-row table spent 6% of its time formatting with it. */
static size_t put_n(char *buf, size_t len, size_t o, const char *s, size_t n)
{
    if (o + 1 < len) {
        size_t k = n < len - o - 1 ? n : len - o - 1;
        memcpy(buf + o, s, k);
        buf[o + k] = '\0';
    }
    return o + n;
}

static size_t put(char *buf, size_t len, size_t o, const char *s)
{
    return put_n(buf, len, o, s, strlen(s));
}

/* A stack's frames as a user reads them: their own frames first, innermost first, at most
 * depth of them (0: all), then how many of the backend's, the interpreter's and the
 * system's were folded. */
static size_t stack_detail(const fbm_row *r, size_t depth, char *buf, size_t len)
{
    size_t o = 0, shown = 0, user = 0, folded[4] = {0};
    for (size_t i = r->nframes; i-- > 0;) {
        if (r->roles[i] != FBM_ROLE_USER) {
            folded[r->roles[i] & 3]++;
            continue;
        }
        if (++user > depth && depth)
            continue;
        /* labels are the census pool's strings, which know their length */
        o = put_n(buf, len, put(buf, len, o, shown++ ? " < " : ""), r->labels[i],
                  fbp_strlen(r->labels[i]));
    }
    if (!user)
        o = put(buf, len, o, "(no frame of the program's own)");
    if (user > shown)
        o += (size_t)snprintf(buf + (o < len ? o : len), o < len ? len - o : 0, " < ... %zu more",
                              user - shown);
    const char *sep = "  [folded: ";
    for (int k = FBM_ROLE_BACKEND; k <= FBM_ROLE_SYSTEM; k++)
        if (folded[k] && o < len) {
            o += (size_t)snprintf(buf + o, len - o, "%s%zu %s", sep, folded[k],
                                  fbm_role_name((fbm_role)k));
            sep = ", ";
        }
    return *sep == ',' ? put(buf, len, o, "]") : o;
}

static void detail(const fbm_row *r, const fbt_opts *opt, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    if (opt->by == FBM_BY_STACK) {
        stack_detail(r, opt->depth, buf, len);
    } else {
        for (size_t i = 0; i < r->nparts && i < 4 && o < len; i++)
            o += (size_t)snprintf(buf + o, len - o, "%s%s %" PRIu64, i ? ", " : "",
                                  r->parts[i].name, r->parts[i].count);
        if (r->nparts > 4 && o < len)
            snprintf(buf + o, len - o, ", +%zu more", r->nparts - 4);
    }
    if (strlen(buf) + 1 >= len)
        fbx_utf8_truncate(buf, strlen(buf) - 1);
}

static void row_cells(void *p, size_t i, char **cells)
{
    const table_ctx *t = p;
    const fbm_row *r = &t->rows[i];
    bool raw = t->o->raw;
    int k = 0;
    put(cells[k], FBT_CELL, 0, r->key);
    fbx_utf8_truncate(cells[k++], FBT_CELL - 1);
    if (t->backend)
        snprintf(cells[k++], FBT_CELL, "%s", r->backend ? r->backend : "-");
    num(raw, r->count, false, cells[k++], FBT_CELL);
    if (r->has_bytes)
        fbt_bytes(r->bytes, r->unknown, r->count, raw, cells[k++], FBT_CELL);
    else
        snprintf(cells[k++], FBT_CELL, "-");
    if (r->max_bytes)
        num(raw, r->max_bytes, true, cells[k++], FBT_CELL);
    else
        snprintf(cells[k++], FBT_CELL, r->unknown && r->has_bytes ? "?" : "-");
    if (t->time) {
        if (r->split_timed && !r->ns)
            snprintf(cells[k++], FBT_CELL, "in split");
        else if (!r->has_time)
            snprintf(cells[k++], FBT_CELL, "-");
        else if (raw)
            snprintf(cells[k++], FBT_CELL, "%" PRIu64, r->ns);
        else
            fbr_duration(r->ns, cells[k++], FBT_CELL);
    }
    detail(r, t->o, cells[k], FBT_CELL);
}

static const struct {
    const char *title; /* NULL: the kind's table is left out when it has no row */
    const char *raw;
} kinds[FBD_NKINDS] = {
    [FBD_FALLBACK] = {"Fallbacks (ops that left the GPU)", "fallback"},
    [FBD_HOST] = {"Host-resident ops (downstream work on tensors a fallback left on the host)",
                  "host_op"},
    [FBD_TRANSFER] = {"Transfers between devices", "transfer"},
    [FBD_SPLIT] = {"Host splits (graph splits computed on the host, each timed whole and named "
                   "by its nodes; placement: a GPU could run every node)",
                   "split"},
};

/* The columns of a table: name, BACKEND where rows of several backends meet, numbers, the
 * parts or frames. Returns how many. */
static int columns(fbm_census *c, const fbt_opts *o, fbt_col *cols, table_ctx *t)
{
    static const char *keys[FBM_NBY] = {"OP",   "SITE", "OP @ SITE", "OP SHAPE",
                                        "RANK", "HOST", "PROCESS",   "BACKEND"};
    size_t nb;
    fbm_census_backends(c, &nb);
    t->backend = nb > 1 && (o->by == FBM_BY_OP || o->by == FBM_BY_STACK || o->by == FBM_BY_SHAPE);
    t->time = fbm_census_has_time(c);
    int k = 0;
    cols[k++] = (fbt_col){keys[o->by], false, true};
    if (t->backend)
        cols[k++] = (fbt_col){"BACKEND", false, false};
    cols[k++] = (fbt_col){"COUNT", true, false};
    cols[k++] = (fbt_col){"BYTES", true, false};
    cols[k++] = (fbt_col){"LARGEST", true, false};
    if (t->time)
        cols[k++] = (fbt_col){o->raw ? "NS" : "TIME", true, false};
    cols[k++] = (fbt_col){o->by == FBM_BY_OP ? "SITES"
                          : o->by == FBM_BY_STACK
                              ? (o->raw ? "FRAMES" : "FRAMES (the program's own, innermost first)")
                          : o->by == FBM_BY_SHAPE ? ""
                                                  : "OPS",
                          false, true};
    return k;
}

/* Raw rows say which table they belong to, so one stream holds all; the heading comes once,
 * before the fallbacks. */
static void print_raw(FILE *out, fbd_kind kind, const fbt_opts *o, const fbt_col *cols, int k,
                      const table_ctx *t, size_t shown)
{
    fbt_opts ro = *o;
    ro.noheadings = true;
    if (!o->noheadings && kind == FBD_FALLBACK) {
        fputs("KIND", out);
        for (int j = 0; j < k; j++) {
            char e[256];
            fprintf(out, " %s", fbx_escape(cols[j].title, e, sizeof e, 1));
        }
        fputc('\n', out);
    }
    for (size_t i = 0; i < shown; i++) {
        fprintf(out, "%s ", kinds[kind].raw);
        table_ctx one = *t;
        one.rows = t->rows + i;
        one.o = &ro;
        fbt_print(out, &ro, cols, k, 1, row_cells, &one);
    }
}

static void print_table(FILE *out, fbm_census *c, fbd_kind kind, const fbt_opts *o)
{
    size_t n;
    const fbm_row *rows = fbm_census_rows(c, kind, o->by, o->sort, &n);
    fbm_summary s = fbm_census_summary(c);
    if ((kind == FBD_TRANSFER && !s.total.transfers) || (kind == FBD_SPLIT && !s.total.splits))
        return; /* a census without transfers or splits: no section (most backends make none) */
    if (kind == FBD_HOST && !s.total.host_ops && !s.total.fallbacks)
        return; /* nothing fell back: there is no downstream work to speak of */
    if (!o->raw)
        fprintf(out, "\n%s, by %s:\n", kinds[kind].title, fbt_by_name(o->by));
    if (n == 0) {
        if (!o->raw)
            fputs("  none\n", out);
        return;
    }
    size_t shown = o->top && o->top < n ? o->top : n;
    fbt_col cols[8];
    table_ctx t = {rows, o, false, false};
    int k = columns(c, o, cols, &t);
    if (o->raw) {
        print_raw(out, kind, o, cols, k, &t, shown);
        return;
    }
    fbt_print(out, o, cols, k, shown, row_cells, &t);
    if (shown < n)
        fprintf(out, "  ... %zu more (--top)\n", n - shown);
}

static void plural(FILE *out, size_t n, const char *one, const char *many)
{
    fprintf(out, "%zu %s", n, n == 1 ? one : many);
}

/* How the processes ended, where it was not a plain exit: a census written on a signal, on
 * a crash or by a checkpoint is complete only up to that moment. One line per way. */
static void endings(FILE *out, fbm_census *c, const fbm_summary *s)
{
    const char *names[64];
    size_t counts[64], nn = 0;
    for (size_t i = 0; i < fbm_census_ndumps(c); i++) {
        const fbd_dump *d = fbm_census_dump(c, i);
        bool sig = !strcmp(fbd_reason(d), "signal"), crash = !strcmp(fbd_reason(d), "crash");
        if (!sig && !crash)
            continue;
        char key[64];
        snprintf(key, sizeof key, "%s%s", crash ? "crashed with " : "ended by ",
                 *fbd_signal_name(d) ? fbd_signal_name(d) : "a signal");
        size_t j = 0;
        while (j < nn && strcmp(names[j], key))
            j++;
        if (j == nn && nn < 64) {
            names[nn] = strdup(key);
            counts[nn++] = 0;
        }
        if (j < nn && names[j])
            counts[j]++;
    }
    for (size_t j = 0; j < nn; j++) {
        if (!names[j])
            continue;
        plural(out, counts[j], "process ", "processes ");
        fbx_put_escaped(out, names[j]);
        fputc('\n', out);
        free((void *)names[j]);
    }
    if (s->checkpoints) {
        plural(out, s->checkpoints, "process", "processes");
        fputs(" left only a checkpoint (killed without a final dump: SIGKILL or the OOM killer);"
              " counted up to its last interval\n",
              out);
    }
    if (s->snapshots) {
        plural(out, s->snapshots, "process", "processes");
        fputs(" counted from a snapshot (still running, or ended without a final dump)\n", out);
    }
}

/* Where calls of a kind had bytes no backend could read: say how many, once. */
static void unknown_note(FILE *out, uint64_t unknown, uint64_t count)
{
    if (unknown)
        fprintf(out,
                " (bytes of %" PRIu64 " of %" PRIu64 " unknown: the backend cannot read "
                "sizes)",
                unknown, count);
}

/* How many rows of a kind have no time of their own (their splits', ggml's), and of how
 * many. */
static size_t split_timed(fbm_census *c, fbd_kind kind, size_t *of)
{
    size_t n, timed = 0;
    const fbm_row *rows = fbm_census_rows(c, kind, FBM_BY_OP, FBM_SORT_BYTES, &n);
    for (size_t i = 0; i < n; i++)
        timed += rows[i].split_timed;
    *of = n;
    return timed;
}

static void time_line(FILE *out, fbm_census *c, const fbm_summary *s)
{
    char b1[32], b2[32];
    size_t rows, in_splits = split_timed(c, FBD_FALLBACK, &rows);
    if (rows && in_splits == rows) {
        fputs("fallbacks have no time of their own: ggml times whole splits (see host splits)\n",
              out);
        return;
    }
    fprintf(out, "fallbacks cost %s", fbr_duration(s->total.ns, b1, sizeof b1));
    if (s->with_elapsed == s->processes && s->elapsed_ns)
        fprintf(out, " of %s%s (%.0f%%)", fbr_duration(s->elapsed_ns, b2, sizeof b2),
                s->processes > 1 ? " of the processes' wall time" : "",
                100.0 * (double)s->total.ns / (double)s->elapsed_ns);
    bool inside = false;
    for (size_t i = 0; i < fbm_census_ndumps(c); i++) {
        const char *t = fbd_timing(fbm_census_dump(c, i));
        inside |= t && !strcmp(t, FBR_TIMING_HOST_RESULT);
    }
    if (inside)
        fputs(" (time inside the exit only: the backend does not say when a fallback starts)", out);
    if (in_splits)
        fputs(" (ggml's fallbacks are timed with their splits: see host splits)", out);
    if (s->timed < s->processes)
        fprintf(out, " (%zu of %zu processes carry times)", s->timed, s->processes);
    fputc('\n', out);
}

/* What a native share counts over, where it is not every process from its start: the
 * processes whose dumps carry the backend's counters (a raw census has none), from the
 * attach where a census was attached. */
static void share_window(FILE *out, fbm_census *c, const char *backend)
{
    size_t with = 0, of = 0, attached = 0;
    for (size_t i = 0; i < fbm_census_ndumps(c); i++) {
        fbd_dump *d = fbm_census_dump(c, i);
        size_t n;
        const fbd_backend *b = fbd_backends(d, &n);
        bool has = false, uses = !backend && n == 0;
        for (size_t k = 0; k < n; k++)
            if (!backend || !strcmp(b[k].name, backend)) {
                uses = true;
                has |= b[k].counters.present;
            }
        has |= (!backend || !strcmp(backend, FBR_BACKEND_DEFAULT)) && fbd_backend_stats(d).present;
        of += uses || has;
        with += has;
        attached += has && fbd_attached_at(d);
    }
    if (attached)
        fputs(attached == with ? "; counted from the attach" : "; attached ones from the attach",
              out);
    if (with < of)
        fprintf(out, "; over the %zu of %zu processes whose census carries its counters", with, of);
}

static void share_line(FILE *out, fbm_census *c, const char *backend, fbd_counters b)
{
    uint64_t all = b.native + b.fallback + b.host;
    fprintf(out,
            "native share%s%s: %.1f%% of %" PRIu64 " ops ran on the GPU (%" PRIu64
            " native, %" PRIu64 " fallback, %" PRIu64 " host-resident",
            backend ? ", " : "", backend ? backend : "",
            all ? 100.0 * (double)b.native / (double)all : 100.0, all, b.native, b.fallback,
            b.host);
    share_window(out, c, backend);
    fputs(")\n", out);
}

/* The native share of each backend that counts its own ops; unnamed where libvkt is the
 * census's one backend, as in every census before backends were rows. */
static void shares(FILE *out, fbm_census *c)
{
    size_t nb;
    const char *const *names = fbm_census_backends(c, &nb);
    for (size_t i = 0; i < nb; i++) {
        fbd_counters b = fbm_census_counters(c, names[i]);
        if (b.present)
            share_line(out, c, nb > 1 ? names[i] : NULL, b);
    }
    if (nb == 0) {
        fbm_summary s = fbm_census_summary(c);
        if (s.backend.present)
            share_line(out, c, NULL, s.backend);
    }
}

/* Which backends the census holds, where it is not libvkt's alone. */
static void backends_line(FILE *out, fbm_census *c, const fbm_summary *s)
{
    size_t nb;
    const char *const *names = fbm_census_backends(c, &nb);
    if (nb < 2 && !s->backend_filter)
        return;
    fputs(nb == 1 ? "backend: " : "backends: ", out);
    for (size_t i = 0; i < nb; i++) {
        fputs(i ? ", " : "", out);
        fbx_put_escaped(out, names[i]);
    }
    fputs(s->backend_filter ? (nb ? " (the others left out by --where)\n"
                                  : "none (every backend left out by --where)\n")
                            : "\n",
          out);
}

/* The host splits (ggml): how many, the bytes their nodes wrote, their time. */
static void splits_line(FILE *out, const fbm_summary *s)
{
    char b1[32], b2[32];
    if (!s->total.splits)
        return;
    fprintf(out, "host splits: %" PRIu64 ", their nodes wrote %s", s->total.splits,
            fbt_bytes(s->total.split_bytes, s->total.unknown[FBD_SPLIT], s->total.splits, false, b1,
                      sizeof b1));
    if (s->timed)
        fprintf(out, " in %s (time measured per split, not per node)",
                fbr_duration(s->total.split_ns, b2, sizeof b2));
    fputc('\n', out);
}

void fbt_summary(FILE *out, fbm_census *c)
{
    fbm_summary s = fbm_census_summary(c);
    char b1[32], b2[32];
    fputs("fbcount: ", out);
    plural(out, s.dumps, "dump", "dumps");
    fputs(" from ", out);
    plural(out, s.processes, "process", "processes");
    if (s.superseded)
        fprintf(out, " (%zu earlier dump%s of the same processes not counted again)", s.superseded,
                s.superseded == 1 ? "" : "s");
    if (s.filtered)
        fprintf(out, "; %zu left out by --where", s.filtered);
    fputc('\n', out);
    backends_line(out, c, &s);
    endings(out, c, &s);
    fprintf(out, "fallbacks: %" PRIu64 ", %s left the GPU, largest tensor %s%s", s.total.fallbacks,
            fbt_bytes(s.total.bytes, s.total.unknown[FBD_FALLBACK], s.total.fallbacks, false, b1,
                      sizeof b1),
            !s.total.max_bytes && s.total.unknown[FBD_FALLBACK]
                ? "?"
                : fbr_bytes(s.total.max_bytes, b2, sizeof b2),
            s.saturated ? " (a total reached 2^63-1 and stopped there)" : "");
    unknown_note(out, s.total.unknown[FBD_FALLBACK], s.total.fallbacks);
    fputc('\n', out);
    if (s.timed)
        time_line(out, c, &s);
    fprintf(out, "host-resident ops: %" PRIu64 " (%s of results computed on the host",
            s.total.host_ops,
            fbt_bytes(s.total.host_bytes, s.total.unknown[FBD_HOST], s.total.host_ops, false, b1,
                      sizeof b1));
    size_t rows, in_splits = split_timed(c, FBD_HOST, &rows);
    if (s.timed && rows && in_splits == rows)
        fputs(", timed with their splits", out);
    else if (s.timed)
        fprintf(out, ", %s", fbr_duration(s.total.host_ns, b2, sizeof b2));
    fputs(")", out);
    unknown_note(out, s.total.unknown[FBD_HOST], s.total.host_ops);
    fputc('\n', out);
    splits_line(out, &s);
    if (s.total.transfers) {
        fprintf(out, "transfers: %" PRIu64 ", %s crossed between devices", s.total.transfers,
                fbt_bytes(s.total.transfer_bytes, s.total.unknown[FBD_TRANSFER], s.total.transfers,
                          false, b1, sizeof b1));
        if (s.timed)
            fprintf(out, " in %s", fbr_duration(s.total.transfer_ns, b2, sizeof b2));
        unknown_note(out, s.total.unknown[FBD_TRANSFER], s.total.transfers);
        fputc('\n', out);
    }
    shares(out, c);
}

void fbt_text(FILE *out, fbm_census *c, fbm_by by, fbm_sort sort, size_t top)
{
    fbt_opts o = {.by = by, .sort = sort, .top = top, .width = fbt_term_width(out), .depth = 8};
    fbt_print_census(out, c, &o);
}

int fbt_write_text(FILE *out, fbm_census *c, const fbt_opts *o)
{
    fbt_print_census(out, c, o);
    return ferror(out) ? -1 : 0;
}

void fbt_print_census(FILE *out, fbm_census *c, const fbt_opts *o)
{
    if (!o->raw)
        fbt_summary(out, c);
    for (int k = 0; k < FBD_NKINDS; k++)
        print_table(out, c, (fbd_kind)k, o);
}
