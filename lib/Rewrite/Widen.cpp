// widen: coarsen the tiles of a loop along their free axis. When every tile the loop body moves
// with the loop advances by its own width E per iteration (`512 * j + nl.arange(512)[None, :]`),
// `factor` consecutive iterations cover one contiguous tile factor * E wide: the loop's step is
// multiplied by the factor and every free-axis arange of width E in the body (and the free size of
// the buffers the body allocates) becomes factor * E. Fewer, bigger instructions and DMAs.
// Legal when each statement computes elementwise along the free axis (no reduction, scan or
// transpose), every access that does not move with the loop is to a tile of the body's own, masks
// follow the tile, and the widened tiles stay within the op table's free-size limits and a PSUM bank.
#include "Rewrite/IndexForms.h"

#include "llvm/Support/FormatVariadic.h"

#include <functional>
#include <set>

namespace accelopt::rewrite {

namespace {

using namespace index_forms;

constexpr int kFreeAxis = 1;
constexpr int64_t kPsumBankBytes = 2048;

/// The op kinds whose result follows their operands element by element along the free axis.
bool elementwiseAlongFree(const OpInfo &op) {
  switch (op.kind) {
  case OpKind::Alloc:
  case OpKind::Load:
  case OpKind::Store:
  case OpKind::DmaCopy:
  case OpKind::Copy:
  case OpKind::Matmul:
  case OpKind::Activation:
  case OpKind::TensorTensor:
  case OpKind::TensorScalar:
  case OpKind::Reciprocal:
  case OpKind::Memset:
  case OpKind::Select: return true;
  default: return false;
  }
}

/// The free-axis aranges of an access: (extent, coeff) of each term on axis 1.
std::vector<std::pair<int64_t, int64_t>> freeAranges(const Access &a) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const IndexDim &d : a.dims)
    for (const ArangeTerm &t : d.aranges)
      if (t.axis == kFreeAxis) out.push_back({t.extent, t.coeff});
  return out;
}

class Widen final : public Op {
public:
  Widen()
      : Op({"widen",
            "coarsen the tiles a loop moves along their free axis: factor iterations become one whose tiles are factor "
            "times wider (within the op table's free-size limits and a PSUM bank)",
            {{"loop", FieldKind::Loop, "the loop whose iterations step along the tiles' free axis by one tile width"},
             {"factor", FieldKind::Integer,
              "how many iterations one widened iteration covers (divides the trip count)"}}}) {}

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    Params p(k, j, spec());
    auto loop = p.loop("loop");
    auto factor = p.integer("factor");
    if (!p.ok()) return p.error();
    const Loop &l = k.loops[*loop];
    std::string ids = "L" + std::to_string(*loop);
    Refuser no(name(), ids, l.iterRange.begin);
    int64_t f = *factor;
    if (f < 2) return badInput(name(), "factor must be at least 2 (got " + std::to_string(f) + ")");
    if (!l.tripCount.isKnown() || !l.step.isKnown()) return no(unknownTripReason(k, *loop));
    int64_t trip = *l.tripCount.value;
    if (trip % f != 0 || trip < f)
      return no(
          llvm::formatv("factor {0} does not divide the trip count {1} of {2}", f, trip, loopLabel(k, *loop)).str());
    const Expr *call = iterCall(l);
    if (!call || call->elts.empty() || call->elts.size() > 3 || !call->keywords.empty())
      return no("widen handles loops of the form 'for i in <kind>([start,] stop[, step])'");
    if (l.syntax->targets.size() != 1 || l.syntax->targets[0]->kind != ExprKind::Name)
      return no("the loop target is not a single name");
    if (!l.syntax->orelse.empty()) return no("the loop has an else clause");
    if (auto why = ivRebindingReason(k, *loop)) return no(*why);
    if (auto why = ivReadAfterLoopReason(k, *loop)) return no(*why);
    std::vector<int> body = stmtsIn(k, *loop);

    // The tile width: every access dimension that moves with the loop moves by its one free arange's extent.
    int64_t width = 0;
    for (int sid : body)
      for (const auto *list : {&k.stmts[sid].reads, &k.stmts[sid].writes})
        for (const Access &a : *list)
          for (const IndexDim &d : a.dims) {
            if (!d.base.known)
              return no(llvm::formatv("S{0}: an index of '{1}' is not affine", sid, tensorName(k, a.tensor)).str());
            int64_t c = d.base.coeff(*loop);
            if (c == 0) continue;
            bool one = d.aranges.size() == 1 && d.aranges[0].axis == kFreeAxis && d.aranges[0].coeff == 1;
            if (!one || d.aranges[0].extent != c || (width && width != c))
              return no(llvm::formatv("S{0}: the index of '{1}' moves by {2} per iteration, not by the width of one "
                                      "free-axis tile{3}",
                                      sid, tensorName(k, a.tensor), c,
                                      width ? " (" + std::to_string(width) + ")" : std::string())
                            .str());
            width = c;
          }
    if (!width)
      return no(llvm::formatv("no tile of {0} moves along its free axis with the loop", loopLabel(k, *loop)).str());
    int64_t wide = width * f;

    ModuleSpelling names(k);
    EditList edits;
    std::set<uint32_t> edited;
    auto edit = [&](syntax::ByteRange r, std::string text) {
      if (edited.insert(r.begin).second) edits.replace(r, std::move(text));
    };
    std::string wideArange =
        names.spell("nl.arange") + "(" + std::to_string(wide) + ")" + (kFreeAxis == 0 ? "[:, None]" : "[None, :]");
    std::vector<std::string> limits;
    for (int sid : body) {
      const Statement &s = k.stmts[sid];
      Resolver r(k, names, s);
      const Expr *value = s.syntax ? s.syntax->value : nullptr;
      const Expr *stCall = value && value->kind == ExprKind::Call ? value : nullptr;
      const Expr *stationary = stCall ? slotArg(s, stCall, Slot::Stationary) : nullptr;
      if (s.op && !elementwiseAlongFree(*s.op))
        return no(
            llvm::formatv("S{0}: {1} does not compute element by element along the free axis", sid, s.callee).str());
      if (s.op && s.op->kind == OpKind::Matmul && (s.flag("is_transpose") || s.flag("transpose_x")))
        return no(llvm::formatv("S{0}: a transposing matmul", sid).str());
      for (const auto *list : {&s.reads, &s.writes})
        for (const Access &a : *list) {
          auto free = freeAranges(a);
          bool isStationary = stationary && within(a.range, stationary->range);
          bool onWidth = llvm::any_of(free, [&](auto &t) { return t.first == width; });
          if (isStationary) {
            if (onWidth) return no(llvm::formatv("S{0}: the stationary operand is as wide as the tile", sid).str());
            continue;
          }
          for (auto &[e, c] : free)
            if (e != width || c != 1)
              return no(llvm::formatv("S{0}: '{1}' also has a free-axis arange of {2} (the tiles are {3} wide)", sid,
                                      tensorName(k, a.tensor), e, width)
                            .str());
          if (onWidth && a.usesBasic)
            return no(llvm::formatv("S{0}: '{1}' is indexed with a slice (only nl.arange tiles are widened)", sid,
                                    tensorName(k, a.tensor))
                          .str());
          int t = storageOf(k, a.tensor);
          bool moves = llvm::any_of(a.dims, [&](const IndexDim &d) { return d.base.coeff(*loop) != 0; });
          if (!privateTo(k, t, *loop) && !moves && (onWidth || !a.exact))
            return no(llvm::formatv("S{0} accesses the same columns of '{1}' (created outside {2}) in every iteration",
                                    sid, tensorName(k, t), loopLabel(k, *loop))
                          .str());
          if (s.op && onWidth && !a.param.empty())
            if (const ParamInfo *pi = s.op->param(a.param); pi && pi->maxFree > 0 && wide > pi->maxFree)
              return no(llvm::formatv("S{0}: the {1} operand of {2} takes at most {3} free elements; widened it would "
                                      "have {4}",
                                      sid, a.param, s.callee, pi->maxFree, wide)
                            .str());
          if (onWidth && a.isWrite && k.tensors[t].buffer == Buffer::PSUM &&
              wide * dtypeBytes(k.tensors[t].dtype) > kPsumBankBytes)
            return no(llvm::formatv("S{0}: a widened PSUM tile of '{1}' would need {2} bytes per partition (a bank "
                                    "holds {3})",
                                    sid, tensorName(k, t), wide * dtypeBytes(k.tensors[t].dtype), kPsumBankBytes)
                          .str());
        }
      // A buffer the body allocates: its last (free) dimension of the tile width widens.
      if (s.kind == StmtKind::Alloc) {
        const syntax::Expr *shape = allocShapeTuple(s);
        int t = s.definesTensor;
        bool accessed = false; // through a free-axis arange of the tile width
        for (int other : body)
          for (const auto *list : {&k.stmts[other].reads, &k.stmts[other].writes})
            for (const Access &a : *list)
              if (storageOf(k, a.tensor) == t && !freeAranges(a).empty()) accessed = true;
        Linear last = shape && !shape->elts.empty() ? r.linear(shape->elts.back()) : Linear{0, {}, {}, false};
        if (last.isConstant() && last.constant == width) accessed = true; // views of it widen too
        if (accessed) {
          if (!last.isConstant() || last.constant != width)
            return no(
                llvm::formatv("S{0}: the free size of '{1}' is not the tile width {2}", sid, tensorName(k, t), width)
                    .str());
          if (k.tensors[t].buffer == Buffer::PSUM && wide * dtypeBytes(k.tensors[t].dtype) > kPsumBankBytes)
            return no(llvm::formatv("S{0}: '{1}' widened would need {2} bytes per partition of PSUM (a bank holds {3})",
                                    sid, tensorName(k, t), wide * dtypeBytes(k.tensors[t].dtype), kPsumBankBytes)
                          .str());
          edit(shape->elts.back()->range, std::to_string(wide));
        }
      }
      if (!s.syntax) continue;
      // Masks follow the tile: the loop variable only as (tile start) + arange over the tile width.
      if (stCall)
        if (const Expr *mask = stCall->keyword("mask"); mask && mask->kind != ExprKind::None) {
          std::vector<const Expr *> parts;
          std::function<void(const Expr *)> split = [&](const Expr *e) {
            if (e->kind == ExprKind::BinOp && e->name == "&" && e->elts.size() == 2) {
              split(e->elts[0]);
              split(e->elts[1]);
            } else {
              parts.push_back(e);
            }
          };
          split(mask);
          for (const Expr *c : parts) {
            Linear form;
            if (c->kind == ExprKind::Compare && c->elts.size() == 2 && c->ops.size() == 1) {
              form.add(r.linear(c->elts[0]), 1);
              form.add(r.linear(c->elts[1]), -1);
            } else {
              form.ok = false;
            }
            int64_t iv = form.ok ? form.loops[*loop] : 0, onTile = 0;
            for (auto &[a, coeff] : form.aranges)
              if (a.axis == kFreeAxis) {
                if (a.extent != width) form.ok = false;
                onTile += coeff;
              }
            if (!form.ok || iv * *l.step.value != width * onTile)
              return no(
                  llvm::formatv("S{0}: a mask conjunct does not follow the tile ({1})", sid, k.source->slice(c->range))
                      .str());
          }
        }
      // Every use of the loop variable is inside an index or a mask.
      std::vector<syntax::ByteRange> allowed;
      for (const auto *list : {&s.reads, &s.writes})
        for (const Access &a : *list) allowed.push_back(a.range);
      if (stCall)
        if (const Expr *mask = stCall->keyword("mask")) allowed.push_back(mask->range);
      bool stray = false;
      forEachExpr(s.syntax, [&](const Expr *e) {
        if (e->kind == ExprKind::Name && e->name == l.iv &&
            llvm::none_of(allowed, [&](syntax::ByteRange r) { return within(e->range, r); }))
          stray = true;
      });
      if (stray) return no(llvm::formatv("S{0} uses '{1}' outside an index or mask", sid, l.iv).str());
      // The free-axis aranges of the tile width.
      bool unwidened = false;
      forEachExpr(s.syntax, [&](const Expr *e) {
        if (stationary && within(e->range, stationary->range)) return;
        auto u = r.arange(e);
        if (!u || u->site != e || u->axis != kFreeAxis || u->extent != width) return;
        if (!u->twoDimensional)
          unwidened = true;
        else if (!u->literal || e->kind == ExprKind::Name)
          edit(e->range, wideArange);
        else
          edit(u->literal->range, std::to_string(wide));
      });
      if (unwidened)
        return no(llvm::formatv("S{0}: an index of the tile width is an axis of an nl.mgrid of more than two dims", sid)
                      .str());
    }
    // The loop steps over factor iterations at once.
    const auto &args = call->elts;
    if (args.size() == 1) {
      edits.insert(args[0]->range.begin, "0, ");
      edits.insert(args[0]->range.end, ", " + std::to_string(f));
    } else if (args.size() == 2) {
      edits.insert(args[1]->range.end, ", " + std::to_string(f));
    } else {
      const Expr *step = args[2];
      bool tight = step->kind == ExprKind::Int || step->kind == ExprKind::Name || step->kind == ExprKind::Attribute;
      std::string text = k.source->slice(step->range).str();
      edit(step->range, step->kind == ExprKind::Int ? std::to_string(step->intValue * f)
                        : tight                     ? text + " * " + std::to_string(f)
                                                    : "(" + text + ") * " + std::to_string(f));
    }
    return applied(name(), ids, k, edits,
                   llvm::formatv("widen {0} by {1}: tiles {2} -> {3} wide, trip {4} -> {5}", loopLabel(k, *loop), f,
                                 width, wide, trip, trip / f)
                       .str(),
                   l.iterRange.begin);
  }

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    for (const Loop &l : k.loops) {
      if (!l.tripCount.isKnown()) continue;
      int64_t trip = *l.tripCount.value;
      for (int64_t f = 2; f <= std::min<int64_t>(trip, 8); ++f)
        if (trip % f == 0) out.push_back({{"op", "widen"}, {"loop", "L" + std::to_string(l.id)}, {"factor", f}});
    }
    return out;
  }
};

} // namespace

const Op &widenOp() {
  static Widen op;
  return op;
}

} // namespace accelopt::rewrite
