// forward_load: an on-chip copy of (part of) a tile that an earlier load of the same block filled
// from HBM becomes a load of the matching HBM elements: `t[i_p, i_f] = nl.load(x[i_p, i_f + o])`
// then `c = nl.copy(t[i_q, i_f])` gives `c = nl.load(x[i_q, i_f + o])`. The copy's engine work
// becomes a DMA; what the copy reads must lie inside what the load wrote, and no write between the
// load and the copy may touch the HBM region (the dependence analysis).
#include "Rewrite/ElementwiseChain.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;
using syntax::Expr;
using syntax::ExprKind;

namespace {

bool isCopy(const Statement &s) { return s.callee == "nl.copy" || s.callee == "nisa.tensor_copy"; }

/// Smallest and largest value of one index dimension, when its base is a constant.
std::optional<std::pair<int64_t, int64_t>> constantBounds(const IndexDim &d) {
  if (d.full || !d.base.isConstant()) return std::nullopt;
  int64_t lo = d.base.constant, hi = d.base.constant;
  for (const ArangeTerm &a : d.aranges) (a.coeff >= 0 ? hi : lo) += a.coeff * (a.extent - 1);
  return std::pair{lo, hi};
}

/// An expression that needs no parentheses where a name stood.
bool atomic(const Expr *e) {
  return e->kind == ExprKind::Name || e->kind == ExprKind::Int || e->kind == ExprKind::Attribute ||
         e->kind == ExprKind::Call || e->kind == ExprKind::Subscript;
}

class ForwardLoad final : public Op {
public:
  ForwardLoad()
      : Op({"forward_load",
            "replace an on-chip copy of a loaded tile by a load of the same HBM elements (the copy's engine work "
            "becomes a DMA)",
            {{"stmt", FieldKind::Stmt,
              "the nl.copy / nisa.tensor_copy reading a tile an earlier nl.load of the same block filled"}}}) {}

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    Params p(k, j, spec());
    auto stmt = p.stmt("stmt");
    if (!p.ok()) return p.error();
    std::string why;
    auto plan = forwarding(k, *stmt, why);
    if (!plan) return refuse(name(), "S" + std::to_string(*stmt), k.stmts[*stmt].range.begin, why);
    const Statement &copy = k.stmts[*stmt];
    EditList edits;
    edits.replace(plan->copyCall->range, plan->loadText);
    return applied(name(), plan->ids, k, edits,
                   llvm::formatv("forward_load S{0} ({1} of '{2}' -> nl.load from '{3}' as S{4} does)", *stmt,
                                 copy.callee, plan->tileName, plan->hbmName, plan->load)
                       .str(),
                   copy.range.begin);
  }

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    for (const Statement &s : k.stmts) {
      std::string why;
      if (isCopy(s) && forwarding(k, s.id, why))
        out.push_back({{"op", "forward_load"}, {"stmt", "S" + std::to_string(s.id)}});
    }
    return out;
  }

private:
  struct Plan {
    int load = -1;
    const Expr *copyCall = nullptr;
    std::string loadText; // the replacement of the copy's call
    std::string ids, tileName, hbmName;
  };

  /// The replacement of copy statement `id`, or std::nullopt with the reason in `why`.
  std::optional<Plan> forwarding(const Kernel &k, int id, std::string &why) const {
    const Statement &copy = k.stmts[id];
    auto copyCall = CallView::of(copy);
    if (!copyCall || !isCopy(copy)) {
      why = "S" + std::to_string(id) + " is not an nl.copy or nisa.tensor_copy";
      return std::nullopt;
    }
    if (copyCall->api) {
      // The forwarded load returns its tile: the copy's result must be bound, not passed as dst.
      why = "S" + std::to_string(id) + " passes its destination (nki dialect); forward_load rewrites `t = copy(...)`";
      return std::nullopt;
    }
    for (const std::string &given : copyCall->givenParams())
      if (given != "src" && given != "dtype") {
        why = llvm::formatv("S{0} passes {1}=, which a forwarded load cannot keep", id, given).str();
        return std::nullopt;
      }
    const Expr *src = copyCall->arg("src");
    if (copy.reads.size() != 1 || !src || src->kind != ExprKind::Subscript || !src->base ||
        src->base->kind != ExprKind::Name) {
      why = "S" + std::to_string(id) + " does not copy a subscript of a named tile";
      return std::nullopt;
    }
    const Access &read = copy.reads.front();
    int tile = read.tensor;
    const Tensor &T = k.tensors[tile];
    if (storageOf(k, tile) != tile || src->elts.size() != read.dims.size()) {
      why = llvm::formatv("S{0} reads '{1}' through a view", id, T.name).str();
      return std::nullopt;
    }

    // The load filling the tile: the nearest earlier statement of the block writing it.
    const std::vector<NodeRef> &block = k.siblingsOf({false, id});
    auto self = llvm::find(block, NodeRef{false, id});
    int load = -1;
    std::vector<int> between;
    std::set<std::string> loopVariablesBetween;
    for (auto it = std::make_reverse_iterator(self); it != block.rend() && load < 0; ++it) {
      if (it->isLoop) {
        for (int s : stmtsIn(k, it->index)) between.push_back(s);
        loopVariablesBetween.insert(k.loops[it->index].iv);
        for (int l : loopsIn(k, it->index)) loopVariablesBetween.insert(k.loops[l].iv);
        continue;
      }
      const Statement &s = k.stmts[it->index];
      bool writesTile = llvm::any_of(s.writes, [&](const Access &w) { return storageOf(k, w.tensor) == tile; }) ||
                        s.definesTensor == tile;
      if (writesTile && s.callee == "nl.load")
        load = s.id;
      else
        between.push_back(s.id);
    }
    if (load < 0) {
      why = llvm::formatv("no earlier nl.load of the same block fills '{0}'", T.name).str();
      return std::nullopt;
    }
    const Statement &L = k.stmts[load];
    auto loadCall = CallView::of(L);
    const Expr *hbm = loadCall ? loadCall->arg("src") : nullptr;
    std::string ids = llvm::formatv("S{0} S{1}", id, load).str();
    auto fail = [&](std::string reason) -> std::optional<Plan> {
      why = std::move(reason);
      return std::nullopt;
    };
    if (!hbm || hbm->kind != ExprKind::Subscript || L.hasMask || copy.hasMask || L.reads.size() != 1)
      return fail(llvm::formatv("S{0} is not an unmasked nl.load of a subscript", load).str());
    const Access &hbmRead = L.reads.front();
    const Tensor &X = k.tensors[storageOf(k, hbmRead.tensor)];
    if (!isHBM(X.buffer)) return fail(llvm::formatv("S{0} does not load from HBM", load).str());
    if (X.dtype != T.dtype || !X.dtypeKnown || !T.dtypeKnown)
      return fail(
          llvm::formatv("S{0} converts '{1}' to another dtype; a direct load would skip that rounding", load, X.name)
              .str());
    for (const Statement &s : k.stmts)
      if (s.id != load && s.id != T.definedBy &&
          (llvm::any_of(s.writes, [&](const Access &w) { return storageOf(k, w.tensor) == tile; }) ||
           llvm::is_contained(boundNames(s), T.name)))
        return fail(llvm::formatv("'{0}' is also written by S{1} at {2}", T.name, s.id, where(k, s.range.begin)).str());
    if (auto c = writeBetween(k, load, id, hbmRead)) {
      c->stmtB = load; // the read is the load's
      return fail("a write may touch the loaded region: " + describeConflict(k, *c));
    }

    // Each tile dimension the load writes is a plain name over an nl.arange from 0 (or the whole
    // dimension); the copy's index must stay inside it.
    std::map<std::string, const Expr *> substitute;
    const Expr *dest = L.syntax && !L.syntax->targets.empty() ? L.syntax->targets.front() : nullptr;
    if (L.writes.size() == 1) {
      const Access &w = L.writes.front();
      if (!dest || dest->kind != ExprKind::Subscript || dest->elts.size() != w.dims.size() ||
          w.dims.size() != read.dims.size())
        return fail(llvm::formatv("S{0} writes '{1}' through a view", load, T.name).str());
      for (size_t d = 0; d < w.dims.size(); ++d) {
        const IndexDim &wd = w.dims[d];
        const Expr *index = dest->elts[d];
        bool plainArange = index->kind == ExprKind::Name && wd.base.isConstant() && wd.base.constant == 0 &&
                           wd.aranges.size() == 1 && wd.aranges[0].coeff == 1;
        if (!plainArange || substitute.count(index->name))
          return fail(llvm::formatv("S{0} indexes dimension {1} of '{2}' by something other than a name over "
                                    "nl.arange from 0",
                                    load, d, T.name)
                          .str());
        auto bounds = constantBounds(read.dims[d]);
        if (!bounds || bounds->first < 0 || bounds->second >= wd.aranges[0].extent)
          return fail(
              llvm::formatv("S{0} reads dimension {1} of '{2}' outside what S{3} loads", id, d, T.name, load).str());
        substitute[index->name] = src->elts[d];
      }
    } else {
      return fail(llvm::formatv("S{0} binds a new tile; forward_load needs a subscripted destination", load).str());
    }

    // The load's address, with each destination name replaced by the copy's index for it; the
    // names it reads keep their meaning at the copy.
    std::set<std::string> seen;
    std::vector<std::pair<const Expr *, std::string>> renames;
    for (const Expr *e : hbm->elts)
      forEachExpr(e, [&](const Expr *n) {
        if (n->kind != ExprKind::Name) return;
        if (auto it = substitute.find(n->name); it != substitute.end()) {
          seen.insert(n->name);
          std::string with = exprText(k, it->second);
          renames.push_back({n, atomic(it->second) ? with : "(" + with + ")"});
          return;
        }
        if (loopVariablesBetween.count(n->name))
          return (void)(why =
                            llvm::formatv("'{0}' is rebound by a loop between S{1} and S{2}", n->name, load, id).str());
        for (int s : between)
          if (llvm::is_contained(boundNames(k.stmts[s]), n->name))
            return (
                void)(why =
                          llvm::formatv("'{0}' is rebound by S{1} between S{2} and S{3}", n->name, s, load, id).str());
      });
    if (!why.empty()) return std::nullopt;
    if (seen.size() != substitute.size())
      return fail(llvm::formatv("the address of S{0} does not use every index of '{1}'", load, T.name).str());
    llvm::StringRef text = k.source->text();
    std::string address;
    uint32_t pos = hbm->range.begin;
    std::sort(renames.begin(), renames.end(),
              [](auto &a, auto &b) { return a.first->range.begin < b.first->range.begin; });
    for (auto &[n, with] : renames) {
      address += text.slice(pos, n->range.begin).str() + with;
      pos = n->range.end;
    }
    address += text.slice(pos, hbm->range.end).str();

    ModuleSpelling names(k);
    std::string loadText = names.spell("nl.load") + "(" + address;
    if (const Expr *dtype = copyCall->arg("dtype"); dtype && !copyCall->absent("dtype"))
      loadText += ", dtype=" + exprText(k, dtype);
    loadText += ")";
    return Plan{load, copyCall->call, loadText, ids, T.name, X.name};
  }
};

} // namespace

const Op &forwardLoadOp() {
  static ForwardLoad op;
  return op;
}

} // namespace accelopt::rewrite
