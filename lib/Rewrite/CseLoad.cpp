// cse_load: a load that reads the same HBM region as an earlier load of the same block reuses the
// earlier tile: its uses are renamed to the first tile and the second DMA (with its buffer) is
// removed. Legal when no write between the loads may touch the region (the dependence analysis)
// and both tiles are written only by their loads, with the same destination pattern.
#include "Rewrite/ElementwiseChain.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;

namespace {

bool sameAffine(const Affine &a, const Affine &b) {
  return a.known && b.known && a.constant == b.constant && a.terms == b.terms;
}

/// The two accesses address the same elements of their tensors at every instance (same loops).
bool sameIndexSet(const Access &a, const Access &b) {
  if (!a.exact || !b.exact || a.dims.size() != b.dims.size() || a.tileShape != b.tileShape) return false;
  for (size_t d = 0; d < a.dims.size(); ++d) {
    const IndexDim &x = a.dims[d], &y = b.dims[d];
    if (x.full != y.full || !sameAffine(x.base, y.base) || x.aranges.size() != y.aranges.size()) return false;
    for (size_t i = 0; i < x.aranges.size(); ++i)
      if (x.aranges[i].axis != y.aranges[i].axis || x.aranges[i].extent != y.aranges[i].extent ||
          x.aranges[i].coeff != y.aranges[i].coeff)
        return false;
  }
  return true;
}

/// An unmasked nl.load statement: its call, its HBM source access and the tile it fills.
struct LoadSite {
  CallView call;
  const Access *src = nullptr;
  int dest = -1;                 // the tensor the load fills
  const Access *write = nullptr; // its subscript write (null when the load binds a new tile)
};

std::optional<LoadSite> loadSite(const Kernel &k, const Statement &s) {
  auto call = CallView::of(s);
  if (!call || s.callee != "nl.load" || s.hasMask || s.reads.size() != 1) return std::nullopt;
  const Access &src = s.reads.front();
  if (!isHBM(k.tensors[storageOf(k, src.tensor)].buffer)) return std::nullopt;
  LoadSite site{*call, &src};
  if (s.writes.size() == 1 && !s.writes.front().isAccumulate) {
    site.write = &s.writes.front();
    site.dest = site.write->tensor;
  } else if (s.writes.empty() && s.definesTensor >= 0 && k.tensors[s.definesTensor].isTile) {
    site.dest = s.definesTensor;
  } else {
    return std::nullopt;
  }
  return site;
}

/// The arguments besides the source, as written.
std::map<std::string, std::string> otherArguments(const Kernel &k, const CallView &call) {
  std::map<std::string, std::string> out;
  for (const std::string &param : call.givenParams())
    if (param != "src") out[param] = exprText(k, call.arg(param));
  return out;
}

/// The nearest earlier load of the same block reading exactly what `s` reads, or -1.
int earlierLoad(const Kernel &k, const Statement &s, const LoadSite &site) {
  const std::vector<NodeRef> &block = k.siblingsOf({false, s.id});
  auto self = llvm::find(block, NodeRef{false, s.id});
  for (auto it = std::make_reverse_iterator(self); it != block.rend(); ++it) {
    if (it->isLoop) continue;
    auto other = loadSite(k, k.stmts[it->index]);
    if (other && storageOf(k, other->src->tensor) == storageOf(k, site.src->tensor) &&
        sameIndexSet(*other->src, *site.src) && (other->write == nullptr) == (site.write == nullptr))
      return it->index;
  }
  return -1;
}

/// A statement other than `writer` that writes tensor `t`'s storage or binds its name, if any.
std::optional<int> otherWriter(const Kernel &k, int t, int writer) {
  const Tensor &T = k.tensors[t];
  for (const Statement &s : k.stmts) {
    if (s.id == writer || s.id == T.definedBy) continue;
    for (const Access &w : s.writes)
      if (storageOf(k, w.tensor) == t) return s.id;
    if (llvm::is_contained(boundNames(s), T.name)) return s.id;
  }
  return std::nullopt;
}

class CseLoad final : public Op {
public:
  CseLoad()
      : Op({"cse_load",
            "reuse the tile of an earlier load of the same HBM region in the same block instead of loading it again "
            "(no write in between may touch the region)",
            {{"stmt", FieldKind::Stmt, "the second nl.load (removed; its tile's uses read the first load's tile)"}}}) {}

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    Params p(k, j, spec());
    auto stmt = p.stmt("stmt");
    if (!p.ok()) return p.error();
    const Statement &s2 = k.stmts[*stmt];
    std::string ids = "S" + std::to_string(*stmt);
    Refuser no(name(), ids, s2.range.begin);
    auto second = loadSite(k, s2);
    if (!second) return no(ids + " is not an unmasked nl.load of an HBM region into one tile");
    const Tensor &X = k.tensors[storageOf(k, second->src->tensor)];
    int first = earlierLoad(k, s2, *second);
    if (first < 0)
      return no(llvm::formatv("no earlier nl.load in the same block reads the same region of '{0}'", X.name).str());
    const Statement &s1 = k.stmts[first];
    LoadSite one = *loadSite(k, s1);
    ids = llvm::formatv("{0} S{1}", ids, first).str();
    Refuser noPair(name(), ids, s2.range.begin);
    if (otherArguments(k, one.call) != otherArguments(k, second->call))
      return noPair(llvm::formatv("S{0} and S{1} pass different arguments besides the source", first, *stmt).str());

    if (auto c = writeBetween(k, first, *stmt, *second->src))
      return noPair("a write may touch the region: " + describeConflict(k, *c), conflictNotes(k, *c));

    const Tensor &D1 = k.tensors[one.dest], &D2 = k.tensors[second->dest];
    if (D1.name.empty() || D2.name.empty() || D1.aliasOf >= 0 || D2.aliasOf >= 0)
      return noPair("a loaded tile has no name of its own");
    for (const Tensor &t : k.tensors)
      if (t.aliasOf == D1.id || t.aliasOf == D2.id)
        return noPair(llvm::formatv("'{0}' is a view of a loaded tile", t.name).str());
    if (D1.isOutput || D2.isOutput || D1.isArgument || D2.isArgument)
      return noPair("a loaded tile is a kernel argument or output");
    for (const Tensor *t : {&D1, &D2})
      if (t->name == "<discarded>") return noPair("a loaded tile has no name of its own");
    if (auto w = otherWriter(k, D1.id, first))
      return noPair(
          llvm::formatv("'{0}' is also written by S{1} at {2}", D1.name, *w, where(k, k.stmts[*w].range.begin)).str());
    if (auto w = otherWriter(k, D2.id, *stmt))
      return noPair(
          llvm::formatv("'{0}' is also written by S{1} at {2}", D2.name, *w, where(k, k.stmts[*w].range.begin)).str());
    if (second->write) {
      // Both loads fill a block of a buffer: the buffers and the blocks must match for a read of
      // one to read the same element of the other.
      auto shapeOf = [](const Tensor &t) {
        std::vector<std::optional<int64_t>> out;
        for (const SymInt &d : t.shape) out.push_back(d.value);
        return out;
      };
      if (shapeOf(D1) != shapeOf(D2) || llvm::is_contained(shapeOf(D1), std::nullopt) || D1.dtype != D2.dtype ||
          D1.buffer != D2.buffer || D1.parDim != D2.parDim)
        return noPair(llvm::formatv("'{0}' and '{1}' differ in shape, dtype or buffer", D1.name, D2.name).str());
      if (!sameIndexSet(*one.write, *second->write))
        return noPair(llvm::formatv("S{0} and S{1} fill different blocks of their buffers", first, *stmt).str());
    }
    // A loop variable or parameter of the first tile's name would rebind it at a use.
    for (const Loop &l : k.loops)
      if (l.iv == D1.name) return noPair("'" + D1.name + "' is also a loop variable");

    // Every use of the second tile follows its load and lies where the first tile exists.
    llvm::StringRef text = k.source->text();
    EditList edits;
    for (const TensorUse &u : tensorUses(k, D2.id)) {
      if (u.stmt == *stmt) continue; // the load's own destination
      if (u.stmt < 0 || u.name->range.begin < s2.range.end)
        return noPair(
            llvm::formatv("'{0}' is used at {1}, before its load", D2.name, where(k, u.name->range.begin)).str());
      if (D1.scope >= 0 && !k.encloses(D1.scope, {false, u.stmt}))
        return noPair(llvm::formatv("'{0}' is used at {1}, outside the loop that creates '{2}'", D2.name,
                                    where(k, u.name->range.begin), D1.name)
                          .str());
      edits.replace(u.name->range, D1.name);
    }
    auto removeLines = [&](const Statement &s) -> bool {
      if (!startsLine(text, s.range.begin) || !endsLine(text, s.range.end) || hasMultilineString(s.syntax, text))
        return false;
      edits.remove(lineBegin(text, s.range.begin), nextLineBegin(text, s.range.end));
      return true;
    };
    if (!removeLines(s2)) return noPair(ids.substr(0, ids.find(' ')) + " shares its lines with other code");
    // The second buffer's own allocation goes too, unless it is the only statement of its block.
    if (D2.definedBy >= 0 && D2.definedBy != *stmt) {
      const Statement &alloc = k.stmts[D2.definedBy];
      if (alloc.kind == StmtKind::Alloc && alloc.definesTensor == D2.id && k.siblingsOf({false, alloc.id}).size() > 1 &&
          boundNames(alloc).size() == 1)
        removeLines(alloc);
    }
    return applied(
        name(), ids, k, edits,
        llvm::formatv("cse_load S{0} (reuses '{1}' of S{2}, {3} not loaded again)", *stmt, D1.name, first, X.name)
            .str(),
        s2.range.begin);
  }

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    for (const Statement &s : k.stmts)
      if (auto site = loadSite(k, s); site && earlierLoad(k, s, *site) >= 0)
        out.push_back({{"op", "cse_load"}, {"stmt", "S" + std::to_string(s.id)}});
    return out;
  }
};

} // namespace

const Op &cseLoadOp() {
  static CseLoad op;
  return op;
}

} // namespace accelopt::rewrite
