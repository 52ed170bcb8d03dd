/* fuzz_dump.c - libFuzzer target: any bytes through the dump reader, the merger and every
 * renderer must give a clean error or a census, never a crash, leak or hang. */
#include <stdint.h>
#include <stdio.h>

#include "merge.h"
#include "flame.h"
#include "report_json.h"

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
    fbm_census_set_frames(c, size % 2 ? FBM_FRAMES_LINE : FBM_FRAMES_FUNC);
    if (fbm_census_add(c, d) == 0) {
        size_t n;
        for (int k = 0; k < FBD_NKINDS; k++)
            for (int b = 0; b < FBM_NBY; b++)
                fbm_census_rows(c, (fbd_kind)k, (fbm_by)b, (fbm_sort)(b % 3), &n);
        fbt_opts o = {.by = FBM_BY_STACK, .width = size % 3 ? 0 : 60, .raw = size % 5 == 0};
        fbt_print_census(sink, c, &o);
        o.by = (fbm_by)(size % FBM_NBY);
        fbt_print_census(sink, c, &o);
        fbt_opts j = {.by = FBM_BY_SITE, .sort = FBM_SORT_COUNT, .top = 3};
        json_decref(fbt_json(c, &j));
        j.by = (fbm_by)((size / 7) % FBM_NBY);
        json_decref(fbt_json(c, &j));
        fbf_folded(sink, c, &(fbt_opts){.weight = FBM_SORT_BYTES, .user_only = size % 4 == 1});
        fbf_svg(sink, c, &(fbt_opts){.weight = FBM_SORT_TIME, .user_only = size % 4 == 2});
    }
    fbm_census_free(c);
    return 0;
}
