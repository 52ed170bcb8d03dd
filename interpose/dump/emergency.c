/* emergency.c - the raw census: the recorded stacks as raw frames (module + offset, named
 * later), each distinct frame once in the frame table, and the module map. Nothing here
 * allocates, locks or uses stdio, and it needs little stack (an application's alternate
 * signal stack may be the legacy 8 KiB): a fatal signal's handler writes it (crash dumps),
 * and every final dump writes it first, so that a process killed while its frames are named
 * still leaves its census. `fbcount symbolize` names the frames afterwards. The trigger
 * (triggers/crash.c) makes sure only one thread writes a crash dump. */
#include <string.h>
#include <unistd.h>

#include "dump.h"
#include "fields.h"
#include "signals.h"

static char cbuf[1 << 16];
static char path[2048], tmp[2200];

static void write_unknown_op(fbc_writer *w, const char *key, const uint64_t v[4])
{
    fbc_w_str(w, key);
    if (v[0]) {
        fbc_w_num(w, "{" FBR_KEY(FBR_OP) "\"" FBR_UNKNOWN "\"," FBR_KEY(FBR_COUNT), v[0]);
        fbc_w_num(w, "," FBR_KEY(FBR_BYTES), v[1]);
        fbc_w_num(w, "," FBR_KEY(FBR_MAX_BYTES), v[2]);
        fbc_w_num(w, "," FBR_KEY(FBR_NS), v[3]);
        fbc_w_str(w, "," FBR_KEY(FBR_SHAPES) "[]," FBR_KEY(FBR_SITES) "[]}");
    }
    fbc_w_raw(w, "]", 1);
}

/* The backends seen, each with the modules that define its exits; their counters are not
 * read here (a backend's function, in a process that is dying). */
static void write_backends(fbc_writer *w)
{
    fbc_w_str(w, "," FBR_KEY(FBR_BACKENDS) "[");
    size_t n = fbc_bmod_count();
    for (size_t i = 0; i < n; i++) {
        const fbc_bmod *b = fbc_bmod_at(i);
        fbc_w_str(w, i ? ",{" FBR_KEY(FBR_NAME) : "{" FBR_KEY(FBR_NAME));
        fbc_w_json(w, b->row->name);
        fbc_w_str(w, "," FBR_KEY(FBR_MODULES) "[");
        fbc_w_json(w, b->path);
        fbc_w_str(w, "]," FBR_KEY(FBR_COUNTERS) "null}");
    }
    fbc_w_raw(w, "]", 1);
}

/* Every recorded stack, shard by shard, without a lock: lists only grow at one end and
 * entries never move. A stack recorded by two threads is listed twice; readers merge it. */
#define FOR_EACH_ENTRY(e)                                                                          \
    for (fbc_shard *sh_ = fbc_shards_first(); sh_; sh_ = sh_->next)                                \
        for (fbc_entry *e = __atomic_load_n(&sh_->table.head, __ATOMIC_ACQUIRE); e;                \
             e = __atomic_load_n(&e->next, __ATOMIC_ACQUIRE))

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* The frame table of one raw census: each distinct address once, by a static open-address
 * table (no allocation); a frame past its room is written out in full where it is used. One
 * writer at a time has it: another (a crash during the exit's raw census) writes in full. */
#define RAW_SLOTS 16384
#define RAW_FRAMES (RAW_SLOTS / 2)
static uintptr_t raw_key[RAW_SLOTS]; /* ip + 1; 0: free */
static uint32_t raw_at[RAW_SLOTS];
static uintptr_t raw_ip[RAW_FRAMES];
static uint32_t raw_n;
static int raw_busy;

/* The table index of ip (added the first time), or -1: no table, or no room. */
static long raw_index(bool table, uintptr_t ip)
{
    if (!table)
        return -1;
    size_t i = (size_t)((ip * 0x9e3779b97f4a7c15ull) >> 40) & (RAW_SLOTS - 1);
    for (; raw_key[i]; i = (i + 1) & (RAW_SLOTS - 1))
        if (raw_key[i] == ip + 1)
            return raw_at[i];
    if (raw_n == RAW_FRAMES)
        return -1;
    raw_key[i] = ip + 1;
    raw_at[i] = raw_n;
    raw_ip[raw_n] = ip;
    return raw_n++;
}

static void write_native(fbc_writer *w, uintptr_t ip)
{
    fbc_w_str(w, "{" FBR_KEY(FBR_IP));
    fbc_w_hex(w, ip);
    long mi = fbc_modmap_find(ip);
    if (mi >= 0) {
        const fbc_module *mod = fbc_modmap_at((size_t)mi);
        fbc_w_str(w, "," FBR_KEY(FBR_MODULE));
        fbc_w_json(w, mod->path);
        fbc_w_str(w, "," FBR_KEY(FBR_OFFSET));
        fbc_w_hex(w, ip - mod->base);
    }
    fbc_w_raw(w, "}", 1);
}

static void write_entry(fbc_writer *w, const fbc_entry *e, bool first, bool table)
{
    const fbc_bmod *b = fbc_bmod_at(FBC_BACKEND_BMOD(e->backend));
    fbc_w_str(w, first ? "{" FBR_KEY(FBR_KIND) : ",{" FBR_KEY(FBR_KIND));
    fbc_w_json(w, fbc_kind_name((fbc_kind)e->kind));
    /* A reader's name for the op is a string interned for the life of the process. */
    fbc_w_str(w, "," FBR_KEY(FBR_OP));
    fbc_w_json(w, e->op ? (const char *)e->op : FBR_UNKNOWN);
    fbc_w_num(w, "," FBR_KEY(FBR_SITE) "\"" FBR_UNKNOWN "\"," FBR_KEY(FBR_COUNT), LOAD(e->count));
    fbc_w_num(w, "," FBR_KEY(FBR_BYTES), LOAD(e->bytes));
    fbc_w_num(w, "," FBR_KEY(FBR_MAX_BYTES), LOAD(e->max_bytes));
    fbc_w_num(w, "," FBR_KEY(FBR_NS), LOAD(e->ns));
    fbc_w_num(w, "," FBR_KEY(FBR_MAX_NS), LOAD(e->max_ns));
    fbc_w_str(w, "," FBR_KEY(FBR_BACKEND_NAME));
    fbc_w_json(w, b ? b->row->name : FBR_BACKEND_DEFAULT);
    if (b && !b->sizes)
        fbc_w_str(w, "," FBR_KEY(FBR_BYTES_KNOWN) "false");
    fbc_w_str(w, "," FBR_KEY(FBR_FRAMES) "[");
    for (uint32_t f = 0; f < e->nframes; f++) {
        if (f)
            fbc_w_raw(w, ",", 1);
        long at = raw_index(table, e->frames[f]);
        if (at >= 0)
            fbc_w_u64(w, (uint64_t)at);
        else
            write_native(w, e->frames[f]);
    }
    /* Python frames were interned at record time; their strings live as long as the process. */
    for (uint32_t k = 0; k < e->npy; k++) {
        const fbc_pyframe *p = (const fbc_pyframe *)(e->frames[e->nframes + k] & ~(uintptr_t)1);
        fbc_w_str(w, e->nframes || k ? ",{" FBR_KEY(FBR_PYTHON) "true," FBR_KEY(FBR_SYMBOL)
                                     : "{" FBR_KEY(FBR_PYTHON) "true," FBR_KEY(FBR_SYMBOL));
        fbc_w_json(w, p->function);
        fbc_w_str(w, "," FBR_KEY(FBR_FILE));
        fbc_w_json(w, p->file);
        fbc_w_num(w, "," FBR_KEY(FBR_LINE), (uint64_t)(p->line > 0 ? p->line : 0));
        fbc_w_raw(w, "}", 1);
    }
    fbc_w_str(w, "]}");
}

void fbc_dump_raw(fbc_writer *w, const char *reason, int sig, int seq)
{
    uint64_t v[FBC_KINDS][4] = {{0}}, stacks = 0;
    FOR_EACH_ENTRY(e)
    {
        unsigned k = e->kind < FBC_KINDS ? e->kind : FBC_FALLBACK;
        uint64_t mb = LOAD(e->max_bytes);
        v[k][0] += LOAD(e->count);
        v[k][1] += LOAD(e->bytes);
        v[k][2] = mb > v[k][2] ? mb : v[k][2];
        v[k][3] += LOAD(e->ns);
        stacks++;
    }
    fbc_dump_head(w, reason, seq);
    if (sig) {
        fbc_w_num(w, "," FBR_KEY(FBR_SIGNAL), (uint64_t)sig);
        fbc_w_str(w, "," FBR_KEY(FBR_SIGNAL_NAME));
        fbc_w_json(w, fbr_signal_name(sig));
    }
    fbc_w_num(w, "," FBR_KEY(FBR_SYMBOLIZED) "false," FBR_KEY(FBR_TOTAL) "{" FBR_KEY(FBR_FALLBACKS),
              v[0][0]);
    fbc_w_num(w, "," FBR_KEY(FBR_BYTES), v[0][1]);
    fbc_w_num(w, "," FBR_KEY(FBR_MAX_BYTES), v[0][2]);
    fbc_w_num(w, "," FBR_KEY(FBR_NS), v[0][3]);
    fbc_w_num(w, "," FBR_KEY(FBR_HOST_OPS), v[1][0]);
    fbc_w_num(w, "," FBR_KEY(FBR_HOST_BYTES), v[1][1]);
    fbc_w_num(w, "," FBR_KEY(FBR_HOST_NS), v[1][3]);
    fbc_w_num(w, "," FBR_KEY(FBR_TRANSFERS), v[2][0]);
    fbc_w_num(w, "," FBR_KEY(FBR_TRANSFER_BYTES), v[2][1]);
    fbc_w_num(w, "," FBR_KEY(FBR_TRANSFER_NS), v[2][3]);
    fbc_w_num(w, "," FBR_KEY(FBR_SPLITS), v[3][0]);
    fbc_w_num(w, "," FBR_KEY(FBR_SPLIT_BYTES), v[3][1]);
    fbc_w_num(w, "," FBR_KEY(FBR_SPLIT_NS), v[3][3]);
    fbc_w_num(w, "," FBR_KEY(FBR_STACKS), stacks);
    fbc_w_str(w, "}," FBR_KEY(FBR_BACKEND) "null");
    write_backends(w);
    write_unknown_op(w, "," FBR_KEY(FBR_OPS) "[", v[0]);
    write_unknown_op(w, "," FBR_KEY(FBR_HOST_OPS) "[", v[1]);
    write_unknown_op(w, "," FBR_KEY(FBR_TRANSFERS) "[", v[2]);
    write_unknown_op(w, "," FBR_KEY(FBR_SPLITS) "[", v[3]);
    int free_ = 0;
    bool table = __atomic_compare_exchange_n(&raw_busy, &free_, 1, false, __ATOMIC_ACQUIRE,
                                             __ATOMIC_RELAXED);
    if (table) {
        memset(raw_key, 0, sizeof raw_key);
        raw_n = 0;
    }
    fbc_w_str(w, "," FBR_KEY(FBR_STACKS) "[");
    bool first = true;
    FOR_EACH_ENTRY(e)
    {
        write_entry(w, e, first, table);
        first = false;
    }
    fbc_w_str(w, "]," FBR_KEY(FBR_FRAME_TABLE) "[");
    for (uint32_t i = 0; table && i < raw_n; i++) {
        if (i)
            fbc_w_raw(w, ",", 1);
        write_native(w, raw_ip[i]);
    }
    fbc_w_raw(w, "]", 1);
    if (table)
        __atomic_store_n(&raw_busy, 0, __ATOMIC_RELEASE);
    fbc_dump_modules(w);
    fbc_w_str(w, "}\n");
}

const char *fbc_dump_raw_file(const char *reason, int sig)
{
    int seq = __atomic_add_fetch(&fbc_seq, 1, __ATOMIC_RELAXED);
    if (!fbc_output_path(fbc_output_tmpl, seq, path, sizeof path, NULL))
        return NULL;
    int fd = fbc_output_open(path, tmp, sizeof tmp);
    if (fd < 0)
        return NULL;
    fbc_writer w;
    fbc_w_init(&w, fd, cbuf, sizeof cbuf);
    fbc_dump_raw(&w, reason, sig, seq);
    fbc_w_flush(&w);
    return fbc_output_commit(fd, tmp, path, !w.failed, false) == 0 ? path : NULL;
}

void fbc_dump_emergency(int sig)
{
    if (!fbc_dump_raw_file(FBR_REASON_CRASH, sig))
        return;
    static const char msg1[] = "fbcount: fatal signal; census written to ";
    if (write(2, msg1, sizeof msg1 - 1) > 0 && write(2, path, strlen(path)) > 0)
        (void)!write(2, "\n", 1);
}
