/* report_json.c - see report_json.h. */
#include "report_json.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "fold.h"
#include "names.h"

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

void fbt_site_json(json_t *obj, const char *site, const char *file, long line, bool python)
{
    set_str(obj, FBR_SITE, site);
    if (site)
        fbt_add_demangled(obj, site);
    set_str(obj, FBR_FILE, file);
    if (line > 0)
        set_int(obj, FBR_LINE, (uint64_t)line);
    if (python)
        json_object_set_new(obj, FBR_PYTHON, json_true());
}

/* Where some calls' bytes were unknown: bytes_known false, and how many. */
static void set_unknown(json_t *o, uint64_t unknown)
{
    if (!unknown)
        return;
    json_object_set_new(o, FBR_BYTES_KNOWN, json_false());
    set_int(o, "bytes_unknown", unknown);
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
            fbt_site_json(e, p->raw, p->file, p->file ? p->line : 0, p->python);
        } else {
            set_str(e, FBR_OP, p->raw);
            set_str(e, FBR_BACKEND, p->backend);
        }
        set_int(e, FBR_COUNT, p->count);
        set_int(e, FBR_BYTES, p->bytes);
        set_unknown(e, p->unknown);
        if (time)
            set_int(e, FBR_NS, p->ns);
        json_array_append_new(a, e);
    }
    return a;
}

/* A stack row's frames, innermost first as in the dump; frames folded in views of user code
 * say so ("folded": "backend"). */
static json_t *frames_json(const fbm_row *r)
{
    json_t *frames = json_array();
    for (size_t i = r->nframes; frames && i-- > 0;) {
        json_t *f = fbt_frame_json(r->frames[i]);
        const char *role = fbm_role_name((fbm_role)r->roles[i]);
        if (f && role)
            json_object_set_new(f, "folded", json_string(role));
        json_array_append_new(frames, f);
    }
    return frames;
}

/* What names the row: its op, site, shape, rank, host, process or backend. */
static void row_name_json(json_t *o, const fbm_row *r, fbm_by by)
{
    switch (by) {
    case FBM_BY_OP: set_str(o, FBR_OP, r->op); break;
    case FBM_BY_SITE: fbt_site_json(o, r->site, r->file, r->line, r->python); break;
    case FBM_BY_STACK:
        set_str(o, FBR_OP, r->op);
        fbt_site_json(o, r->site, r->file, r->line, false);
        break;
    case FBM_BY_SHAPE:
        set_str(o, FBR_OP, r->op);
        set_str(o, FBR_SHAPE, r->key + (r->op ? strlen(r->op) + 1 : 0));
        break;
    case FBM_BY_RANK:
        json_object_set_new(o, FBR_RANK, r->rank >= 0 ? json_integer(r->rank) : json_null());
        break;
    case FBM_BY_HOST: set_str(o, FBR_HOST, r->host); break;
    case FBM_BY_BACKEND: break; /* the backend member names it */
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
}

static json_t *row_json(const fbm_row *r, fbm_by by, bool time)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    row_name_json(o, r, by);
    set_str(o, FBR_BACKEND, r->backend);
    set_int(o, FBR_COUNT, r->count);
    if (r->has_bytes) {
        set_int(o, FBR_BYTES, r->bytes);
        set_int(o, FBR_MAX_BYTES, r->max_bytes);
        set_unknown(o, r->unknown);
    }
    if (time && r->has_time && !(r->split_timed && !r->ns)) { /* none of its own: its split's */
        set_int(o, FBR_NS, r->ns);
        if (by != FBM_BY_SITE)
            set_int(o, FBR_MAX_NS, r->max_ns);
    }
    if (r->split_timed)
        set_str(o, FBR_TIMED, FBR_TIMED_SPLIT);
    if (by == FBM_BY_OP)
        json_object_set_new(o, FBR_SITES, parts_json(r, by, time));
    else if (by != FBM_BY_STACK && by != FBM_BY_SHAPE)
        json_object_set_new(o, FBR_OPS, parts_json(r, by, time));
    if (by == FBM_BY_STACK)
        json_object_set_new(o, FBR_FRAMES, frames_json(r));
    return o;
}

/* The names of the row arrays, one per kind, in the order they are written. */
static const char *const kind_keys[FBD_NKINDS] = {FBR_FALLBACKS, FBR_HOST_OPS, FBR_TRANSFERS,
                                                  FBR_SPLITS};

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
        size_t len = r ? json_dumpb(r, buf, cap, JSON_COMPACT) : 0;
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
    /* The head as an object, its closing brace replaced by the row arrays. */
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
        for (int k = 0; k < FBD_NKINDS && !rc; k++) {
            fprintf(out, ",\n  \"%s\": ", kind_keys[k]);
            rc = write_rows(out, c, (fbd_kind)k, opt);
        }
        fputs("\n}\n", out);
    }
    free(text);
    return rc || ferror(out) ? -1 : 0;
}

static json_t *dump_json(const fbd_dump *d)
{
    const fbd_process *p = fbd_proc(d);
    json_t *e = json_object();
    if (!e)
        return NULL;
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
    return e;
}

json_t *fbt_total_json(const fbm_summary *s)
{
    json_t *t = json_object();
    if (!t)
        return NULL;
    set_int(t, FBR_FALLBACKS, s->total.fallbacks);
    set_int(t, FBR_BYTES, s->total.bytes);
    set_int(t, FBR_MAX_BYTES, s->total.max_bytes);
    set_int(t, FBR_HOST_OPS, s->total.host_ops);
    set_int(t, FBR_HOST_BYTES, s->total.host_bytes);
    set_int(t, FBR_TRANSFERS, s->total.transfers);
    set_int(t, FBR_TRANSFER_BYTES, s->total.transfer_bytes);
    if (s->total.splits) {
        set_int(t, FBR_SPLITS, s->total.splits);
        set_int(t, FBR_SPLIT_BYTES, s->total.split_bytes);
    }
    if (s->timed) {
        set_int(t, FBR_NS, s->total.ns);
        set_int(t, FBR_HOST_NS, s->total.host_ns);
        set_int(t, FBR_TRANSFER_NS, s->total.transfer_ns);
        if (s->total.splits)
            set_int(t, FBR_SPLIT_NS, s->total.split_ns);
    }
    json_t *unknown = json_object();
    for (int k = 0; unknown && k < FBD_NKINDS; k++)
        if (s->total.unknown[k])
            set_int(unknown, kind_keys[k], s->total.unknown[k]);
    if (unknown && json_object_size(unknown))
        json_object_set_new(t, "bytes_unknown", unknown);
    else
        json_decref(unknown);
    return t;
}

static json_t *counters_json(fbd_counters b)
{
    if (!b.present)
        return json_null();
    uint64_t all = b.native + b.fallback + b.host;
    return json_pack("{s:I,s:I,s:I,s:f}", FBR_NATIVE, (json_int_t)b.native, FBR_FALLBACK,
                     (json_int_t)b.fallback, FBR_HOSTCOUNT, (json_int_t)b.host, "native_share",
                     all ? (double)b.native / (double)all : 1.0);
}

/* The backends of the census: name, the source and modules the first dump naming it gave,
 * and the counters summed. */
static json_t *backends_json(fbm_census *c)
{
    size_t nb;
    const char *const *names = fbm_census_backends(c, &nb);
    json_t *a = json_array();
    for (size_t i = 0; a && i < nb; i++) {
        json_t *e = json_object(), *mods = json_array();
        const fbd_backend *first = NULL;
        for (size_t d = 0; !first && d < fbm_census_ndumps(c); d++) {
            size_t n;
            const fbd_backend *b = fbd_backends(fbm_census_dump(c, d), &n);
            for (size_t k = 0; !first && k < n; k++)
                if (!strcmp(b[k].name, names[i]))
                    first = &b[k];
        }
        set_str(e, FBR_NAME, names[i]);
        set_str(e, FBR_SOURCE, first ? first->source : NULL);
        for (size_t k = 0; first && mods && k < first->nmodules; k++)
            json_array_append_new(mods, json_string(first->modules[k]));
        json_object_set_new(e, FBR_MODULES, mods);
        json_object_set_new(e, FBR_COUNTERS, counters_json(fbm_census_counters(c, names[i])));
        json_array_append_new(a, e);
    }
    return a;
}

static json_t *head_json(fbm_census *c, const fbt_opts *opt, bool with_rows)
{
    fbm_summary s = fbm_census_summary(c);
    json_t *dumps = json_array();
    for (size_t i = 0; dumps && i < fbm_census_ndumps(c); i++)
        json_array_append_new(dumps, dump_json(fbm_census_dump(c, i)));
    json_t *head = json_pack(
        "{s:s,s:s,s:o,s:I,s:I,s:o,s:b,s:o,s:o}", FBR_SCHEMA, "fbcount-report/1", "by",
        fbt_by_name(opt->by), "dumps", dumps, "superseded", (json_int_t)s.superseded, "filtered",
        (json_int_t)s.filtered, FBR_TOTAL, fbt_total_json(&s), "saturated", (int)s.saturated,
        FBR_BACKEND, counters_json(s.backend), FBR_BACKENDS, backends_json(c));
    for (int k = 0; head && with_rows && k < FBD_NKINDS; k++)
        json_object_set_new(head, kind_keys[k], rows_json(c, (fbd_kind)k, opt));
    return head;
}
