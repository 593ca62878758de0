// The current `nki` dialect in the interpreter: a destination-passing call computes what its 0.1
// spelling computes (the op-table row, bound through NKI/Dialect's table) and writes it into dst,
// accumulating as nc_matmul's accumulate= says; plus the calls only this dialect has
// (memset/iota into dst, dma_compute, activation's reduce_res, `.ap()` access patterns).
#include "Interp/Evaluator/KernelEvaluator.h"

#include "Interp/DTypeRounding.h"
#include "Interp/Uninit.h"
#include "NKI/Dialect.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::interp::evaluator {

/// nisa.iota's and nisa.affine_select's affine value per dst element: offset + p * channel_multiplier +
/// sum(step * i) over the pattern's [step, num] pairs (outermost first), as (partitions, per partition, values).
std::tuple<int64_t, int64_t, std::vector<int64_t>>
KernelEvaluator::affinePattern(const nki::DialectApi &api, const std::function<const Expr *(std::string_view)> &exprOf,
                               const View &dst) {
  const Expr *patE = exprOf("pattern");
  Value pat = eval(patE);
  auto intOf = [&](std::string_view p) -> int64_t {
    const Expr *x = exprOf(p);
    return x ? intArg(eval(x), x) : 0;
  };
  int64_t offset = intOf("offset"), channel = intOf("channel_multiplier");
  std::vector<std::pair<int64_t, int64_t>> pairs;
  if (!pat.isSeq()) fail(patE->range, std::string(api.name) + "'s pattern is a list of [step, num] pairs");
  for (const Value &pair : *pat.elts) {
    if (!pair.isSeq() || pair.elts->size() != 2)
      fail(patE->range, std::string(api.name) + "'s pattern is a list of [step, num] pairs");
    pairs.push_back({intArg((*pair.elts)[0], patE), intArg((*pair.elts)[1], patE)});
  }
  int64_t parts = dst.extent.empty() ? 1 : dst.extent[0], perPartition = 1;
  for (auto &[step, num] : pairs) perPartition *= num;
  if (parts * perPartition != dst.numel())
    fail(patE->range, llvm::formatv("{0}'s pattern makes {1} elements per partition; its dst has {2}", api.name,
                                    perPartition, dst.numel() / std::max<int64_t>(1, parts))
                          .str());
  std::vector<int64_t> values(size_t(parts * perPartition));
  for (int64_t p = 0; p < parts; ++p)
    for (int64_t f = 0; f < perPartition; ++f) {
      int64_t value = offset + p * channel, rest = f;
      for (size_t a = pairs.size(); a-- > 0;) {
        value += pairs[a].first * (rest % pairs[a].second);
        rest /= pairs[a].second;
      }
      values[size_t(p * perPartition + f)] = value;
    }
  return {parts, perPartition, std::move(values)};
}

Value KernelEvaluator::dialectCall(const nki::DialectApi &api, const Expr *e) {
  std::vector<std::string_view> keywords;
  for (const auto &kw : e->keywords) keywords.push_back(kw.name);
  nki::DialectBinding b = nki::bindCurrentDialectCall(api, e->elts.size(), keywords);
  if (!b.missing.empty())
    fail(e->range, std::string(api.name) + " is missing its required argument '" + std::string(b.missing[0]) + "'");
  if (!b.repeated.empty())
    fail(e->range, std::string(api.name) + "() got multiple values for argument '" + std::string(b.repeated[0]) + "'");
  auto exprOf = [&](std::string_view param) -> const Expr * {
    int at = b.arg(param);
    if (at < 0) return nullptr;
    return size_t(at) < e->elts.size() ? e->elts[size_t(at)] : e->keywords[size_t(at) - e->elts.size()].value;
  };
  const Expr *dstE = exprOf("dst");
  Value dstV = eval(dstE);
  if (!dstV.isTile()) fail(dstE->range, std::string(api.name) + " needs a tensor as dst, got " + describe(dstV));
  View dst = viewOf(dstV, dstE);
  const nki::OpInfo *op = api.op();

  if (!op) {
    // nisa.dma_compute(dst, srcs, reduce_op): dst = srcs[0] (op) srcs[1] (op) ..., fp32 math; every source is
    // read before dst is written (dst may be among them).
    ++Stats.instructions;
    const Expr *srcsE = exprOf("srcs");
    Value srcs = eval(srcsE);
    if (!srcs.isSeq() || srcs.elts->empty()) fail(srcsE->range, "dma_compute needs a non-empty list of sources");
    Value reduceOp = eval(exprOf("reduce_op"));
    AluOp alu = aluFrom(&reduceOp, exprOf("reduce_op"));
    NDArray acc = gather(viewOf((*srcs.elts)[0], srcsE), nullptr, srcsE->range, true);
    for (size_t i = 1; i < srcs.elts->size(); ++i) {
      NDArray next = gather(viewOf((*srcs.elts)[i], srcsE), nullptr, srcsE->range, true);
      if (next.numel() != acc.numel())
        fail(srcsE->range,
             "dma_compute sources differ in size: " + formatShape(acc.shape()) + " and " + formatShape(next.shape()));
      float *a = acc.data();
      const float *n = next.data();
      for (int64_t k = 0; k < acc.numel(); ++k) a[k] = applyAlu(alu, a[k], n[k]);
    }
    scatter(dst, acc, nullptr, dstE->range, nullptr, true);
    return Value::none();
  }

  switch (op->kind) {
  case nki::OpKind::Memset: {
    ++Stats.instructions;
    Value v = eval(exprOf("value"));
    float value = roundToDType(scalarOf(v, exprOf("value")), dst.tensor->data.dtype());
    writeValue(dst, Value::number(value), e, nullptr, nullptr, dstE);
    return Value::none();
  }
  case nki::OpKind::Iota: {
    ++Stats.instructions;
    auto [parts, perPartition, values] = affinePattern(api, exprOf, dst);
    auto out = NDArray::allocate({parts, perPartition}, nki::DType::Float32);
    if (!out) fail(e->range, llvm::toString(out.takeError()));
    float *o = out->data();
    for (size_t k = 0; k < values.size(); ++k) o[k] = float(values[k]);
    scatter(dst, *out, nullptr, dstE->range, nullptr, true);
    return Value::none();
  }
  case nki::OpKind::AffineSelect: {
    // dst = cmp_op(affine value, 0) ? on_true_tile : on_false_value, the value as nisa.iota's.
    ++Stats.instructions;
    auto [parts, perPartition, values] = affinePattern(api, exprOf, dst);
    const Expr *trueE = exprOf("on_true_tile"), *falseE = exprOf("on_false_value");
    Value onTrueV = eval(trueE), onFalseV = eval(falseE);
    if (!onTrueV.isTile())
      fail(trueE->range, "affine_select's on_true_tile must be a tensor, got " + describe(onTrueV));
    if (!onFalseV.isNumber())
      fail(falseE->range, "affine_select's on_false_value must be a scalar number, got " + describe(onFalseV));
    NDArray onTrue = gather(viewOf(onTrueV, trueE), nullptr, trueE->range, true);
    if (onTrue.numel() != parts * perPartition)
      fail(trueE->range, llvm::formatv("affine_select's on_true_tile has {0} elements; its dst and pattern {1}",
                                       onTrue.numel(), parts * perPartition)
                             .str());
    const Expr *cmpE = exprOf("cmp_op");
    Value cmpV = cmpE ? eval(cmpE) : Value::none();
    AluOp cmp = cmpE ? aluFrom(&cmpV, cmpE) : AluOp::Equal;
    auto out = NDArray::allocate({parts, perPartition}, nki::DType::Float32);
    if (!out) fail(e->range, llvm::toString(out.takeError()));
    const float *in = onTrue.data();
    float *o = out->data(), onFalse = float(onFalseV.num());
    for (size_t k = 0; k < values.size(); ++k) o[k] = applyAlu(cmp, float(values[k]), 0.0f) != 0.0f ? in[k] : onFalse;
    scatter(dst, *out, nullptr, dstE->range, nullptr, true);
    return Value::none();
  }
  case nki::OpKind::DmaCopy: {
    PendingBinding = &b;
    return nkiCall(op, e, nullptr); // dst and src are the row's own parameters
  }
  default: break;
  }

  PendingBinding = &b;
  Value result = nkiCall(op, e, nullptr);
  if (!result.isTile()) fail(e->range, std::string(api.name) + " produced no tile");

  std::function<float(float, float)> combine;
  if (op->kind == nki::OpKind::Matmul) {
    const Expr *accE = exprOf("accumulate");
    Value acc = accE ? eval(accE) : Value::none();
    nki::AccumulateMode mode = acc.kind == Value::None            ? nki::AccumulateMode::Auto
                               : acc.isNumber() && acc.num() == 0 ? nki::AccumulateMode::Overwrite
                                                                  : nki::AccumulateMode::Add;
    if (mode == nki::AccumulateMode::Add) combine = [](float o, float n) { return o + n; };
    if (mode == nki::AccumulateMode::Auto) combine = [](float o, float n) { return isUninit(o) ? n : o + n; };
  }
  if (op->kind == nki::OpKind::TensorTensor && inPlaceAccumulation(exprOf, dst))
    combine = [](float, float n) { return n; }; // an accumulation: iterations may meet in dst, as with `+=`
  writeValue(dst, result, e, nullptr, combine ? &combine : nullptr, dstE);
  return Value::none();
}

bool KernelEvaluator::inPlaceAccumulation(const std::function<const Expr *(std::string_view)> &exprOf,
                                          const View &dst) {
  // tensor_tensor(dst=x, data1=x, data2=y, op=nl.add): x accumulates in any order, like `x += y`.
  const Expr *opE = exprOf("op");
  Value fn = opE ? eval(opE) : Value::none();
  auto alu = fn.kind == Value::Path ? nki::aluOfFunctionValue(fn.s) : std::nullopt;
  if (!alu || !nki::accumulatesInAnyOrder(*alu)) return false;
  for (std::string_view param : {"data1", "data2"}) {
    const Expr *x = exprOf(param);
    if (!x) continue;
    Value v = eval(x);
    if (!v.isTile()) continue;
    View operand = viewOf(v, x);
    if (operand.tensor == dst.tensor && operand.offset == dst.offset && operand.stride == dst.stride &&
        operand.extent == dst.extent)
      return true;
  }
  return false;
}

Value KernelEvaluator::accessPattern(const Value &m, const Expr *e) {
  // t.ap(pattern=[[step, num], ...], offset=0): a strided view over the flattened tensor, outermost pair first.
  if (m.view) fail(e->range, ".ap() is only allowed on a whole tensor, not on an indexed one");
  const Expr *patE = e->keyword("pattern");
  if (!patE && !e->elts.empty()) patE = e->elts[0];
  if (!patE) fail(e->range, ".ap() needs pattern=[[step, num], ...]");
  Value pat = eval(patE);
  if (!pat.isSeq() || pat.elts->empty()) fail(patE->range, ".ap()'s pattern is a list of [step, num] pairs");
  const Expr *offE = e->keyword("offset");
  if (!offE && e->elts.size() > 1) offE = e->elts[1];
  int64_t offset = offE ? intArg(eval(offE), offE) : 0;
  if (e->keyword("scalar_offset"))
    fail(e->keyword("scalar_offset")->range, "dynamic .ap(scalar_offset=...) is not supported by the interpreter");
  View v;
  v.tensor = m.tensor;
  v.offset = offset;
  int64_t lo = offset, hi = offset;
  for (const Value &pair : *pat.elts) {
    if (!pair.isSeq() || pair.elts->size() != 2) fail(patE->range, ".ap()'s pattern is a list of [step, num] pairs");
    int64_t step = intArg((*pair.elts)[0], patE), num = intArg((*pair.elts)[1], patE);
    if (num <= 0) fail(patE->range, ".ap() pattern counts must be positive");
    v.stride.push_back(step);
    v.extent.push_back(num);
    (step >= 0 ? hi : lo) += step * (num - 1);
  }
  if (lo < 0 || hi >= m.tensor->data.numel())
    fail(e->range, llvm::formatv(".ap() reaches elements [{0}, {1}] of '{2}', which has {3}", lo, hi, m.tensor->name,
                                 m.tensor->data.numel())
                       .str());
  return Value::ofView(std::move(v));
}

} // namespace accelopt::interp::evaluator
