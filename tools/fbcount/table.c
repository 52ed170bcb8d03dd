/* table.c - text and JSON tables of a census. */
#include "table.h"

#include <inttypes.h>
#include <string.h>

#include "text.h"
#include "units.h"

static const char *by_names[] = {"op", "site", "stack", "shape"};
static const char *part_names[] = {"sites", "ops", "ops", NULL};

const char *fbt_by_name(fbm_by by) { return by_names[by]; }

/* Column text of a stack row's key: "op @ site", without the frame list. */
static int key_len(const fbm_row *r, fbm_by by)
{
    const char *colon = by == FBM_BY_STACK ? strstr(r->key, ": ") : NULL;
    return colon ? (int)(colon - r->key) : (int)strlen(r->key);
}

static void print_detail(FILE *out, const fbm_row *r, fbm_by by)
{
    if (by == FBM_BY_STACK) {
        size_t first = r->nframes > 6 ? r->nframes - 6 : 0;
        if (first)
            fputs("... > ", out);
        for (size_t i = first; i < r->nframes; i++)
            fprintf(out, "%s%s", i > first ? " > " : "", r->frames[i]);
        return;
    }
    for (size_t i = 0; i < r->nparts && i < 4; i++)
        fprintf(out, "%s%s %" PRIu64, i ? ", " : "", r->parts[i].name, r->parts[i].count);
    if (r->nparts > 4)
        fprintf(out, ", +%zu more", r->nparts - 4);
}

static void print_table(FILE *out, fbm_census *c, fbd_kind kind, fbm_by by, fbm_sort sort,
                        size_t top, const char *title)
{
    size_t n;
    const fbm_row *rows = fbm_census_rows(c, kind, by, sort, &n);
    fprintf(out, "\n%s, by %s:\n", title, by_names[by]);
    if (n == 0) {
        fputs("  none\n", out);
        return;
    }
    size_t shown = top && top < n ? top : n;
    int w = (int)strlen(by_names[by]);
    for (size_t i = 0; i < shown; i++)
        if (key_len(&rows[i], by) > w)
            w = key_len(&rows[i], by);
    if (w > 48)
        w = 48;
    const char *detail = by == FBM_BY_OP ? "SITES" : by == FBM_BY_SITE ? "OPS"
                         : by == FBM_BY_STACK ? "FRAMES (outermost first)" : "";
    fprintf(out, "  %-*s %10s %10s %10s  %s\n", w, by == FBM_BY_OP ? "OP" : by == FBM_BY_SITE
            ? "SITE" : by == FBM_BY_STACK ? "OP @ SITE" : "OP SHAPE", "COUNT", "BYTES",
            "LARGEST", detail);
    for (size_t i = 0; i < shown; i++) {
        const fbm_row *r = &rows[i];
        char b1[32], b2[32];
        int kl = (int)fbx_utf8_prefix(r->key, (size_t)(key_len(r, by) < w ? key_len(r, by) : w));
        fprintf(out, "  %-*.*s %10" PRIu64 " %10s %10s  ", w, kl, r->key, r->count,
                r->has_bytes ? fbu_bytes(r->bytes, b1, sizeof b1) : "-",
                r->max_bytes ? fbu_bytes(r->max_bytes, b2, sizeof b2) : "-");
        print_detail(out, r, by);
        fputc('\n', out);
    }
    if (shown < n)
        fprintf(out, "  ... %zu more (--top)\n", n - shown);
}

void fbt_text(FILE *out, fbm_census *c, fbm_by by, fbm_sort sort, size_t top)
{
    fbm_summary s = fbm_census_summary(c);
    char b1[32], b2[32];
    fprintf(out, "fbcount: %zu dump%s from %zu process%s", s.dumps, s.dumps == 1 ? "" : "s",
            s.processes, s.processes == 1 ? "" : "es");
    if (s.superseded)
        fprintf(out, " (%zu earlier dump%s of the same processes not counted again)",
                s.superseded, s.superseded == 1 ? "" : "s");
    if (s.crashed)
        fprintf(out, "; %zu crashed", s.crashed);
    fputc('\n', out);
    fprintf(out, "fallbacks: %" PRIu64 ", %s left the GPU, largest tensor %s\n",
            s.total.fallbacks, fbu_bytes(s.total.bytes, b1, sizeof b1),
            fbu_bytes(s.total.max_bytes, b2, sizeof b2));
    fprintf(out, "host-resident ops: %" PRIu64 " (%s of results computed on the host)\n",
            s.total.host_ops, fbu_bytes(s.total.host_bytes, b1, sizeof b1));
    if (s.backend.present) {
        uint64_t all = s.backend.native + s.backend.fallback + s.backend.host;
        fprintf(out, "native share: %.1f%% of %" PRIu64 " ops ran on the GPU (%" PRIu64
                " native, %" PRIu64 " fallback, %" PRIu64 " host-resident)\n",
                all ? 100.0 * (double)s.backend.native / (double)all : 100.0, all,
                s.backend.native, s.backend.fallback, s.backend.host);
    }
    print_table(out, c, FBD_FALLBACK, by, sort, top, "Fallbacks (ops that left the GPU)");
    print_table(out, c, FBD_HOST, by, sort, top,
                "Host-resident ops (downstream work on tensors a fallback left on the host)");
}

static json_t *row_json(const fbm_row *r, fbm_by by)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, by_names[by], json_string(r->key));
    json_object_set_new(o, "count", json_integer((json_int_t)r->count));
    if (r->has_bytes) {
        json_object_set_new(o, "bytes", json_integer((json_int_t)r->bytes));
        json_object_set_new(o, "max_bytes", json_integer((json_int_t)r->max_bytes));
    }
    if (part_names[by]) {
        json_t *parts = json_array();
        for (size_t i = 0; i < r->nparts; i++)
            json_array_append_new(parts, json_pack("{s:s,s:I,s:I}", "name", r->parts[i].name,
                                                   "count", (json_int_t)r->parts[i].count,
                                                   "bytes", (json_int_t)r->parts[i].bytes));
        json_object_set_new(o, part_names[by], parts);
    }
    if (by == FBM_BY_STACK) {
        json_t *frames = json_array();
        for (size_t i = 0; i < r->nframes; i++)
            json_array_append_new(frames, json_string(r->frames[i]));
        json_object_set_new(o, "frames", frames);
    }
    return o;
}

static json_t *rows_json(fbm_census *c, fbd_kind kind, fbm_by by, fbm_sort sort, size_t top)
{
    size_t n;
    const fbm_row *rows = fbm_census_rows(c, kind, by, sort, &n);
    json_t *a = json_array();
    for (size_t i = 0; a && i < n && (!top || i < top); i++)
        json_array_append_new(a, row_json(&rows[i], by));
    return a;
}

json_t *fbt_json(fbm_census *c, fbm_by by, fbm_sort sort, size_t top)
{
    fbm_summary s = fbm_census_summary(c);
    json_t *dumps = json_array();
    for (size_t i = 0; i < fbm_census_ndumps(c); i++) {
        const fbd_dump *d = fbm_census_dump(c, i);
        json_array_append_new(dumps, json_pack("{s:s,s:I,s:s,s:s,s:I}", "path", fbd_path(d),
                                               "pid", (json_int_t)fbd_pid(d), "exe", fbd_exe(d),
                                               "reason", fbd_reason(d),
                                               "seq", (json_int_t)fbd_seq(d)));
    }
    json_t *backend = json_null();
    if (s.backend.present) {
        uint64_t all = s.backend.native + s.backend.fallback + s.backend.host;
        backend = json_pack("{s:I,s:I,s:I,s:f}", "native", (json_int_t)s.backend.native,
                            "fallback", (json_int_t)s.backend.fallback, "host",
                            (json_int_t)s.backend.host, "native_share",
                            all ? (double)s.backend.native / (double)all : 1.0);
    }
    return json_pack("{s:s,s:s,s:o,s:I,s:{s:I,s:I,s:I,s:I,s:I},s:o,s:o,s:o}",
                     "schema", "fbcount-report/1", "by", by_names[by], "dumps", dumps,
                     "superseded", (json_int_t)s.superseded,
                     "total", "fallbacks", (json_int_t)s.total.fallbacks,
                     "bytes", (json_int_t)s.total.bytes, "max_bytes",
                     (json_int_t)s.total.max_bytes, "host_ops", (json_int_t)s.total.host_ops,
                     "host_bytes", (json_int_t)s.total.host_bytes,
                     "backend", backend,
                     "fallbacks", rows_json(c, FBD_FALLBACK, by, sort, top),
                     "host_ops", rows_json(c, FBD_HOST, by, sort, top));
}
