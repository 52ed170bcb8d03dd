/* modes.c - FBCOUNT_MODE=warn and abort: the first time an (op, site) pair falls back, print
 * the op, the site and a short stack; in abort mode, write the census and abort unless the op
 * is allowed (FBCOUNT_ALLOW). Runs only for a stack seen for the first time, so repeated
 * fallbacks never come here. Symbolizing needs more stack than a program's thread may have
 * (16-128 KiB threads died of it): the work runs on the dumper thread while the recording
 * thread waits. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fields.h"
#include "hooks.h"

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

typedef struct {
    const fbc_entry *e;
    bool stop;
    char extra[600];
} check;

/* Kept to characters JSON takes unescaped: the extra member is pasted into the dump. */
static void json_safe(char *s)
{
    for (char *p = s; *p; p++)
        if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20 || (unsigned char)*p >= 0x80)
            *p = '_';
}

static void run_check(void *arg)
{
    check *c = arg;
    const fbc_entry *e = c->e;
    fbc_frame_info infos[FBC_MAX_DEPTH];
    fbc_attrib a;
    char *text = NULL;
    size_t len = 0;
    pthread_mutex_lock(&fbc_sym_lock);
    unsigned named = fbc_attribute(e, infos, &a);
    for (unsigned i = named; i < e->nframes && i < 8; i++)
        fbc_symbolize(e->frames[i], i == 0, &infos[i]); /* the short stack printed below */
    bool fresh = first_time(a.op, a.site);
    c->stop = fbc_cfg.mode == FBC_MODE_ABORT && !fbc_allowed(a.op);
    FILE *f = fresh || c->stop ? open_memstream(&text, &len) : NULL;
    if (f) {
        fbc_rsite site = {.site = a.site, .file = a.site_file, .line = a.site_line};
        char where[1024];
        fbc_site_text(&site, where, sizeof where);
        fprintf(f, "fbcount: fallback: %s at %s\n", a.op, where);
        for (uint32_t i = 0; i < e->nframes && i < 8; i++) {
            const char *mod = infos[i].module >= 0 ? fbc_modmap_at((size_t)infos[i].module)->path : "?";
            const char *slash = strrchr(mod, '/');
            fprintf(f, "fbcount:   #%u %s (%s+0x%lx)\n", i, infos[i].symbol ? infos[i].symbol : "??",
                    slash ? slash + 1 : mod, (unsigned long)infos[i].offset);
        }
        if (c->stop)
            fprintf(f, "fbcount: FBCOUNT_MODE=abort: %s is not allowed (FBCOUNT_ALLOW); aborting\n",
                    a.op);
        fclose(f);
    }
    if (c->stop) {
        char op[201], site[201];
        snprintf(op, sizeof op, "%s", a.op);
        snprintf(site, sizeof site, "%s", a.site);
        json_safe(op);
        json_safe(site);
        snprintf(c->extra, sizeof c->extra,
                 "," FBR_KEY(FBR_ABORT) "{" FBR_KEY(FBR_OP) "\"%s\"," FBR_KEY(FBR_SITE) "\"%s\"}",
                 op, site);
    }
    pthread_mutex_unlock(&fbc_sym_lock);
    for (size_t off = 0; text && off < len;) {
        ssize_t k = write(2, text + off, len - off);
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    free(text);
    if (c->stop) {
        fbc_dump_req req = {.reason = FBR_REASON_EXIT, .extra_json = c->extra, .patient = true};
        fbc_dump_write(&req, NULL, NULL, 0);
        fbc_final_mark(); /* no second dump on SIGABRT, nor at exit */
    }
}

void fbc_mode_check(const fbc_entry *e)
{
    check c = {.e = e};
    fbc_run_big(run_check, &c);
    if (c.stop)
        abort();
}

static void prepare(void)
{
    pthread_mutex_lock(&seen_lock);
}

static void parent(void)
{
    pthread_mutex_unlock(&seen_lock);
}

/* The child warns anew: its census starts empty. */
static void child(void)
{
    pair *p, *t;
    HASH_ITER(hh, seen, p, t) {
        HASH_DEL(seen, p);
        free(p);
    }
    pthread_mutex_unlock(&seen_lock);
}

void fbc_modes_register(void)
{
    pthread_atfork(prepare, parent, child);
}
