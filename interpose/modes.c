/* modes.c - FBCOUNT_MODE=warn and abort: the first time an (op, site) pair falls back, print
 * the op, the site and a short stack; in abort mode, write the census and abort unless the op
 * is in FBCOUNT_ALLOW. Runs only for a stack seen for the first time, so symbolizing here
 * does not touch the counting path of repeated fallbacks. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

typedef struct {
    UT_hash_handle hh;
    char key[];
} pair;

static pair *seen;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

/* True the first time (op, site) is offered. */
static bool first_time(const char *op, const char *site)
{
    size_t a = strlen(op), b = strlen(site);
    pair *p;
    char key[1024];
    if (a + b + 2 > sizeof key)
        return true;
    memcpy(key, op, a + 1);
    memcpy(key + a + 1, site, b + 1);
    pthread_mutex_lock(&seen_lock);
    HASH_FIND(hh, seen, key, a + b + 2, p);
    bool fresh = !p;
    if (fresh && (p = malloc(sizeof *p + a + b + 2))) {
        memcpy(p->key, key, a + b + 2);
        HASH_ADD(hh, seen, key[0], a + b + 2, p);
    }
    pthread_mutex_unlock(&seen_lock);
    return fresh;
}

void fbc_mode_check(const fbc_entry *e)
{
    fbc_frame_info infos[FBC_MAX_DEPTH];
    fbc_attrib a;
    char *text = NULL;
    size_t len = 0;
    pthread_mutex_lock(&fbc_sym_lock);
    unsigned named = fbc_attribute(e->frames, e->nframes, infos, &a);
    for (unsigned i = named; i < e->nframes && i < 8; i++)
        fbc_symbolize(e->frames[i], i == 0, &infos[i]); /* the short stack printed below */
    bool fresh = first_time(a.op, a.site);
    bool stop = fbc_cfg.mode == FBC_MODE_ABORT && !fbc_allowed(a.op);
    FILE *f = fresh || stop ? open_memstream(&text, &len) : NULL;
    if (f) {
        fprintf(f, "fbcount: fallback: %s at %s", a.op, a.site);
        if (a.site_file && a.site_line > 0)
            fprintf(f, " (%s:%d)", a.site_file, a.site_line);
        fputc('\n', f);
        for (uint32_t i = 0; i < e->nframes && i < 8; i++) {
            const char *mod = infos[i].module >= 0 ? fbc_modmap_at((size_t)infos[i].module)->path : "?";
            const char *slash = strrchr(mod, '/');
            fprintf(f, "fbcount:   #%u %s (%s+0x%lx)\n", i, infos[i].symbol ? infos[i].symbol : "??",
                    slash ? slash + 1 : mod, (unsigned long)infos[i].offset);
        }
        if (stop)
            fprintf(f, "fbcount: FBCOUNT_MODE=abort: %s is not allowed (FBCOUNT_ALLOW); aborting\n",
                    a.op);
        fclose(f);
    }
    char extra[600] = "", op[201], site[201];
    if (stop) {
        snprintf(op, sizeof op, "%s", a.op);
        snprintf(site, sizeof site, "%s", a.site);
        for (char *p = op; *p; p++) /* kept to characters JSON takes unescaped */
            if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20 || (unsigned char)*p >= 0x80)
                *p = '_';
        for (char *p = site; *p; p++)
            if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20 || (unsigned char)*p >= 0x80)
                *p = '_';
        snprintf(extra, sizeof extra, ",\"abort\":{\"op\":\"%s\",\"site\":\"%s\"}", op, site);
    }
    pthread_mutex_unlock(&fbc_sym_lock);
    for (size_t off = 0; text && off < len;) {
        ssize_t k = write(2, text + off, len - off);
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    free(text);
    if (stop) {
        fbc_dump_process("exit", NULL, extra);
        __atomic_store_n(&fbc_crash_done, 1, __ATOMIC_RELEASE); /* no second dump on SIGABRT */
        abort();
    }
}

void fbc_modes_after_fork(void)
{
    pair *p, *t;
    HASH_ITER(hh, seen, p, t) {
        HASH_DEL(seen, p);
        free(p);
    }
    pthread_mutex_init(&seen_lock, NULL);
}
