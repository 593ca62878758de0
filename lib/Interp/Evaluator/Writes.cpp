// Writes into tensors: `t[...] = value`, `t[...] op= value` and PSUM accumulation of matmuls in place.
#include "Interp/Evaluator/KernelEvaluator.h"

#include "Interp/DTypeRounding.h"
#include "Interp/Uninit.h"
#include "NKI/PyInt.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstring>

namespace accelopt::interp::evaluator {

void KernelEvaluator::assignInto(const Expr *target, const Expr *valueExpr, const std::string *augOp) {
  Value base = eval(target->base);
  if (base.kind == Value::List && !augOp && target->elts.size() == 1 && target->elts[0]->kind != ExprKind::Slice) {
    // `tiles[i] = t`, `shape[axis] = 1`: a list item, replaced in place (every name bound to the list sees it).
    Value index = eval(target->elts[0]);
    if (!index.isIntLike()) fail(target->elts[0]->range, "list indices must be integers, not " + describe(index));
    int64_t n = int64_t(base.elts->size()), k = index.i < 0 ? index.i + n : index.i;
    if (k < 0 || k >= n)
      fail(target->range, llvm::formatv("list assignment index {0} out of range for length {1}", index.i, n).str());
    (*base.elts)[size_t(k)] = eval(valueExpr);
    return;
  }
  if (!base.isTile()) fail(target->range, "cannot assign into " + describe(base));
  View dst = makeView(base, target, nullptr);
  if (augOp) {
    if (accumulateMatmulInPlace(dst, valueExpr, *augOp)) return;
    LastMask.reset();
    Value rhs = eval(valueExpr);
    auto mask = std::move(LastMask);
    accumulateInto(dst, rhs, *augOp, valueExpr->range, mask.get());
    return;
  }
  LastMask.reset();
  Value rhs = valueExpr->kind == ExprKind::Call ? call(valueExpr, &dst) : eval(valueExpr);
  if (rhs.kind == Value::None && valueExpr->kind == ExprKind::Call) return; // the call wrote dst itself
  auto mask = std::move(LastMask);
  writeValue(dst, rhs, valueExpr, mask.get(), nullptr);
}

void KernelEvaluator::writeValue(const View &dst, const Value &rhs, const Expr *at, const Mask *mask,
                                 const std::function<float(float, float)> *combine, const Expr *dstAt) {
  const syntax::ByteRange &where = (dstAt ? dstAt : at)->range;
  if (rhs.isTile()) {
    View src = viewOf(rhs, at);
    NDArray val = gather(src, mask, at->range, /*checkUninit=*/true);
    std::optional<int64_t> undefinedLane;
    if (Opts.detectUninitReads) undefinedLane = firstMaskedOff(val.data(), val.numel());
    std::shared_ptr<const UndefinedOrigin> from = undefinedLane ? undefinedOriginOf(src.tensor.get()) : nullptr;
    // Lanes a masked op left undefined may sit in on-chip tiles, never reach HBM; lanes computed from
    // never-written memory fail as the read they came from.
    if (undefinedLane && nki::isHBM(dst.tensor->buffer) && from) fail(from->at, from->message);
    if (undefinedLane && !nki::isHBM(dst.tensor->buffer) && from && !dst.tensor->undefinedFrom)
      dst.tensor->undefinedFrom = from;
    // An accumulation (+=) keeps an undefined lane undefined rather than computing a NaN from its marker.
    std::function<float(float, float)> keepUndefined;
    if (undefinedLane && combine) {
      keepUndefined = [combine](float oldv, float newv) {
        return isMaskedOff(newv) || isMaskedOff(oldv) ? maskedOffValue() : (*combine)(oldv, newv);
      };
      combine = &keepUndefined;
    }
    if (Opts.detectUninitReads && nki::isHBM(dst.tensor->buffer))
      if (auto first = undefinedLane)
        fail(at->range, llvm::formatv("stores lanes a masked op left undefined (tile element {0} of {1}: rows or "
                                      "columns masked off where the tile was computed) into '{2}'; mask this store too",
                                      *first, formatShape(val.shape()), dst.tensor->name)
                            .str());
    scatter(dst, val, mask, where, combine, combine == nullptr);
  } else if (rhs.isNumber()) {
    auto val = NDArray::full({1}, nki::DType::Float32, float(rhs.num()));
    if (!val) fail(at->range, llvm::toString(val.takeError()));
    scatter(dst, *val, mask, where, combine, combine == nullptr);
  } else {
    fail(at->range, "cannot store " + describe(rhs) + " into a tensor");
  }
}

bool KernelEvaluator::accumulateMatmulInPlace(const View &dst, const Expr *valueExpr, const std::string &op) {
  if (op != "+" || valueExpr->kind != ExprKind::Call) return false;
  auto tile = directTile(dst, valueExpr->range);
  if (!tile) return false;
  // A PSUM tile nothing wrote yet starts a matmul accumulation group, whose first matmul overwrites the
  // bank (docs/NKI.md §3, nc_matmul): `psum[...] += nc_matmul(...)` needs no zero fill. Any other read of
  // never-written elements goes to the generic path, which reports it.
  bool startsGroup = false;
  if (Opts.detectUninitReads) {
    int64_t unwritten = 0;
    for (int64_t r = 0; r < tile->rows; ++r)
      for (int64_t c = 0; c < tile->cols; ++c) unwritten += isUninit(tile->row(r)[c]);
    if (unwritten && (dst.tensor->buffer != nki::Buffer::PSUM || unwritten != tile->rows * tile->cols)) return false;
    startsGroup = unwritten > 0;
  }
  auto fillTile = [&](float value) {
    for (int64_t r = 0; r < tile->rows; ++r) std::fill_n(tile->row(r), tile->cols, value);
  };
  if (startsGroup) fillTile(0.0f);
  MatmulAccumulator = tile;
  MatmulAccumulated = false;
  LastMask.reset();
  Value rhs;
  try {
    rhs = eval(valueExpr);
  } catch (...) {
    MatmulAccumulator.reset();
    if (startsGroup) fillTile(uninitValue());
    throw;
  }
  MatmulAccumulator.reset();
  if (MatmulAccumulated) return true;
  if (startsGroup) fillTile(uninitValue()); // not a matmul: its read of the fresh tile is an error
  // Not a matmul after all: accumulate its result the ordinary way.
  auto mask = std::move(LastMask);
  accumulateInto(dst, rhs, op, valueExpr->range, mask.get());
  return true;
}

void KernelEvaluator::accumulateInto(const View &dst, const Value &rhs, const std::string &op,
                                     const syntax::ByteRange &at, const Mask *mask) {
  auto alu = interp::aluOpFromName(op == "+"     ? "add"
                                   : op == "-"   ? "subtract"
                                   : op == "*"   ? "multiply"
                                   : op == "/"   ? "divide"
                                   : op == "max" ? "maximum"
                                                 : op);
  if (!alu) fail(at, "unsupported accumulation '" + op + "='");
  // Accumulating reads the destination: it must have been written.
  NDArray acc = gather(dst, mask, at, /*checkUninit=*/true);
  auto check = [&](llvm::Error err) {
    if (err) fail(at, llvm::toString(std::move(err)));
  };
  if (rhs.isTile())
    check(applyBinary(*alu, acc.asTile(), acc.asTile(), gather(viewOf(rhs, nullptr), mask, at, true).asTile()));
  else if (rhs.isNumber())
    check(applyBinary(*alu, acc.asTile(), acc.asTile(), float(rhs.num())));
  else
    fail(at, "cannot accumulate " + describe(rhs));
  scatter(dst, acc, mask, at, nullptr, /*raceCheck=*/false);
}

} // namespace accelopt::interp::evaluator
