// chunk_scan: a nisa.tensor_tensor_scan is a per-partition recurrence along the free axis,
// r[i] = op1(op0(data0[i], r[i-1]), data1[i]) from r[-1] = initial. Computed in chunks of C
// columns, chunk c starts from the last column of chunk c-1 (passed as `initial=`), which gives
// the same values in the same order; the chunks run in an nl.sequential_range.
#include "Rewrite/ElementwiseChain.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;

namespace {

/// The scan's operand given for `param` (keyword or positional) and its access.
struct Operand {
  const syntax::Expr *expr = nullptr;
  const Access *access = nullptr;
};

/// The text of `e` with the sub-ranges in `subs` (absolute offsets, disjoint) replaced.
std::string textWith(llvm::StringRef text, syntax::ByteRange e,
                     std::vector<std::pair<syntax::ByteRange, std::string>> subs) {
  std::sort(subs.begin(), subs.end(), [](auto &a, auto &b) { return a.first.begin < b.first.begin; });
  std::string out;
  uint32_t at = e.begin;
  for (auto &[r, t] : subs) {
    out += text.slice(at, r.begin).str() + t;
    at = r.end;
  }
  return out + text.slice(at, e.end).str();
}

class ChunkScan final : public Op {
public:
  ChunkScan()
      : Op({"chunk_scan",
            "compute a nisa.tensor_tensor_scan in chunks of C columns along its free axis, each chunk starting from "
            "the last column of the previous one (initial=), in an nl.sequential_range",
            {{"stmt", FieldKind::Stmt, "a statement binding the result of nisa.tensor_tensor_scan to a new name"},
             {"chunk", FieldKind::Integer, "the chunk width C in columns, at least 2 and below the free size"}}}) {}

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    Params p(k, j, spec());
    auto stmt = p.stmt("stmt");
    auto chunk = p.integer("chunk");
    if (!p.ok()) return p.error();
    const Statement &s = k.stmts[*stmt];
    llvm::StringRef text = k.source->text();
    std::string ids = llvm::formatv("S{0}", *stmt).str();
    Refuser refuse(name(), ids, s.range.begin);

    auto call = CallView::of(s);
    if (!call || s.callee != "nisa.tensor_tensor_scan")
      return refuse(llvm::formatv("S{0} is not a nisa.tensor_tensor_scan call", s.id).str());
    if (s.hasMask) return refuse("the scan is masked");
    const syntax::Expr *target = s.syntax && s.syntax->targets.size() == 1 ? s.syntax->targets.front() : nullptr;
    if (!target || target->kind != syntax::ExprKind::Name || s.definesTensor < 0 || !s.writes.empty())
      return refuse("the scan's result is not bound to a new name (x = nisa.tensor_tensor_scan(...))");
    if (!startsLine(text, s.range.begin) || !endsLine(text, s.range.end) || hasMultilineString(s.syntax, text))
      return refuse(llvm::formatv("S{0} shares its lines with other code", s.id).str());
    const Tensor &H = k.tensors[s.definesTensor];
    if (H.shape.size() != 2 || !H.shape[0].isKnown() || !H.shape[1].isKnown() || !H.dtypeKnown)
      return refuse("the scan's result is not a 2-D tile of known shape and dtype");
    int64_t rows = *H.shape[0].value, cols = *H.shape[1].value;
    if (*chunk < 2 || *chunk >= cols)
      return refuse(
          llvm::formatv("chunk {0} is not in [2, {1}) (the scan's free size is {2})", *chunk, cols, cols).str());
    for (const Statement &o : k.stmts)
      if (o.id != s.id && llvm::is_contained(boundNames(o), H.name))
        return refuse(llvm::formatv("'{0}' is also bound by S{1} at {2}", H.name, o.id, where(k, o.range.begin)).str());
    for (const Loop &l : k.loops)
      if (l.iv == H.name) return refuse("'" + H.name + "' is also a loop variable");

    // The data operands: names of whole [rows, cols] tiles, sliced per chunk.
    Operand ops[2];
    const char *params[2] = {"data0", "data1"};
    for (int i = 0; i < 2; ++i) {
      ops[i].expr = call->arg(params[i]);
      for (const Access &a : s.reads)
        if (a.param == params[i]) ops[i].access = &a;
      if (!ops[i].expr || ops[i].expr->kind != syntax::ExprKind::Name || !ops[i].access ||
          ops[i].access->tileShape != std::vector<int64_t>{rows, cols})
        return refuse(
            llvm::formatv("{0} is not the name of a whole {1}x{2} tile (it is sliced per chunk)", params[i], rows, cols)
                .str());
    }
    const syntax::Expr *initial = call->arg("initial");
    if (!initial) return refuse("the scan passes no initial=");
    if (text[call->call->range.end - 1] != ')') return refuse("the call does not end in ')'");

    // Edits: the result becomes an SBUF buffer filled chunk by chunk.
    ModuleSpelling names(k);
    std::string indent = indentAt(text, s.range.begin);
    // One indentation level: the enclosing loop's, else the kernel body's beyond the def.
    std::string unit = s.parent >= 0
                           ? bodyIndentUnit(k, k.loops[s.parent])
                           : indent.substr(std::min(indent.size(), indentAt(text, k.def->range.begin).size()));
    if (unit.empty()) return refuse("the indentation of the scan's block is not known");
    std::set<std::string> taken = identifiersIn(text);
    std::string c = freshName(taken, "chunk");
    int64_t full = cols / *chunk, tail = cols % *chunk;
    std::string C = std::to_string(*chunk);
    auto scanText = [&](const std::string &lo, const std::string &hi, const std::string &init) {
      std::vector<std::pair<syntax::ByteRange, std::string>> subs;
      for (const Operand &o : ops)
        subs.push_back({o.expr->range, llvm::formatv("{0}[0:{1}, {2}:{3}]", o.expr->name, rows, lo, hi).str()});
      subs.push_back({initial->range, init});
      return llvm::formatv("{0}[0:{1}, {2}:{3}] = {4}", H.name, rows, lo, hi, textWith(text, call->call->range, subs))
          .str();
    };
    std::string lines = llvm::formatv("{0}{1} = {2}(({3}({4}), {5}), dtype={6}, buffer={7})\n", indent, H.name,
                                      names.spell("nl.ndarray"), names.spell("nl.par_dim"), rows, cols,
                                      names.spell("nl." + std::string(dtypeName(H.dtype))), names.spell("nl.sbuf"))
                            .str();
    lines += indent + scanText("0", C, k.source->slice(initial->range).str()) + "\n";
    if (full > 1) {
      lines += llvm::formatv("{0}for {1} in {2}(1, {3}):\n", indent, c, names.spell("nl.sequential_range"), full).str();
      std::string lo = c + " * " + C, hi = "(" + c + " + 1) * " + C;
      lines +=
          indent + unit + scanText(lo, hi, llvm::formatv("{0}[0:{1}, {2} - 1:{2}]", H.name, rows, lo).str()) + "\n";
    }
    if (tail > 0) {
      std::string lo = std::to_string(full * *chunk);
      lines += indent +
               scanText(lo, std::to_string(cols), llvm::formatv("{0}[0:{1}, {2} - 1:{2}]", H.name, rows, lo).str()) +
               "\n";
    }
    EditList edits;
    edits.replace(lineBegin(text, s.range.begin), nextLineBegin(text, s.range.end) - lineBegin(text, s.range.begin),
                  lines);
    return applied(name(), ids, k, edits,
                   llvm::formatv("chunk_scan S{0} ('{1}', {2} columns) into {3} chunk(s) of {4}{5}", s.id, H.name, cols,
                                 full, *chunk, tail ? llvm::formatv(" and one of {0}", tail).str() : "")
                       .str(),
                   s.range.begin);
  }

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    for (const Statement &s : k.stmts) {
      if (s.callee != "nisa.tensor_tensor_scan" || s.definesTensor < 0) continue;
      const Tensor &H = k.tensors[s.definesTensor];
      if (H.shape.size() != 2 || !H.shape[1].isKnown()) continue;
      for (int64_t c : {512, 2048})
        if (c < *H.shape[1].value)
          out.push_back({{"op", "chunk_scan"}, {"stmt", "S" + std::to_string(s.id)}, {"chunk", c}});
    }
    return out;
  }
};

} // namespace

const Op &chunkScanOp() {
  static ChunkScan op;
  return op;
}

} // namespace accelopt::rewrite
