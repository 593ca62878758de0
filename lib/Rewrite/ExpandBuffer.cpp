// expand_buffer: give every iteration of a loop its own copy of an on-chip
// buffer: a leading block dimension of size trip(L) (in the current dialect, which
// has no block dimensions, a list of trip(L) tiles), indexed by L's induction
// variable at every use, with the allocation before L.
#include "Rewrite/OpSupport.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;

namespace {

/// Does the write cover every element of the tensor?
bool coversAll(const Tensor &T, const Access &w) {
  if (!w.exact || w.dims.size() != T.shape.size()) return false;
  for (size_t d = 0; d < w.dims.size(); ++d) {
    const IndexDim &x = w.dims[d];
    if (x.full) continue;
    auto ext = T.shape[d].value;
    if (!ext || !x.base.isConstant() || x.base.constant != 0) return false;
    if (x.aranges.empty() && *ext == 1) continue;
    if (x.aranges.size() != 1 || x.aranges[0].coeff != 1 || x.aranges[0].extent != *ext) return false;
  }
  return true;
}

class ExpandBuffer final : public Op {
public:
  ExpandBuffer()
      : Op({"expand_buffer",
            "give each iteration of a loop a private copy of an SBUF/PSUM buffer (a leading block dimension "
            "indexed by the loop variable)",
            {{"tensor", FieldKind::Tensor, "the buffer"},
             {"loop", FieldKind::Loop, "the loop whose iterations get a copy each"}}}) {}

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    Params p(k, j, spec());
    auto ref = p.string("tensor");
    auto loop = p.loop("loop");
    if (!p.ok()) return p.error();
    std::string err;
    int t = resolveTensor(k, *ref, err);
    if (t < 0) return badInput(name(), err);
    const Tensor &T = k.tensors[t];
    const Loop &l = k.loops[*loop];
    int L = *loop;
    std::string ids = llvm::formatv("{0} L{1}", T.name, L).str();
    uint32_t anchor = tensorAnchor(k, T);
    Refuser no(name(), ids, anchor);
    if (auto why = bufferReshapeRefusal(k, t)) return no(*why);
    const Statement &A = k.stmts[T.definedBy];
    const syntax::Expr *stop = singleStopArg(l);
    if (!stop || l.syntax->targets.size() != 1 || l.syntax->targets[0]->kind != syntax::ExprKind::Name)
      return no("expand_buffer handles loops of the form 'for i in <kind>(N)'");
    for (int s : stmtsIn(k, L))
      for (auto &d : boundNames(k.stmts[s]))
        if (d == l.iv) return no("S" + std::to_string(s) + " rebinds the induction variable '" + l.iv + "'");
    for (int q : loopsIn(k, L))
      if (k.loops[q].iv == l.iv) return no("L" + std::to_string(q) + " reuses the induction variable '" + l.iv + "'");

    auto uses = tensorUses(k, t);
    for (const TensorUse &u : uses) {
      uint32_t at = u.name->range.begin;
      Note here{at, u.name->range.end, "'" + T.name + "' used here"};
      if (at < A.range.begin)
        return no("'" + T.name + "' is used at " + where(k, at) + " before S" + std::to_string(A.id), {here});
      if (u.stmt < 0 || !k.encloses(L, NodeRef{false, u.stmt}))
        return no(llvm::formatv("'{0}' is used at {1}, outside {2}", T.name, where(k, at), loopLabel(k, L)).str(),
                  {here});
      if (!u.access)
        return no(
            llvm::formatv("'{0}' is used at {1} other than as an operand (S{2})", T.name, where(k, at), u.stmt).str(),
            {here});
      if (u.subscript && u.subscript->elts.size() == 1 && u.subscript->elts[0]->kind == syntax::ExprKind::Tuple)
        return no("'" + T.name + "' is indexed by a tuple at " + where(k, at), {here});
    }

    bool inside = k.encloses(L, NodeRef{false, A.id});
    std::string count;
    if (inside) {
      // The allocation is created fresh in every iteration: it must be directly in
      // L's body and computable before the loop.
      if (A.parent != L)
        return no(
            llvm::formatv("S{0} is inside a loop nested in {1}; expand it along that loop first", A.id, loopLabel(k, L))
                .str());
      for (int q : loopsIn(k, L))
        if (std::find(A.uses.begin(), A.uses.end(), k.loops[q].iv) != A.uses.end())
          return no("S" + std::to_string(A.id) + " uses the induction variable '" + k.loops[q].iv + "'");
      if (std::find(A.uses.begin(), A.uses.end(), l.iv) != A.uses.end())
        return no("S" + std::to_string(A.id) + " uses the induction variable '" + l.iv + "' of " + loopLabel(k, L));
      for (int s : stmtsIn(k, L))
        for (auto &d : k.stmts[s].defines)
          if (s != A.id && std::find(A.uses.begin(), A.uses.end(), d) != A.uses.end())
            return no(llvm::formatv("S{0} uses '{1}', which S{2} at {3} binds inside {4}", A.id, d, s,
                                    where(k, k.stmts[s].range.begin), loopLabel(k, L))
                          .str());
      count = k.source->slice(stop->range).str();
      if (stop->kind == syntax::ExprKind::Tuple || stop->kind == syntax::ExprKind::Lambda ||
          stop->kind == syntax::ExprKind::IfExp || stop->kind == syntax::ExprKind::Starred)
        count = "(" + count + ")";
    } else {
      // One buffer shared by all iterations: legal only when each iteration
      // overwrites all of it before reading it (no value flows between iterations).
      if (!l.tripCount.isKnown()) return no(unknownTripReason(k, L));
      count = std::to_string(*l.tripCount.value);
      const TensorUse *first = nullptr;
      for (const TensorUse &u : uses)
        if (!first || u.name->range.begin < first->name->range.begin) first = &u;
      if (first) {
        const Statement &s = k.stmts[first->stmt];
        const Access &a = *first->access;
        bool full = a.isWrite && !a.isAccumulate && s.parent == L && !s.hasMask && coversAll(T, a) &&
                    s.kind != StmtKind::Accumulate;
        if (!full)
          return no(llvm::formatv("'{0}' is allocated before {1} and its first use in the loop, the {2} at {3} (S{4}), "
                                  "does not overwrite all of it: a value may flow from one iteration to the next",
                                  T.name, loopLabel(k, L),
                                  a.isAccumulate ? "accumulation"
                                  : a.isWrite    ? "write"
                                                 : "read",
                                  where(k, first->name->range.begin), first->stmt)
                        .str(),
                    {{first->name->range.begin, first->name->range.end, "first use of '" + T.name + "'"}});
      }
    }

    EditList edits;
    llvm::StringRef text = k.source->text();
    std::vector<std::tuple<uint32_t, uint32_t, std::string>> shapeEdits;
    // The current dialect has no block dimensions: the copies are a Python list of tiles, one per
    // iteration, built by a list comprehension, and each use picks the iteration's tile (`t[i][a, b]`).
    bool list = k.dialect == Dialect::Nki;
    if (list) {
      const syntax::Expr *value = A.syntax->value;
      std::string var = freshName(identifiersIn(k.source->slice(A.range)), "_");
      shapeEdits.push_back({value->range.begin, value->range.begin, "["});
      shapeEdits.push_back({value->range.end, value->range.end, " for " + var + " in range(" + count + ")]"});
    } else {
      // The new leading dimension; a shape whose partition dim was implicit (first) says so.
      const syntax::Expr *e0 = allocShapeTuple(A)->elts[0];
      shapeEdits.push_back({e0->range.begin, e0->range.begin, count + ", "});
    }
    if (!list && T.parDim == 0) {
      const syntax::Expr *e0 = allocShapeTuple(A)->elts[0];
      bool marked =
          e0->kind == syntax::ExprKind::Call && e0->base && llvm::StringRef(e0->base->dottedName()).endswith("par_dim");
      if (!marked) {
        const syntax::Expr *callee = A.syntax->value->base;
        if (!callee || callee->kind != syntax::ExprKind::Attribute || !callee->base)
          return no("cannot spell nl.par_dim for S" + std::to_string(A.id));
        std::string mod = k.source->slice(callee->base->range).str();
        std::get<2>(shapeEdits.back()) += mod + ".par_dim(";
        shapeEdits.push_back({e0->range.end, e0->range.end, ")"});
      }
    }
    if (inside) {
      edits.remove(lineBegin(text, A.range.begin), nextLineBegin(text, A.range.end));
      edits.insert(lineBegin(text, l.range.begin), movedLines(text, A, indentAt(text, l.range.begin), shapeEdits));
    } else {
      for (auto &[b, e, w] : shapeEdits) edits.replace(b, e - b, w);
    }
    for (const TensorUse &u : uses) {
      if (list)
        edits.insert(u.name->range.end, "[" + l.iv + "]");
      else if (u.subscript)
        edits.insert(u.subscript->elts.front()->range.begin, l.iv + ", ");
      else
        edits.replace(u.name->range, T.name + "[" + l.iv + "]");
    }
    return applied(name(), ids, k, edits,
                   llvm::formatv("expand_buffer {0} along {1}{2}", T.name, loopLabel(k, L),
                                 inside ? " (allocation moved before the loop)" : "")
                       .str(),
                   anchor);
  }

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    for (const Tensor *tensor : onChipBuffers(k)) {
      const Tensor &t = *tensor;
      const Statement &A = k.stmts[t.definedBy];
      if (A.kind != StmtKind::Alloc) continue;
      std::string ref = tensorRef(k, t);
      if (A.parent >= 0)
        out.push_back({{"op", "expand_buffer"}, {"tensor", ref}, {"loop", "L" + std::to_string(A.parent)}});
      // Loops after the allocation enclosing every use.
      auto uses = tensorUses(k, t.id);
      if (uses.empty() || uses.front().stmt < 0) continue;
      for (int q = k.stmts[uses.front().stmt].parent; q >= 0 && !k.encloses(q, NodeRef{false, A.id});
           q = k.loops[q].parent) {
        bool all = true;
        for (auto &u : uses) all &= u.stmt >= 0 && k.encloses(q, NodeRef{false, u.stmt});
        if (all) out.push_back({{"op", "expand_buffer"}, {"tensor", ref}, {"loop", "L" + std::to_string(q)}});
      }
    }
    return out;
  }
};

} // namespace

const Op &expandBufferOp() {
  static ExpandBuffer op;
  return op;
}

} // namespace accelopt::rewrite
