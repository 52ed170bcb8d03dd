/* pyframes.c - the calling thread's Python stack, read the way py-spy and pystack read it:
 * from the interpreter's own frame records, without the GIL. The thread that fell back is
 * inside a call out of Python (ctypes, cffi, an extension), so its frames cannot change
 * while they are read; taking the GIL instead would deadlock where another thread holds the
 * GIL while waiting for a lock this thread holds.
 *
 * The layouts are CPython 3.11's (Debian 12's) and 3.12's (Ubuntu 24.04's), one row each in
 * the table below (offsets from the x86-64 headers: cpython/pystate.h, internal/pycore_frame.h,
 * cpython/code.h, cpython/unicodeobject.h); every object read is checked to be of the type it
 * should be (a code object, a str), and any other version is named once in a warning and
 * read not at all. A frame that begins a C-level evaluation ("entry") is marked by a flag of
 * its own in 3.11, and in 3.12 by the C stack's shim frame (owner FRAME_OWNED_BY_CSTACK)
 * that lies before it, which is skipped. A frame is interned as (file, function, line) for the life
 * of the process, so stacks name it by a pointer and a crash dump can still write it; bit 0 of
 * that pointer marks the frame a C-level evaluation began with ("entry"), which is where the
 * Python frames are merged into the native stack. Nothing here runs outside a Python
 * process, and in one only while an event is recorded. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

/* Offsets on x86-64, by minor version of CPython 3. */
typedef struct {
    int minor;
    int ts_cframe;  /* PyThreadState.cframe */
    int cf_current; /* _PyCFrame.current_frame */
    int fr_code, fr_previous, fr_prev_instr;
    int fr_is_entry; /* _PyInterpreterFrame.is_entry; -1: marked by a shim frame instead */
    int fr_owner;
    int owned_by_cstack;      /* the C stack's shim frame's owner value; -1: none */
    int co_filename, co_name; /* co_name: the function's name, as py-spy and memray show it */
    int co_firsttraceable;
    int co_code;          /* co_code_adaptive: the instructions */
    int str_ascii_data;   /* after PyASCIIObject */
    int str_utf8;         /* PyCompactUnicodeObject.utf8 (NULL until asked for) */
    int str_compact_data; /* after PyCompactUnicodeObject */
} layout;

static const layout layouts[] = {
    {.minor = 11,
     .ts_cframe = 56,
     .cf_current = 8,
     .fr_code = 32,
     .fr_previous = 48,
     .fr_prev_instr = 56,
     .fr_is_entry = 68,
     .fr_owner = 69,
     .owned_by_cstack = -1,
     .co_filename = 112,
     .co_name = 120,
     .co_firsttraceable = 168,
     .co_code = 184,
     .str_ascii_data = 48,
     .str_utf8 = 56,
     .str_compact_data = 72},
    {.minor = 12,
     .ts_cframe = 56,
     .cf_current = 0,
     .fr_code = 0,
     .fr_previous = 8,
     .fr_prev_instr = 56,
     .fr_is_entry = -1,
     .fr_owner = 70,
     .owned_by_cstack = 3,
     .co_filename = 112,
     .co_name = 120,
     .co_firsttraceable = 176,
     .co_code = 192,
     .str_ascii_data = 40,
     .str_utf8 = 48,
     .str_compact_data = 56},
};

/* The same in every version read. */
enum {
    TS_INTERP = 16, /* PyThreadState.interp */
    OWNED_BY_GENERATOR = 1,
    OB_TYPE = 8,
    STR_LENGTH = 16,
    STR_STATE = 32,
};

static const layout *L; /* the running interpreter's row */

typedef void *(*tstate_fn)(void);
typedef int (*addr2line_fn)(void *code, int addr);

static int state; /* 0 not looked, 1 a usable CPython, 2 none or unusable */
static tstate_fn this_thread;
static tstate_fn main_interp;
static addr2line_fn addr2line;
static const void *code_type, *str_type;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void look(void)
{
    void *v = dlsym(RTLD_DEFAULT, "Py_Version"), *gv = dlsym(RTLD_DEFAULT, "Py_GetVersion");
    if (!v && !gv)
        return; /* not a Python process */
    unsigned long version = v ? *(const unsigned long *)v : 0;
    int major = (int)(version >> 24 & 0xff), minor = (int)(version >> 16 & 0xff);
    if (!v) {
        const char *(*get)(void);
        memcpy(&get, &gv, sizeof get);
        const char *s = get();
        major = atoi(s);
        minor = strchr(s, '.') ? atoi(strchr(s, '.') + 1) : 0;
    }
    const layout *row = NULL;
    for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++)
        if (major == 3 && layouts[i].minor == minor)
            row = &layouts[i];
    if (!row) {
        fbc_warn("Python frames unavailable for %d.%d (read for 3.11 and 3.12); sites name C "
                 "frames",
                 major, minor);
        return;
    }
    void *a = dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
    void *b = dlsym(RTLD_DEFAULT, "PyInterpreterState_Main");
    void *c = dlsym(RTLD_DEFAULT, "PyCode_Addr2Line");
    code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
    str_type = dlsym(RTLD_DEFAULT, "PyUnicode_Type");
    if (!a || !b || !c || !code_type || !str_type) {
        fbc_warn("Python frames unavailable: this Python 3.%d lacks the functions to read them",
                 minor);
        return;
    }
    L = row;
    memcpy(&this_thread, &a, sizeof a);
    memcpy(&main_interp, &b, sizeof b);
    memcpy(&addr2line, &c, sizeof c);
    __atomic_store_n(&state, 1, __ATOMIC_RELEASE);
}

#define AT(p, off, type) (*(type *)((const char *)(p) + (off)))

/* A str's text, as UTF-8 into buf; "" when it is not a compact str. */
static const char *text(const void *s, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (!s || AT(s, OB_TYPE, const void *) != str_type)
        return buf;
    size_t len = (size_t)AT(s, STR_LENGTH, long);
    unsigned st = AT(s, STR_STATE, unsigned);
    unsigned kind = st >> 2 & 7, compact = st >> 5 & 1, ascii = st >> 6 & 1;
    if (!compact)
        return buf;
    if (ascii) {
        size_t n = len < cap - 1 ? len : cap - 1;
        memcpy(buf, (const char *)s + L->str_ascii_data, n);
        buf[n] = '\0';
        return buf;
    }
    const char *utf8 = AT(s, L->str_utf8, const char *);
    if (utf8) {
        snprintf(buf, cap, "%s", utf8);
        return buf;
    }
    /* Code points of 1, 2 or 4 bytes, written out as UTF-8. */
    const unsigned char *d = (const unsigned char *)s + L->str_compact_data;
    size_t o = 0;
    for (size_t i = 0; i < len && o + 5 < cap; i++) {
        unsigned cp = kind == 1   ? d[i]
                      : kind == 2 ? ((const uint16_t *)d)[i]
                                  : ((const uint32_t *)d)[i];
        if (cp < 0x80) {
            buf[o++] = (char)cp;
        } else if (cp < 0x800) {
            buf[o++] = (char)(0xc0 | cp >> 6);
            buf[o++] = (char)(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
            buf[o++] = (char)(0xe0 | cp >> 12);
            buf[o++] = (char)(0x80 | (cp >> 6 & 0x3f));
            buf[o++] = (char)(0x80 | (cp & 0x3f));
        } else {
            buf[o++] = (char)(0xf0 | cp >> 18);
            buf[o++] = (char)(0x80 | (cp >> 12 & 0x3f));
            buf[o++] = (char)(0x80 | (cp >> 6 & 0x3f));
            buf[o++] = (char)(0x80 | (cp & 0x3f));
        }
    }
    buf[o] = '\0';
    return buf;
}

/* Interned frames, by the code object, its name objects and the line: a code object freed
 * and another made at its address with the very same name objects is all that could fool it. */
typedef struct {
    UT_hash_handle hh;
    struct {
        const void *code, *file, *name;
        long line;
    } key;
    fbc_pyframe frame;
} interned;

static interned *table;

static const fbc_pyframe *intern(const void *code, int line)
{
    const void *file = AT(code, L->co_filename, const void *);
    const void *name = AT(code, L->co_name, const void *);
    interned probe, *e;
    memset(&probe.key, 0, sizeof probe.key);
    probe.key.code = code;
    probe.key.file = file;
    probe.key.name = name;
    probe.key.line = line;
    pthread_mutex_lock(&lock);
    HASH_FIND(hh, table, &probe.key, sizeof probe.key, e);
    if (!e && (e = calloc(1, sizeof *e))) {
        char f[1024], n[512];
        e->key = probe.key;
        e->frame.file = strdup(text(file, f, sizeof f));
        e->frame.function = strdup(text(name, n, sizeof n));
        e->frame.line = line;
        if (!e->frame.file || !e->frame.function) {
            free((void *)e->frame.file);
            free((void *)e->frame.function);
            free(e);
            e = NULL;
        } else {
            HASH_ADD(hh, table, key, sizeof e->key, e);
        }
    }
    pthread_mutex_unlock(&lock);
    return e ? &e->frame : NULL;
}

/* Each thread's last frames, by code object and instruction: a loop that falls back again
 * and again from the same lines costs a few loads a frame, not a line-table walk, a lock and
 * a hash. Checked against the name objects too, like the table. */
#define RECENT 64
typedef struct {
    const void *code, *instr, *file, *name;
    const fbc_pyframe *frame;
} recent;

static __thread recent *mine __attribute__((tls_model("initial-exec")));
static pthread_key_t recent_key;
static pthread_once_t recent_once = PTHREAD_ONCE_INIT;

/* At the thread's end; a capture after it starts a new table (freed by the next round). */
static void drop(void *r)
{
    mine = NULL;
    free(r);
}

static void make_key(void)
{
    if (pthread_key_create(&recent_key, drop) != 0)
        recent_key = (pthread_key_t)-1;
}

static const fbc_pyframe *frame_at(const void *code, const char *instr, const char *first)
{
    const void *file = AT(code, L->co_filename, const void *);
    const void *name = AT(code, L->co_name, const void *);
    if (!mine) {
        pthread_once(&recent_once, make_key);
        mine = calloc(RECENT, sizeof *mine);
        if (mine && recent_key != (pthread_key_t)-1)
            pthread_setspecific(recent_key, mine);
    }
    recent *r = mine ? &mine[((uintptr_t)code >> 4 ^ (uintptr_t)instr) % RECENT] : NULL;
    if (r && r->code == code && r->instr == instr && r->file == file && r->name == name)
        return r->frame;
    int line = addr2line((void *)code, (int)(instr - first));
    const fbc_pyframe *f = intern(code, line);
    if (r && f)
        *r = (recent){code, instr, file, name, f};
    return f;
}

int fbc_py_capture(uintptr_t *out, int max)
{
    int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (__builtin_expect(s == 2, 1))
        return 0;
    if (s == 0) {
        pthread_mutex_lock(&lock);
        if (!state) {
            look();
            if (!__atomic_load_n(&state, __ATOMIC_RELAXED))
                __atomic_store_n(&state, 2, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&lock);
        if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 1)
            return 0;
    }
    void *ts = this_thread(); /* the thread's own state, from thread-specific data: no GIL */
    if (!ts || AT(ts, TS_INTERP, void *) != main_interp())
        return 0; /* not a Python thread, or a subinterpreter's */
    const void *cf = AT(ts, L->ts_cframe, const void *);
    const void *fr = cf ? AT(cf, L->cf_current, const void *) : NULL;
    int n = 0;
    bool after_shim = false; /* 3.12: the frame read last lies on a C stack shim frame */
    for (int guard = 0; fr && n < max && guard < 4096;
         guard++, fr = AT(fr, L->fr_previous, const void *)) {
        char owner = AT(fr, L->fr_owner, char);
        if (owner == L->owned_by_cstack) {
            if (n > 0 && !after_shim)
                out[n - 1] |= 1; /* the frame on it began a C-level evaluation */
            after_shim = true;
            continue;
        }
        after_shim = false;
        const void *code = AT(fr, L->fr_code, const void *);
        if (!code || AT(code, OB_TYPE, const void *) != code_type)
            break; /* not the layout this reads: stop rather than guess */
        const char *first = (const char *)code + L->co_code;
        const char *instr = AT(fr, L->fr_prev_instr, const char *);
        int traceable = AT(code, L->co_firsttraceable, int);
        if (owner != OWNED_BY_GENERATOR && instr < first + 2 * traceable)
            continue; /* a frame still being set up: not yet running its code */
        const fbc_pyframe *f = frame_at(code, instr, first);
        if (!f)
            break;
        bool entry = L->fr_is_entry >= 0 && AT(fr, L->fr_is_entry, bool);
        out[n++] = (uintptr_t)f | entry;
    }
    return n;
}
