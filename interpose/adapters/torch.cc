// torch.cc - see torch_api.h. Compiled against the libtorch whose build id it
// reports (FBCOUNT_TORCH_BUILD_ID), and loaded only where that libtorch runs: the IValue and
// TensorImpl layouts it reads are that build's.
#include "torch_api.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/function.h>

#include <cstdio>
#include <cstring>
#include <string>

#ifndef FBCOUNT_TORCH_BUILD_ID
#error "FBCOUNT_TORCH_BUILD_ID: the build id of the libtorch_cpu this is compiled against"
#endif

namespace {

void add_tensor(const at::Tensor &t, fbcount_torch_call *out)
{
    if (!t.defined())
        return;
    out->bytes += t.nbytes();
    if (t.nbytes() > out->largest)
        out->largest = t.nbytes();
    if (out->has_shape)
        return;
    auto sizes = t.sizes();
    if (sizes.size() > FBCOUNT_TORCH_RANK)
        return;
    out->rank = static_cast<int>(sizes.size());
    for (size_t i = 0; i < sizes.size(); i++)
        out->dims[i] = sizes[i];
    out->dtype = static_cast<int>(t.scalar_type());
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
                add_tensor(v.toTensor(), out);
            } else if (v.isTensorList()) {
                for (const at::Tensor &t : v.toTensorList().vec())
                    add_tensor(t, out);
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
        std::snprintf(out->name, sizeof out->name, "%s", n->name().c_str());
        out->seq = n->sequence_nr();
        out->thread = n->thread_id();
        return 0;
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
