// set_loop_kind: change the iterator of a loop (affine_range, sequential_range,
// static_range). To affine_range only when no iteration depends on another.
#include "Rewrite/OpSupport.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;

namespace {

/// The alias of neuronxcc.nki.language (or nki.language) in the file, "" if none.
std::string languageAlias(llvm::StringRef text) {
  for (llvm::StringRef needle : {"nki.language as ", "nki import language as "}) {
    size_t at = text.find(needle);
    if (at == llvm::StringRef::npos) continue;
    size_t b = at + needle.size(), e = b;
    while (e < text.size() && (isalnum((unsigned char)text[e]) || text[e] == '_')) ++e;
    if (e > b) return text.slice(b, e).str();
  }
  return "";
}

/// Two iterations of `loop` touching the same element (not both `+=`), if any.
std::optional<Conflict> carriedConflict(const Kernel &k, int loop) {
  std::vector<DirConstraint> dirs = laterIterationDirs(k, loop);
  return firstWriteConflict(k, stmtsIn(k, loop), loop, [&](const Access &w, const Access &a) {
    for (Dir d : {Dir::Pos, Dir::Neg}) {
      dirs.back().dir = d;
      if (mayOverlapDir(k, w, a, dirs)) return true;
    }
    return false;
  });
}

class SetLoopKind final : public Op {
public:
  SetLoopKind()
      : Op({"set_loop_kind",
            "change a loop's iterator (affine_range only without loop-carried dependences)",
            {{"loop", FieldKind::Loop, "the loop"},
             {"kind", FieldKind::Choice, "the new iterator", {"affine_range", "sequential_range", "static_range"}}}}) {}

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    Params p(k, j, spec());
    auto loop = p.loop("loop");
    auto kind = p.choice("kind");
    if (!p.ok()) return p.error();
    const Loop &l = k.loops[*loop];
    std::string ids = "L" + std::to_string(*loop);
    const syntax::Expr *call = iterCall(l);
    uint32_t anchor = l.iterRange.begin;
    if (!call || !call->base) return refuse(name(), ids, anchor, "the loop iterator is not a call");
    if (loopKindName(l.kind) == *kind) return refuse(name(), ids, anchor, loopLabel(k, *loop) + " already is " + *kind);

    if (*kind == "affine_range") {
      if (auto c = carriedConflict(k, *loop))
        return refuse(name(), ids, anchor,
                      llvm::formatv("loop-carried dependence in {0}: {1} may touch the same elements in different "
                                    "iterations (only += accumulation may be shared by affine_range iterations)",
                                    loopLabel(k, *loop), describeConflict(k, *c))
                          .str(),
                      conflictNotes(k, *c));
      if (auto c = carriedName(k, *loop)) {
        const Statement &s = k.stmts[c->first];
        return refuse(name(), ids, anchor,
                      llvm::formatv("loop-carried value in {0}: S{1} at {2} reads '{3}' before the loop body "
                                    "binds it, so each iteration uses the previous one's value",
                                    loopLabel(k, *loop), s.id, where(k, s.range.begin), c->second)
                          .str(),
                      {{s.range.begin, s.range.end, "'" + c->second + "' read here"}});
      }
    }

    EditList edits;
    const syntax::Expr *callee = call->base;
    std::string prefix;
    if (callee->kind == syntax::ExprKind::Attribute && callee->base) {
      prefix = k.source->slice(callee->base->range).str();
    } else {
      prefix = languageAlias(k.source->text());
      if (prefix.empty())
        return refuse(name(), ids, anchor, "cannot find how neuronxcc.nki.language is imported in this file");
    }
    edits.replace(callee->range.begin, callee->range.end - callee->range.begin, prefix + "." + *kind);
    return applied(name(), ids, k, edits,
                   llvm::formatv("set_loop_kind {0}: {1} -> {2}", loopLabel(k, *loop), loopKindName(l.kind), *kind),
                   anchor);
  }

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    for (const Loop &l : k.loops)
      for (const char *kind : {"affine_range", "sequential_range"})
        if (loopKindName(l.kind) != kind)
          out.push_back({{"op", "set_loop_kind"}, {"loop", "L" + std::to_string(l.id)}, {"kind", kind}});
    return out;
  }
};

} // namespace

const Op &setLoopKindOp() {
  static SetLoopKind op;
  return op;
}

} // namespace accelopt::rewrite
