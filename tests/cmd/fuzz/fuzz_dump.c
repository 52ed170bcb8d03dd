/* fuzz_dump.c - libFuzzer target: any bytes through the dump reader, the merger and both
 * renderers must give a clean error or a census, never a crash, leak or hang. */
#include <stdint.h>
#include <stdio.h>

#include "merge.h"
#include "flame.h"
#include "table.h"

static FILE *sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!sink)
        sink = fopen("/dev/null", "w");
    char err[512];
    fbd_status st;
    fbd_dump *d = fbd_load_buffer((const char *)data, size, "fuzz.json", &st, err, sizeof err);
    if (!d)
        return 0;
    fbm_census *c = fbm_census_new();
    if (fbm_census_add(c, d) == 0) {
        size_t n;
        for (int k = 0; k < 2; k++)
            for (int b = 0; b < 4; b++)
                fbm_census_rows(c, (fbd_kind)k, (fbm_by)b, FBM_SORT_COUNT, &n);
        fbt_text(sink, c, FBM_BY_STACK, FBM_SORT_BYTES, 0);
        json_t *j = fbt_json(c, FBM_BY_SITE, FBM_SORT_COUNT, 3);
        json_decref(j);
        fbf_folded(sink, c, true);
        fbf_svg(sink, c, false);
    }
    fbm_census_free(c);
    return 0;
}
