/* flame.c - collapsed stacks and the SVG flame graph.
 *
 * The SVG is laid out here, once, in absolute coordinates, so it renders without script;
 * the small inline script only re-lays it out on zoom, from the fractions stored on each
 * frame (data-x, data-w: position and width as fractions of the root).
 */
#include "flame.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"
#include "text.h"
#include "units.h"

/* Stack rows of both kinds, with the frames a graph draws, outermost first: the row's, or
 * with --user-only the program's own and the op; a stack without frames is shown as
 * site;op so it still appears. */
typedef struct {
    const fbm_row *row;
    const char *const *frames;
    size_t n;
    const char *own[2];
} flame_stack;

/* The user's frames of a row and its op, outermost first, into out (nframes + 1 long). */
static size_t user_frames(const fbm_row *r, const char **out)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nframes; i++)
        if (r->roles[i] == FBM_ROLE_USER)
            out[n++] = r->labels[i];
    out[n++] = r->op ? r->op : "(unknown)";
    return n;
}

static void free_stacks(flame_stack *s, size_t n, bool user_only)
{
    for (size_t i = 0; user_only && s && i < n; i++)
        if (s[i].frames != s[i].own)
            free((void *)s[i].frames);
    free(s);
}

static size_t collect(fbm_census *c, bool user_only, flame_stack **out)
{
    size_t nf, nh;
    const fbm_row *f = fbm_census_rows(c, FBD_FALLBACK, FBM_BY_STACK, FBM_SORT_COUNT, &nf);
    const fbm_row *h = fbm_census_rows(c, FBD_HOST, FBM_BY_STACK, FBM_SORT_COUNT, &nh);
    flame_stack *s = calloc(nf + nh + 1, sizeof *s);
    if (!s)
        return (size_t)-1;
    for (size_t i = 0; i < nf + nh; i++) {
        const fbm_row *r = s[i].row = i < nf ? &f[i] : &h[i - nf];
        const char **mine =
            r->nframes && user_only ? malloc((r->nframes + 1) * sizeof *mine) : NULL;
        if (r->nframes && user_only && !mine) {
            free_stacks(s, i, true);
            return (size_t)-1;
        }
        if (mine) {
            s[i].n = user_frames(r, mine);
            s[i].frames = mine;
        } else if (r->nframes) {
            s[i].frames = r->labels;
            s[i].n = r->nframes;
        } else {
            const char *at = strstr(r->key, " @ ");
            s[i].own[0] = at ? at + 3 : "(unknown)";
            s[i].own[1] = r->op ? r->op : "?";
            s[i].frames = s[i].own;
            s[i].n = 2;
        }
    }
    *out = s;
    return nf + nh;
}

/* A folded line is "frame;frame weight": a ';' in a name would split the frame, and a
 * control character would reach whoever reads the file on a terminal. */
static void put_folded_name(FILE *out, const char *s)
{
    char buf[4096 * 4 + 1];
    fbx_escape(s, buf, sizeof buf, 0);
    for (char *p = buf; *p; p++)
        fputc(*p == ';' ? ':' : *p, out);
}

static uint64_t weight_of(const fbm_row *r, fbm_sort w)
{
    return w == FBM_SORT_BYTES ? r->bytes : w == FBM_SORT_TIME ? r->ns : r->count;
}

int fbf_folded(FILE *out, fbm_census *c, const fbt_opts *o)
{
    fbm_sort weight = o->weight;
    flame_stack *s;
    size_t n = collect(c, o->user_only, &s);
    if (n == (size_t)-1)
        return -1;
    for (size_t i = 0; i < n; i++) {
        uint64_t w = weight_of(s[i].row, weight);
        if (!w)
            continue;
        for (size_t f = 0; f < s[i].n; f++) {
            if (f)
                fputc(';', out);
            put_folded_name(out, s[i].frames[f]);
        }
        fprintf(out, " %" PRIu64 "\n", w);
    }
    free_stacks(s, n, o->user_only);
    return ferror(out) ? -1 : 0;
}

typedef struct node {
    const char *name, *op; /* op: NULL until set, "" when several */
    uint64_t count, bytes, ns, weight;
    unsigned kinds; /* bit 0 fallback, bit 1 host */
    struct node *child, *next;
} node;

static node *child_of(node *p, const char *name)
{
    for (node *c = p->child; c; c = c->next)
        if (!strcmp(c->name, name))
            return c;
    node *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->name = name;
    c->next = p->child;
    p->child = c;
    return c;
}

static uint64_t sat(uint64_t a, uint64_t b)
{
    return a > FBM_SAT_MAX - (b > FBM_SAT_MAX ? FBM_SAT_MAX : b) ? FBM_SAT_MAX : a + b;
}

static void add_to(node *n, const fbm_row *r, uint64_t w)
{
    n->count = sat(n->count, r->count);
    n->bytes = sat(n->bytes, r->bytes);
    n->ns = sat(n->ns, r->ns);
    n->weight = sat(n->weight, w);
    n->kinds |= r->kind == FBD_HOST ? 2u : 1u;
    const char *op = r->op ? r->op : "(unknown)";
    if (!n->op)
        n->op = op;
    else if (*n->op && strcmp(n->op, op))
        n->op = "";
}

static void free_tree(node *n)
{
    while (n) {
        node *next = n->next;
        free_tree(n->child);
        free(n);
        n = next;
    }
}

/* Writes at most max bytes of s, escaped for XML; a cut never splits a UTF-8 sequence
 * (jansson only hands us valid UTF-8), and characters XML 1.0 forbids become '?'. */
static void xml_escaped(FILE *out, const char *s, size_t max)
{
    size_t len = fbx_utf8_prefix(s, max);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        switch (ch) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&apos;", out); break;
        default:
            if (ch < 0x20) {
                fputc('?', out);
            } else if (ch == 0xEF && i + 2 < len && (unsigned char)s[i + 1] == 0xBF &&
                       ((unsigned char)s[i + 2] & 0xFE) == 0xBE) {
                fputc('?', out); /* U+FFFE, U+FFFF */
                i += 2;
            } else {
                fputc(ch, out);
            }
        }
    }
}

#define SVG_W 1200.0
#define SVG_PAD 10.0
#define ROW_H 17.0
#define CHAR_W 7.0

typedef struct {
    FILE *out;
    double height;
    uint64_t total;
    fbm_sort weight;
    bool time;
} layout;

static unsigned name_hash(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static void emit(layout *L, const node *n, double x, int depth)
{
    double w = L->total ? (double)n->weight / (double)L->total : 0;
    double px = SVG_PAD + x * (SVG_W - 2 * SVG_PAD), pw = w * (SVG_W - 2 * SVG_PAD);
    double py = L->height - 30 - (depth + 1) * ROW_H;
    unsigned h = name_hash(n->name);
    int hue = n->kinds == 2 ? 195 + (int)(h % 30) : (int)(h % 45);
    char b1[32], b2[32];
    fprintf(L->out, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%d\" data-n=\"", x, w,
            depth);
    xml_escaped(L->out, n->name, 300);
    fputs("\" data-i=\"", L->out);
    xml_escaped(L->out, n->name, 300);
    fputs(" | op ", L->out);
    xml_escaped(L->out, depth == 0 ? "(all)" : n->op && *n->op ? n->op : "(several)", 120);
    fprintf(L->out, " | %" PRIu64 " calls | %s", n->count, fbr_bytes(n->bytes, b1, sizeof b1));
    if (L->time)
        fprintf(L->out, " | %s", fbr_duration(n->ns, b2, sizeof b2));
    fprintf(L->out, " | %.2f%%\"><title>", 100.0 * w);
    xml_escaped(L->out, n->name, 300);
    fputs("\nop: ", L->out);
    xml_escaped(L->out, depth == 0 ? "(all)" : n->op && *n->op ? n->op : "(several)", 120);
    fprintf(L->out, "\ncount: %" PRIu64 "\nbytes: %s", n->count, b1);
    if (L->time)
        fprintf(L->out, "\ntime: %s", b2);
    fprintf(L->out, "\nshare: %.2f%%</title>", 100.0 * w);
    fprintf(L->out,
            "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
            "fill=\"hsl(%d,%d%%,%d%%)\"/>",
            px, py, pw, ROW_H - 1, hue, 70 + (int)(h / 45 % 20),
            n->kinds == 2 ? 62 : 55 + (int)(h / 900 % 10));
    fprintf(L->out, "<text x=\"%.2f\" y=\"%.1f\">", px + 3, py + ROW_H - 5);
    long chars = (long)((pw - 6) / CHAR_W);
    size_t len = strlen(n->name);
    if (chars >= 3) {
        if ((long)len <= chars) {
            xml_escaped(L->out, n->name, len);
        } else {
            xml_escaped(L->out, n->name, (size_t)chars - 2);
            fputs("..", L->out);
        }
    }
    fputs("</text></g>\n", L->out);
    double cx = x;
    for (const node *c = n->child; c; c = c->next) {
        emit(L, c, cx, depth + 1);
        cx += L->total ? (double)c->weight / (double)L->total : 0;
    }
}

static int max_depth(const node *n)
{
    int d = 0;
    for (const node *c = n->child; c; c = c->next) {
        int cd = 1 + max_depth(c);
        if (cd > d)
            d = cd;
    }
    return d;
}

/* Children in a stable, readable order: by name, as flamegraph.pl does. */
static int cmp_node(const void *a, const void *b)
{
    return strcmp((*(node *const *)a)->name, (*(node *const *)b)->name);
}

static int sort_children(node *n)
{
    size_t k = 0;
    for (node *c = n->child; c; c = c->next)
        k++;
    if (k > 1) {
        node **v = malloc(k * sizeof *v);
        if (!v)
            return -1;
        k = 0;
        for (node *c = n->child; c; c = c->next)
            v[k++] = c;
        qsort(v, k, sizeof *v, cmp_node);
        for (size_t i = 0; i < k; i++)
            v[i]->next = i + 1 < k ? v[i + 1] : NULL;
        n->child = v[0];
        free(v);
    }
    for (node *c = n->child; c; c = c->next)
        if (sort_children(c))
            return -1;
    return 0;
}

static const char svg_script[] =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "(function(){\n"
    "var W=1200,P=10,CW=7;\n"
    "var gs=Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
    "var det=document.getElementById('details');\n"
    "function num(e,k){return parseFloat(e.getAttribute(k));}\n"
    "function fit(g,x,w){var r=g.querySelector('rect'),t=g.querySelector('text');\n"
    " var px=P+x*(W-2*P),pw=w*(W-2*P);r.setAttribute('x',px.toFixed(2));\n"
    " r.setAttribute('width',Math.max(pw,0).toFixed(2));t.setAttribute('x',(px+3).toFixed(2));\n"
    " var n=g.getAttribute('data-n'),c=Math.floor((pw-6)/CW);\n"
    " t.textContent=c<3?'':(n.length<=c?n:n.slice(0,c-2)+'..');}\n"
    "function zoom(z){var zx=num(z,'data-x'),zw=num(z,'data-w'),zd=num(z,'data-d'),e=1e-9;\n"
    " if(!(zw>0))return;\n"
    " gs.forEach(function(g){var x=num(g,'data-x'),w=num(g,'data-w'),d=num(g,'data-d');\n"
    "  if(d<zd&&x<=zx+e&&x+w>=zx+zw-e){g.style.display='';g.setAttribute('class','f "
    "anc');fit(g,0,1);}\n"
    "  else if(d>=zd&&x>=zx-e&&x+w<=zx+zw+e){g.style.display='';g.setAttribute('class','f');"
    "fit(g,(x-zx)/zw,w/zw);}\n"
    "  else g.style.display='none';});\n"
    " document.getElementById('reset').style.display=zd>0?'':'none';}\n"
    "gs.forEach(function(g){g.addEventListener('click',function(){zoom(g);});\n"
    " g.addEventListener('mouseover',function(){det.textContent=g.getAttribute('data-i');});\n"
    " g.addEventListener('mouseout',function(){det.textContent=' ';});});\n"
    "document.getElementById('reset').addEventListener('click',function(){zoom(gs[0]);});\n"
    "})();\n"
    "]]></script>\n";

int fbf_svg(FILE *out, fbm_census *c, const fbt_opts *o)
{
    fbm_sort weight = o->weight;
    flame_stack *s;
    size_t n = collect(c, o->user_only, &s);
    if (n == (size_t)-1)
        return -1;
    node root = {.name = "all"};
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        uint64_t w = weight_of(s[i].row, weight);
        if (!w)
            continue;
        add_to(&root, s[i].row, w);
        node *p = &root;
        for (size_t f = 0; f < s[i].n && p; f++) {
            p = child_of(p, s[i].frames[f]);
            if (p)
                add_to(p, s[i].row, w);
        }
        if (!p)
            rc = -1;
    }
    if (!rc)
        rc = sort_children(&root);
    if (rc) {
        free_tree(root.child);
        free_stacks(s, n, o->user_only);
        return -1;
    }
    int depth = max_depth(&root);
    layout L = {out, 60 + 30 + (depth + 1) * ROW_H, root.weight, weight, fbm_census_has_time(c)};
    char b1[32];
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
            "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n",
            SVG_W, L.height, SVG_W, L.height);
    fputs("<style>\n"
          "svg{font-family:monospace;font-size:12px;background:#fafafa}\n"
          ".f text{pointer-events:none;fill:#000}\n"
          ".f rect{stroke:#fafafa;stroke-width:0.5;cursor:pointer}\n"
          ".f:hover rect{stroke:#000;stroke-width:1}\n"
          ".anc rect{opacity:0.6}\n"
          "#title{font-size:16px;font-weight:bold}\n"
          "#reset{cursor:pointer;fill:#06c}\n"
          "</style>\n",
          out);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#fafafa\"/>\n", SVG_W,
            L.height);
    fprintf(out,
            "<text id=\"title\" x=\"%.0f\" y=\"24\" text-anchor=\"middle\">fbcount: "
            "fallbacks and host-resident ops%s</text>\n",
            SVG_W / 2, o->user_only ? " (the program's own frames)" : "");
    fprintf(out,
            "<text x=\"%.0f\" y=\"44\">width: %s; %" PRIu64 " calls, %s; "
            "warm: fallback stacks, blue: host-resident stacks; click a frame to zoom</text>\n",
            SVG_PAD, fbx_choice_name(fbt_weights, fbt_nweights, (int)weight), root.count,
            fbr_bytes(root.bytes, b1, sizeof b1));
    fprintf(out,
            "<text id=\"reset\" x=\"%.0f\" y=\"44\" text-anchor=\"end\" "
            "style=\"display:none\">reset zoom</text>\n",
            SVG_W - SVG_PAD);
    if (root.weight == 0)
        fprintf(out, "<text x=\"%.0f\" y=\"70\">no stacks in this census</text>\n", SVG_PAD);
    else
        emit(&L, &root, 0, 0);
    fprintf(out, "<text id=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n", SVG_PAD, L.height - 10);
    fputs(svg_script, out);
    fputs("</svg>\n", out);
    free_tree(root.child);
    free_stacks(s, n, o->user_only);
    return ferror(out) ? -1 : 0;
}
