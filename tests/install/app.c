/* app.c - a program from outside the project, built against the installed tree with
 * `pkg-config --cflags --libs vkt fbcount`: one dot on libvkt, counted in-process with
 * fbcount_count. Run under `fbcount run` with VKT_NATIVE_DISABLE=dot, the census shows the
 * same fallback. It prints the file its libfbcount came from, so the test can tell the
 * installed copy from any other. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdio.h>

#include <fbcount.h>
#include <vkt.h>

static vkt_ctx *ctx;
static int rc;

/* 4x4 ones . 4x4 ones: every element 4. */
static void step(void *arg)
{
    (void)arg;
    static const int64_t shape[2] = {4, 4};
    static const int ca[1] = {1}, cb[1] = {0};
    vkt_tensor *a = NULL, *c = NULL;
    float out[16] = {0};
    rc = vkt_full(ctx, VKT_F32, shape, 2, 1.0, &a);
    if (rc == VKT_OK)
        rc = vkt_dot(a, ca, NULL, a, cb, NULL, 1, 0, &c);
    if (rc == VKT_OK)
        rc = vkt_tensor_read(c, out, sizeof out);
    if (rc == VKT_OK && out[15] != 4.0f)
        rc = VKT_EINVAL;
    vkt_tensor_free(c);
    vkt_tensor_free(a);
}

int main(void)
{
    if (vkt_ctx_create(NULL, &ctx) != VKT_OK) {
        fprintf(stderr, "app: no context: %s\n", vkt_last_error());
        return 1;
    }
    fbcount_census *c = fbcount_count(step, NULL);
    if (rc != VKT_OK) {
        fprintf(stderr, "app: dot: %s: %s\n", vkt_status_name(rc), vkt_last_error());
        return 1;
    }
    Dl_info di;
    printf("app: libfbcount: %s\n",
           dladdr((void *)fbcount_count, &di) && di.dli_fname ? di.dli_fname : "?");
    printf("app: in-process census: %llu fallback(s) of vkt_dot\n",
           (unsigned long long)fbcount_census_op_count(c, "vkt_dot"));
    fbcount_census_free(c);
    vkt_ctx_destroy(ctx);
    return 0;
}
