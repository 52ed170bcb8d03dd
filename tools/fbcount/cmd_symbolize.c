/* cmd_symbolize.c - fbcount symbolize: name the raw frames of a crash dump.
 *
 * A crash dump is written from a signal handler, where symbolization is not safe, so its
 * frames carry module + offset only. Here libdwfl resolves them against the module files
 * (checked against the build ids the dump recorded), and stacks whose op could not be
 * named are attributed again, moving their counts out of the "(unknown)" op.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"
#include "readfile.h"
#include "table.h"
#include "text.h"

static const char help[] =
    "usage: fbcount symbolize [options] DUMP\n\n"
    "Resolves frames that have a module and offset but no symbol (crash dumps) to\n"
    "function and file:line with elfutils, re-attributes stacks whose op was unknown,\n"
    "writes the symbolized dump and prints its report.\n\n"
    "  -o, --output OUT   where to write (default: DUMP with .sym.json for .json); the\n"
    "                     file is replaced atomically, never written through a link\n"
    "  -q, --quiet        do not print the report\n"
    "  -V, --version      print the version\n"
    "  -h, --help         this text\n\n"
    "A module the dump names is read only when it is a regular file (a FIFO or a device\n"
    "is refused with one line, and its frames stay raw).\n\n";

typedef struct {
    Dwfl *dwfl;
    size_t n;
    const char **paths;
    Dwfl_Module **mods; /* NULL where the file is missing or its build id differs */
    GElf_Addr *bias;
    uint64_t *base, *size;
} modtab;

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

static void hex(const unsigned char *b, int n, char *out)
{
    for (int i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
    out[2 * n] = '\0';
}

static int open_modules(modtab *t, const fbd_dump *d)
{
    const fbd_module *m = fbd_modules(d, &t->n);
    t->dwfl = dwfl_begin(&callbacks);
    t->paths = calloc(t->n + 1, sizeof *t->paths);
    t->mods = calloc(t->n + 1, sizeof *t->mods);
    t->bias = calloc(t->n + 1, sizeof *t->bias);
    t->base = calloc(t->n + 1, sizeof *t->base);
    t->size = calloc(t->n + 1, sizeof *t->size);
    if (!t->dwfl || !t->paths || !t->mods || !t->bias || !t->base || !t->size)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        t->paths[i] = m[i].path;
        t->base[i] = m[i].base;
        t->size[i] = m[i].size;
        char e1[1200];
        fbx_escape(m[i].path, e1, sizeof e1, 0);
        /* The dump names the file: open it ourselves, without blocking and only when it is a
         * regular file, so a FIFO or a device named there cannot hang or feed us. */
        int fd = open(m[i].path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        struct stat sb;
        if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            fprintf(stderr, "fbcount: symbolize: %s: cannot open: %s (its frames stay raw)\n",
                    e1, fd < 0 ? strerror(errno) : "not a regular file");
            if (fd >= 0)
                close(fd);
            continue;
        }
        /* Reported at 0 without p_vaddr: a dwfl address is then the file's vaddr plus
         * the module's bias, and offsets relative to the load base are file vaddrs.
         * libdwfl owns fd from here. */
        Dwfl_Module *mod = dwfl_report_elf(t->dwfl, m[i].path, m[i].path, fd, 0, false);
        if (!mod) {
            fprintf(stderr, "fbcount: symbolize: %s: cannot open: %s (its frames stay raw)\n",
                    e1, dwfl_errmsg(-1));
            continue;
        }
        const unsigned char *bits;
        GElf_Addr vaddr;
        int len = dwfl_module_build_id(mod, &bits, &vaddr);
        if (m[i].build_id && len > 0 && len < 128) {
            char id[257];
            hex(bits, len, id);
            if (strcasecmp(id, m[i].build_id)) {
                char e2[600];
                fprintf(stderr, "fbcount: symbolize: %s: build id %s differs from the dump's "
                        "%s: the file changed since the crash (its frames stay raw)\n",
                        e1, id, fbx_escape(m[i].build_id, e2, sizeof e2, 0));
                continue;
            }
        }
        GElf_Addr bias = 0;
        if (!dwfl_module_getelf(mod, &bias))
            continue;
        t->mods[i] = mod;
        t->bias[i] = bias;
    }
    dwfl_report_end(t->dwfl, NULL, NULL);
    return 0;
}

static void close_modules(modtab *t)
{
    if (t->dwfl)
        dwfl_end(t->dwfl);
    free(t->paths);
    free(t->mods);
    free(t->bias);
    free(t->base);
    free(t->size);
}

/* Which module a frame lies in: by its module name, else by its ip within [base, size). */
static long module_of(const modtab *t, const fbd_frame *f, uint64_t *offset)
{
    for (size_t i = 0; f->module && f->has_offset && i < t->n; i++)
        if (!strcmp(t->paths[i], f->module)) {
            *offset = f->offset;
            return (long)i;
        }
    for (size_t i = 0; f->has_ip && i < t->n; i++)
        if (f->ip >= t->base[i] && f->ip - t->base[i] < t->size[i]) {
            *offset = f->ip - t->base[i];
            return (long)i;
        }
    return -1;
}

static bool has_prefix(const char *s, const char *const *pre, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        if (!strncmp(s, pre[i], strlen(pre[i])))
            return true;
    return false;
}

/* Moves a stack's count and bytes from the "(unknown)" op entry to its new op. */
static void move_counts(json_t *ops, const char *op, const char *site, json_int_t count,
                        json_int_t bytes, json_int_t max_bytes)
{
    json_t *from = NULL, *to = NULL, *e;
    size_t i;
    json_array_foreach(ops, i, e) {
        const char *name = json_string_value(json_object_get(e, "op"));
        if (name && !strcmp(name, "(unknown)"))
            from = e;
        else if (name && !strcmp(name, op))
            to = e;
    }
    if (from) {
        json_int_t c = json_integer_value(json_object_get(from, "count")) - count;
        json_int_t b = json_integer_value(json_object_get(from, "bytes")) - bytes;
        json_object_set_new(from, "count", json_integer(c > 0 ? c : 0));
        json_object_set_new(from, "bytes", json_integer(b > 0 ? b : 0));
    }
    if (!to) {
        to = json_pack("{s:s,s:I,s:I,s:I,s:[],s:[]}", "op", op, "count", (json_int_t)0, "bytes",
                       (json_int_t)0, "max_bytes", (json_int_t)0, "shapes", "sites");
        if (!to || json_array_append_new(ops, to) != 0)
            return;
    }
    json_object_set_new(to, "count",
                        json_integer(json_integer_value(json_object_get(to, "count")) + count));
    json_object_set_new(to, "bytes",
                        json_integer(json_integer_value(json_object_get(to, "bytes")) + bytes));
    if (max_bytes > json_integer_value(json_object_get(to, "max_bytes")))
        json_object_set_new(to, "max_bytes", json_integer(max_bytes));
    json_t *sites = json_object_get(to, "sites");
    if (json_is_array(sites))
        json_array_append_new(sites, json_pack("{s:s,s:I,s:I}", "site", site, "count", count,
                                               "bytes", bytes));
}

/* Drops emptied "(unknown)" entries; the contract orders ops by bytes, then count. */
static void tidy_ops(json_t *ops)
{
    size_t n = json_array_size(ops);
    for (size_t i = n; i-- > 0;) {
        json_t *e = json_array_get(ops, i);
        if (!strcmp(json_string_value(json_object_get(e, "op")), "(unknown)") &&
            json_integer_value(json_object_get(e, "count")) == 0)
            json_array_remove(ops, i);
    }
    n = json_array_size(ops);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0; j--) {
            json_t *a = json_array_get(ops, j - 1), *b = json_array_get(ops, j);
            json_int_t ab = json_integer_value(json_object_get(a, "bytes"));
            json_int_t bb = json_integer_value(json_object_get(b, "bytes"));
            json_int_t ac = json_integer_value(json_object_get(a, "count"));
            json_int_t bc = json_integer_value(json_object_get(b, "count"));
            if (ab > bb || (ab == bb && ac >= bc))
                break;
            json_incref(a);
            json_array_remove(ops, j - 1);
            json_array_insert_new(ops, j, a);
        }
}

/* Writes each frame_table index in the stacks out as a copy of the frame it names, so every
 * frame can be symbolized in place; the table is dropped. */
static void expand_frame_table(json_t *root)
{
    json_t *table = json_object_get(root, "frame_table"), *st, *fr;
    size_t i, j;
    if (!json_is_array(table))
        return;
    json_array_foreach(json_object_get(root, "stacks"), i, st) {
        json_t *frames = json_object_get(st, "frames");
        json_array_foreach(frames, j, fr) {
            if (json_is_integer(fr))
                json_array_set_new(frames, j, json_deep_copy(json_array_get(
                                                  table, (size_t)json_integer_value(fr))));
        }
    }
    json_object_del(root, "frame_table");
}

/* Symbolizes every frame in place; returns the number of frames resolved. */
static size_t symbolize(fbd_dump *d, json_t *root, const modtab *t)
{
    json_t *jstacks = json_object_get(root, "stacks");
    size_t nst, np, resolved = 0;
    const fbd_stack *st = fbd_stacks(d, &nst);
    const char *const *pre = fbd_op_prefixes(d, &np);
    for (size_t s = 0; s < nst; s++) {
        json_t *js = json_array_get(jstacks, s);
        json_t *jframes = json_object_get(js, "frames");
        /* Names as they end up: kept for attribution after the loop. */
        const char **names = calloc(st[s].nframes + 1, sizeof *names);
        long *mods = calloc(st[s].nframes + 1, sizeof *mods);
        if (!names || !mods) {
            free(names);
            free(mods);
            continue;
        }
        for (size_t f = 0; f < st[s].nframes; f++) {
            const fbd_frame *fr = st[s].frames[f];
            json_t *jf = json_array_get(jframes, f);
            uint64_t off = 0;
            long m = module_of(t, fr, &off);
            mods[f] = m;
            names[f] = fr->symbol;
            if (fr->symbol || m < 0 || !t->mods[m])
                continue;
            Dwarf_Addr addr = off + t->bias[m] - (f ? 1 : 0);
            GElf_Off symoff;
            GElf_Sym sym;
            const char *name = dwfl_module_addrinfo(t->mods[m], addr, &symoff, &sym, NULL, NULL,
                                                    NULL);
            if (!name)
                continue;
            json_object_set_new(jf, "symbol", json_string(name));
            names[f] = json_string_value(json_object_get(jf, "symbol"));
            resolved++;
            Dwfl_Line *line = dwfl_module_getsrc(t->mods[m], addr);
            int lineno = 0;
            const char *src = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
            if (src && !fr->file) {
                json_object_set_new(jf, "file", json_string(src));
                if (lineno > 0)
                    json_object_set_new(jf, "line", json_integer(lineno));
            }
        }
        if (!strcmp(st[s].op, "(unknown)")) {
            size_t opf = st[s].nframes;
            for (size_t f = 0; f < st[s].nframes && opf == st[s].nframes; f++)
                if (has_prefix(names[f], pre, np))
                    opf = f;
            if (opf < st[s].nframes) {
                const char *site = "(unknown)";
                for (size_t f = opf + 1; f < st[s].nframes; f++)
                    if (mods[f] != mods[opf]) {
                        site = names[f] ? names[f] : "(unknown)";
                        break;
                    }
                char *op = strdup(names[opf]), *sitecp = strdup(site);
                if (op && sitecp) {
                    json_object_set_new(js, "op", json_string(op));
                    json_object_set_new(js, "site", json_string(sitecp));
                    move_counts(json_object_get(root, st[s].kind == FBD_HOST ? "host_ops" : "ops"),
                                op, sitecp, (json_int_t)st[s].count, (json_int_t)st[s].bytes,
                                (json_int_t)st[s].max_bytes);
                }
                free(op);
                free(sitecp);
            }
        }
        free(names);
        free(mods);
    }
    tidy_ops(json_object_get(root, "ops"));
    tidy_ops(json_object_get(root, "host_ops"));
    json_object_set_new(root, "symbolized", json_true());
    return resolved;
}

int fbx_symbolize(int argc, char **argv)
{
    static const struct option longopts[] = {{"output", required_argument, 0, 'o'},
                                             {"quiet", no_argument, 0, 'q'},
                                             {"version", no_argument, 0, 'V'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    const char *out = NULL;
    bool quiet = false;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "ho:qV", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o': out = optarg; break;
        case 'q': quiet = true; break;
        case 'V': fbx_version(); return fbx_finish("symbolize", FBX_OK);
        case 'h': fputs(help, stdout); fputs(fbx_exit_codes, stdout); return FBX_OK;
        default:
            fbx_error("symbolize", "unknown or incomplete option '%s' (try --help)",
                      argv[optind - 1]);
            return FBX_USAGE;
        }
    }
    if (argc - optind != 1) {
        fbx_error("symbolize", "expected one dump (try --help)");
        return FBX_USAGE;
    }
    const char *in = argv[optind];
    char outbuf[PATH_MAX], err[512];
    if (!out) {
        size_t l = strlen(in);
        if (l > 5 && !strcmp(in + l - 5, ".json"))
            snprintf(outbuf, sizeof outbuf, "%.*s.sym.json", (int)(l - 5), in);
        else
            snprintf(outbuf, sizeof outbuf, "%s.sym.json", in);
        out = outbuf;
    }
    /* Validated by the reader; rewritten from the whole document, which the reader does
     * not keep (it streams the stacks). */
    size_t len = 0;
    char *text = fbr_read_file(in, FBD_MAX_FILE_BYTES, &len);
    fbd_status st = FBD_EREAD;
    fbd_dump *d = NULL;
    if (!text) {
        int e = errno;
        char why[128];
        if (e == ENOENT || e == EACCES)
            snprintf(err, sizeof err, "%s: cannot open: %s", in, strerror(e));
        else
            snprintf(err, sizeof err, "%s: %s", in,
                     fbr_read_error(e, FBD_MAX_FILE_BYTES, why, sizeof why));
        st = e == EFBIG ? FBD_EINVALID : FBD_EREAD;
    } else {
        d = fbd_load_buffer(text, len, in, &st, err, sizeof err);
    }
    json_error_t jerr;
    json_t *root = d ? json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
    free(text);
    if (!d || !root) {
        if (d)
            snprintf(err, sizeof err, "%s: out of memory", in);
        char e1[1200];
        fbx_error("symbolize", "%s", fbx_escape(err, e1, sizeof e1, 0));
        fbd_free(d);
        return st == FBD_EREAD ? FBX_READ : FBX_INVALID;
    }
    modtab t = {0};
    if (open_modules(&t, d) != 0) {
        fbx_error("symbolize", "out of memory");
        close_modules(&t);
        fbd_free(d);
        json_decref(root);
        return FBX_SYMBOLS;
    }
    expand_frame_table(root);
    size_t resolved = symbolize(d, root, &t);
    close_modules(&t);
    fbd_free(d);
    fbo_file o;
    int rc = fbo_open(&o, out, err, sizeof err);
    if (rc == 0) {
        bool ok = json_dumpf(root, o.f, JSON_INDENT(1)) == 0;
        rc = fbo_close(&o, ok, err, sizeof err);
        if (!ok && rc == 0)
            rc = -1;
    }
    json_decref(root);
    if (rc != 0) {
        char e1[1200];
        fbx_error("symbolize", "%s", fbx_escape(err, e1, sizeof e1, 0));
        return FBX_WRITE;
    }
    char e1[1200];
    fprintf(stderr, "fbcount: symbolize: %zu frame%s resolved; wrote %s\n", resolved,
            resolved == 1 ? "" : "s", fbx_escape(out, e1, sizeof e1, 0));
    if (quiet)
        return FBX_OK;
    int code;
    char *paths[] = {(char *)out};
    fbm_census *c = fbx_load("symbolize", paths, 1, &code);
    if (!c)
        return code;
    fbt_opts to = {.width = fbt_term_width(stdout)};
    fbt_print_census(stdout, c, &to);
    fbm_census_free(c);
    return fbx_finish("symbolize", FBX_OK);
}
