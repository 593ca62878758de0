// The interpreter: runs the kernel's trace-time Python concretely (loops are
// executed, helper functions called) and performs every NKI call on fp32 data.
//
// Index expressions stay affine: an index value is c + sum(coeff[a] * k[a]) over
// the axes of a broadcast grid, so every access is a strided region (offset plus
// one stride per tile axis) and gathers/scatters are strided copies.
#include "Interp/Evaluator/KernelEvaluator.h"

#include "Interp/DTypeRounding.h"
#include "Interp/Uninit.h"
#include "NKI/Platform.h"
#include "NKI/ShapeRules.h"

#include "llvm/Support/FormatVariadic.h"

#include <cblas.h>

#include <mutex>

namespace accelopt::interp {

namespace evaluator {
namespace {

/// Whether `mask`, right-aligned against a tile of `rank` axes, constrains one of `axes`.
/// One affine comparison, as nisa.affine_select takes: `a >= 0`, or `a == 0` (a >= 0 and -a >= 0).
bool affineSelectPredicate(const Mask &mask) {
  if (mask.geZero.size() == 1) return true;
  if (mask.geZero.size() != 2) return false;
  const IndexArr &a = mask.geZero[0], &b = mask.geZero[1];
  if (a.rank() != b.rank() || a.c != -b.c) return false;
  for (int k = 0; k < a.rank(); ++k)
    if (a.coeff[size_t(k)] != -b.coeff[size_t(k)]) return false;
  return true;
}

bool maskSpansAxes(const Mask &mask, int rank, llvm::ArrayRef<int> axes) {
  for (const IndexArr &g : mask.geZero)
    for (int a = 0, off = rank - g.rank(); a < g.rank(); ++a)
      if (g.coeff[a] && llvm::is_contained(axes, a + off)) return true;
  return false;
}

/// The value that leaves a reduction unchanged, when it has one.
std::optional<float> reductionIdentity(AluOp op) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  switch (op) {
  case AluOp::Add: return 0.0f;
  case AluOp::Multiply: return 1.0f;
  case AluOp::Maximum: return -kInf;
  case AluOp::Minimum: return kInf;
  default: return std::nullopt;
  }
}

/// Sets the elements of `data` that `mask` leaves out to `identity`; returns their flat indices, ascending.
std::vector<int64_t> excludeMaskedOff(NDArray &data, const Mask &mask, float identity) {
  std::vector<int64_t> excluded;
  llvm::SmallVector<int64_t, 6> ext(data.shape().begin(), data.shape().end());
  int64_t flat = 0;
  float *d = data.data();
  KernelEvaluator::forEachElement(ext, [&](const int64_t *k) {
    if (!mask.allows(k, int(ext.size()))) {
      d[flat] = identity;
      excluded.push_back(flat);
    }
    ++flat;
  });
  return excluded;
}

/// For each result row of a reduction (the kept axes in order), how many of its elements `mask` keeps.
std::vector<int64_t> keptPerRow(const NDArray &data, const Mask &mask, const nki::ReducedShape &reduced) {
  std::vector<int64_t> strideOfKept(size_t(data.rank()), 0);
  for (int64_t stride = 1, i = int64_t(reduced.keptAxes.size()); i-- > 0;) {
    strideOfKept[size_t(reduced.keptAxes[size_t(i)])] = stride;
    stride *= data.dim(reduced.keptAxes[size_t(i)]);
  }
  int64_t rows = 1;
  for (int d : reduced.keptAxes) rows *= data.dim(d);
  std::vector<int64_t> kept(size_t(rows), 0);
  llvm::SmallVector<int64_t, 6> ext(data.shape().begin(), data.shape().end());
  KernelEvaluator::forEachElement(ext, [&](const int64_t *k) {
    if (!mask.allows(k, int(ext.size()))) return;
    int64_t row = 0;
    for (size_t a = 0; a < ext.size(); ++a) row += k[a] * strideOfKept[a];
    ++kept[size_t(row)];
  });
  return kept;
}

/// The NKI runtime over the kernel evaluator: calls of the op table and operator arithmetic on tiles.
class Interpreter final : public KernelEvaluator {
public:
  using KernelEvaluator::KernelEvaluator;

  Value nkiCall(const nki::OpInfo *op, const Expr *e, View *dest) {
    using nki::OpKind;
    ++Stats.instructions;
    // Only this (outermost) call may accumulate into a `+=` destination, not calls in its arguments.
    std::optional<Tile> accumulator = std::exchange(MatmulAccumulator, std::nullopt);
    Bound b = bindArgs(op, e);
    const Value *maskV = param(op, b, "mask");
    const Mask *mask = maskV && maskV->kind == Value::MaskV ? maskV->mask.get() : nullptr;
    LastMask.reset();
    const Value *dtypeV = param(op, b, "dtype");
    std::optional<nki::DType> dtype = dtypeV ? dtypeOf(*dtypeV) : std::nullopt;
    std::vector<NDArray> keep;
    // Lanes a masked op left undefined (rows past a tensor's end loaded under a mask) are legal NKI
    // while they stay out of stored results: an elementwise op carries them to the same lanes of its
    // result, a free-axis reduction to the result row of each partition it reads them in; every other
    // op, and a store, reports them when it reads them unmasked.
    const bool carriesUndefined = op->kind == nki::OpKind::Activation || op->kind == nki::OpKind::TensorTensor ||
                                  op->kind == nki::OpKind::TensorScalar || op->kind == nki::OpKind::Copy ||
                                  op->kind == nki::OpKind::Reciprocal || op->kind == nki::OpKind::Reduce ||
                                  op->kind == nki::OpKind::Transpose || op->shape == nki::ShapeRule::FixedFree;
    // A transpose moves every element, undefined lane markers included, to its transposed place.
    const bool movesLanes = op->kind == nki::OpKind::Transpose;
    // Per-partition statistics (bn_stats, bn_aggr): each result row is computed from its operand row only.
    const bool rowWise = op->shape == nki::ShapeRule::FixedFree;
    struct UndefinedLanes {
      std::vector<int64_t> shape, lanes; // the operand's tile shape, its undefined flat lanes
      syntax::ByteRange at;
    };
    std::vector<UndefinedLanes> undefined;
    // Lanes of never-written memory (a partial tile's rows past what was written) are carried like
    // masked-off lanes by the same ops; when they reach a stored result, the read they came from fails.
    std::shared_ptr<const UndefinedOrigin> undefinedOrigin;

    // Result in a fresh fp32 tile; written to `dest` (masked) or returned.
    auto finish = [&](NDArray result, nki::Buffer buffer) -> Value {
      if (rowWise && result.rank() >= 1)
        for (UndefinedLanes &u : undefined) {
          int64_t operandLanes = 1;
          for (int64_t x : u.shape) operandLanes *= x;
          int64_t perRow = u.shape.empty() || u.shape[0] == 0 ? 1 : operandLanes / u.shape[0];
          int64_t resultPerRow = result.numel() / std::max<int64_t>(1, result.dim(0));
          std::vector<int64_t> lanes;
          for (int64_t lane : u.lanes) {
            int64_t row = lane / std::max<int64_t>(1, perRow);
            if (!lanes.empty() && lanes.back() >= row * resultPerRow) continue;
            for (int64_t k = 0; k < resultPerRow; ++k) lanes.push_back(row * resultPerRow + k);
          }
          u.shape = result.shape();
          u.lanes = std::move(lanes);
        }
      for (const UndefinedLanes &u : movesLanes ? std::vector<UndefinedLanes>{} : undefined) {
        const std::vector<int64_t> &shape = result.shape();
        bool broadcasts = u.shape.size() == shape.size();
        for (size_t a = 0; broadcasts && a < shape.size(); ++a) broadcasts = u.shape[a] == shape[a] || u.shape[a] == 1;
        if (!broadcasts && undefinedOrigin) fail(undefinedOrigin->at, undefinedOrigin->message);
        if (!broadcasts)
          fail(u.at, llvm::formatv("reads lanes a masked op left undefined into a result of shape {0} from an operand "
                                   "of shape {1}; only elementwise ops carry them (mask this op too)",
                                   formatShape(shape), formatShape(u.shape))
                         .str());
        // Each result lane computed from an undefined operand lane (broadcast along size-1 axes) is undefined.
        int64_t operandLanes = 1;
        for (int64_t x : u.shape) operandLanes *= x;
        std::vector<bool> undefinedLane(size_t(std::max<int64_t>(1, operandLanes)), false);
        for (int64_t k : u.lanes) undefinedLane[size_t(k)] = true;
        float *d = result.data();
        for (int64_t flat = 0, n = result.numel(); flat < n; ++flat) {
          int64_t rest = flat, from = 0, stride = 1;
          for (size_t a = shape.size(); a-- > 0;) {
            int64_t coord = rest % shape[a];
            rest /= shape[a];
            if (u.shape[a] != 1) from += coord * stride;
            stride *= u.shape[a];
          }
          if (undefinedLane[size_t(from)]) d[flat] = maskedOffValue();
        }
      }
      // The call's dtype= rounds its result, also before a store converts it to the destination's dtype.
      if (dtype) result.convertTo(*dtype);
      if (dest) {
        scatter(*dest, result, mask, e->range, nullptr, true);
        if (undefinedOrigin && !undefined.empty() && !dest->tensor->undefinedFrom)
          dest->tensor->undefinedFrom = undefinedOrigin;
        return Value::none();
      }
      if (mask) {
        // Masked-off elements of a new tile were never written.
        llvm::SmallVector<int64_t, 6> ext(result.shape().begin(), result.shape().end());
        int64_t flat = 0;
        float *d = result.data();
        forEachElement(ext, [&](const int64_t *k) {
          if (!mask->allows(k, int(ext.size()))) d[flat] = maskedOffValue();
          ++flat;
        });
        LastMask = std::make_shared<Mask>(*mask);
      }
      auto t = std::make_shared<Tensor>();
      t->data = std::move(result);
      t->buffer = buffer;
      t->name = "tile@" + std::to_string(File.source().lineCol(e->range.begin).line);
      if (!undefined.empty()) t->undefinedFrom = undefinedOrigin;
      return Value::ofTensor(t);
    };
    // Operands are found by the slot the op table gives them, never by the parameter's spelling.
    auto slotValue = [&](nki::Slot s) -> const Value * {
      int i = op->slotIndex(s);
      return i >= 0 && b.given[i] ? &b.values[i] : nullptr;
    };
    auto slotExpr = [&](nki::Slot s) -> const Expr * {
      int i = op->slotIndex(s);
      return i >= 0 ? b.exprs[i] : nullptr;
    };
    auto operand = [&](nki::Slot s, bool useMask = true) -> NDArray {
      int i = op->slotIndex(s);
      if (i < 0) fail(e->range, std::string(op->name) + " has no such operand in the op table");
      std::string_view name = op->params[i].name;
      if (!b.given[i]) fail(e->range, std::string(op->name) + " needs '" + std::string(name) + "'");
      if (!b.values[i].isTile())
        fail(b.exprs[i]->range, std::string(op->name) + " operand '" + std::string(name) + "' must be a tensor, got " +
                                    describe(b.values[i]));
      View view = viewOf(b.values[i], b.exprs[i]);
      bool carry = carriesUndefined && Opts.detectUninitReads;
      NDArray arr = gather(view, useMask ? mask : nullptr, b.exprs[i]->range, /*checkUninit=*/!carry);
      if (!Opts.detectUninitReads) return arr;
      if (carry)
        if (auto bad = firstUninit(arr.data(), arr.numel())) {
          if (!undefinedOrigin)
            undefinedOrigin = std::make_shared<UndefinedOrigin>(
                UndefinedOrigin{b.exprs[i]->range, neverWrittenMessage(view.tensor->name, *bad, arr.shape())});
          float *d = arr.data();
          for (int64_t k = *bad, n = arr.numel(); k < n; ++k)
            if (isUninit(d[k])) d[k] = maskedOffValue();
        }
      if (auto first = firstMaskedOff(arr.data(), arr.numel())) {
        std::shared_ptr<const UndefinedOrigin> from = undefinedOriginOf(view.tensor.get());
        if (!carriesUndefined && from) fail(from->at, from->message);
        if (from && !undefinedOrigin) undefinedOrigin = from;
        if (!carriesUndefined)
          fail(b.exprs[i]->range,
               llvm::formatv("{0} reads lanes a masked op left undefined (tile element {1} of {2}: rows or columns "
                             "masked off where the tile was computed); mask this {3} too",
                             op->name, *first, formatShape(arr.shape()),
                             op->kind == nki::OpKind::Store ? "store" : "op")
                   .str());
        UndefinedLanes u{arr.shape(), {}, b.exprs[i]->range};
        const float *d = arr.data();
        for (int64_t k = *first, n = arr.numel(); k < n; ++k)
          if (isMaskedOff(d[k])) u.lanes.push_back(k);
        undefined.push_back(std::move(u));
      }
      return arr;
    };
    // The row's own ALU op (nl.add, nl.sum), else its function argument (nisa.tensor_tensor op=).
    auto rowAlu = [&]() -> AluOp {
      if (op->numerics.alu) return *op->numerics.alu;
      return aluFrom(slotValue(nki::Slot::Func), e);
    };
    auto alloc = [&](const std::vector<int64_t> &shape) {
      auto a = NDArray::allocate(shape, nki::DType::Float32);
      if (!a) fail(e->range, llvm::toString(a.takeError()));
      return std::move(*a);
    };
    auto check = [&](llvm::Error err) {
      if (err) fail(e->range, llvm::toString(std::move(err)));
    };
    auto bufferParam = [&](nki::Buffer dflt) {
      const Value *bv = param(op, b, "buffer");
      if (bv && bv->kind == Value::Path)
        if (auto *c = nki::lookupConstant(bv->s); c && c->kind == nki::NamedConstant::BufferKind)
          return nki::Buffer(c->value);
      return dflt;
    };

    // reduce_res=t (activation, activation_reduce, tensor_scalar_reduce): the engine also reduces each row
    // of the result with reduce_op (add unless given) into t, one element per partition.
    auto reduceInto = [&](const NDArray &out, const char *defaultOp = "nl.add") {
      const Expr *resE = paramExpr(op, b, "reduce_res");
      if (!resE) return;
      const Value *redOp = param(op, b, "reduce_op");
      Value add = Value::path(defaultOp);
      AluOp alu = aluFrom(redOp ? redOp : &add, e);
      ConstTile r = out.asTile();
      NDArray red = alloc({r.rows, 1});
      check(tensorReduce(red.asTile(), alu, r, false));
      const Value *res = param(op, b, "reduce_res");
      if (!res || !res->isTile()) fail(resE->range, std::string(op->name) + ": reduce_res must be a tile");
      scatter(viewOf(*res, resE), red, nullptr, resE->range, nullptr, true);
    };

    switch (op->kind) {
    case OpKind::Alloc: {
      nki::Buffer buffer = bufferParam(op->result);
      if (op->slot(nki::Slot::Host)) {
        const Value *c = slotValue(nki::Slot::Host);
        if (!c || c->kind != Value::HostArray)
          fail(e->range, std::string(op->name) + " needs a numpy array (np.identity(...))");
        auto t = std::make_shared<Tensor>();
        auto copy = c->host->clone();
        if (!copy) fail(e->range, llvm::toString(copy.takeError()));
        t->data = std::move(*copy);
        t->buffer = nki::Buffer::SharedHBM;
        t->parDim = -1;
        t->name = "constant";
        return Value::ofTensor(t);
      }
      std::vector<int64_t> shape;
      int parDim = 0;
      if (int like = op->slotIndex(nki::Slot::Like); like >= 0) {
        // nl.zeros_like(a): a's shape and dtype; a is not read (it may not be written yet).
        if (!b.given[size_t(like)] || !b.values[size_t(like)].isTile())
          fail(e->range, std::string(op->name) + " needs a tensor to take the shape of");
        View view = viewOf(b.values[size_t(like)], b.exprs[size_t(like)]);
        shape = view.shape();
        if (!dtype) dtype = view.tensor->data.dtype();
      } else {
        const Value *shapeV = param(op, b, "shape");
        if (!shapeV || !shapeV->isSeq()) fail(e->range, std::string(op->name) + " needs a shape tuple");
        for (size_t d = 0; d < shapeV->elts->size(); ++d) {
          const Value &x = (*shapeV->elts)[d];
          if (x.kind == Value::ParDim) parDim = int(d);
          shape.push_back(x.kind == Value::ParDim ? x.i : intArg(x, e));
        }
      }
      nki::DType dt = dtype.value_or(nki::DType::Float32);
      const bool gridShared = buffer == nki::Buffer::SharedHBM && K.gridSize() > 1;
      if (gridShared && SharedHbmNext < SharedHbm.size()) {
        std::shared_ptr<Tensor> t = SharedHbm[SharedHbmNext++];
        if (t->data.shape() != shape || t->data.dtype() != dt)
          fail(e->range, "grid instance " + Grid.instanceText() + " allocates shared_hbm tensor " +
                             std::to_string(SharedHbmNext) + " as " + std::string(nki::dtypeName(dt)) +
                             formatShape(shape) + ", instance " +
                             nki::pycore::LaunchGrid::at(K.grid, 0).instanceText() + " as " +
                             std::string(nki::dtypeName(t->data.dtype())) + formatShape(t->data.shape()) +
                             ": instances share it");
        return Value::ofTensor(t);
      }
      const Value *fillV = slotValue(nki::Slot::Fill);
      llvm::Expected<NDArray> arr = op->numerics.fill ? NDArray::full(shape, dt, *op->numerics.fill)
                                    : fillV           ? NDArray::full(shape, dt, roundToDType(scalarOf(*fillV, e), dt))
                                                      : NDArray::uninitialized(shape, dt);
      if (!arr) fail(e->range, llvm::toString(arr.takeError()));
      auto t = std::make_shared<Tensor>();
      t->data = std::move(*arr);
      t->buffer = buffer;
      t->parDim = nki::isHBM(buffer) ? -1 : parDim;
      const Value *nameV = param(op, b, "name");
      t->name = nameV && nameV->kind == Value::Str && !nameV->s.empty() ? nameV->s : "";
      if (gridShared) SharedHbm.push_back(t), ++SharedHbmNext;
      return Value::ofTensor(t);
    }
    case OpKind::Load:
    case OpKind::Copy: {
      NDArray data = operand(nki::Slot::Data);
      if (op->shape == nki::ShapeRule::TransposePF) { // nl.load_transpose2d: the DMA transposes on the way in
        ConstTile in = data.asTile();
        NDArray transposed = alloc({in.cols, in.rows});
        check(transpose(transposed.asTile(), in));
        data = std::move(transposed);
      }
      return finish(std::move(data), nki::Buffer::SBUF);
    }
    case OpKind::Store: {
      const Value *dst = slotValue(nki::Slot::Dest);
      const Expr *dstE = slotExpr(nki::Slot::Dest);
      const Value *value = slotValue(nki::Slot::Data);
      if (!dst || !dst->isTile()) fail(e->range, std::string(op->name) + " needs a destination tensor");
      writeValue(viewOf(*dst, dstE), *value, slotExpr(nki::Slot::Data), mask, nullptr, dstE);
      return Value::none();
    }
    case OpKind::DmaCopy: {
      const Value *dst = slotValue(nki::Slot::Dest);
      const Value *src = slotValue(nki::Slot::Data);
      const Value *rmw = param(op, b, "dst_rmw_op");
      if (!dst || !src) fail(e->range, std::string(op->name) + " needs dst= and src=");
      if (rmw && rmw->kind == Value::Path) {
        AluOp a = aluFrom(rmw, e);
        std::function<float(float, float)> combine = [a](float o, float n) { return applyAlu(a, o, n); };
        writeValue(viewOf(*dst, slotExpr(nki::Slot::Dest)), *src, slotExpr(nki::Slot::Data), mask, &combine);
      } else {
        writeValue(viewOf(*dst, slotExpr(nki::Slot::Dest)), *src, slotExpr(nki::Slot::Data), mask, nullptr);
      }
      return Value::none();
    }
    case OpKind::Matmul: {
      // A matmul mask restricts the moving operand's free axis and the output.
      NDArray st = operand(nki::Slot::Stationary, false);
      NDArray mv = operand(nki::Slot::Moving, true);
      ConstTile stT = st.asTile(), mvT = mv.asTile();
      NDArray transposed;
      if (nki::matmulTransposesStationary(*op, flag(op, b, "transpose_x"))) {
        // x is [M, K]: the compiler transposes it for TensorE.
        transposed = alloc({stT.cols, stT.rows});
        check(transpose(transposed.asTile(), stT));
        stT = transposed.asTile();
      }
      if (flag(op, b, nki::kPerfModeParam)) {
        // FP8 double row (NKI/Platform.h): operands [K, 2, F] (gathered row-major) contract over K x 2, so
        // each is read as [K * 2, F].
        for (auto [tile, slot] : {std::pair{&stT, nki::Slot::Stationary}, std::pair{&mvT, nki::Slot::Moving}}) {
          if (tile->cols % nki::kDoubleRowPacking)
            fail(slotExpr(slot)->range,
                 llvm::formatv("{0} perf_mode double row takes operands [K, {1}, F]; this one has {2} free elements",
                               op->name, nki::kDoubleRowPacking, tile->cols)
                     .str());
          int64_t free = tile->cols / nki::kDoubleRowPacking;
          *tile = ConstTile::contiguous(tile->data, tile->rows * nki::kDoubleRowPacking, free);
        }
      }
      Stats.matmulFlops += 2.0 * double(stT.rows) * double(stT.cols) * double(mvT.cols);
      if (accumulator && !mask && accumulator->rows == stT.cols && accumulator->cols == mvT.cols) {
        check(matmul(*accumulator, stT, mvT, true));
        MatmulAccumulated = true;
        return Value::none();
      }
      NDArray out = alloc({stT.cols, mvT.cols});
      check(matmul(out.asTile(), stT, mvT, false));
      return finish(std::move(out), nki::Buffer::PSUM);
    }
    case OpKind::Transpose: {
      NDArray in = operand(nki::Slot::Data, false);
      ConstTile t = in.asTile();
      NDArray out = alloc({t.cols, t.rows});
      check(transpose(out.asTile(), t));
      return finish(std::move(out), nki::Buffer::PSUM);
    }
    case OpKind::Activation: {
      // The row fixes the function (nl.exp, nl.negative = copy(-1 * x)) or takes it as an argument.
      bool fixed = op->numerics.act.has_value();
      NDArray data = operand(nki::Slot::Data);
      ActFunc func;
      if (fixed) {
        func = *op->numerics.act;
      } else {
        const Value *fv = slotValue(nki::Slot::Func);
        if (!fv || fv->kind != Value::Path) fail(e->range, std::string(op->name) + " needs op=<function>");
        auto f = actFuncFromName(fv->s);
        if (!f) fail(slotExpr(nki::Slot::Func)->range, "'" + fv->s + "' is not an activation function");
        func = *f;
      }
      PerPartition scale = perPartition(fixed ? nullptr : param(op, b, "scale"), e, keep, op->numerics.scale);
      const Value *biasV = fixed ? nullptr : param(op, b, "bias");
      PerPartition bias = biasV && biasV->kind != Value::None
                              ? perPartition(biasV, paramExpr(op, b, "bias"), keep, 0.0f)
                              : PerPartition::noBias();
      NDArray out = alloc(data.shape());
      if (!dtype) dtype = nki::defaultResultDType(*op, data.dtype(), std::nullopt); // the row's, without dtype=
      check(activation(out.asTile(), func, data.asTile(), scale, bias));
      reduceInto(out);
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::TensorTensor: {
      AluOp a = rowAlu();
      constexpr nki::Slot n1 = nki::Slot::Data, n2 = nki::Slot::Data2;
      const Value *x = slotValue(n1), *y = slotValue(n2);
      if (x && y && x->isNumber() && y->isTile()) {
        NDArray yd = operand(n2);
        if (!dtype) dtype = nki::defaultResultDType(*op, std::nullopt, yd.dtype()); // the row's, without dtype=
        NDArray out = alloc(yd.shape());
        check(applyBinary(a, out.asTile(), float(x->num()), yd.asTile()));
        return finish(std::move(out), nki::Buffer::SBUF);
      }
      NDArray xd = operand(n1);
      if (y && y->isNumber()) {
        if (!dtype) dtype = nki::defaultResultDType(*op, xd.dtype(), std::nullopt);
        NDArray out = alloc(xd.shape());
        check(applyBinary(a, out.asTile(), xd.asTile(), float(y->num())));
        return finish(std::move(out), nki::Buffer::SBUF);
      }
      NDArray yd = operand(n2);
      if (!dtype) dtype = nki::defaultResultDType(*op, xd.dtype(), yd.dtype());
      broadcastTogether({&xd, &yd}, e);
      // The output takes the larger of the two shapes ((P,1) broadcasts).
      std::vector<int64_t> shape = xd.numel() >= yd.numel() ? xd.shape() : yd.shape();
      NDArray out = alloc(shape);
      check(applyBinary(a, out.asTile(), xd.asTile(), yd.asTile()));
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::TensorScalar: {
      NDArray data = operand(nki::Slot::Data);
      ScalarStep first{aluFrom(param(op, b, "op0"), e), perPartition(param(op, b, "operand0"), e, keep, 0.0f),
                       flag(op, b, "reverse0")};
      std::optional<ScalarStep> second;
      const Value *op1 = param(op, b, "op1");
      if (op->slot(nki::Slot::Data2)) {
        // scalar_tensor_tensor: the scalar step, then op1 elementwise with the operand1 tile of data's shape.
        NDArray tmp = alloc(data.shape());
        check(tensorScalar(tmp.asTile(), data.asTile(), first));
        NDArray other = operand(nki::Slot::Data2);
        if (other.shape() != data.shape())
          fail(slotExpr(nki::Slot::Data2)->range, std::string(op->name) + ": operand1 is " +
                                                      formatShape(other.shape()) + " but data is " +
                                                      formatShape(data.shape()) + "; they must have the same shape");
        NDArray out = alloc(data.shape());
        AluOp a1 = aluFrom(op1, e);
        check(flag(op, b, "reverse1") ? applyBinary(a1, out.asTile(), other.asTile(), tmp.asTile())
                                      : applyBinary(a1, out.asTile(), tmp.asTile(), other.asTile()));
        return finish(std::move(out), nki::Buffer::SBUF);
      }
      if (op1 && op1->kind == Value::Path)
        second =
            ScalarStep{aluFrom(op1, e), perPartition(param(op, b, "operand1"), e, keep, 0.0f), flag(op, b, "reverse1")};
      NDArray out = alloc(data.shape());
      check(tensorScalar(out.asTile(), data.asTile(), first, second));
      reduceInto(out);
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::Reduce: {
      NDArray data = operand(nki::Slot::Data);
      AluOp a = rowAlu();
      bool mean = op->numerics.mean;
      const Value *axisV = param(op, b, "axis");
      std::vector<int64_t> axes;
      if (axisV && axisV->isSeq())
        for (auto &x : *axisV->elts) axes.push_back(intArg(x, e));
      else if (axisV)
        axes.push_back(intArg(*axisV, e));
      nki::ReducedShape reduced = nki::reduceFreeAxes(data.shape(), axes, flag(op, b, "keepdims"));
      if (!reduced.error.empty()) fail(e->range, reduced.error);
      int64_t rows = 1, cols = 1;
      for (int d : reduced.keptAxes) rows *= data.dim(d);
      for (int d : reduced.reducedAxes) cols *= data.dim(d);
      // A mask over the reduced axes (the padding of a pooling window) leaves elements out of the reduction:
      // they become its identity, and a result lane is defined when its window keeps at least one element.
      std::vector<int64_t> windowKept;
      if (mask && maskSpansAxes(*mask, int(data.rank()), reduced.reducedAxes)) {
        std::optional<float> identity = reductionIdentity(a);
        if (!identity)
          fail(e->range, std::string(op->name) + ": a mask over the reduced axes needs a reduction with an identity "
                                                 "(add, multiply, max, min)");
        std::vector<int64_t> excluded = excludeMaskedOff(data, *mask, *identity);
        for (UndefinedLanes &u : undefined) {
          std::vector<int64_t> kept;
          std::set_difference(u.lanes.begin(), u.lanes.end(), excluded.begin(), excluded.end(),
                              std::back_inserter(kept));
          u.lanes = std::move(kept);
        }
        llvm::erase_if(undefined, [](const UndefinedLanes &u) { return u.lanes.empty(); });
        windowKept = keptPerRow(data, *mask, reduced);
        mask = nullptr; // applied: the result's lanes are the windows, not the masked elements
      }
      if (!reduced.trailing()) {
        // Interleaved axes (a pooling window's [2, 4]): lay the tile out as [kept..., reduced...] first;
        // undefined lanes move with their elements.
        std::vector<int> order = reduced.keptAxes;
        order.insert(order.end(), reduced.reducedAxes.begin(), reduced.reducedAxes.end());
        std::vector<int64_t> permutedShape;
        for (int d : order) permutedShape.push_back(data.dim(d));
        NDArray permuted = alloc(permutedShape);
        std::vector<int64_t> from = data.strides(), stride;
        for (int d : order) stride.push_back(from[size_t(d)]);
        auto sourceOf = [&](int64_t flat) {
          int64_t src = 0;
          for (int a = int(order.size()) - 1; a >= 0; --a) {
            src += (flat % permutedShape[size_t(a)]) * stride[size_t(a)];
            flat /= permutedShape[size_t(a)];
          }
          return src;
        };
        const float *in = data.data();
        generateElements(permuted.data(), permuted.numel(), [&](int64_t j) { return in[sourceOf(j)]; });
        if (!undefined.empty()) {
          std::vector<int64_t> targetOf(size_t(permuted.numel()));
          for (int64_t j = 0; j < permuted.numel(); ++j) targetOf[size_t(sourceOf(j))] = j;
          for (UndefinedLanes &u : undefined) {
            for (int64_t &lane : u.lanes)
              if (lane >= 0 && lane < permuted.numel()) lane = targetOf[size_t(lane)];
            llvm::sort(u.lanes);
          }
        }
        data = std::move(permuted);
      }
      std::vector<int64_t> outShape = std::move(reduced.shape);
      NDArray out = alloc(outShape);
      check(tensorReduce(Tile{out.data(), rows, 1, 1}, a, ConstTile{data.data(), rows, cols, cols},
                         flag(op, b, "negate")));
      // A mean is the sum scaled by the reduced extent, as the compiler lowers it, masked or not.
      if (mean)
        for (float &v : out.values()) v /= float(cols);
      for (size_t r = 0; r < windowKept.size(); ++r) // a window the mask keeps nothing of: undefined
        if (windowKept[r] == 0)
          for (int64_t k = 0, per = out.numel() / rows; k < per; ++k)
            out.data()[int64_t(r) * per + k] = maskedOffValue();
      // An undefined lane makes its row's result undefined: rows x 1 lanes of the result.
      for (UndefinedLanes &u : undefined) {
        std::vector<int64_t> rowsHit;
        for (int64_t lane : u.lanes)
          if (rowsHit.empty() || rowsHit.back() != lane / cols) rowsHit.push_back(lane / cols);
        u.shape = outShape;
        u.lanes = std::move(rowsHit);
      }
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::Scan: {
      NDArray d0 = operand(nki::Slot::Data), d1 = operand(nki::Slot::Data2);
      PerPartition init = perPartition(param(op, b, "initial"), paramExpr(op, b, "initial"), keep, 0.0f);
      NDArray out = alloc(d0.shape());
      check(tensorTensorScan(out.asTile(), d0.asTile(), d1.asTile(), init, aluFrom(param(op, b, "op0"), e),
                             aluFrom(param(op, b, "op1"), e), flag(op, b, "reverse0"), flag(op, b, "reverse1")));
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::Reciprocal: {
      NDArray data = operand(nki::Slot::Data);
      NDArray out = alloc(data.shape());
      check(reciprocal(out.asTile(), data.asTile()));
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::Memset: {
      const Value *shapeV = param(op, b, "shape");
      std::vector<int64_t> shape;
      if (shapeV && shapeV->isSeq())
        for (auto &x : *shapeV->elts) shape.push_back(intArg(x, e));
      float value = scalarOf(*slotValue(nki::Slot::Fill), e);
      NDArray out = alloc(shape);
      memset(out.asTile(), roundToDType(value, dtype.value_or(nki::DType::Float32)));
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::Iota: {
      const Value *ex = param(op, b, "expr");
      if (!ex || ex->kind != Value::Index)
        fail(e->range, std::string(op->name) + " needs an index expression (nl.arange or nl.mgrid terms)");
      int rank = std::max({2, ex->idx.rank(), int(ex->idx.grid.size())});
      IndexArr x = ex->idx.widened(rank);
      for (size_t k = 1; k <= ex->idx.grid.size(); ++k) // an mgrid field's value spans the whole grid
        x.extent[size_t(rank) - k] = std::max(x.extent[size_t(rank) - k], ex->idx.grid[ex->idx.grid.size() - k]);
      if (x.rank() == 2) {
        NDArray out = alloc({x.extent[0], x.extent[1]});
        iota(out.asTile(), x.c, x.coeff[0], x.coeff[1]);
        return finish(std::move(out), nki::Buffer::SBUF);
      }
      // An index grid of more axes (3 * w.y + w.z over nl.mgrid[0:P, 0:A, 0:B, 0:C]): c + sum coeff * k.
      NDArray out = alloc(std::vector<int64_t>(x.extent.begin(), x.extent.end()));
      std::vector<int64_t> k(size_t(x.rank()), 0);
      for (float &v : out.values()) {
        int64_t value = x.c;
        for (int d = 0; d < x.rank(); ++d) value += x.coeff[size_t(d)] * k[size_t(d)];
        v = float(value);
        for (int d = x.rank(); d-- > 0;)
          if (++k[size_t(d)] < x.extent[size_t(d)])
            break;
          else
            k[size_t(d)] = 0;
      }
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::LoopReduce: {
      if (!dest)
        fail(e->range, std::string(op->name) + " must be assigned into a tensor (dst[...] = nl.loop_reduce(...))");
      NDArray x = operand(nki::Slot::Data);
      AluOp a = rowAlu();
      // First write of each element stores x; later ones combine with what is there.
      std::function<float(float, float)> combine = [a](float o, float n) {
        return isUninit(o) ? n : applyAlu(a, n, o);
      };
      scatter(*dest, x, mask, e->range, &combine, false);
      return Value::none();
    }
    case OpKind::Select: {
      // x and y may be tiles, (P,1) vectors or scalars; a scalar is a 1x1 tile that broadcasts.
      NDArray predicate = operand(nki::Slot::Predicate);
      if (flag(op, b, "reverse_pred")) // select_reduce: on_true where the predicate does not hold
        for (float *p = predicate.data(), *end = p + predicate.numel(); p != end; ++p) *p = *p != 0.0f ? 0.0f : 1.0f;
      auto choice = [&](nki::Slot s) -> NDArray {
        const Value *v = slotValue(s);
        if (v && v->isNumber()) {
          auto a = NDArray::full({1, 1}, nki::DType::Float32, float(v->num()));
          if (!a) fail(e->range, llvm::toString(a.takeError()));
          return std::move(*a);
        }
        return operand(s);
      };
      NDArray onTrue = choice(nki::Slot::Data), onFalse = choice(nki::Slot::Data2);
      broadcastTogether({&predicate, &onTrue, &onFalse}, e);
      // The output takes the largest of the three shapes ((P,1) and scalars broadcast).
      const NDArray *largest = &predicate;
      for (const NDArray *a : {&onTrue, &onFalse})
        if (a->numel() > largest->numel()) largest = a;
      NDArray out = alloc(largest->shape());
      check(select(out.asTile(), predicate.asTile(), onTrue.asTile(), onFalse.asTile()));
      reduceInto(out, "nl.maximum"); // select_reduce's reduce_op is max unless given
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::BnStats: {
      NDArray data = operand(nki::Slot::Data);
      NDArray out = alloc({data.asTile().rows, op->resultFree});
      check(bnStats(out.asTile(), data.asTile()));
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::BnAggr: {
      NDArray data = operand(nki::Slot::Data);
      NDArray out = alloc({data.asTile().rows, op->resultFree});
      check(bnAggr(out.asTile(), data.asTile()));
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::Dropout: {
      NDArray data = operand(nki::Slot::Data);
      int rateAt = -1;
      for (size_t i = 0; i < op->params.size() && rateAt < 0; ++i)
        if (op->params[i].role == nki::Role::Operand) rateAt = int(i);
      const Value *rateV = rateAt >= 0 && b.given[size_t(rateAt)] ? &b.values[size_t(rateAt)] : nullptr;
      PerPartition rate = perPartition(rateV, e, keep, 0.0f);
      NDArray out = alloc(data.shape());
      // Each call draws its own pattern: the seed counts the dropout calls of the run.
      check(dropout(out.asTile(), data.asTile(), rate, ++DropoutCalls));
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::AffineSelect: {
      // pred: one affine comparison of the tile's indices (`i_p >= i_f`), evaluated per element.
      int predAt = op->paramIndex("pred");
      const Expr *predE = predAt >= 0 ? b.exprs[size_t(predAt)] : nullptr;
      const Value *pred = predAt >= 0 && b.given[size_t(predAt)] ? &b.values[size_t(predAt)] : nullptr;
      if (!pred || pred->kind != Value::MaskV)
        fail(predE ? predE->range : e->range,
             std::string(op->name) + "'s pred must be one affine comparison of nl.arange indices (i_p >= i_f), got " +
                 (pred ? describe(*pred) : std::string("nothing")));
      if (!affineSelectPredicate(*pred->mask))
        fail(predE->range, std::string(op->name) + "'s pred combines several comparisons; the GpSimd engine "
                                                   "evaluates one affine comparison (use nl.where for more)");
      NDArray data = operand(nki::Slot::Data);
      int falseAt = op->paramIndex("on_false_value");
      const Value *falseV = b.given[size_t(falseAt)] ? &b.values[size_t(falseAt)] : nullptr;
      if (!falseV || !falseV->isNumber())
        fail(falseV ? b.exprs[size_t(falseAt)]->range : e->range,
             std::string(op->name) + "'s on_false_value must be a scalar number");
      NDArray out = alloc(data.shape());
      llvm::SmallVector<int64_t, 6> ext(data.shape().begin(), data.shape().end());
      for (const IndexArr &g : pred->mask->geZero)
        if (g.rank() > int(ext.size()))
          fail(predE->range, llvm::formatv("{0}'s pred has {1} index axes; on_true_tile {2} has {3}", op->name,
                                           g.rank(), formatShape(data.shape()), ext.size())
                                 .str());
      const float *in = data.data();
      float *o = out.data(), onFalse = float(falseV->num());
      int64_t flat = 0;
      forEachElement(ext, [&](const int64_t *k) {
        o[flat] = pred->mask->allows(k, int(ext.size())) ? in[flat] : onFalse;
        ++flat;
      });
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    case OpKind::Broadcast: {
      // nl.broadcast_to(x, shape): x's rows (one, or as many as shape's) repeated along the partitions.
      NDArray data = operand(nki::Slot::Data);
      const Value *shapeV = param(op, b, "shape");
      if (!shapeV || !shapeV->isSeq()) fail(e->range, std::string(op->name) + " needs a shape tuple");
      std::vector<int64_t> shape;
      for (auto &x : *shapeV->elts) shape.push_back(intArg(x, e));
      NDArray out = alloc(shape);
      check(applyBinary(AluOp::Add, out.asTile(), data.asTile(), 0.0f));
      if (!dtype) dtype = data.dtype(); // the method form keeps x's dtype too
      return finish(std::move(out), nki::Buffer::SBUF);
    }
    }
    fail(e->range, std::string(op->name) + " is not supported by the interpreter");
  }

  Value tileArithmetic(const std::string &op, const Value &l, const Value &r, const syntax::ByteRange &range) {
    ++Stats.instructions;
    std::optional<AluOp> alu = op == "+"    ? AluOp::Add
                               : op == "-"  ? AluOp::Subtract
                               : op == "*"  ? AluOp::Multiply
                               : op == "/"  ? AluOp::Divide
                               : op == "**" ? std::optional(AluOp::Power)
                                            : std::nullopt;
    if (!alu) fail(range, "operator " + op + " is not supported on tiles");
    auto out = [&](std::vector<int64_t> shape) {
      auto a = NDArray::allocate(std::move(shape), nki::DType::Float32);
      if (!a) fail(range, llvm::toString(a.takeError()));
      return std::move(*a);
    };
    auto check = [&](llvm::Error err) {
      if (err) fail(range, llvm::toString(std::move(err)));
    };
    if ((!l.isTile() && !l.isNumber()) || (!r.isTile() && !r.isNumber()))
      fail(range, "unsupported operand types for " + op + ": " + describe(l) + " and " + describe(r));
    NDArray result;
    if (l.isTile() && r.isTile()) {
      NDArray a = gather(viewOf(l, nullptr), nullptr, range, true),
              b = gather(viewOf(r, nullptr), nullptr, range, true);
      result = out(a.numel() >= b.numel() ? a.shape() : b.shape());
      check(applyBinary(*alu, result.asTile(), a.asTile(), b.asTile()));
    } else if (l.isTile()) {
      NDArray a = gather(viewOf(l, nullptr), nullptr, range, true);
      result = out(a.shape());
      check(applyBinary(*alu, result.asTile(), a.asTile(), float(r.num())));
    } else {
      NDArray b = gather(viewOf(r, nullptr), nullptr, range, true);
      result = out(b.shape());
      check(applyBinary(*alu, result.asTile(), float(l.num()), b.asTile()));
    }
    auto t = std::make_shared<Tensor>();
    t->data = std::move(result);
    t->name = "tile";
    return Value::ofTensor(t);
  }
};

} // namespace

void KernelEvaluator::broadcastTogether(std::initializer_list<NDArray *> operands, const Expr *e) {
  // Only operands of one rank: a tile's partition dimension comes first, so arrays of different ranks
  // do not align from the right as numpy's would.
  std::optional<std::vector<int64_t>> joint = (*operands.begin())->shape();
  for (NDArray *a : operands)
    if (joint && a->rank() == int64_t(joint->size()))
      joint = broadcastShapes(*joint, a->shape());
    else
      joint.reset();
  if (!joint) return;
  int64_t rows = (*joint)[0], cols = 1;
  for (size_t d = 1; d < joint->size(); ++d) cols *= (*joint)[d];
  for (NDArray *a : operands) {
    ConstTile t = a->asTile();
    if (a->shape() == *joint || (a->numel() == 1) ||
        ((t.rows == rows || t.rows == 1) && (t.cols == cols || t.cols == 1)))
      continue; // the tile view broadcasts it already ((P,1), (1,F), a scalar)
    auto widened = a->broadcastTo(*joint);
    if (!widened) fail(e->range, llvm::toString(widened.takeError()));
    *a = std::move(*widened);
  }
}

} // namespace evaluator

using evaluator::Interpreter;
using evaluator::RuntimeError;

llvm::Expected<RunResult> runKernel(const nki::KernelFile &file, const nki::Kernel &kernel, std::vector<KernelArg> args,
                                    const RunOptions &options) {
  // Tiles are small (<= 128x512): BLAS threads only contend; parallelism comes
  // from evaluating candidates side by side.
  static std::once_flag singleThreadedBlas;
  std::call_once(singleThreadedBlas, [] { openblas_set_num_threads(1); });
  Interpreter interp(file, kernel, options);
  try {
    return interp.run(std::move(args));
  } catch (const RuntimeError &e) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), interp.location(e.offset) + ": error: " + e.message);
  } catch (const std::exception &e) {
    // A defect of the interpreter, not of the kernel: said so, never a crash of the whole tool.
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   file.source().path() + ": error: internal error of the interpreter (" + e.what() +
                                       "); please report it with this kernel");
  }
}

} // namespace accelopt::interp
