/* table.c - text and JSON tables of a census. */
#include "table.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fields.h"
#include "names.h"
#include "pool.h"
#include "text.h"
#include "units.h"

static const char *by_names[FBM_NBY] = {"op", "site", "stack", "shape", "rank", "host",
                                        "process"};

const char *fbt_by_name(fbm_by by) { return by_names[by]; }

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
    if (o->width) {
        /* Fixed columns keep their width; the flexible ones share what is left, the first
         * (the names) taking most of it. */
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
        size_t avail = o->width > fixed + 16 ? o->width - fixed : 16;
        if (nf && flexw > avail) {
            size_t a = w[flex[0]], b = nf > 1 ? w[flex[1]] : 0;
            size_t fa = a < avail * 3 / 5 ? a : a + b <= avail ? a : avail - (b < avail * 2 / 5 ? b : avail * 2 / 5);
            if (fa > avail)
                fa = avail;
            w[flex[0]] = fa < 8 ? 8 : fa;
            if (nf > 1)
                w[flex[1]] = avail > w[flex[0]] ? avail - w[flex[0]] : 0;
        }
    }
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
    bool time;
} table_ctx;

static const char *num(bool raw, uint64_t v, bool bytes, char *buf, size_t len)
{
    if (raw || !bytes)
        snprintf(buf, len, "%" PRIu64, v);
    else
        fbu_bytes(v, buf, len);
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

static void detail(const fbm_row *r, fbm_by by, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    if (by == FBM_BY_STACK) {
        size_t first = r->nframes > 6 ? r->nframes - 6 : 0;
        if (first)
            o = put(buf, len, o, "... > ");
        for (size_t i = first; i < r->nframes && o < len; i++)
            /* labels are the census pool's strings, which know their length */
            o = put_n(buf, len, put(buf, len, o, i > first ? " > " : ""), r->labels[i],
                      fbp_strlen(r->labels[i]));
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
    num(raw, r->count, false, cells[k++], FBT_CELL);
    if (r->has_bytes)
        num(raw, r->bytes, true, cells[k++], FBT_CELL);
    else
        snprintf(cells[k++], FBT_CELL, "-");
    if (r->max_bytes)
        num(raw, r->max_bytes, true, cells[k++], FBT_CELL);
    else
        snprintf(cells[k++], FBT_CELL, "-");
    if (t->time) {
        if (raw)
            snprintf(cells[k++], FBT_CELL, "%" PRIu64, r->ns);
        else
            fbu_duration(r->ns, cells[k++], FBT_CELL);
    }
    detail(r, t->o->by, cells[k], FBT_CELL);
}

static void print_table(FILE *out, fbm_census *c, fbd_kind kind, const fbt_opts *o,
                        const char *title)
{
    size_t n;
    const fbm_row *rows = fbm_census_rows(c, kind, o->by, o->sort, &n);
    if (!o->raw)
        fprintf(out, "\n%s, by %s:\n", title, by_names[o->by]);
    if (n == 0) {
        if (!o->raw)
            fputs("  none\n", out);
        return;
    }
    size_t shown = o->top && o->top < n ? o->top : n;
    static const char *keys[FBM_NBY] = {"OP", "SITE", "OP @ SITE", "OP SHAPE", "RANK", "HOST",
                                        "PROCESS"};
    fbt_col cols[7];
    int k = 0;
    cols[k++] = (fbt_col){keys[o->by], false, true};
    cols[k++] = (fbt_col){"COUNT", true, false};
    cols[k++] = (fbt_col){"BYTES", true, false};
    cols[k++] = (fbt_col){"LARGEST", true, false};
    bool time = fbm_census_has_time(c);
    if (time)
        cols[k++] = (fbt_col){o->raw ? "NS" : "TIME", true, false};
    cols[k++] = (fbt_col){o->by == FBM_BY_OP ? "SITES" : o->by == FBM_BY_STACK
                          ? (o->raw ? "FRAMES" : "FRAMES (outermost first)")
                          : o->by == FBM_BY_SHAPE ? "" : "OPS", false, true};
    table_ctx t = {rows, o, time};
    if (o->raw) {
        /* Raw rows say which table they belong to, so one stream holds both; the heading
         * comes once, before the fallbacks. */
        fbt_opts ro = *o;
        if (!o->noheadings && kind == FBD_FALLBACK) {
            fputs("KIND", out);
            for (int j = 0; j < k; j++) {
                char e[256];
                fprintf(out, " %s", fbx_escape(cols[j].title, e, sizeof e, 1));
            }
            fputc('\n', out);
        }
        for (size_t i = 0; i < shown; i++) {
            fputs(kind == FBD_HOST ? "host_op " : "fallback ", out);
            ro.noheadings = true;
            table_ctx one = {rows + i, &ro, time};
            fbt_print(out, &ro, cols, k, 1, row_cells, &one);
        }
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

void fbt_summary(FILE *out, fbm_census *c)
{
    fbm_summary s = fbm_census_summary(c);
    char b1[32], b2[32];
    fputs("fbcount: ", out);
    plural(out, s.dumps, "dump", "dumps");
    fputs(" from ", out);
    plural(out, s.processes, "process", "processes");
    if (s.superseded)
        fprintf(out, " (%zu earlier dump%s of the same processes not counted again)",
                s.superseded, s.superseded == 1 ? "" : "s");
    if (s.filtered)
        fprintf(out, "; %zu left out by --where", s.filtered);
    fputc('\n', out);
    /* How the processes ended, where it was not a plain exit: a census written on a
     * signal, on a crash or by a checkpoint is complete only up to that moment. */
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
    if (s.checkpoints) {
        plural(out, s.checkpoints, "process", "processes");
        fputs(" left only a checkpoint (killed without a final dump: SIGKILL or the OOM killer);"
              " counted up to its last interval\n", out);
    }
    if (s.snapshots) {
        plural(out, s.snapshots, "process", "processes");
        fputs(" counted from a snapshot (still running, or ended without a final dump)\n", out);
    }
    fprintf(out, "fallbacks: %" PRIu64 ", %s left the GPU, largest tensor %s%s\n",
            s.total.fallbacks, fbu_bytes(s.total.bytes, b1, sizeof b1),
            fbu_bytes(s.total.max_bytes, b2, sizeof b2),
            s.saturated ? " (a total reached 2^63-1 and stopped there)" : "");
    if (s.timed) {
        fprintf(out, "fallbacks cost %s", fbu_duration(s.total.ns, b1, sizeof b1));
        if (s.with_elapsed == s.processes && s.elapsed_ns)
            fprintf(out, " of %s%s (%.0f%%)", fbu_duration(s.elapsed_ns, b2, sizeof b2),
                    s.processes > 1 ? " of the processes' wall time" : "",
                    100.0 * (double)s.total.ns / (double)s.elapsed_ns);
        bool inside = false;
        for (size_t i = 0; i < fbm_census_ndumps(c); i++) {
            const char *t = fbd_timing(fbm_census_dump(c, i));
            inside |= t && !strcmp(t, FBR_TIMING_HOST_RESULT);
        }
        if (inside)
            fputs(" (time inside host_result only: the backend does not say when a fallback "
                  "starts)", out);
        if (s.timed < s.processes)
            fprintf(out, " (%zu of %zu processes carry times)", s.timed, s.processes);
        fputc('\n', out);
    }
    fprintf(out, "host-resident ops: %" PRIu64 " (%s of results computed on the host", 
            s.total.host_ops, fbu_bytes(s.total.host_bytes, b1, sizeof b1));
    if (s.timed)
        fprintf(out, ", %s", fbu_duration(s.total.host_ns, b2, sizeof b2));
    fputs(")\n", out);
    if (s.backend.present) {
        uint64_t all = s.backend.native + s.backend.fallback + s.backend.host;
        fprintf(out, "native share: %.1f%% of %" PRIu64 " ops ran on the GPU (%" PRIu64
                " native, %" PRIu64 " fallback, %" PRIu64 " host-resident)\n",
                all ? 100.0 * (double)s.backend.native / (double)all : 100.0, all,
                s.backend.native, s.backend.fallback, s.backend.host);
    }
}

void fbt_text(FILE *out, fbm_census *c, fbm_by by, fbm_sort sort, size_t top)
{
    fbt_opts o = {.by = by, .sort = sort, .top = top, .width = fbt_term_width(out)};
    fbt_print_census(out, c, &o);
}

void fbt_print_census(FILE *out, fbm_census *c, const fbt_opts *o)
{
    if (!o->raw)
        fbt_summary(out, c);
    print_table(out, c, FBD_FALLBACK, o, "Fallbacks (ops that left the GPU)");
    print_table(out, c, FBD_HOST, o,
                "Host-resident ops (downstream work on tensors a fallback left on the host)");
}

/* --- JSON ---------------------------------------------------------------------------------- */

void fbt_add_demangled(json_t *obj, const char *name)
{
    char *d = fbn_demangle(name);
    if (d && strcmp(d, name))
        json_object_set_new(obj, FBR_DEMANGLED, json_string(d));
    free(d);
}

static void set_int(json_t *o, const char *key, uint64_t v)
{
    json_object_set_new(o, key, json_integer((json_int_t)(v > FBM_SAT_MAX ? FBM_SAT_MAX : v)));
}

static void set_str(json_t *o, const char *key, const char *v)
{
    if (v)
        json_object_set_new(o, key, json_string(v));
}

json_t *fbt_frame_json(const fbd_frame *f)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    char hex[32];
    if (f->has_ip) {
        snprintf(hex, sizeof hex, "0x%" PRIx64, f->ip);
        set_str(o, FBR_IP, hex);
    }
    set_str(o, FBR_SYMBOL, f->symbol);
    if (f->symbol)
        fbt_add_demangled(o, f->symbol);
    set_str(o, FBR_MODULE, f->module);
    if (f->has_offset) {
        snprintf(hex, sizeof hex, "0x%" PRIx64, f->offset);
        set_str(o, FBR_OFFSET, hex);
    }
    set_str(o, FBR_FILE, f->file);
    if (f->line > 0)
        set_int(o, FBR_LINE, (uint64_t)f->line);
    if (f->inlined)
        json_object_set_new(o, FBR_INLINED, json_true());
    if (f->python)
        json_object_set_new(o, FBR_PYTHON, json_true());
    return o;
}

static json_t *parts_json(const fbm_row *r, fbm_by by, bool time)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < r->nparts; i++) {
        const fbm_part *p = &r->parts[i];
        json_t *e = json_object();
        if (!e)
            break;
        if (by == FBM_BY_OP) {
            set_str(e, FBR_SITE, p->raw);
            fbt_add_demangled(e, p->raw);
            set_str(e, FBR_FILE, p->file);
            if (p->file && p->line > 0)
                set_int(e, FBR_LINE, (uint64_t)p->line);
        } else {
            set_str(e, FBR_OP, p->raw);
        }
        set_int(e, FBR_COUNT, p->count);
        set_int(e, FBR_BYTES, p->bytes);
        if (time)
            set_int(e, FBR_NS, p->ns);
        json_array_append_new(a, e);
    }
    return a;
}

static json_t *row_json(const fbm_row *r, fbm_by by, bool time)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    switch (by) {
    case FBM_BY_OP: set_str(o, FBR_OP, r->op); break;
    case FBM_BY_SITE:
        set_str(o, FBR_SITE, r->site);
        fbt_add_demangled(o, r->site);
        set_str(o, FBR_FILE, r->file);
        if (r->line > 0)
            set_int(o, FBR_LINE, (uint64_t)r->line);
        if (r->python)
            json_object_set_new(o, FBR_PYTHON, json_true());
        break;
    case FBM_BY_STACK:
        set_str(o, FBR_OP, r->op);
        set_str(o, FBR_SITE, r->site);
        fbt_add_demangled(o, r->site);
        break;
    case FBM_BY_SHAPE:
        set_str(o, FBR_OP, r->op);
        set_str(o, FBR_SHAPE, r->key + (r->op ? strlen(r->op) + 1 : 0));
        break;
    case FBM_BY_RANK:
        json_object_set_new(o, FBR_RANK, r->rank >= 0 ? json_integer(r->rank) : json_null());
        break;
    case FBM_BY_HOST: set_str(o, FBR_HOST, r->host); break;
    default: {
        const fbd_process *p = fbd_proc(r->dump);
        set_str(o, FBR_PROCESS, r->key);
        set_int(o, FBR_PID, (uint64_t)p->pid);
        set_str(o, FBR_EXE, p->exe);
        set_str(o, FBR_HOST, p->host);
        set_str(o, FBR_ID, p->id);
        if (p->rank >= 0)
            set_int(o, FBR_RANK, (uint64_t)p->rank);
        break;
    }
    }
    set_int(o, FBR_COUNT, r->count);
    if (r->has_bytes) {
        set_int(o, FBR_BYTES, r->bytes);
        set_int(o, FBR_MAX_BYTES, r->max_bytes);
    }
    if (time && by != FBM_BY_SHAPE) {
        set_int(o, FBR_NS, r->ns);
        if (by != FBM_BY_SITE)
            set_int(o, FBR_MAX_NS, r->max_ns);
    }
    if (by == FBM_BY_OP)
        json_object_set_new(o, FBR_SITES, parts_json(r, by, time));
    else if (by != FBM_BY_STACK && by != FBM_BY_SHAPE)
        json_object_set_new(o, FBR_OPS, parts_json(r, by, time));
    if (by == FBM_BY_STACK) {
        /* Innermost first, as in the dump. */
        json_t *frames = json_array();
        for (size_t i = r->nframes; frames && i-- > 0;)
            json_array_append_new(frames, fbt_frame_json(r->frames[i]));
        json_object_set_new(o, FBR_FRAMES, frames);
    }
    return o;
}

static json_t *rows_json(fbm_census *c, fbd_kind kind, const fbt_opts *opt)
{
    size_t n;
    const fbm_row *rows = fbm_census_rows(c, kind, opt->by, opt->sort, &n);
    bool time = fbm_census_has_time(c);
    json_t *a = json_array();
    for (size_t i = 0; a && i < n && (!opt->top || i < opt->top); i++)
        json_array_append_new(a, row_json(&rows[i], opt->by, time));
    return a;
}

static json_t *head_json(fbm_census *c, const fbt_opts *opt, bool with_rows);

json_t *fbt_json(fbm_census *c, const fbt_opts *opt)
{
    return head_json(c, opt, true);
}

/* One array of rows, each row made, written and freed in turn: a million stack rows are never
 * one tree (which took 19x the dump's size in memory). */
static int write_rows(FILE *out, fbm_census *c, fbd_kind kind, const fbt_opts *opt)
{
    size_t n;
    const fbm_row *rows = fbm_census_rows(c, kind, opt->by, opt->sort, &n);
    bool time = fbm_census_has_time(c);
    /* Each row is dumped into one buffer and written with one fwrite: json_dumpf hands stdio
     * every token on its own, and its locked fwrite calls were 12% of a million-row report. */
    size_t cap = 4096;
    char *buf = malloc(cap);
    if (!buf)
        return -1;
    int rc = 0;
    fputc('[', out);
    for (size_t i = 0; i < n && (!opt->top || i < opt->top) && !rc; i++) {
        json_t *r = row_json(&rows[i], opt->by, time);
        if (!r) {
            rc = -1;
            break;
        }
        size_t len = json_dumpb(r, buf, cap, JSON_COMPACT);
        if (len > cap) {
            char *b = realloc(buf, len);
            if (b) {
                buf = b;
                cap = len;
                len = json_dumpb(r, buf, cap, JSON_COMPACT);
            }
        }
        json_decref(r);
        if (len == 0 || len > cap) {
            rc = -1;
            break;
        }
        fputs(i ? ",\n  " : "\n  ", out);
        fwrite(buf, 1, len, out);
    }
    free(buf);
    if (rc)
        return -1;
    fputs(n ? "\n]" : "]", out);
    return ferror(out) ? -1 : 0;
}

int fbt_json_write(FILE *out, fbm_census *c, const fbt_opts *opt)
{
    json_t *head = head_json(c, opt, false);
    if (!head)
        return -1;
    /* The head as an object, its closing brace replaced by the two row arrays. */
    char *text = json_dumps(head, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(head);
    if (!text)
        return -1;
    size_t len = strlen(text);
    while (len && text[len - 1] != '}')
        len--;
    int rc = len ? 0 : -1;
    if (!rc) {
        fwrite(text, 1, len - 1, out);
        fputs(",\n  \"" FBR_FALLBACKS "\": ", out);
        rc = write_rows(out, c, FBD_FALLBACK, opt);
        fputs(",\n  \"" FBR_HOST_OPS "\": ", out);
        if (!rc)
            rc = write_rows(out, c, FBD_HOST, opt);
        fputs("\n}\n", out);
    }
    free(text);
    return rc || ferror(out) ? -1 : 0;
}

static json_t *head_json(fbm_census *c, const fbt_opts *opt, bool with_rows)
{
    fbm_summary s = fbm_census_summary(c);
    json_t *dumps = json_array();
    for (size_t i = 0; dumps && i < fbm_census_ndumps(c); i++) {
        const fbd_dump *d = fbm_census_dump(c, i);
        const fbd_process *p = fbd_proc(d);
        json_t *e = json_object();
        if (!e)
            break;
        set_str(e, FBR_PATH, fbd_path(d));
        set_int(e, FBR_PID, (uint64_t)p->pid);
        set_str(e, FBR_EXE, p->exe);
        if (*p->host)
            set_str(e, FBR_HOST, p->host);
        set_str(e, FBR_ID, p->id);
        if (p->rank >= 0)
            set_int(e, FBR_RANK, (uint64_t)p->rank);
        set_str(e, FBR_REASON, fbd_reason(d));
        set_int(e, FBR_SEQ, fbd_seq(d));
        if (fbd_signal(d)) {
            set_int(e, FBR_SIGNAL, (uint64_t)fbd_signal(d));
            set_str(e, FBR_SIGNAL_NAME, fbd_signal_name(d));
        }
        if (p->has_elapsed)
            set_int(e, FBR_ELAPSED_NS, p->elapsed_ns);
        json_array_append_new(dumps, e);
    }
    json_t *total = json_object();
    if (total) {
        set_int(total, FBR_FALLBACKS, s.total.fallbacks);
        set_int(total, FBR_BYTES, s.total.bytes);
        set_int(total, FBR_MAX_BYTES, s.total.max_bytes);
        set_int(total, FBR_HOST_OPS, s.total.host_ops);
        set_int(total, FBR_HOST_BYTES, s.total.host_bytes);
        if (s.timed) {
            set_int(total, FBR_NS, s.total.ns);
            set_int(total, FBR_HOST_NS, s.total.host_ns);
        }
        if (s.with_elapsed == s.processes && s.processes)
            set_int(total, FBR_ELAPSED_NS, s.elapsed_ns);
    }
    json_t *backend = json_null();
    if (s.backend.present) {
        uint64_t all = s.backend.native + s.backend.fallback + s.backend.host;
        backend = json_pack("{s:I,s:I,s:I,s:f}", FBR_NATIVE, (json_int_t)s.backend.native,
                            FBR_FALLBACK, (json_int_t)s.backend.fallback, FBR_HOSTCOUNT,
                            (json_int_t)s.backend.host, "native_share",
                            all ? (double)s.backend.native / (double)all : 1.0);
    }
    json_t *head = json_pack("{s:s,s:s,s:o,s:I,s:I,s:o,s:b,s:o}",
                             FBR_SCHEMA, "fbcount-report/1", "by", by_names[opt->by],
                             "dumps", dumps, "superseded", (json_int_t)s.superseded,
                             "filtered", (json_int_t)s.filtered, FBR_TOTAL, total,
                             "saturated", (int)s.saturated, FBR_BACKEND, backend);
    if (head && with_rows) {
        json_object_set_new(head, FBR_FALLBACKS, rows_json(c, FBD_FALLBACK, opt));
        json_object_set_new(head, FBR_HOST_OPS, rows_json(c, FBD_HOST, opt));
    }
    return head;
}
