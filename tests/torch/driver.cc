// driver.cc - a C++ program on the toy device (toydev.cc): a few ops it runs natively, some
// that fall back to the CPU through at::native::cpu_fallback a known number of times each, a
// CPU kernel that throws through the fallback (index_select with an index out of range),
// caught, and more fallbacks after it. The census must count every fallback, name each op
// and this file's line, and leave the exception and the output as they are.
// With "scope", it counts two calls in an in-process scope instead (fbcount.h); with
// "backward", a training step whose backward falls back on autograd's device thread, and a
// worker std::thread that runs an op with no frame of this file's. With "threads", calls whose
// frames compilers and PyTorch rearrange: a worker std::thread started before any fallback of
// this program's, an op in a helper inlined into its caller, an at::parallel_for body on
// OpenMP's worker threads, and an at::launch lambda on torch's pool.
// "backward anomaly" runs the same in anomaly mode, where each node keeps its forward's stack.
//   usage: torch-driver [steps|scope|backward [anomaly]|threads]
// prints values, which do not depend on the census
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fbcount.h>
#include <torch/csrc/autograd/anomaly_mode.h>
#include <torch/csrc/autograd/autograd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <thread>
#include <vector>

#include "toydev.h"

static int scope(const c10::Device &toy)
{
    at::Tensor x = at::ones({4}).to(toy);
    fbcount_scope_begin();
    at::Tensor g = at::gelu(x);
    at::Tensor m = at::mul(g, x);
    fbcount_census *c = fbcount_scope_end();
    std::printf("scope: %llu fallbacks, aten::gelu.out %llu, aten::mul.out %llu\n",
                (unsigned long long)fbcount_census_total(c),
                (unsigned long long)fbcount_census_op_count(c, "aten::gelu.out"),
                (unsigned long long)fbcount_census_op_count(c, "aten::mul.out"));
    fbcount_census_free(c);
    return 0;
}

// at::relu's own address: the worker runs PyTorch's code from its first frame.
static at::Tensor (*const relu_fn)(const at::Tensor &) = at::relu;

static int backward(const c10::Device &toy, bool anomaly)
{
    // Anomaly mode keeps each node's forward stack (its NaN checks, which fall back too, off).
    torch::autograd::AnomalyMode::set_enabled(anomaly, false);
    at::Tensor x = at::arange(12, at::kFloat).reshape({3, 4}).to(toy);
    at::Tensor w = at::ones({3, 4}).to(toy).requires_grad_();
    for (int i = 0; i < 2; i++) {
        at::Tensor h = x * w;               // DRIVER-PRODUCT
        at::Tensor loss = at::elu(h).sum(); // DRIVER-FORWARD
        torch::autograd::backward({loss});  // DRIVER-BACKWARD
    }
    at::Tensor r;
    std::thread worker([&r](const at::Tensor &t) { r = relu_fn(t); }, x); // DRIVER-LAMBDA
    worker.join();
    std::thread bare(relu_fn, x); // DRIVER-WORKER
    bare.join();
    std::printf("grad %.4f relu %.4f\n", w.grad().to(c10::DeviceType::CPU).sum().item<double>(),
                r.to(c10::DeviceType::CPU).sum().item<double>());
    return 0;
}

// A helper its caller keeps no frame of: its op's site is this line, inlined in the caller's.
static inline __attribute__((always_inline)) at::Tensor inlined_gelu(const at::Tensor &t)
{
    return at::gelu(t); // DRIVER-INLINED
}

// Not inlined into main: the helper's chain ends here, whatever main's optimizer does.
static __attribute__((noinline)) int threads(const c10::Device &toy)
{
    at::Tensor x = at::arange(12, at::kFloat).reshape({3, 4}).to(toy);
    std::thread bare(relu_fn, x); // DRIVER-EARLY
    bare.join();
    at::Tensor g = inlined_gelu(x); // DRIVER-INLINER
    // Two chunks of one element: with two threads each runs on its own, one on OpenMP's worker.
    at::set_num_threads(2);
    std::vector<at::Tensor> parts(2);
    at::parallel_for(0, 2, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; i++)
            parts[i] = at::relu(x); // DRIVER-BODY
    });
    std::promise<at::Tensor> done;
    at::launch([&] { done.set_value(at::mul(x, x)); }); // DRIVER-LAUNCH
    at::Tensor m = done.get_future().get();
    double sum = 0;
    for (const at::Tensor &t : {g, parts[0], parts[1], m})
        sum += t.to(c10::DeviceType::CPU).sum().item<double>();
    std::printf("threads %.4f\n", sum);
    return 0;
}

int main(int argc, char **argv)
{
    const c10::Device toy = toy_device();
    if (argc > 1 && !std::strcmp(argv[1], "scope"))
        return scope(toy);
    if (argc > 1 && !std::strcmp(argv[1], "backward"))
        return backward(toy, argc > 2 && !std::strcmp(argv[2], "anomaly"));
    if (argc > 1 && !std::strcmp(argv[1], "threads"))
        return threads(toy);
    int steps = argc > 1 ? std::atoi(argv[1]) : 3;
    at::Tensor x = at::arange(12, at::kFloat).reshape({3, 4}).to(toy);
    at::Tensor y = at::ones({3, 4}).to(toy);
    at::Tensor m;
    for (int i = 0; i < steps; i++) {
        at::Tensor z = at::add(x, y); // native
        at::Tensor g = at::gelu(z);   // DRIVER-GELU
        m = at::mul(g, y);            // DRIVER-MUL
    }
    at::Tensor rows =
        at::index_select(x, 0, at::tensor({0, 2}, at::kLong).to(toy)); // DRIVER-SELECT
    int caught = 0;
    try {
        at::index_select(x, 0, at::tensor({7}, at::kLong).to(toy)); // DRIVER-THROW
    } catch (const c10::Error &e) {
        caught = 1;
    }
    at::Tensor r;
    for (int i = 0; i < 2; i++)
        r = at::relu(m); // DRIVER-RELU
    at::Tensor back = r.to(c10::DeviceType::CPU);
    std::printf("caught %d sum %.4f rows %.1f\n", caught, back.sum().item<double>(),
                rows.to(c10::DeviceType::CPU).sum().item<double>());
    return 0;
}
