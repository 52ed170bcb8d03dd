// toydev.cc - a toy PyTorch device on the PrivateUse1 dispatch key, the way out-of-tree
// accelerator backends are written: its memory is host memory, it implements a few kernels
// natively (allocation, copies, views, add) and registers PyTorch's boxed CPU fallback,
// at::native::cpu_fallback, for every other op. A fallback's result is bit-identical to the
// CPU's, so nothing but a census can tell which ops left the "device".
#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>
#if __has_include(<torch/version.h>)
#include <torch/version.h>
#endif
#if defined(TORCH_VERSION_MAJOR) && TORCH_VERSION_MAJOR >= 2
#include <ATen/detail/PrivateUse1HooksInterface.h>
#endif

#include <cstdlib>
#include <cstring>

#include "toydev.h"

c10::Device toy_device()
{
    return c10::Device(c10::DeviceType::PrivateUse1, 0);
}

namespace {

// c10::Allocator's allocate() lost its const in PyTorch 2.x, which added copy_data(): both
// forms are declared (without override), so one class serves 1.13 and 2.x alike.
struct ToyAllocator final : c10::Allocator {
    c10::DataPtr allocate(size_t n)
    {
        void *p = std::calloc(n ? n : 1, 1);
        TORCH_CHECK(p, "toy device: out of memory for ", n, " bytes");
        return {p, p, &std::free, toy_device()};
    }
    c10::DataPtr allocate(size_t n) const
    {
        return const_cast<ToyAllocator *>(this)->allocate(n);
    }
    void copy_data(void *dest, const void *src, std::size_t count) const
    {
        std::memcpy(dest, src, count);
    }
    c10::DeleterFnPtr raw_deleter() const override
    {
        return &std::free;
    }
};

ToyAllocator toy_allocator;

// The same memory seen as a CPU tensor: the toy device computes with the CPU's kernels.
at::Tensor on_cpu(const at::Tensor &t)
{
    if (t.is_cpu())
        return t;
    return at::from_blob(t.data_ptr(), t.sizes(), t.strides(),
                         t.options().device(c10::DeviceType::CPU));
}

at::Tensor empty(c10::IntArrayRef size, c10::optional<at::ScalarType> dtype,
                 c10::optional<at::Layout> layout, c10::optional<at::Device> device,
                 c10::optional<bool> pin_memory, c10::optional<at::MemoryFormat> memory_format)
{
    constexpr c10::DispatchKeySet keys(c10::DispatchKey::PrivateUse1);
    return at::detail::empty_generic(size, &toy_allocator, keys, c10::dtype_or_default(dtype),
                                     memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride,
                         c10::optional<at::ScalarType> dtype, c10::optional<at::Layout> layout,
                         c10::optional<at::Device> device, c10::optional<bool> pin_memory)
{
    constexpr c10::DispatchKeySet keys(c10::DispatchKey::PrivateUse1);
    return at::detail::empty_strided_generic(size, stride, &toy_allocator, keys,
                                             c10::dtype_or_default(dtype));
}

at::Tensor copy_from(const at::Tensor &self, const at::Tensor &dst, bool non_blocking)
{
    on_cpu(dst).copy_(on_cpu(self));
    return dst;
}

const at::Tensor &toy_resize(const at::Tensor &self, c10::IntArrayRef size,
                             c10::optional<at::MemoryFormat> memory_format)
{
    at::native::resize_impl_cpu_(self.unsafeGetTensorImpl(), size, c10::nullopt);
    return self;
}

at::Tensor copy_from_and_resize(const at::Tensor &self, const at::Tensor &dst)
{
    toy_resize(dst, self.sizes(), c10::nullopt);
    return copy_from(self, dst, false);
}

at::Tensor add(const at::Tensor &a, const at::Tensor &b, const at::Scalar &alpha)
{
    auto shape = at::infer_size(a.sizes(), b.sizes());
    at::Tensor out = at::empty(shape, a.options().dtype(at::result_type(a, b)));
    auto cpu_out = on_cpu(out);
    at::add_out(cpu_out, on_cpu(a), on_cpu(b), alpha);
    return out;
}

// What an out-of-tree backend registers for the ops it lacks: PyTorch's own CPU fallback.
void toy_fallback(const c10::OperatorHandle &op, torch::jit::Stack *stack)
{
    at::native::cpu_fallback(op, stack);
}

} // namespace

// One device, no streams, every op done when it returns: a guard that does nothing, with
// events that are complete as soon as they are recorded. PyTorch 2.x's autograd engine
// records and waits on an event between a device's streams in every backward; the default
// guard's events throw ("privateuseone backend doesn't support events").
struct ToyGuard final : c10::impl::DeviceGuardImplInterface {
    c10::DeviceType type() const override
    {
        return c10::DeviceType::PrivateUse1;
    }
    c10::Device exchangeDevice(c10::Device) const override
    {
        return toy_device();
    }
    c10::Device getDevice() const override
    {
        return toy_device();
    }
    void setDevice(c10::Device) const override
    {
    }
    void uncheckedSetDevice(c10::Device) const noexcept override
    {
    }
    c10::Stream getStream(c10::Device d) const noexcept override
    {
        return c10::Stream(c10::Stream::DEFAULT, d);
    }
    c10::Stream exchangeStream(c10::Stream s) const noexcept override
    {
        return c10::Stream(c10::Stream::DEFAULT, s.device());
    }
    c10::DeviceIndex deviceCount() const noexcept override
    {
        return 1;
    }
    void record(void **event, const c10::Stream &, const c10::DeviceIndex,
                const c10::EventFlag) const override
    {
        static char done;
        *event = &done;
    }
    void block(void *, const c10::Stream &) const override
    {
    }
    bool queryEvent(void *) const override
    {
        return true;
    }
    void destroyEvent(void *, const c10::DeviceIndex) const noexcept override
    {
    }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, ToyGuard);

#if defined(TORCH_VERSION_MAJOR) && TORCH_VERSION_MAJOR >= 2
// PyTorch 2.x's autograd engine syncs a backward's streams on "the accelerator": CUDA where
// the machine has it, unless a PrivateUse1 backend says it is registered (under its default
// name here, so every device string stays "privateuseone") and gives its hooks, of which the
// engine asks whether a device has been initialized: the toy device always has.
struct ToyHooks final : at::PrivateUse1HooksInterface {
    bool hasPrimaryContext(c10::DeviceIndex) const override
    {
        return true;
    }
};

static const bool toy_registered = [] {
    c10::register_privateuse1_backend("privateuseone");
    at::RegisterPrivateUse1HooksInterface(new ToyHooks);
    return true;
}();
#endif

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
    m.impl("empty.memory_format", empty);
    m.impl("empty_strided", empty_strided);
    m.impl("_copy_from", copy_from);
    m.impl("_copy_from_and_resize", copy_from_and_resize);
    m.impl("resize_", toy_resize);
    m.impl("view", at::native::view);
    m.impl("as_strided", at::native::as_strided_tensorimpl);
    m.impl("_reshape_alias", at::native::_reshape_alias);
    m.impl("add.Tensor", add);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m)
{
    m.fallback(torch::CppFunction::makeFromBoxedFunction<&toy_fallback>());
}
