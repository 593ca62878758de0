// stage: an nl.load whose HBM address does not change across the iterations of an enclosing loop
// is re-issued by every one of them. Load the region once per iteration of the loops around that
// loop into an SBUF buffer (one block dimension per crossed loop the address uses, filled by a copy
// of those loops' headers before the loop) and let the load's uses read their block of it.
#include "Rewrite/ElementwiseChain.h"

#include "Analysis/Verifier.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;

namespace {

/// An unmasked nl.load of a tile (2-D or more) from HBM: binding a new tile or filling a block of a buffer.
struct Load {
  const syntax::Expr *call = nullptr;
  const syntax::Expr *src = nullptr;
  const Access *read = nullptr;
  const Access *write = nullptr;        // null when the load binds a new tile
  const syntax::Expr *target = nullptr; // what it writes: the assignment target, or dma_copy's dst
  bool dma = false;                     // `nisa.dma_copy(dst=t, src=...)` rather than an assignment
};

/// Whether `s`'s load writes the whole of `D`, an SBUF tile (no block dims) that an nl.ndarray in a
/// loop body between `outOf` and the load allocates.
bool isTileFill(const Kernel &k, const Statement &s, const Load &load, const Tensor &D, int outOf,
                const std::vector<int64_t> &tileShape) {
  if (D.buffer != Buffer::SBUF || D.blockDims() != 0 || D.definedBy < 0 || D.aliasOf >= 0 ||
      D.shape.size() != tileShape.size() || load.write->dims.size() != tileShape.size())
    return false;
  const Statement &alloc = k.stmts[D.definedBy];
  if (alloc.kind != StmtKind::Alloc || alloc.parent < 0 || !k.encloses(outOf, {false, alloc.id}) ||
      !(alloc.parent == s.parent || k.encloses(alloc.parent, {false, s.id})) || alloc.range.begin > s.range.begin)
    return false;
  for (size_t d = 0; d < tileShape.size(); ++d) {
    const IndexDim &dim = load.write->dims[d];
    bool whole = dim.full || (dim.base.isConstant() && dim.base.constant == 0 && dim.aranges.size() == 1 &&
                              dim.aranges[0].coeff == 1 && dim.aranges[0].extent == tileShape[d]);
    if (!whole || !D.shape[d].isKnown() || *D.shape[d].value != tileShape[d]) return false;
  }
  return true;
}

std::optional<Load> loadOf(const Kernel &k, const Statement &s) {
  if (s.callee == "nisa.dma_copy") {
    // A DMA statement of its own, `nisa.dma_copy(dst=t, src=hbm[...])`, with no other argument.
    if (s.hasMask || s.reads.size() != 1 || s.writes.size() != 1 || s.writes.front().isAccumulate || !s.op ||
        !s.syntax || s.syntax->kind != syntax::StmtKind::Expr || !s.syntax->value ||
        s.syntax->value->kind != syntax::ExprKind::Call)
      return std::nullopt;
    CallView view{&s, s.syntax->value, s.op};
    const Access &src = s.reads.front();
    const syntax::Expr *dst = view.arg("dst");
    if (src.tensor < 0 || !isHBM(k.tensors[storageOf(k, src.tensor)].buffer) || !view.arg("src") || !dst ||
        dst->kind != syntax::ExprKind::Name || view.givenParams().size() != 2)
      return std::nullopt;
    return Load{view.call, view.arg("src"), &src, &s.writes.front(), dst, true};
  }
  auto view = CallView::of(s);
  if (!view || s.callee != "nl.load" || s.hasMask || s.reads.size() != 1 || !s.syntax || s.syntax->targets.size() != 1)
    return std::nullopt;
  const Access &src = s.reads.front();
  if (src.tensor < 0 || !isHBM(k.tensors[storageOf(k, src.tensor)].buffer)) return std::nullopt;
  const syntax::Expr *target = s.syntax->targets.front();
  Load out{view->call, view->arg("src"), &src, nullptr, target};
  if (!out.src) return std::nullopt;
  if (s.writes.size() == 1 && !s.writes.front().isAccumulate && target->kind == syntax::ExprKind::Subscript &&
      target->base && target->base->kind == syntax::ExprKind::Name)
    out.write = &s.writes.front();
  else if (!(s.writes.empty() && s.definesTensor >= 0 && k.tensors[s.definesTensor].isTile &&
             target->kind == syntax::ExprKind::Name))
    return std::nullopt;
  return out;
}

class Stage final : public Op {
public:
  Stage()
      : Op({"stage",
            "load an HBM region an nl.load re-reads in every iteration of an enclosing loop once before that loop, "
            "into an SBUF buffer with one block per crossed loop its address uses; the load's uses read its block",
            {{"stmt", FieldKind::Stmt,
              "an unmasked nl.load of an N-D tile, N >= 2 (binding a name, filling a buffer block or a whole tile), or "
              "a nisa.dma_copy of one into a whole tile"},
             {"out_of", FieldKind::Loop,
              "an enclosing loop the address does not depend on (the region is loaded before it)"}}}) {}

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    Params p(k, j, spec());
    auto stmt = p.stmt("stmt");
    auto loop = p.loop("out_of");
    if (!p.ok()) return p.error();
    const Statement &s = k.stmts[*stmt];
    const Loop &l = k.loops[*loop];
    llvm::StringRef text = k.source->text();
    std::string ids = llvm::formatv("S{0} L{1}", *stmt, *loop).str();
    Refuser refuse(name(), ids, s.range.begin);

    auto load = loadOf(k, s);
    if (!load)
      return refuse(
          llvm::formatv("S{0} is not an unmasked nl.load from HBM binding a name or filling a buffer block, nor a "
                        "nisa.dma_copy from HBM into a whole tile",
                        s.id)
              .str());
    if (!k.encloses(*loop, NodeRef{false, *stmt}))
      return refuse(llvm::formatv("S{0} is not inside {1}", s.id, loopLabel(k, *loop)).str());
    const Access &src = *load->read;
    const Tensor &A = k.tensors[storageOf(k, src.tensor)];
    if (!src.exact || src.tileShape.size() < 2 || llvm::any_of(src.tileShape, [](int64_t e) { return e <= 0; }))
      return refuse("the load does not move a tile of two or more dimensions of known shape with an affine address");
    // The tile's own dims follow the block dims: partitions, then the free dims.
    const std::vector<int64_t> &tileShape = src.tileShape;
    int rank = int(tileShape.size());
    int64_t rows = tileShape[0], cols = 1;
    for (int d = 1; d < rank; ++d) cols *= tileShape[d];
    if (!startsLine(text, s.range.begin) || !endsLine(text, s.range.end) || hasMultilineString(s.syntax, text))
      return refuse(llvm::formatv("S{0} shares its lines with other code", s.id).str());

    // Invariance: nothing in the loop writes what the load reads (any iterations).
    for (int w : stmtsIn(k, *loop))
      for (const Access &wa : k.stmts[w].writes)
        if (mayOverlapDir(k, wa, src, {}))
          return refuse(llvm::formatv("S{0} at {1} writes '{2}', which the load reads: the region is not invariant "
                                      "in {3}",
                                      w, where(k, k.stmts[w].range.begin), A.name, loopLabel(k, *loop))
                            .str(),
                        {{wa.range.begin, wa.range.end, "write of '" + A.name + "' here"}});

    // The names the address uses, through the trace-time assignments of the crossed loops.
    std::vector<int> chain = loopsBetween(k, *loop, *stmt);
    std::set<int> inChain(chain.begin(), chain.end());
    std::map<std::string, int> ivLoop;
    for (int c : loopsIn(k, *loop)) ivLoop[k.loops[c].iv] = c;
    // A counter name several loops reuse (`for k` in sibling nests) is, at the load, its enclosing loop's.
    for (int c : chain) ivLoop[k.loops[c].iv] = c;
    ivLoop[l.iv] = *loop;
    std::map<std::string, std::vector<int>> binders;
    for (int st : stmtsIn(k, *loop))
      for (const std::string &n : boundNames(k.stmts[st])) binders[n].push_back(st);
    std::set<std::string> used, seen;
    std::set<int> assigns;
    std::vector<std::string> work;
    forEachExpr(load->src, [&](const syntax::Expr *e) {
      if (e->kind == syntax::ExprKind::Name) work.push_back(e->name);
    });
    while (!work.empty()) {
      std::string n = work.back();
      work.pop_back();
      if (!seen.insert(n).second) continue;
      used.insert(n);
      if (n == l.iv)
        return refuse(llvm::formatv("the load's address uses '{0}', the counter of {1}", n, loopLabel(k, *loop)).str());
      if (auto it = ivLoop.find(n); it != ivLoop.end()) {
        if (!inChain.count(it->second))
          return refuse(
              llvm::formatv("the load's address uses '{0}', the counter of {1}", n, loopLabel(k, it->second)).str());
        continue;
      }
      auto b = binders.find(n);
      if (b == binders.end()) continue; // bound before the loop
      const Statement &bs = k.stmts[b->second.front()];
      if (b->second.size() != 1 || bs.kind != StmtKind::Assign || !inChain.count(bs.parent) ||
          bs.range.begin > s.range.begin || k.source->slice(bs.range).contains('\n') ||
          !startsLine(text, bs.range.begin) || !endsLine(text, bs.range.end))
        return refuse(llvm::formatv("the load's address uses '{0}', which {1} binds other than by one one-line "
                                    "assignment before the load in a loop around it",
                                    n, loopLabel(k, *loop))
                          .str());
      assigns.insert(bs.id);
      for (const std::string &u : bs.uses) work.push_back(u);
    }
    std::vector<int> blockLoops;
    for (int c : chain)
      if (c != *loop && used.count(k.loops[c].iv)) blockLoops.push_back(c);
    std::set<std::string> boundInside{l.iv};
    for (auto &[n, v] : ivLoop) boundInside.insert(n);
    for (auto &[n, v] : binders) boundInside.insert(n);
    llvm::Expected<int64_t> blockCountOrWhy = blockCount(k, blockLoops, *loop, boundInside);
    if (!blockCountOrWhy) return refuse(llvm::toString(blockCountOrWhy.takeError()));
    int64_t blocks = *blockCountOrWhy;

    // The tile the load fills and its dtype.
    int dest = load->write ? storageOf(k, load->write->tensor) : s.definesTensor;
    const Tensor &D = k.tensors[dest];
    // A whole-tile fill (`t[...] = nl.load(...)`) of a tile buffer allocated inside `out_of` around the load
    // holds a fresh value each iteration, as a bound name does: it is staged like one.
    bool tileFill = load->write && isTileFill(k, s, *load, D, *loop, tileShape);
    bool binds = !load->write || tileFill;
    if (load->dma && !tileFill)
      return refuse(llvm::formatv("S{0}'s destination '{1}' is not a tile allocated by nl.ndarray in a loop body "
                                  "inside {2} and filled whole",
                                  s.id, D.name, loopLabel(k, *loop))
                        .str());
    // A DMA fills a Python list of tiles, one per block (flat index, nest order): the current dialect
    // has no block dims.
    // An nl.load binding a name in the current dialect is staged into a list too.
    bool nki = k.dialect == Dialect::Nki;
    bool list = (load->dma || (nki && binds)) && !blockLoops.empty();
    if (nki && !list && !load->dma && !blockLoops.empty())
      return refuse(llvm::formatv("S{0} fills a block of a buffer: the staged buffer would need block dimensions, "
                                  "which the nki dialect does not have",
                                  s.id)
                        .str());
    if (!load->write && blockLoops.empty())
      return refuse(
          llvm::formatv("no loop between {0} and S{1} indexes the load: hoist moves it", loopLabel(k, *loop), s.id)
              .str());

    if (!D.dtypeKnown) return refuse(llvm::formatv("the dtype of '{0}' is unknown", tensorName(k, dest)).str());
    if (D.isArgument || D.isOutput || D.aliasOf >= 0 || D.name.empty() || D.name == "<discarded>")
      return refuse(llvm::formatv("'{0}' is a kernel argument, output or view", tensorName(k, dest)).str());
    for (const Tensor &t : k.tensors)
      if (t.aliasOf == D.id) return refuse(llvm::formatv("'{0}' is a view of '{1}'", t.name, D.name).str());
    for (const Loop &lp : k.loops)
      if (lp.iv == D.name) return refuse("'" + D.name + "' is also a loop variable");
    for (const Statement &o : k.stmts) {
      if (o.id == *stmt || o.id == D.definedBy) continue;
      bool writes = llvm::is_contained(boundNames(o), D.name);
      for (const Access &w : o.writes) writes |= storageOf(k, w.tensor) == dest;
      if (writes)
        return refuse(
            llvm::formatv("'{0}' is also written by S{1} at {2}", D.name, o.id, where(k, o.range.begin)).str());
    }
    int64_t bytes = blocks * cols * dtypeBytes(D.dtype);
    int64_t capacity = analysis::VerifyOptions{}.sbufBytesPerPartition;
    if (bytes > capacity)
      return refuse(
          llvm::formatv("the staged buffer needs {0} bytes per partition, more than the SBUF's {1}", bytes, capacity)
              .str());

    std::string buf = freshName(identifiersIn(text), D.name + "_stage");
    std::string blockIndex;
    for (int c : blockLoops) blockIndex += k.loops[c].iv + ", ";
    std::string tile, freeShape;
    for (int d = 0; d < rank; ++d) {
      tile += (d ? ", 0:" : "0:") + std::to_string(tileShape[d]);
      if (d) freeShape += ", " + std::to_string(tileShape[d]);
    }
    // The list form's flat block index (row-major over the block loops).
    std::string listIndex;
    for (size_t i = 0; i < blockLoops.size(); ++i) {
      int64_t stride = 1;
      for (size_t j = i + 1; j < blockLoops.size(); ++j) stride *= *k.loops[blockLoops[j]].tripCount.value;
      listIndex += (i ? " + " : "") + k.loops[blockLoops[i]].iv + (stride > 1 ? " * " + std::to_string(stride) : "");
    }
    EditList edits;

    // The uses read the staged block.
    std::vector<TensorUse> uses = tensorUses(k, dest);
    if (binds) {
      for (const TensorUse &u : uses) {
        if (u.stmt == *stmt || u.stmt == D.definedBy) continue;
        if (u.stmt < 0 || u.name->range.begin < s.range.end || !k.encloses(s.parent, {false, u.stmt}))
          return refuse(llvm::formatv("'{0}' is used at {1}, not after its load in the same loop body", D.name,
                                      where(k, u.name->range.begin))
                            .str());
        if (list) {
          edits.replace(u.name->range, buf + "[" + listIndex + "]");
        } else if (!u.subscript) {
          edits.replace(u.name->range, buf + (blockLoops.empty() ? "" : "[" + blockIndex + tile + "]"));
        } else {
          edits.replace(u.name->range, buf);
          if (!blockLoops.empty()) {
            size_t open = text.find('[', u.name->range.end);
            edits.insert(uint32_t(open + 1), blockIndex);
          }
        }
      }
    } else {
      // A block of buffer D: its block indices are distinct loop counters; the block dimensions
      // indexed by a counter the address uses map to the staged buffer's, those indexed by a loop
      // around `out_of` must be read with that counter, the others are dropped.
      const syntax::Expr *target = load->target;
      int nb = D.blockDims();
      if (D.buffer != Buffer::SBUF || int(D.shape.size()) != nb + rank || int(target->elts.size()) != nb + rank ||
          int(load->write->dims.size()) != nb + rank || D.definedBy < 0 || k.stmts[D.definedBy].kind != StmtKind::Alloc)
        return refuse(llvm::formatv("'{0}' is not an SBUF buffer of {1}-D tiles allocated by nl.ndarray, written at "
                                    "a full subscript",
                                    D.name, rank)
                          .str());
      for (int d = nb; d < nb + rank; ++d) {
        const IndexDim &dim = load->write->dims[d];
        int64_t extent = tileShape[d - nb];
        bool whole = dim.full || (dim.base.isConstant() && dim.base.constant == 0 && dim.aranges.size() == 1 &&
                                  dim.aranges[0].coeff == 1 && dim.aranges[0].extent == extent);
        if (!whole || !D.shape[d].isKnown() || *D.shape[d].value != extent)
          return refuse(
              llvm::formatv("S{0} does not fill a whole tile of '{1}' (shape {2})", s.id, D.name,
                            llvm::join(llvm::map_range(tileShape, [](int64_t e) { return std::to_string(e); }), "x"))
                  .str());
      }
      std::vector<std::string> counter(nb);
      std::vector<int> nest = k.loopNest(*loop);
      std::set<int> outerLoops(nest.begin(), nest.end());
      outerLoops.erase(*loop);
      for (int d = 0; d < nb; ++d) {
        const syntax::Expr *e = target->elts[d];
        bool isCounter = e->kind == syntax::ExprKind::Name &&
                         ((ivLoop.count(e->name) && inChain.count(ivLoop[e->name])) ||
                          llvm::any_of(outerLoops, [&](int o) { return k.loops[o].iv == e->name; }));
        if (!isCounter || llvm::is_contained(counter, e->name))
          return refuse(
              llvm::formatv("block index {0} of '{1}' in S{2} is not a distinct loop counter", d, D.name, s.id).str());
        counter[d] = e->name;
      }
      // A crossed loop the address uses but no block index is fine when it allocates the buffer afresh in
      // each iteration (the allocation is inside it): its counter indexes a new block dim of the staged buffer.
      const Statement &alloc = k.stmts[D.definedBy];
      std::set<int> allocating;
      for (int c : blockLoops)
        if (!llvm::is_contained(counter, k.loops[c].iv)) {
          if (!k.encloses(c, {false, alloc.id}))
            return refuse(llvm::formatv("the address uses '{0}', which indexes no block of '{1}': its blocks are "
                                        "overwritten",
                                        k.loops[c].iv, D.name)
                              .str());
          allocating.insert(c);
        }
      for (const TensorUse &u : uses) {
        if (u.stmt == *stmt) continue;
        if (u.stmt < 0 || !u.subscript || int(u.subscript->elts.size()) != nb + rank ||
            !k.encloses(*loop, {false, u.stmt}) || u.access == nullptr || u.access->isWrite ||
            (!allocating.empty() && !k.encloses(alloc.parent, {false, u.stmt})))
          return refuse(llvm::formatv("'{0}' is used at {1} other than by a full subscript read inside {2}", D.name,
                                      where(k, u.name->range.begin),
                                      loopLabel(k, allocating.empty() ? *loop : alloc.parent))
                            .str());
        std::string index;
        for (int c : blockLoops) {
          if (allocating.count(c)) index += k.loops[c].iv + ", ";
          for (int d = 0; d < nb; ++d)
            if (counter[d] == k.loops[c].iv) index += exprText(k, u.subscript->elts[d]) + ", ";
        }
        for (int d = 0; d < nb; ++d) {
          bool outer = llvm::any_of(outerLoops, [&](int o) { return k.loops[o].iv == counter[d]; });
          const syntax::Expr *e = u.subscript->elts[d];
          if (outer && (e->kind != syntax::ExprKind::Name || e->name != counter[d]))
            return refuse(llvm::formatv("'{0}' is read at {1} with block index {2} other than '{3}', the counter of "
                                        "a loop around {4}",
                                        D.name, where(k, u.name->range.begin), d, counter[d], loopLabel(k, *loop))
                              .str());
        }
        for (int d = nb; d < nb + rank; ++d) index += (d > nb ? ", " : "") + exprText(k, u.subscript->elts[d]);
        edits.replace(u.subscript->range, buf + "[" + index + "]");
      }
    }

    // The load goes, with loops it leaves empty; in the buffer case the allocation too.
    NodeRef gone{false, *stmt};
    while (k.siblingsOf(gone).size() == 1) {
      int parent = k.parentOf(gone);
      if (parent == *loop || parent < 0)
        return refuse(llvm::formatv("S{0} is the only work of {1}", s.id, loopLabel(k, *loop)).str());
      gone = {true, parent};
    }
    syntax::ByteRange goneRange = k.rangeOf(gone);
    if (!startsLine(text, goneRange.begin) || !endsLine(text, goneRange.end))
      return refuse("the loop left empty shares its lines with other code");
    edits.remove(lineBegin(text, goneRange.begin), nextLineBegin(text, goneRange.end));
    if (load->write) {
      const Statement &alloc = k.stmts[D.definedBy];
      if (startsLine(text, alloc.range.begin) && endsLine(text, alloc.range.end) &&
          k.siblingsOf({false, alloc.id}).size() > 1 && boundNames(alloc).size() == 1 &&
          !(gone.isLoop && k.encloses(gone.index, {false, alloc.id})))
        edits.remove(lineBegin(text, alloc.range.begin), nextLineBegin(text, alloc.range.end));
    }

    // The buffer and its fill nest before the loop (above the comment lines leading into it).
    std::string unit = bodyIndentUnit(k, l);
    if (unit.empty()) return refuse("the loop body is on its header line");
    if (!startsLine(text, l.range.begin)) return refuse("the loop does not start its own line");
    ModuleSpelling names(k);
    std::string indent = indentAt(text, l.range.begin);
    std::string shape;
    for (int c : blockLoops) shape += std::to_string(*k.loops[c].tripCount.value) + ", ";
    auto allocLine = [&](const std::string &var, const std::string &dims) {
      return llvm::formatv("{0} = {1}(({2}), dtype={3}, buffer={4})\n", var, names.spell("nl.ndarray"), dims,
                           names.spell("nl." + std::string(dtypeName(D.dtype))), names.spell("nl.sbuf"))
          .str();
    };
    std::string tileDims = std::to_string(rows) + freeShape;
    std::string lines;
    if (list)
      lines = indent + buf + " = []\n";
    else if (load->dma)
      lines = indent + allocLine(buf, tileDims);
    else
      lines = indent + allocLine(buf, shape + names.spell("nl.par_dim") + "(" + std::to_string(rows) + ")" + freeShape);
    std::string at = indent;
    auto emitAssigns = [&](int level) {
      // The assignments whose nearest emitted loop is `level` (-1: before the nest), in source order.
      for (int a : assigns) {
        int near = -1;
        for (int c : blockLoops)
          if (c == k.stmts[a].parent || k.encloses(c, {false, a})) near = c;
        if (near == level) lines += at + k.source->slice(k.stmts[a].range).str() + "\n";
      }
    };
    emitAssigns(-1);
    for (int c : blockLoops) {
      lines += at + k.source->slice(k.loops[c].headerRange).str() + "\n";
      at += unit;
      emitAssigns(c);
    }
    if (load->dma) {
      // The DMA with its destination replaced: a fresh tile appended to the list, or the staged tile.
      std::string dst = list ? freshName(identifiersIn(text), D.name + "_blk") : buf;
      if (list) lines += at + allocLine(dst, tileDims);
      lines += at + text.slice(load->call->range.begin, load->target->range.begin).str() + dst +
               text.slice(load->target->range.end, load->call->range.end).str() + "\n";
      if (list) lines += at + buf + ".append(" + dst + ")\n";
    } else if (list) {
      lines += at + buf + ".append(" + k.source->slice(load->call->range).str() + ")\n";
    } else {
      lines +=
          llvm::formatv("{0}{1}[{2}{3}] = {4}\n", at, buf, blockIndex, tile, k.source->slice(load->call->range)).str();
    }
    uint32_t insertAt = lineBegin(text, l.range.begin);
    while (insertAt > 0) {
      uint32_t prev = lineBegin(text, insertAt - 1);
      if (!text.slice(prev, insertAt).trim().startswith("#")) break;
      insertAt = prev;
    }
    edits.insert(insertAt, lines);
    return applied(name(), ids, k, edits,
                   llvm::formatv("stage S{0} ('{1}') out of {2} into '{3}' ({4} block(s), {5} bytes per partition)",
                                 s.id, A.name, loopLabel(k, *loop), buf, blocks, bytes)
                       .str(),
                   s.range.begin);
  }

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    for (const Statement &s : k.stmts) {
      auto load = loadOf(k, s);
      if (!load) continue;
      std::set<std::string> used;
      forEachExpr(load->src, [&](const syntax::Expr *e) {
        if (e->kind == syntax::ExprKind::Name) used.insert(e->name);
      });
      for (int l = s.parent; l != -1; l = k.loops[l].parent)
        if (!used.count(k.loops[l].iv))
          out.push_back({{"op", "stage"}, {"stmt", "S" + std::to_string(s.id)}, {"out_of", "L" + std::to_string(l)}});
    }
    return out;
  }
};

} // namespace

const Op &stageOp() {
  static Stage op;
  return op;
}

} // namespace accelopt::rewrite
