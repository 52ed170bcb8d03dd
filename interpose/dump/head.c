/* head.c - what every dump holds besides its census: the process, the configuration in
 * force and the module map. Shared by the named dump (write.c) and the raw census
 * (emergency.c), so async-signal-safe: the writer's buffer only, no allocation, no lock. */
#include <time.h>

#include "dump.h"
#include "fields.h"

static void write_process(fbc_writer *w)
{
    fbc_w_str(w, FBR_KEY(FBR_PROCESS) "{" FBR_KEY(FBR_PID));
    fbc_w_u64(w, (uint64_t)fbc_proc.pid);
    fbc_w_num(w, "," FBR_KEY(FBR_PPID), (uint64_t)fbc_proc.ppid);
    fbc_w_str(w, "," FBR_KEY(FBR_HOST));
    fbc_w_json(w, fbc_proc.host);
    fbc_w_str(w, "," FBR_KEY(FBR_EXE));
    fbc_w_json(w, fbc_proc.exe);
    fbc_w_str(w, "," FBR_KEY(FBR_ARGV) "[");
    for (size_t off = 0; off < fbc_proc.argv_len;) {
        const char *a = fbc_proc.argv + off;
        if (off)
            fbc_w_raw(w, ",", 1);
        fbc_w_json(w, a);
        size_t n = 0;
        while (a[n])
            n++;
        off += n + 1;
    }
    fbc_w_str(w, "]," FBR_KEY(FBR_ID));
    fbc_w_json(w, fbc_proc.id);
    if (fbc_proc.parent_id[0]) {
        fbc_w_str(w, "," FBR_KEY(FBR_PARENT_ID));
        fbc_w_json(w, fbc_proc.parent_id);
    }
    if (fbc_proc.rank >= 0) {
        fbc_w_num(w, "," FBR_KEY(FBR_RANK), (uint64_t)fbc_proc.rank);
    }
    char start[21];
    fbc_process_start_time(start);
    fbc_w_str(w, "," FBR_KEY(FBR_START_TIME));
    fbc_w_json(w, start);
    fbc_w_num(w, "," FBR_KEY(FBR_ELAPSED_NS), fbc_now_ns() - fbc_process_start_ns());
    fbc_w_raw(w, "}", 1);
}

static void write_names(fbc_writer *w, const char *key, const fbr_names *n)
{
    fbc_w_str(w, key);
    fbc_w_raw(w, "[", 1);
    for (int i = 0; i < n->n; i++) {
        if (i)
            fbc_w_raw(w, ",", 1);
        fbc_w_json(w, n->name[i]);
    }
    fbc_w_raw(w, "]", 1);
}

void fbc_dump_head(fbc_writer *w, const char *reason, int seq)
{
    char now[21];
    fbc_fmt_time(now, (uint64_t)time(NULL));
    fbc_w_str(w, "{" FBR_KEY(FBR_SCHEMA) "\"" FBR_SCHEMA_V1 "\"," FBR_KEY(FBR_REASON));
    fbc_w_json(w, reason);
    fbc_w_num(w, "," FBR_KEY(FBR_SEQ), (uint64_t)seq);
    fbc_w_str(w, "," FBR_KEY(FBR_TIME));
    fbc_w_json(w, now);
    fbc_w_raw(w, ",", 1);
    write_process(w);
    fbc_w_str(w, "," FBR_KEY(FBR_CONFIG) "{" FBR_KEY(FBR_MODE));
    fbc_w_json(w, fbc_mode_name(fbc_cfg.mode));
    fbc_w_num(w, "," FBR_KEY(FBR_DEPTH), (uint64_t)fbc_cfg.depth);
    write_names(w, "," FBR_KEY(FBR_OP_PREFIX), &fbc_cfg.prefixes);
    write_names(w, "," FBR_KEY(FBR_PY_BACKEND), &fbc_cfg.py_backend);
    fbc_w_str(w, "," FBR_KEY(FBR_CONFIG_BACKENDS) "[");
    for (size_t i = 0; i < fbc_rows_count(); i++) {
        if (i)
            fbc_w_raw(w, ",", 1);
        fbc_w_json(w, fbc_row_at(i)->name);
    }
    fbc_w_raw(w, "]", 1);
    bool timed = false;
    for (size_t i = 0; i < fbc_bmod_count(); i++)
        timed |= fbc_bmod_timed(fbc_bmod_at(i));
    fbc_w_str(w, "," FBR_KEY(FBR_TIMING));
    fbc_w_json(w, timed ? FBR_TIMING_FALLBACK : FBR_TIMING_HOST_RESULT);
    fbc_w_str(w, "," FBR_KEY(FBR_CLOCK));
    fbc_w_json(w, fbc_clock_name());
    fbc_w_raw(w, "}", 1);
    if (fbc_cfg.attached_at[0]) { /* counted from the attach, not from the start */
        fbc_w_str(w, "," FBR_KEY(FBR_ATTACHED_AT));
        fbc_w_json(w, fbc_cfg.attached_at);
        fbc_w_num(w, "," FBR_KEY(FBR_ATTACHED_NS), fbc_cfg.attached_ns - fbc_process_start_ns());
    }
}

void fbc_dump_modules(fbc_writer *w)
{
    fbc_w_str(w, "," FBR_KEY(FBR_MODULES) "[");
    size_t n = fbc_modmap_count(), any = 0;
    for (size_t i = 0; i < n; i++) {
        const fbc_module *m = fbc_modmap_at(i);
        if (!m->file)
            continue; /* the vdso: nothing to symbolize it from later */
        fbc_w_str(w, any++ ? ",{" FBR_KEY(FBR_PATH) : "{" FBR_KEY(FBR_PATH));
        fbc_w_json(w, m->path);
        fbc_w_str(w, "," FBR_KEY(FBR_BASE));
        fbc_w_hex(w, m->base);
        if (m->build_id[0]) {
            fbc_w_str(w, "," FBR_KEY(FBR_BUILD_ID));
            fbc_w_json(w, m->build_id);
        }
        fbc_w_num(w, "," FBR_KEY(FBR_SIZE), m->end - m->start);
        fbc_w_raw(w, "}", 1);
    }
    fbc_w_raw(w, "]", 1);
}
