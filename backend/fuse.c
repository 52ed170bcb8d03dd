/* fuse.c — fusing a graph's dispatches before it is emitted.
 *
 * A recorded step is a chain of small dispatches (a bias add then tanh, the
 * three ops of an activation's gradient, an SGD update's multiply, subtract
 * and copy back into the weights), each a few microseconds of fixed cost
 * with a barrier before it. When the recording ends, every dispatch is known,
 * and an intermediate (a tensor freed during the recording, so nothing
 * outside the graph can see it) that one dispatch writes and one reads need
 * not exist. In order:
 *  - a transpose of a product's result becomes the product itself with its
 *    operands swapped (the same sums);
 *  - an f32 elementwise dispatch is computed inside the elementwise one that
 *    reads its result: ew_fused.comp runs the chain as a program of steps in
 *    specialization constants, each step its op's own arithmetic;
 *  - a reduction pass computes the elementwise program that writes its
 *    input as it reads it (a prologue);
 *  - a program runs in the store of the kernel whose result it reads (an
 *    epilogue: dot's, conv's, a reduction's last pass, the pooling scatter,
 *    each with an _epi variant, epilogue.glsl), or, after a single-pass
 *    reduction of rows, over each row of the reduction's input.
 * So a launch gives exactly what the ops give one by one.
 *
 * Fusing moves a producer's reads to its consumer's place in the graph, so a
 * producer whose inputs something writes in between stays apart; and where
 * the consumer writes a tensor the program reads (an in-place update), it
 * must read it at the output's own index. Two steps computed by functions
 * (exp of a log) stay apart too, so no compiler can fuse across their
 * boundary what each op's kernel rounds on its own. */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "layouts.h"
#include "spirv_table.h"

typedef struct fu_push {
    FU_PUSH_FIELDS
} fu_push;

_Static_assert(RT_ALL_SPEC == PRO_SPEC + EP_NSPEC && PRO_SPEC == EP_SPEC + EP_NSPEC &&
                   RT_MAX_SPEC <= EP_SPEC,
               "core.h's limits fit layouts.h's");
_Static_assert(PRO_BIND + EP_MAX_IN <= EP_BIND,
               "a reduction's input, output and programs' bindings fit");
_Static_assert(EP_BIND + EP_MAX_IN <= RT_MAX_BINDINGS && EP_SELF < FU_REG && EP_SELF >= EP_MAX_IN,
               "an epilogue's bindings and operands fit");

/* A dispatch's computation as a program over its inputs. */
typedef struct fu_prog {
    uint32_t n, nsteps, nin;
    uint32_t step[FU_MAX_STEPS];
    bool fn
        [FU_MAX_STEPS]; /* computed by a function, not one inline add, subtract, multiply or copy */
    tn_storage *in[FU_MAX_IN];
    uint32_t div[FU_MAX_IN], mod[FU_MAX_IN];
} fu_prog;

static uint32_t operand_a(uint32_t step)
{
    return (step >> 10) & 0xfu;
}

static uint32_t operand_b(uint32_t step)
{
    return (step >> 14) & 0xfu;
}

static uint32_t with_operands(uint32_t step, uint32_t a, uint32_t b)
{
    return (step & 0x3ffu) | (a << 10) | (b << 14);
}

/* The index of input (st, div, mod) in p, added if new; -1 when p is full. */
static int input_of(fu_prog *p, tn_storage *st, uint32_t div, uint32_t mod)
{
    for (uint32_t k = 0; k < p->nin; k++)
        if (p->in[k] == st && p->div[k] == div && p->mod[k] == mod)
            return (int)k;
    if (p->nin == FU_MAX_IN)
        return -1;
    p->in[p->nin] = st;
    p->div[p->nin] = div;
    p->mod[p->nin] = mod;
    return (int)p->nin++;
}

/* The one-step program of an elementwise command. */
static void prog_of(const rt_command *c, fu_prog *p)
{
    const rt_ew *e = &c->ew;
    memset(p, 0, sizeof *p);
    p->n = e->n;
    uint32_t a = 0, b = 0;
    a = (uint32_t)input_of(p, c->st[0], e->div[0], e->mod[0]);
    if (e->kind == FU_BINARY)
        b = (uint32_t)input_of(p, c->st[1], e->div[1], e->mod[1]);
    bool inline_op = e->kind == FU_COPY ||
                     (e->kind == FU_BINARY &&
                      (e->op == BIN_add || e->op == BIN_subtract || e->op == BIN_multiply));
    p->step[0] = FU_STEP(e->kind, e->op, a, b);
    p->fn[0] = !inline_op;
    p->nsteps = 1;
}

/* Maps operand x of a step of a program whose inputs moved by map[] and whose
 * registers moved by shift. */
static uint32_t moved(uint32_t x, const uint32_t *map, uint32_t shift)
{
    return x >= FU_REG ? x + shift : map[x];
}

/* p's steps, then c's, where c's input s (p's result) becomes p's last
 * register. c may read p's result broadcast (a row's log-sum against the
 * row): then p runs at c's every element, each of its inputs read as c reads
 * the result, which needs every one of them read whole or as a scalar. False
 * when that does not hold, when the result would exceed the kernel's limits,
 * or when a function step of c would take a function step's result. */
static bool merge(const fu_prog *p, const fu_prog *c, uint32_t s, fu_prog *out)
{
    fu_prog m;
    memset(&m, 0, sizeof m);
    m.n = c->n;
    if (p->nsteps + c->nsteps > FU_MAX_STEPS)
        return false;
    bool whole = c->div[s] == 1 && c->mod[s] == p->n;
    uint32_t pmap[FU_MAX_IN], cmap[FU_MAX_IN];
    for (uint32_t k = 0; k < p->nin; k++) {
        uint32_t div = p->div[k], mod = p->mod[k];
        if (!whole && mod != 1) {
            if (div != 1 || mod != p->n)
                return false;
            div = c->div[s];
            mod = c->mod[s];
        }
        int at = input_of(&m, p->in[k], div, mod);
        if (at < 0)
            return false;
        pmap[k] = (uint32_t)at;
    }
    for (uint32_t k = 0; k < c->nin; k++) {
        if (k == s) {
            cmap[k] = FU_REG + p->nsteps - 1;
            continue;
        }
        int at = input_of(&m, c->in[k], c->div[k], c->mod[k]);
        if (at < 0)
            return false;
        cmap[k] = (uint32_t)at;
    }
    for (uint32_t t = 0; t < p->nsteps; t++) {
        uint32_t st = p->step[t], kind = st & 3u;
        m.step[t] = with_operands(st, moved(operand_a(st), pmap, 0),
                                  kind == FU_BINARY ? moved(operand_b(st), pmap, 0) : 0);
        m.fn[t] = p->fn[t];
    }
    for (uint32_t t = 0; t < c->nsteps; t++) {
        uint32_t st = c->step[t], kind = st & 3u, a = operand_a(st),
                 b = kind == FU_BINARY ? operand_b(st) : 0;
        bool takes = (a < FU_REG && a == s) || (kind == FU_BINARY && b < FU_REG && b == s);
        if (takes && c->fn[t] && p->fn[p->nsteps - 1])
            return false;
        m.step[p->nsteps + t] = with_operands(st, moved(a, cmap, p->nsteps),
                                              kind == FU_BINARY ? moved(b, cmap, p->nsteps) : 0);
        m.fn[p->nsteps + t] = c->fn[t];
    }
    m.nsteps = p->nsteps + c->nsteps;
    *out = m;
    return true;
}

/* Whether any command strictly between from and to writes an input of p. */
static bool written_between(const rt_log *log, size_t from, size_t to, const fu_prog *p)
{
    for (size_t j = from + 1; j < to; j++) {
        const rt_command *c = &log->cmds[j];
        for (int k = 0; k < c->nst; k++)
            for (uint32_t q = 0; c->writes[k] && q < p->nin; q++)
                if (c->st[k] == p->in[q])
                    return true;
    }
    return false;
}

/* ---- elementwise chains ------------------------------------------------------ */

/* Each storage's readers and writers among the commands (a command that binds
 * one twice counts once). */
static void count_uses(rt_log *log)
{
    for (size_t i = 0; i < log->ncmds; i++)
        for (int k = 0; k < log->cmds[i].nst; k++) {
            tn_storage *st = log->cmds[i].st[k];
            st->fu_readers = st->fu_writers = 0;
            st->fu_writer = -1;
        }
    for (size_t i = 0; i < log->ncmds; i++) {
        const rt_command *c = &log->cmds[i];
        for (int k = 0; k < c->nst; k++) {
            bool again = false;
            for (int j = 0; j < k; j++)
                again |= c->st[j] == c->st[k] && c->writes[j] == c->writes[k];
            if (again)
                continue;
            if (c->writes[k]) {
                c->st[k]->fu_writers++;
                c->st[k]->fu_writer = (int)i;
            } else {
                c->st[k]->fu_readers++;
            }
        }
    }
}

/* Rewrites command c as one dispatch of the fused kernel running p. */
static int emit_fused(vkt_ctx *ctx, rt_command *c, const fu_prog *p)
{
    uint32_t spec[1 + FU_MAX_STEPS] = {p->nsteps};
    for (uint32_t t = 0; t < p->nsteps; t++)
        spec[1 + t] = p->step[t];
    VkPipeline pipe;
    VkPipelineLayout layout;
    TRY(pl_get(ctx, SPV_ew_fused_f32, spec, 1 + FU_MAX_STEPS, FU_MAX_IN + 1, &pipe, &layout));
    tn_storage *out = c->st[c->ew.nin];
    fu_push pc = {.n = p->n, .nin = p->nin};
    VkDescriptorBufferInfo ob = {
        .buffer = out->dev.buffer, .offset = out->dev.offset, .range = out->dev.size};
    c->nst = 0;
    for (uint32_t k = 0; k < FU_MAX_IN; k++) {
        /* unused inputs bind the output: any valid buffer would do */
        c->bi[k] = ob;
        pc.div[k] = pc.mod[k] = 1;
        if (k < p->nin) {
            tn_storage *st = p->in[k];
            c->bi[k] = (VkDescriptorBufferInfo){
                .buffer = st->dev.buffer, .offset = st->dev.offset, .range = st->dev.size};
            pc.div[k] = p->div[k];
            pc.mod[k] = p->mod[k];
            c->st[c->nst] = st;
            c->writes[c->nst++] = false;
        }
    }
    c->bi[FU_MAX_IN] = ob;
    c->st[c->nst] = out;
    c->writes[c->nst++] = true;
    c->pipe = pipe;
    c->layout = layout;
    c->nbufs = FU_MAX_IN + 1;
    c->push_size = sizeof pc;
    memcpy(c->push, &pc, sizeof pc);
    pl_grid(p->n, 256, c->groups);
    c->tag.kernel = spv_table[SPV_ew_fused_f32].name;
    c->has_ew = false;
    return VKT_OK;
}

/* ---- epilogues: a program run in the store of the dispatch it reads ---------- */

/* Whether the storage is one that command c reads (writes). */
static bool binds(const rt_command *c, const tn_storage *st, bool written)
{
    for (int k = 0; k < c->nst; k++)
        if (c->st[k] == st && c->writes[k] == written)
            return true;
    return false;
}

/* Whether any command strictly between from and to writes what command p reads. */
static bool inputs_written_between(const rt_log *log, size_t from, size_t to, const rt_command *p)
{
    for (size_t j = from + 1; j < to; j++)
        for (int k = 0; k < log->cmds[j].nst; k++)
            if (log->cmds[j].writes[k] && binds(p, log->cmds[j].st[k], false))
                return true;
    return false;
}

typedef struct fu_reduce {
    RD_PUSH_FIELDS
} fu_reduce;

/* Whether p is a single-pass f32 reduction of contiguous rows (the reduced
 * axes last) whose result c's program, of n elements, reads broadcast over
 * each row at its input `self`: the reduction can then store the program over
 * its input's rows (reduce.comp's ROWS). */
static bool row_program(const rt_command *p, const fu_prog *prog, uint32_t self)
{
    fu_reduce r;
    memcpy(&r, p->push, sizeof r);
    /* spec: 2 kept groups, 3 reduced groups */
    return p->form.kind == RT_FORM_REDUCE && r.nparts == 1 && p->spec[3] == 1 &&
           r.rstride[0] == 1 && r.rshape[0] == r.nred &&
           (p->spec[2] == 0 || (p->spec[2] == 1 && r.kstride[0] == r.nred)) &&
           prog->n == r.nout * r.nred && prog->mod[self] == r.nout &&
           (prog->div[self] == r.nred || r.nout == 1);
}

/* Whether consumer c's program (its input `self` written by command p) can
 * run in p's store instead, from c's place in the graph: p writes that one
 * result and nothing else, c reads it whole and at nothing but its own index
 * (or a reduction's, over its rows), the program's other inputs fit the
 * epilogue, p's inputs keep their values until c's place, and c's result is
 * none of them (p's workgroups would read what others already updated). */
static bool epilogue_fits(const rt_log *log, size_t pi, size_t i, const fu_prog *prog,
                          uint32_t self)
{
    const rt_command *p = &log->cmds[pi], *c = &log->cmds[i];
    tn_storage *out = c->st[c->ew.nin], *mid = prog->in[self];
    int written = 0;
    for (int k = 0; k < p->nst; k++)
        written += p->writes[k];
    bool whole = p->epi.n == prog->n && prog->div[self] == 1 && prog->mod[self] == prog->n;
    if (!p->has_epi || written != 1 || !(whole || row_program(p, prog, self)) ||
        prog->nin - 1 > EP_MAX_IN || prog->nsteps > EP_MAX_STEPS || binds(p, out, false) ||
        inputs_written_between(log, pi, i, p))
        return false;
    for (uint32_t k = 0; k < prog->nin; k++)
        if (k != self && prog->in[k] == mid)
            return false;
    return true;
}

/* Writes prog into spec at base (a fused program's block: steps, then each
 * input's div and mod), input `self` (none: prog->nin) as EP_SELF and the
 * others renumbered in order into ins[] (*nin of them). */
static void encode_program(uint32_t *spec, uint32_t base, const fu_prog *prog, uint32_t self,
                           tn_storage **ins, uint32_t *nin)
{
    uint32_t map[FU_MAX_IN];
    *nin = 0;
    for (uint32_t k = 0; k < prog->nin; k++) {
        if (k == self) {
            map[k] = EP_SELF;
            continue;
        }
        spec[base + 1 + EP_MAX_STEPS + 2 * *nin] = prog->div[k];
        spec[base + 2 + EP_MAX_STEPS + 2 * *nin] = prog->mod[k];
        ins[*nin] = prog->in[k];
        map[k] = (*nin)++;
    }
    for (uint32_t k = *nin; k < EP_MAX_IN; k++)
        spec[base + 1 + EP_MAX_STEPS + 2 * k] = spec[base + 2 + EP_MAX_STEPS + 2 * k] = 1;
    spec[base] = prog->nsteps;
    for (uint32_t t = 0; t < prog->nsteps; t++) {
        uint32_t st = prog->step[t], kind = st & 3u;
        spec[base + 1 + t] = with_operands(st, moved(operand_a(st), map, 0),
                                           kind == FU_BINARY ? moved(operand_b(st), map, 0) : 0);
    }
}

static VkDescriptorBufferInfo info_of(const tn_storage *st)
{
    return (VkDescriptorBufferInfo){
        .buffer = st->dev.buffer, .offset = st->dev.offset, .range = st->dev.size};
}

/* Rewrites command p as its kernel's variant with fused programs, running
 * prog (input `self` is p's own result) in its store and storing c's result;
 * the caller puts it in c's place. */
static int emit_epilogue(vkt_ctx *ctx, rt_command *p, const rt_command *c, const fu_prog *prog,
                         uint32_t self)
{
    uint32_t spec[PL_MAX_SPEC] = {0}, nin;
    memcpy(spec, p->spec, sizeof(uint32_t) * p->nspec);
    tn_storage *ins[EP_MAX_IN];
    encode_program(spec, EP_SPEC, prog, self, ins, &nin);
    bool whole = p->epi.n == prog->n && prog->div[self] == 1 && prog->mod[self] == prog->n;
    if (p->form.kind == RT_FORM_REDUCE)
        spec[7] = !whole; /* reduce.comp's ROWS */
    VkPipeline pipe;
    VkPipelineLayout layout;
    TRY(pl_get(ctx, p->epi.shader, spec, PL_MAX_SPEC, RT_MAX_BINDINGS, &pipe, &layout));
    tn_storage *out = c->st[c->ew.nin];
    VkDescriptorBufferInfo ob = info_of(out);
    /* p's storages but its result, then the program's inputs, then c's result */
    rt_command e = *p;
    e.nst = 0;
    for (int k = 0; k < p->nst; k++)
        if (!p->writes[k]) {
            e.st[e.nst] = p->st[k];
            e.writes[e.nst++] = false;
        }
    for (uint32_t k = p->nbufs; k < RT_MAX_BINDINGS; k++)
        e.bi[k] = ob; /* unused bindings: any valid buffer */
    e.bi[p->epi.out] = ob;
    for (uint32_t k = 0; k < nin; k++) {
        e.bi[EP_BIND + k] = info_of(ins[k]);
        e.st[e.nst] = ins[k];
        e.writes[e.nst++] = false;
    }
    e.st[e.nst] = out;
    e.writes[e.nst++] = true;
    e.nbufs = RT_MAX_BINDINGS;
    e.pipe = pipe;
    e.layout = layout;
    memcpy(e.spec, spec, sizeof spec);
    e.nspec = PL_MAX_SPEC;
    e.tag = (rt_tag){c->tag.op, spv_table[p->epi.shader].name};
    e.has_ew = e.has_epi = false;
    *p = e;
    return VKT_OK;
}

/* ---- prologues: a reduction whose input is an elementwise program --------- */

/* Rewrites reduction pass r to compute its input as e's program (prog) where
 * it would read it (in the order it would read it: the same sums), from the
 * program's inputs: r's variant with fused programs. */
static int emit_prologue(vkt_ctx *ctx, rt_command *r, const fu_prog *prog)
{
    uint32_t spec[PL_MAX_SPEC] = {0}, nin;
    memcpy(spec, r->spec, sizeof(uint32_t) * r->nspec);
    tn_storage *ins[EP_MAX_IN];
    encode_program(spec, PRO_SPEC, prog, prog->nin, ins, &nin);
    VkPipeline pipe;
    VkPipelineLayout layout;
    TRY(pl_get(ctx, r->form.alt, spec, PL_MAX_SPEC, RT_MAX_BINDINGS, &pipe, &layout));
    tn_storage *out = r->st[1];
    VkDescriptorBufferInfo ob = info_of(out);
    for (uint32_t k = 0; k < RT_MAX_BINDINGS; k++)
        if (k != 1)
            r->bi[k] = ob; /* the input is not read; unused bindings: any valid buffer */
    r->nst = 0;
    for (uint32_t k = 0; k < nin; k++) {
        r->bi[PRO_BIND + k] = info_of(ins[k]);
        r->st[r->nst] = ins[k];
        r->writes[r->nst++] = false;
    }
    r->st[r->nst] = out;
    r->writes[r->nst++] = true;
    r->nbufs = RT_MAX_BINDINGS;
    r->pipe = pipe;
    r->layout = layout;
    memcpy(r->spec, spec, sizeof spec);
    r->nspec = PL_MAX_SPEC;
    r->tag.kernel = spv_table[r->form.alt].name;
    if (r->has_epi)
        r->epi.shader = r->form.alt;
    return VKT_OK;
}

/* A reduction pass whose input only it reads, written by an elementwise
 * command, computes that command's program itself (sum(exp(x)) in one
 * dispatch), if the program's inputs fit and keep their values until then. */
static int fuse_prologues(vkt_ctx *ctx, rt_log *log, const fu_prog *progs, bool *gone)
{
    for (size_t i = 0; i < log->ncmds; i++) {
        rt_command *r = &log->cmds[i];
        if (gone[i] || r->form.kind != RT_FORM_REDUCE || r->form.alt < 0 || r->nst != 2 ||
            r->writes[0])
            continue;
        tn_storage *in = r->st[0];
        int ei = in->fu_writer;
        if (!in->orphan || in->fu_writers != 1 || in->fu_readers != 1 || ei < 0 ||
            (size_t)ei >= i || gone[ei])
            continue;
        const rt_command *e = &log->cmds[ei];
        const fu_prog *prog = &progs[ei];
        bool ok = e->has_ew && e->st[e->ew.nin] == in && prog->nin <= EP_MAX_IN &&
                  prog->nsteps <= EP_MAX_STEPS && !written_between(log, (size_t)ei, i, prog);
        for (uint32_t k = 0; ok && k < prog->nin; k++)
            ok = prog->in[k] != r->st[1];
        if (!ok)
            continue;
        TRY(emit_prologue(ctx, r, prog));
        gone[ei] = true;
    }
    return VKT_OK;
}

/* For each elementwise command left, the producer of an input that only it
 * reads runs its program in its own store, if it can (epilogue_fits). */
static int fuse_epilogues(vkt_ctx *ctx, rt_log *log, fu_prog *progs, bool *gone)
{
    for (size_t i = 0; i < log->ncmds; i++) {
        rt_command *c = &log->cmds[i];
        if (gone[i] || !c->has_ew)
            continue;
        for (uint32_t k = 0; k < progs[i].nin; k++) {
            tn_storage *st = progs[i].in[k];
            int pi = st->fu_writer;
            if (!st->orphan || st->fu_writers != 1 || st->fu_readers != 1 || pi < 0 ||
                (size_t)pi >= i || gone[pi] || !epilogue_fits(log, (size_t)pi, i, &progs[i], k))
                continue;
            rt_command p = log->cmds[pi];
            TRY(emit_epilogue(ctx, &p, c, &progs[i], k));
            log->cmds[i] = p;
            gone[pi] = true;
            break;
        }
    }
    return VKT_OK;
}

/* ---- a product's transpose: the product with its operands swapped ---------- */

typedef struct fu_dot {
    DOT_PUSH_FIELDS
} fu_dot;

typedef struct fu_swap {
    TILED_PUSH_FIELDS
} fu_swap;

static uint32_t tiles(uint32_t n, uint32_t tile)
{
    return (n + tile - 1) / tile;
}

/* Whether transpose t turns product p's whole result [Q, M, N] into [Q, N, M]. */
static bool transposes(const rt_command *p, const rt_command *t)
{
    fu_dot d;
    fu_swap w;
    memcpy(&d, p->push, sizeof d);
    memcpy(&w, t->push, sizeof w);
    return p->form.kind == RT_FORM_GEMM && t->form.kind == RT_FORM_SWAP && d.accumulate == 0 &&
           w.b == d.Q && w.rows == d.M && w.cols == d.N;
}

/* Rewrites product p to store its result transposed, as t's result:
 * C^T = B^T A^T takes the same products and sums them in the same order (every
 * kernel walks K in order for each output), so the bits are the same. */
static void swap_product(rt_command *p, const rt_command *t)
{
    fu_dot d, e;
    memcpy(&d, p->push, sizeof d);
    e = d;
    e.M = d.N;
    e.N = d.M;
    e.a_sq = d.b_sq, e.a_sm = d.b_sn, e.a_sk = d.b_sk, e.a_mfast = d.b_nfast, e.a_off = d.b_off,
    e.a_vec = d.b_vec;
    e.b_sq = d.a_sq, e.b_sn = d.a_sm, e.b_sk = d.a_sk, e.b_nfast = d.a_mfast, e.b_off = d.a_off,
    e.b_vec = d.a_vec;
    if (p->form.bm) {
        e.tiles_m = tiles(e.M, p->form.bm);
        e.tiles_n = tiles(e.N, p->form.bn);
        p->groups[0] = e.tiles_n > 65535 ? 65535 : e.tiles_n;
        p->groups[1] = e.tiles_m > 65535 ? 65535 : e.tiles_m;
    }
    memcpy(p->push, &e, sizeof e);
    VkDescriptorBufferInfo a = p->bi[0];
    p->bi[0] = p->bi[1];
    p->bi[1] = a;
    p->bi[2] = t->bi[1];
    p->st[2] = t->st[1];
    p->tag.op = t->tag.op;
}

/* A transpose of the last two axes of a product's result, which only it
 * reads, becomes the product itself, swapped, in the transpose's place. */
static void fuse_transposes(rt_log *log, bool *gone)
{
    for (size_t i = 0; i < log->ncmds; i++) {
        const rt_command *t = &log->cmds[i];
        if (t->form.kind != RT_FORM_SWAP || t->nst != 2)
            continue;
        tn_storage *mid = t->st[0];
        int pi = mid->fu_writer;
        if (!mid->orphan || mid->fu_writers != 1 || mid->fu_readers != 1 || pi < 0 ||
            (size_t)pi >= i || gone[pi])
            continue;
        rt_command p = log->cmds[pi];
        if (p.nst != 3 || p.st[2] != mid || !transposes(&p, t) || binds(&p, t->st[1], false) ||
            inputs_written_between(log, (size_t)pi, i, &p))
            continue;
        swap_product(&p, t);
        log->cmds[i] = p;
        gone[pi] = true;
    }
}

int fu_graph(vkt_ctx *ctx, rt_log *log)
{
    size_t n = log->ncmds;
    fu_prog *progs = calloc(n ? n : 1, sizeof *progs);
    bool *gone = calloc(n ? n : 1, sizeof *gone);
    if (!progs || !gone) {
        free(progs);
        free(gone);
        return err_set(VKT_ENOMEM, "out of host memory fusing a graph");
    }
    count_uses(log);
    fuse_transposes(log, gone);
    for (size_t i = 0; i < n; i++) {
        rt_command *c = &log->cmds[i];
        if (!c->has_ew || gone[i])
            continue;
        prog_of(c, &progs[i]);
        tn_storage *out = c->st[c->ew.nin];
        /* Absorb the producer of each input that only this command reads. */
        for (uint32_t k = 0; k < progs[i].nin;) {
            tn_storage *s = progs[i].in[k];
            int pi = s->fu_writer;
            fu_prog m;
            bool ok = s->orphan && s->fu_writers == 1 && s->fu_readers == 1 && pi >= 0 &&
                      (size_t)pi < i && log->cmds[pi].has_ew && !gone[pi] &&
                      !written_between(log, (size_t)pi, i, &progs[pi]) &&
                      merge(&progs[pi], &progs[i], k, &m);
            /* an in-place update reads what it writes at the output's index only */
            for (uint32_t q = 0; ok && q < m.nin; q++)
                ok = m.in[q] != out || (m.div[q] == 1 && m.mod[q] == m.n);
            if (!ok) {
                k++;
                continue;
            }
            progs[i] = m;
            gone[pi] = true;
            k = 0; /* the inputs moved: look again from the first */
        }
    }
    int s = fuse_prologues(ctx, log, progs, gone);
    if (s == VKT_OK)
        s = fuse_epilogues(ctx, log, progs, gone);
    size_t kept = 0;
    log->dispatches = 0;
    for (size_t i = 0; i < n; i++) {
        if (gone[i])
            continue;
        if (s == VKT_OK && log->cmds[i].has_ew && progs[i].nsteps > 1)
            s = emit_fused(ctx, &log->cmds[i], &progs[i]);
        log->cmds[kept] = log->cmds[i];
        log->cmds[kept].order = (uint32_t)kept;
        if (!log->cmds[kept].copy)
            log->dispatches++;
        kept++;
    }
    log->ncmds = kept;
    free(progs);
    free(gone);
    return s;
}
