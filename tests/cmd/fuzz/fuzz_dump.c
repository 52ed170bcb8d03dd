/* fuzz_dump.c - libFuzzer target: any bytes through the dump reader, the merger and both
 * renderers must give a clean error or a census, never a crash, leak or hang. */
#include <stdint.h>
#include <stdio.h>

#include "census.h"
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
    fbc_census *c = fbc_census_new();
    if (fbc_census_add(c, d) == 0) {
        size_t n;
        for (int k = 0; k < 2; k++)
            for (int b = 0; b < 4; b++)
                fbc_census_rows(c, (fbd_kind)k, (fbc_by)b, FBC_SORT_COUNT, &n);
        fbt_text(sink, c, FBC_BY_STACK, FBC_SORT_BYTES, 0);
        json_t *j = fbt_json(c, FBC_BY_SITE, FBC_SORT_COUNT, 3);
        json_decref(j);
        fbf_folded(sink, c, true);
        fbf_svg(sink, c, false);
    }
    fbc_census_free(c);
    return 0;
}
