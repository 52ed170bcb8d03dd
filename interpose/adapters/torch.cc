// torch.cc - see torch_api.h. Compiled against the libtorch whose build id it
// reports (FBCOUNT_TORCH_BUILD_ID), and loaded only where that libtorch runs: the IValue and
// TensorImpl layouts it reads are that build's.
#include "torch_api.h"

#include <ATen/core/operator_name.h>

// The adapter links libc10 alone: loading one that needs libtorch_cpu makes the loader walk
// libtorch_cpu's whole dependency closure, about 3 ms of a torch process's time. What it
// reads is in c10 or inline; the one libtorch_cpu function its headers reach, the printer of
// an operator's name in the assertion that an operator has a schema, has a weak definition
// here (libtorch_cpu's wins where the program's scope has it): the message of an assertion
// the adapter checks before, which only a schema removed in between could reach.
namespace c10 {
__attribute__((weak)) std::ostream &operator<<(std::ostream &os, const OperatorName &name)
{
    os << name.name;
    if (!name.overload_name.empty())
        os << "." << name.overload_name;
    return os;
}
} // namespace c10

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/util/Exception.h>
#include <c10/util/Type.h>
#include <torch/csrc/autograd/function.h>

#include <cxxabi.h>
#include <cstdio>
#include <cstring>
#include <string>
#include <typeinfo>

#ifndef FBCOUNT_TORCH_BUILD_ID
#error "FBCOUNT_TORCH_BUILD_ID: the build id of the libtorch_cpu this is compiled against"
#endif

namespace {

// A tensor argument, read from its TensorImpl (IValue::toTensor() is libtorch_cpu's). A
// sparse tensor's elements are not its storage: its bytes are left out.
void add_tensor(const c10::TensorImpl *t, fbcount_torch_call *out)
{
    if (!t || t == c10::UndefinedTensorImpl::singleton() || t->is_sparse())
        return;
    uint64_t nbytes = static_cast<uint64_t>(t->numel()) * t->itemsize();
    out->bytes += nbytes;
    if (nbytes > out->largest)
        out->largest = nbytes;
    if (out->has_shape)
        return;
    auto sizes = t->sizes();
    if (sizes.size() > FBCOUNT_TORCH_RANK)
        return;
    out->rank = static_cast<int>(sizes.size());
    for (size_t i = 0; i < sizes.size(); i++)
        out->dims[i] = sizes[i];
    out->dtype = static_cast<int>(c10::typeMetaToScalarType(t->dtype()));
    out->has_shape = 1;
}

} // namespace

extern "C" int fbcount_torch_abi(void)
{
    return FBCOUNT_TORCH_ABI;
}

extern "C" const char *fbcount_torch_build_id(void)
{
    return FBCOUNT_TORCH_BUILD_ID;
}

extern "C" int fbcount_torch_read(const void *op, const void *stack, fbcount_torch_call *out)
{
    std::memset(out, 0, sizeof *out);
    try {
        const auto &handle = *static_cast<const c10::OperatorHandle *>(op);
        const auto &name = handle.operator_name();
        std::snprintf(out->op, sizeof out->op, "%s%s%s", name.name.c_str(),
                      name.overload_name.empty() ? "" : ".", name.overload_name.c_str());
        const auto *s = static_cast<const torch::jit::Stack *>(stack);
        if (!s || !handle.hasSchema())
            return 0;
        // The call's arguments are the last ones on the stack.
        size_t nargs = handle.schema().arguments().size();
        if (nargs > s->size())
            return 0;
        for (size_t i = s->size() - nargs; i < s->size(); i++) {
            const c10::IValue &v = (*s)[i];
            if (v.isTensor()) {
                add_tensor(v.unsafeToTensorImpl(), out);
            } else if (v.isList()) {
                // Tensor[] and Tensor?[] alike: every tensor among the list's elements.
                for (const c10::IValue &e : v.toListRef())
                    if (e.isTensor())
                        add_tensor(e.unsafeToTensorImpl(), out);
            }
        }
        return 0;
    } catch (...) {
        // A tensor whose sizes cannot be read here (symbolic, say): the call is still counted.
        return out->op[0] ? 0 : -1;
    }
}

extern "C" int fbcount_torch_node(const void *node, fbcount_torch_node_info *out)
{
    std::memset(out, 0, sizeof *out);
    try {
        const auto *n = static_cast<const torch::autograd::Node *>(node);
        // The node's class, not Node::name(): a Python Function's node takes the GIL there,
        // which a thread inside a kernel must never wait for. Generated nodes are named by
        // their class (EluBackward0); the namespace is left out.
        std::string type = c10::demangle(typeid(*n).name());
        size_t colon = type.rfind("::");
        std::snprintf(out->name, sizeof out->name, "%s",
                      type.c_str() + (colon == std::string::npos ? 0 : colon + 2));
        out->seq = n->sequence_nr();
        out->thread = n->thread_id();
        return 0;
    } catch (const abi::__forced_unwind &) {
        throw; // a thread being cancelled goes on unwinding
    } catch (...) {
        return -1;
    }
}

extern "C" const char *fbcount_torch_dtype_name(int dtype)
{
    switch (static_cast<c10::ScalarType>(dtype)) {
    case c10::ScalarType::Float: return "f32";
    case c10::ScalarType::Double: return "f64";
    case c10::ScalarType::Half: return "f16";
    case c10::ScalarType::BFloat16: return "bf16";
    case c10::ScalarType::Byte: return "u8";
    case c10::ScalarType::Char: return "s8";
    case c10::ScalarType::Short: return "s16";
    case c10::ScalarType::Int: return "s32";
    case c10::ScalarType::Long: return "s64";
    case c10::ScalarType::Bool: return "bool";
    case c10::ScalarType::ComplexFloat: return "c64";
    case c10::ScalarType::ComplexDouble: return "c128";
    default: return c10::toString(static_cast<c10::ScalarType>(dtype));
    }
}

extern "C" void fbcount_torch_refuse(const char *message)
{
    TORCH_CHECK(false, message);
    __builtin_unreachable();
}
