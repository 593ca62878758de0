// hoist_transpose: an nl.matmul without transpose_x=True pays a TensorE transpose
// of its x operand on every call. When that operand does not change across the
// iterations of an enclosing loop, compute the transposes once before the loop into
// an SBUF buffer (one block dimension per crossed loop the operand's address uses)
// and let the matmul read the transposed block with transpose_x=True.
#include "Rewrite/OpSupport.h"

#include "Analysis/Verifier.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;

namespace {

class HoistTranspose final : public Op {
public:
  HoistTranspose()
      : Op({"hoist_transpose",
            "compute the implicit transpose of an nl.matmul's x operand once before an enclosing loop it does not "
            "depend on (an SBUF buffer, one block per crossed loop its address uses), then matmul with "
            "transpose_x=True",
            {{"stmt", FieldKind::Stmt, "a statement whose value is nl.matmul(x, y) without transpose_x"},
             {"out_of", FieldKind::Loop,
              "an enclosing loop the x operand does not depend on (the transposes are computed before it)"}}}) {}

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

    if (!s.op || !matmulTransposesStationary(*s.op, s.flag("transpose_x")))
      return refuse(
          llvm::formatv("S{0} is not an nl.matmul that transposes its x operand (transpose_x unset)", s.id).str());
    if (!k.encloses(*loop, NodeRef{false, *stmt}))
      return refuse(llvm::formatv("S{0} is not inside {1}", s.id, loopLabel(k, *loop)).str());
    const syntax::Expr *call = s.syntax ? s.syntax->value : nullptr;
    if (!call || call->kind != syntax::ExprKind::Call || call->elts.empty())
      return refuse("the matmul is not the statement's whole value with x given positionally");
    uint32_t lastArgEnd = call->elts.back()->range.end;
    for (const syntax::Keyword &kw : call->keywords) lastArgEnd = std::max(lastArgEnd, kw.range.end);
    if (text[call->range.end - 1] != ')' || text.slice(lastArgEnd, call->range.end).contains(','))
      return refuse("the call does not end in its last argument and ')'");
    if (call->keyword("transpose_x")) return refuse("the call already passes transpose_x");
    const syntax::Expr *x = call->elts[0];
    const Access *xa = nullptr;
    for (const Access &a : s.reads)
      if (a.param == "x") xa = &a;
    if (!xa || !xa->exact || xa->tensor < 0)
      return refuse("the address of the x operand is not affine in the loop counters");
    if (xa->tileShape.size() != 2 || xa->tileShape[0] <= 0 || xa->tileShape[1] <= 0)
      return refuse("the x operand is not a 2-D tile of known shape");
    int64_t rows = xa->tileShape[0], cols = xa->tileShape[1]; // transposed: cols partitions, rows free
    const Tensor &t = k.tensors[xa->tensor];
    if (t.buffer != Buffer::SBUF || !t.dtypeKnown)
      return refuse(
          llvm::formatv("the x operand '{0}' is not an SBUF tensor of known dtype", tensorName(k, t.id)).str());
    if (t.definedBy >= 0 && k.encloses(*loop, NodeRef{false, t.definedBy}))
      return refuse(
          llvm::formatv("the x operand '{0}' is created inside {1}", tensorName(k, t.id), loopLabel(k, *loop)).str());

    // Invariance: nothing in the loop writes what the operand reads (the one dependence test, any
    // iterations), and its address uses no name the loop binds but the counters of crossed loops.
    for (int w : stmtsIn(k, *loop))
      for (const Access &wa : k.stmts[w].writes)
        if (mayOverlapDir(k, wa, *xa, {})) {
          const Statement &ws = k.stmts[w];
          return refuse(llvm::formatv("S{0} at {1} writes '{2}', which the x operand reads: its transpose is not "
                                      "invariant in {3}",
                                      w, where(k, ws.range.begin), tensorName(k, t.id), loopLabel(k, *loop))
                            .str(),
                        {{wa.range.begin, wa.range.end, "write of '" + tensorName(k, t.id) + "' here"}});
        }
    std::set<std::string> used;
    forEachExpr(x, [&](const syntax::Expr *e) {
      if (e->kind == syntax::ExprKind::Name) used.insert(e->name);
    });
    std::set<std::string> boundInside{l.iv};
    for (int inner : loopsIn(k, *loop)) boundInside.insert(k.loops[inner].iv);
    for (int st : stmtsIn(k, *loop))
      for (auto &d : boundNames(k.stmts[st])) boundInside.insert(d);
    if (used.count(l.iv))
      return refuse(llvm::formatv("the x operand uses '{0}', the counter of {1}", l.iv, loopLabel(k, *loop)).str());
    std::vector<int> blockLoops;
    for (int c : loopsBetween(k, *loop, *stmt))
      if (c != *loop && used.count(k.loops[c].iv)) blockLoops.push_back(c);
    std::set<std::string> blockIvs;
    for (int c : blockLoops) blockIvs.insert(k.loops[c].iv);
    for (const std::string &n : used)
      if (boundInside.count(n) && !blockIvs.count(n))
        return refuse(llvm::formatv("the x operand uses '{0}', which {1} binds", n, loopLabel(k, *loop)).str());

    llvm::Expected<int64_t> blockCountOrWhy = blockCount(k, blockLoops, *loop, boundInside);
    if (!blockCountOrWhy) return refuse(llvm::toString(blockCountOrWhy.takeError()));
    int64_t blocks = *blockCountOrWhy;
    int64_t bytes = blocks * rows * dtypeBytes(t.dtype);
    int64_t capacity = analysis::VerifyOptions{}.sbufBytesPerPartition;
    if (bytes > capacity)
      return refuse(llvm::formatv("the transposed buffer needs {0} bytes per partition, more than the SBUF's {1}",
                                  bytes, capacity)
                        .str());
    std::string unit = bodyIndentUnit(k, l);
    if (unit.empty()) return refuse("the loop body is on its header line");
    if (!startsLine(text, l.range.begin)) return refuse("the loop does not start its own line");

    // Edits: the buffer and its nest before the loop; the matmul reads its block.
    std::string buf = freshName(identifiersIn(text), (t.name.empty() ? std::string("x") : t.name) + "_T");
    std::string indent = indentAt(text, l.range.begin);
    std::string shape, index;
    for (int c : blockLoops) {
      shape += std::to_string(*k.loops[c].tripCount.value) + ", ";
      index += k.loops[c].iv + ", ";
    }
    std::string tile = llvm::formatv("0:{0}, 0:{1}", cols, rows).str();
    std::string lines = llvm::formatv("{0}{1} = nl.ndarray(({2}nl.par_dim({3}), {4}), dtype=nl.{5}, buffer=nl.sbuf)\n",
                                      indent, buf, shape, cols, rows, dtypeName(t.dtype))
                            .str();
    std::string at = indent;
    for (int c : blockLoops) {
      lines += at + k.source->slice(k.loops[c].headerRange).str() + "\n";
      at += unit;
    }
    lines +=
        llvm::formatv("{0}{1}[{2}{3}] = nl.copy(nl.transpose({4}))\n", at, buf, index, tile, k.source->slice(x->range))
            .str();
    // Above the comment lines that lead into the loop.
    uint32_t insertAt = lineBegin(text, l.range.begin);
    while (insertAt > 0) {
      uint32_t prev = lineBegin(text, insertAt - 1);
      if (!text.slice(prev, insertAt).trim().startswith("#")) break;
      insertAt = prev;
    }
    EditList edits;
    edits.insert(insertAt, lines);
    edits.replace(x->range, buf + "[" + index + tile + "]");
    edits.insert(call->range.end - 1, ", transpose_x=True");
    return applied(name(), ids, k, edits,
                   llvm::formatv("hoist_transpose of S{0}'s x operand out of {1} into '{2}' ({3} block(s))", s.id,
                                 loopLabel(k, *loop), buf, blocks)
                       .str(),
                   s.range.begin);
  }

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    for (const Statement &s : k.stmts)
      if (s.op && matmulTransposesStationary(*s.op, s.flag("transpose_x")))
        for (int l = s.parent; l != -1; l = k.loops[l].parent)
          out.push_back(
              {{"op", "hoist_transpose"}, {"stmt", "S" + std::to_string(s.id)}, {"out_of", "L" + std::to_string(l)}});
    return out;
  }
};

} // namespace

const Op &hoistTransposeOp() {
  static HoistTranspose op;
  return op;
}

} // namespace accelopt::rewrite
