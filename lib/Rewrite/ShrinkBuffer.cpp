// shrink_buffer: drop a block dimension of an on-chip buffer whose blocks are
// each used by one iteration of a loop only; the allocation moves to the top of
// that loop's body so each iteration gets its own (smaller) buffer.
#include "Rewrite/OpSupport.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;

namespace {

std::string exprText(const Kernel &k, const syntax::Expr *e) { return k.source->slice(e->range).str(); }

/// The edit removing element `i` of a comma-separated list `elts` (subscript or
/// tuple) spanning `whole`; returns {begin, end, replacement}.
std::tuple<uint32_t, uint32_t, std::string> dropElement(const std::vector<const syntax::Expr *> &elts, size_t i) {
  if (i + 1 < elts.size()) return {elts[i]->range.begin, elts[i + 1]->range.begin, ""};
  return {elts[i - 1]->range.end, elts[i]->range.end, ""};
}

class ShrinkBuffer final : public Op {
public:
  ShrinkBuffer()
      : Op({"shrink_buffer",
            "drop a block dimension of an SBUF/PSUM buffer used one block per loop iteration (allocated inside "
            "that loop)",
            {{"tensor", FieldKind::Tensor, "the buffer"},
             {"dim", FieldKind::Integer, "the block dimension to drop (an index before the partition dimension)"}}}) {}

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    Params p(k, j, spec());
    auto ref = p.string("tensor");
    auto dimP = p.integer("dim");
    if (!p.ok()) return p.error();
    std::string err;
    int t = resolveTensor(k, *ref, err);
    if (t < 0) return badInput(name(), err);
    const Tensor &T = k.tensors[t];
    int64_t dim = *dimP;
    if (dim < 0 || dim >= T.blockDims())
      return badInput(name(),
                      llvm::formatv("dim {0} is not a block dimension of '{1}' (shape {2}; {3})", dim, T.name,
                                    T.shapeString(),
                                    T.blockDims() == 0 ? std::string("it has none")
                                                       : "block dimensions are 0.." + std::to_string(T.blockDims() - 1))
                          .str());
    std::string ids = llvm::formatv("{0} dim {1}", T.name, dim).str();
    uint32_t anchor = tensorAnchor(k, T);
    Refuser no(name(), ids, anchor);
    if (auto why = bufferReshapeRefusal(k, t)) return no(*why);
    const Statement &A = k.stmts[T.definedBy];

    // Every use indexes `dim` by the induction variable of one loop L.
    auto uses = tensorUses(k, t);
    if (uses.empty()) return no("'" + T.name + "' is never used");
    int L = -1;
    for (const TensorUse &u : uses) {
      if (!u.subscript || u.stmt < 0 || int(u.subscript->elts.size()) <= dim) continue;
      const syntax::Expr *ix = u.subscript->elts[dim];
      if (ix->kind != syntax::ExprKind::Name) continue;
      for (int q = k.stmts[u.stmt].parent; q >= 0; q = k.loops[q].parent)
        if (k.loops[q].iv == ix->name) {
          L = q;
          break;
        }
      if (L >= 0) break;
    }
    if (L < 0)
      return no(llvm::formatv("no use of '{0}' indexes dimension {1} by the induction variable of an enclosing loop",
                              T.name, dim)
                    .str());
    const Loop &l = k.loops[L];
    for (const TensorUse &u : uses) {
      uint32_t at = u.name->range.begin;
      std::string loc = where(k, at);
      Note here{at, u.subscript ? u.subscript->range.end : u.name->range.end, "'" + T.name + "' used here"};
      if (at < A.range.begin)
        return no("'" + T.name + "' is used at " + loc + " before S" + std::to_string(A.id), {here});
      std::string kind = !u.access                ? "use"
                         : u.access->isAccumulate ? "accumulation into"
                         : u.access->isWrite      ? "write of"
                                                  : "read of";
      if (u.stmt < 0 || !k.encloses(L, NodeRef{false, u.stmt}))
        return no(llvm::formatv("the {0} '{1}'{2} at {3} is outside {4}: a block must outlive the "
                                "iteration of the loop that uses it",
                                kind, T.name, u.stmt >= 0 ? " (S" + std::to_string(u.stmt) + ")" : std::string(), loc,
                                loopLabel(k, L))
                      .str(),
                  {here});
      if (!u.subscript || !u.access)
        return no(
            llvm::formatv("the {0} '{1}' (S{2}) at {3} does not index its blocks", kind, T.name, u.stmt, loc).str(),
            {here});
      const auto &elts = u.subscript->elts;
      if (int(elts.size()) <= dim || (elts.size() == 1 && elts[0]->kind == syntax::ExprKind::Tuple))
        return no(
            llvm::formatv("the {0} '{1}' (S{2}) at {3} does not index dimension {4}", kind, T.name, u.stmt, loc, dim)
                .str(),
            {here});
      for (int64_t i = 0; i <= dim; ++i)
        if (elts[i]->kind == syntax::ExprKind::Ellipsis)
          return no(llvm::formatv("the {0} '{1}' (S{2}) at {3} uses '...' before dimension {4}", kind, T.name, u.stmt,
                                  loc, dim)
                        .str(),
                    {here});
      const IndexDim *d = int(u.access->dims.size()) > dim ? &u.access->dims[dim] : nullptr;
      bool exactlyIv = d && u.access->exact && d->base.known && !d->full && d->aranges.empty() &&
                       d->base.constant == 0 && d->base.terms.size() == 1 && d->base.terms[0].first == L &&
                       d->base.terms[0].second == 1 && elts[dim]->kind == syntax::ExprKind::Name &&
                       elts[dim]->name == l.iv;
      // A name spelled like L's induction variable but bound elsewhere (a shadowing loop) is named by
      // the loop that binds it, so the two do not print alike.
      std::string indexText = exprText(k, elts[dim]);
      if (indexText == l.iv && d && d->base.terms.size() == 1 && d->base.terms[0].first != L &&
          d->base.terms[0].first >= 0)
        indexText += "' of " + loopLabel(k, d->base.terms[0].first) + " (another binding of the name)";
      else if (indexText == l.iv)
        indexText += "' (an index the analysis does not resolve to that loop alone)";
      else
        indexText += "'";
      if (!exactlyIv)
        return no(llvm::formatv("the {0} '{1}' (S{2}) at {3} indexes dimension {4} by '{5}, not by '{6}' of {7}: "
                                "it may touch a block of another iteration",
                                kind, T.name, u.stmt, loc, dim, indexText, l.iv, loopLabel(k, L))
                      .str(),
                  {{elts[dim]->range.begin, elts[dim]->range.end, "block index of '" + T.name + "'"}});
    }
    for (int s : stmtsIn(k, L))
      for (auto &d : boundNames(k.stmts[s]))
        if (d == l.iv) return no("S" + std::to_string(s) + " rebinds the induction variable '" + l.iv + "'");

    // Where the allocation goes: unchanged if already inside L, else the top of L's body.
    llvm::StringRef text = k.source->text();
    bool move = !k.encloses(L, NodeRef{false, A.id});
    if (move) {
      if (l.body.empty()) return no(loopLabel(k, L) + " has an empty body");
      uint32_t first = k.rangeOf(l.body.front()).begin;
      if (!startsLine(text, first)) return no("the body of " + loopLabel(k, L) + " is on its header line");
      // The shape must evaluate to the same thing at the top of L's body.
      for (int q = L; q >= 0 && !k.encloses(q, NodeRef{false, A.id}); q = k.loops[q].parent)
        if (std::find(A.uses.begin(), A.uses.end(), k.loops[q].iv) != A.uses.end())
          return no(
              llvm::formatv("S{0} uses '{1}', the induction variable of {2}", A.id, k.loops[q].iv, loopLabel(k, q))
                  .str());
      for (const Statement &s : k.stmts) {
        if (s.id == A.id || s.range.begin < A.range.begin || s.range.begin > l.range.end) continue;
        for (auto &d : s.defines)
          if (std::find(A.uses.begin(), A.uses.end(), d) != A.uses.end())
            return no(
                llvm::formatv("S{0} uses '{1}', which S{2} at {3} binds between the allocation and the body of {4}",
                              A.id, d, s.id, where(k, s.range.begin), loopLabel(k, L))
                    .str());
      }
    }

    EditList edits;
    const syntax::Expr *shape = allocShapeTuple(A);
    auto shapeEdit = [&]() -> std::tuple<uint32_t, uint32_t, std::string> {
      std::vector<const syntax::Expr *> elts(shape->elts.begin(), shape->elts.end());
      if (elts.size() == 2) // keep a one-element tuple a tuple
        return {shape->range.begin, shape->range.end, "(" + exprText(k, elts[1 - dim]) + ",)"};
      return dropElement(elts, dim);
    };
    if (move) {
      uint32_t first = k.rangeOf(l.body.front()).begin;
      edits.remove(lineBegin(text, A.range.begin), nextLineBegin(text, A.range.end));
      edits.insert(lineBegin(text, first), movedLines(text, A, indentAt(text, first), {shapeEdit()}));
    } else {
      auto [b, e, w] = shapeEdit();
      edits.replace(b, e - b, w);
    }
    for (const TensorUse &u : uses) {
      std::vector<const syntax::Expr *> elts(u.subscript->elts.begin(), u.subscript->elts.end());
      if (elts.size() == 1) {
        edits.replace(u.subscript->range, T.name);
        continue;
      }
      auto [b, e, w] = dropElement(elts, dim);
      edits.replace(b, e - b, w);
    }
    return applied(name(), ids, k, edits,
                   llvm::formatv("shrink_buffer {0} dim {1} (indexed by {2}){3}", T.name, dim, loopLabel(k, L),
                                 move ? ", allocated in L" + std::to_string(L) : "")
                       .str(),
                   anchor);
  }

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    for (const Tensor *t : onChipBuffers(k)) {
      std::string ref = tensorRef(k, *t);
      for (int d = 0; d < t->blockDims(); ++d) out.push_back({{"op", "shrink_buffer"}, {"tensor", ref}, {"dim", d}});
    }
    return out;
  }
};

} // namespace

const Op &shrinkBufferOp() {
  static ShrinkBuffer op;
  return op;
}

} // namespace accelopt::rewrite
