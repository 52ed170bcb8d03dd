/* matrix.c — the list of every public op, read by the statistics and by the
 * generated op support matrix (op × dtype → native or fallback, with the gate's
 * reason), so the README's matrix cannot drift from the gates in code. */
#include "core.h"
#include "families.h"

static const op_table *const tables[] = {
#define FAMILY(name) &op_table_##name,
    OP_FAMILIES(FAMILY)
#undef FAMILY
};
#define NTABLES (sizeof tables / sizeof tables[0])

static const op_info *op_at(size_t i)
{
    for (size_t t = 0; t < NTABLES; t++) {
        if (i < tables[t]->n)
            return &tables[t]->ops[i];
        i -= tables[t]->n;
    }
    return NULL;
}

VKT_API size_t vkt_op_count(void)
{
    size_t n = 0;
    for (size_t t = 0; t < NTABLES; t++)
        n += tables[t]->n;
    return n;
}

VKT_API const char *vkt_op_name(size_t i)
{
    const op_info *op = op_at(i);
    return op ? op->name : NULL;
}

VKT_API vkt_support vkt_op_support(size_t i, vkt_dtype dtype, const char **reason)
{
    const op_info *op = op_at(i);
    const char *why = NULL;
    vkt_support s = VKT_UNDEFINED;
    if (op && (unsigned)dtype < VKT_NUM_DTYPES)
        s = op->support ? op->support(op, dtype, &why) : VKT_NATIVE;
    if (reason)
        *reason = why;
    return s;
}

VKT_API size_t vkt_stats(vkt_stats_entry *entries, size_t cap)
{
    size_t n = 0, total = vkt_op_count();
    for (size_t i = 0; i < total; i++) {
        const op_info *op = op_at(i);
        vkt_stats_entry e = {op->name, atomic_load(&op->counters->native),
                             atomic_load(&op->counters->fallback),
                             atomic_load(&op->counters->host)};
        if (!e.native && !e.fallback && !e.host)
            continue;
        if (entries && n < cap)
            entries[n] = e;
        n++;
    }
    return n;
}

VKT_API void vkt_stats_reset(void)
{
    size_t total = vkt_op_count();
    for (size_t i = 0; i < total; i++) {
        op_counters *c = op_at(i)->counters;
        atomic_store(&c->native, 0);
        atomic_store(&c->fallback, 0);
        atomic_store(&c->host, 0);
    }
}
