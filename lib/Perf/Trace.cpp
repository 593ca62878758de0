#include "Perf/Trace.h"

namespace accelopt::perf {

namespace {
// Indexed by OpKind; the names are the nki.isa spellings the op table uses.
constexpr std::string_view kOpKindNames[kNumOpKinds] = {
    "nc_matmul",     "transpose",          "activation",  "tensor_tensor", "tensor_scalar", "scalar_tensor_tensor",
    "tensor_reduce", "tensor_tensor_scan", "tensor_copy", "reciprocal",    "memset",        "iota",
    "affine_select", "other_compute",      "load",        "store",         "spill_save",    "spill_reload",
    "dma_copy",
};
} // namespace

std::string_view opKindName(OpKind op) { return kOpKindNames[static_cast<unsigned>(op)]; }

std::optional<OpKind> parseOpKind(std::string_view name) {
  for (unsigned i = 0; i < kNumOpKinds; ++i)
    if (kOpKindNames[i] == name) return static_cast<OpKind>(i);
  return std::nullopt;
}

} // namespace accelopt::perf
