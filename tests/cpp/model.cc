/* model.cc - a C++ program on libvkt, for the names a census gives C++ code: a namespace, a
 * class template, a lambda called through std::function, and a helper inlined at -O2. With
 * VKT_NATIVE_DISABLE=dot,add each step's dot and bias add fall back.
 *
 * usage: model STEPS [crash]
 *   crash: after the steps, asks the preloaded shim for a live dump (fbcount_dump, reason
 *   "api") and then faults, so the shim also writes a crash dump of the same stacks with raw
 *   frames: `fbcount symbolize` must name them as the live dump does.
 *
 * Lines the test looks for are marked "line:NAME". */
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string_view>
#include <vector>

#include <vkt.h>

namespace model {

[[noreturn]] static void fail(const char *what, int rc)
{
    std::fprintf(stderr, "model: %s: %s: %s\n", what, vkt_status_name(rc), vkt_last_error());
    std::exit(1);
}

static void check(const char *what, int rc)
{
    if (rc != VKT_OK)
        fail(what, rc);
}

template <typename T> struct dtype_of;
template <> struct dtype_of<float> {
    static constexpr vkt_dtype value = VKT_F32;
};

/* A dense layer, y = x w + b. */
template <typename T> class Dense {
  public:
    Dense(vkt_ctx *ctx, int64_t in, int64_t out)
    {
        const int64_t ws[2] = {in, out}, bs[1] = {out};
        check("weights", vkt_full(ctx, dtype_of<T>::value, ws, 2, 0.01, &w_));
        check("bias", vkt_full(ctx, dtype_of<T>::value, bs, 1, 0.5, &b_));
    }
    ~Dense()
    {
        vkt_tensor_free(w_);
        vkt_tensor_free(b_);
    }
    Dense(const Dense &) = delete;
    Dense &operator=(const Dense &) = delete;

    /* x [batch, in] -> [batch, out]. Kept out of line so that it is a frame in every stack,
     * as a real layer's forward pass is. */
    __attribute__((noinline)) vkt_tensor *forward(const vkt_tensor *x) const
    {
        static const int ca[1] = {1}, cb[1] = {0};
        vkt_tensor *y = nullptr;
        check("dot", vkt_dot(x, ca, nullptr, w_, cb, nullptr, 1, 0, &y)); /* line:dot */
        return add_bias(y);                                               /* line:bias */
    }

  private:
    /* Inlined into forward at -O2: it is a frame of its own only through the debug
     * information, which is what --frames line and fbcount symbolize read. */
    inline __attribute__((always_inline)) vkt_tensor *add_bias(vkt_tensor *y) const
    {
        vkt_tensor *out = nullptr;
        check("add", vkt_add(y, b_, &out)); /* line:add */
        vkt_tensor_free(y);
        return out;
    }

    vkt_tensor *w_ = nullptr, *b_ = nullptr;
};

using Step = std::function<vkt_tensor *(const vkt_tensor *)>;

/* The steps a framework would keep in a registry: called through std::function, so the
 * lambda runs under std::function's invoker. */
__attribute__((noinline)) static void train(const std::vector<Step> &steps, const vkt_tensor *x,
                                            int n)
{
    for (int i = 0; i < n; i++)
        for (const Step &step : steps)
            vkt_tensor_free(step(x)); /* line:call */
}

} // namespace model

/* Set at run time, so the compiler cannot see the fault coming and turn it into a trap. */
static int *volatile nowhere;

int main(int argc, char **argv)
{
    int steps = argc > 1 ? std::atoi(argv[1]) : 3;
    bool crash = argc > 2 && std::string_view(argv[2]) == "crash";
    vkt_ctx *ctx = nullptr;
    model::check("context", vkt_ctx_create(nullptr, &ctx));
    const int64_t xs[2] = {8, 16};
    vkt_tensor *x = nullptr;
    model::check("input", vkt_full(ctx, VKT_F32, xs, 2, 1.0, &x));
    {
        model::Dense<float> layer(ctx, 16, 4);
        std::vector<model::Step> registry;
        registry.push_back([&layer](const vkt_tensor *in) {
            vkt_tensor *y = layer.forward(in), *a = nullptr; /* line:lambda */
            model::check("tanh", vkt_tanh(y, &a));
            vkt_tensor_free(y);
            return a;
        });
        model::train(registry, x, steps);
        model::check("sync", vkt_sync(ctx));
    }
    vkt_tensor_free(x);
    if (crash) {
        /* The shim is preloaded, not linked: its API is looked up where it is. */
        void *sym = dlsym(RTLD_DEFAULT, "fbcount_dump");
        int (*dump)(const char *) = nullptr;
        static_assert(sizeof dump == sizeof sym, "a function pointer is a data pointer here");
        __builtin_memcpy(&dump, &sym, sizeof dump);
        if (!dump || dump(nullptr) != 0) {
            std::fprintf(stderr, "model: no live dump (is libfbcount.so preloaded?)\n");
            return 1;
        }
        *nowhere = 1;
    }
    vkt_ctx_destroy(ctx);
    return 0;
}
