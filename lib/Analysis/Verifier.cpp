#include "Analysis/Verifier.h"

#include "Analysis/Dependence.h"
#include "NKI/KernelQueries.h"
#include "NKI/Platform.h"
#include "NKI/PyCore.h"
#include "NKI/PyInt.h"

#include "llvm/Support/FormatVariadic.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <tuple>

namespace accelopt::analysis {

using namespace nki;

llvm::ArrayRef<RuleInfo> verifierRules() { return allRules(); }

std::string renderRuleList(llvm::StringRef format) {
  auto severity = [](const RuleInfo &r) {
    std::string s = r.severity == Diagnostic::Error ? "error" : "warning";
    if (r.refusesRewriteOutput && r.severity != Diagnostic::Error) s += " (an error in rewrite output)";
    return s;
  };
  std::string out;
  if (format == "json") {
    nlohmann::json rules = nlohmann::json::array();
    for (const RuleInfo &r : allRules())
      rules.push_back({{"rule", r.id},
                       {"severity", r.severity == Diagnostic::Error ? "error" : "warning"},
                       {"refuses_rewrite_output", r.refusesRewriteOutput || r.severity == Diagnostic::Error},
                       {"doc", r.doc}});
    return rules.dump(2) + "\n";
  }
  if (format == "markdown") {
    out = "| rule | severity | checks that |\n|---|---|---|\n";
    for (const RuleInfo &r : allRules())
      out += llvm::formatv("| `{0}` | {1} | {2} |\n", r.id, severity(r), r.doc).str();
    return out;
  }
  for (const RuleInfo &r : allRules()) out += llvm::formatv("{0,-18} {1}: {2}\n", r.id, severity(r), r.doc).str();
  return out;
}

bool refusesRewriteOutput(const Diagnostic &d) {
  if (d.severity == Diagnostic::Error) return true;
  const RuleInfo *rule = findRule(d.rule);
  return rule && rule->refusesRewriteOutput;
}

bool hasErrors(const std::vector<Diagnostic> &diags) {
  return std::any_of(diags.begin(), diags.end(), [](auto &d) { return d.severity == Diagnostic::Error; });
}

namespace {

class Verifier {
public:
  Verifier(const Kernel &k, const VerifyOptions &o) : K(k), O(o) {}

  std::vector<Diagnostic> run() {
    Out = K.diagnostics;
    checkTensors();
    for (const auto &st : K.stmts) checkStatement(st);
    checkAffineWrites();
    checkScopes();
    checkSbufCapacity();
    nameForeignFunctions(K.diagnostics.size());
    std::stable_sort(Out.begin(), Out.end(), [](auto &a, auto &b) { return a.offset < b.offset; });
    return std::move(Out);
  }

private:
  const Kernel &K;
  const VerifyOptions &O;
  std::vector<Diagnostic> Out;

  /// A finding of `rule`, with the rule's declared severity.
  void report(Rule rule, ByteRange r, std::string msg) {
    const RuleInfo &info = ruleInfo(rule);
    Out.push_back({info.severity, r.begin, r.end, std::move(msg), info.id});
  }
  /// What another file's function made sits at its outermost call in the kernel's file (the called name):
  /// a finding there names the function and where it is defined, as the front end's own findings do.
  void nameForeignFunctions(size_t from) {
    for (size_t i = from; i < Out.size(); ++i)
      for (const ForeignCall &fc : K.foreignCalls)
        if (fc.callee.begin == Out[i].offset && fc.callee.end == Out[i].endOffset) {
          Out[i].message += " (in '" + fc.function + "', " + fc.origin + ", traced at this call)";
          break;
        }
  }
  std::string tensorName(int t) const {
    const Tensor &T = K.tensors[t];
    return T.name.empty() ? "<tile>" : T.name;
  }

  void checkTensors() {
    for (const auto &t : K.tensors) {
      if (!isOnChip(t.buffer) || t.parDim < 0 || t.parDim >= int(t.shape.size())) continue;
      const SymInt &p = t.shape[t.parDim];
      if (p.isKnown() && *p.value > O.maxPartitions && !t.isTile)
        report(Rule::PartitionDim, t.range,
               llvm::formatv("partition dimension of '{0}' is {1}, more than the {2} partitions of "
                             "{3} (nl.tile_size.pmax)",
                             tensorName(t.id), *p.value, O.maxPartitions, bufferName(t.buffer))
                   .str());
      if (t.buffer == Buffer::PSUM)
        if (auto bytes = t.bytesPerPartition(); bytes && *bytes > O.psumBankBytes)
          report(Rule::PsumBank, t.range,
                 llvm::formatv("PSUM tile '{0}' {1} needs {2} bytes per partition, more than one "
                               "{3}-byte PSUM bank (at most {4} {5} elements)",
                               tensorName(t.id), t.shapeString(), *bytes, O.psumBankBytes,
                               O.psumBankBytes / dtypeBytes(t.dtype), dtypeName(t.dtype))
                     .str());
    }
  }

  /// The free elements per partition an operand may have (0 = no limit): the op table's, per packed row in
  /// the double-row mode on a target that has it (NKI/Platform.h).
  int64_t freeLimit(const Statement &st, const ParamInfo &p) const {
    bool packed = st.op && st.op->kind == OpKind::Matmul && st.flag(kPerfModeParam) && O.doubleRow;
    return packed ? int64_t(p.maxFree) * kDoubleRowPacking : p.maxFree;
  }

  static int64_t freeSize(const std::vector<int64_t> &shape) {
    int64_t n = 1;
    for (size_t i = 1; i < shape.size(); ++i) n = pyint::saturatingMul(n, shape[i] ? shape[i] : 1);
    return n;
  }

  /// An unmasked access with affine indices whose range is past a dimension's end even at the loop
  /// iteration that indexes lowest (so no loop-variable `if` can be what keeps it in bounds).
  void checkBounds(const Statement &st, const Access &a) {
    if (st.hasMask || !a.exact || a.tensor < 0) return;
    const Tensor &t = K.tensors[size_t(a.tensor)];
    if (!t.shapeKnown || a.dims.size() != t.shape.size()) return;
    for (size_t d = 0; d < a.dims.size(); ++d) {
      const IndexDim &dim = a.dims[d];
      if (dim.full || !dim.base.known || !t.shape[d].isKnown()) continue;
      int64_t base = dim.base.constant; // at the lowest-indexing iteration
      if (base < 0) continue;           // a Python negative index counts from the end
      // Saturating: an index past 64 bits is out of bounds, not wrapped back into them.
      using pyint::saturatingAdd, pyint::saturatingMul;
      for (auto [loop, coeff] : dim.base.terms) {
        const Loop *l = K.loopById(loop);
        if (!l || !l->tripCount.isKnown() || *l->tripCount.value <= 0) return; // unknown, or never runs
        base = saturatingAdd(base, std::min<int64_t>(0, saturatingMul(coeff, *l->tripCount.value - 1)));
      }
      int64_t lo = base, hi = base;
      for (const ArangeTerm &r : dim.aranges) {
        if (r.extent <= 0) return;
        hi = saturatingAdd(hi, std::max<int64_t>(0, saturatingMul(r.coeff, r.extent - 1)));
        lo = saturatingAdd(lo, std::min<int64_t>(0, saturatingMul(r.coeff, r.extent - 1)));
      }
      int64_t size = *t.shape[d].value;
      if (hi < size) continue;
      report(Rule::IndexBounds, a.range,
             llvm::formatv("out of bounds: indexes dimension {0} of '{1}' (size {2}) at {3}..{4}", d,
                           tensorName(a.tensor), size, std::max<int64_t>(lo, 0), hi)
                 .str());
      return;
    }
  }

  void checkStatement(const Statement &st) {
    for (const auto &list : {&st.reads, &st.writes})
      for (const Access &a : *list) {
        checkBounds(st, a);
        if (a.usesBasic && a.usesAdvanced)
          report(Rule::MixedIndexing, a.range,
                 "subscript of '" + tensorName(a.tensor) +
                     "' mixes basic indexing (slices) with advanced indexing (nl.arange); use one style");
        const Tensor &t = K.tensors[a.tensor];
        // Tiles moved by DMA or compute have the partition dim first.
        // Oversized tensors are reported once, at their allocation.
        bool tensorReported = t.parDim >= 0 && t.parDim < int(t.shape.size()) && !t.isTile &&
                              t.shape[t.parDim].value.value_or(0) > O.maxPartitions;
        // A transposing DMA (nl.load_transpose2d) turns the source's rows into free elements.
        bool rowsBecomeFree = st.op && st.op->shape == ShapeRule::TransposePF && isHBM(t.buffer);
        if (st.op && !a.tileShape.empty() && a.tileShape[0] > O.maxPartitions && !rowsBecomeFree &&
            st.op->kind != OpKind::Alloc && a.exact && !tensorReported && !(a.usesBasic && a.usesAdvanced))
          report(Rule::PartitionDim, a.range,
                 llvm::formatv("tile of '{0}' spans {1} partitions; a tile has at most {2} "
                               "(nl.tile_size.pmax)",
                               tensorName(a.tensor), a.tileShape[0], O.maxPartitions)
                     .str());
      }
    if (!st.op) return;
    const OpInfo &op = *st.op;
    bool isMatmul = op.kind == OpKind::Matmul;
    for (const Access &a : st.reads) {
      const ParamInfo *p = a.param.empty() ? nullptr : op.param(a.param);
      if (!p || p->role != Role::Tile) continue;
      const Tensor &t = K.tensors[a.tensor];
      if (p->buffers && t.buffer != Buffer::Unknown && t.shapeKnown && !(p->buffers & bufferBit(t.buffer)))
        report(isMatmul ? Rule::MatmulOperands : Rule::OperandBuffer, a.range,
               llvm::formatv("{0} operand '{1}' must be in {2}, but '{3}' is in {4}", op.name, p->name,
                             allowedBuffers(p->buffers), tensorName(a.tensor), bufferName(t.buffer))
                   .str());
      int64_t maxFree = freeLimit(st, *p);
      if (maxFree && a.exact && a.tileShape.size() >= 1) {
        int64_t free = freeSize(a.tileShape);
        if (free > maxFree)
          report(isMatmul ? Rule::MatmulOperands : Rule::OperandBuffer, a.range,
                 llvm::formatv("{0} operand '{1}' has {2} free elements per partition; the limit is {3}", op.name,
                               p->name, free, maxFree)
                     .str());
      }
    }
    if (isMatmul && st.flag(kPerfModeParam) && !O.doubleRow)
      report(Rule::MatmulOperands, st.range,
             llvm::formatv("{0} perf_mode (FP8 double row) needs NeuronCore-v3 or newer; target {1} has no TensorE "
                           "performance mode (check --target trn2)",
                           op.name, O.target)
                 .str());
    if (isMatmul) {
      for (const Access &w : st.writes) {
        const Tensor &t = K.tensors[w.tensor];
        if (t.buffer != Buffer::PSUM && t.buffer != Buffer::Unknown)
          report(Rule::MatmulOperands, w.range,
                 llvm::formatv("{0} writes its result to PSUM, but '{1}' is in {2}", op.name, tensorName(w.tensor),
                               bufferName(t.buffer))
                     .str());
      }
      checkContraction(st);
    }
  }

  void checkContraction(const Statement &st) {
    const Access *stationary = nullptr, *moving = nullptr;
    for (const Access &a : st.reads) {
      if (a.param == "stationary" || a.param == "x") stationary = &a;
      if (a.param == "moving" || a.param == "y") moving = &a;
    }
    if (!stationary || !moving || !stationary->exact || !moving->exact) return;
    if (stationary->tileShape.empty() || moving->tileShape.empty()) return;
    int64_t ks = matmulTransposesStationary(*st.op, st.flag("transpose_x")) ? freeSize(stationary->tileShape)
                                                                            : stationary->tileShape[0];
    int64_t km = moving->tileShape[0];
    if (ks && km && ks != km)
      report(Rule::MatmulOperands, st.range,
             llvm::formatv("{0} contracts over the partition dimension: stationary has {1} rows but "
                           "moving has {2}",
                           st.op->name, ks, km)
                 .str());
  }

  static std::string allowedBuffers(uint8_t mask) {
    std::string out;
    for (Buffer b : {Buffer::SBUF, Buffer::PSUM, Buffer::SharedHBM, Buffer::PrivateHBM})
      if (mask & bufferBit(b)) out += (out.empty() ? "" : " or ") + std::string(bufferName(b));
    return out;
  }

  /// Is loop `l` an ancestor of statement `s` (the statement runs inside it)?
  bool inside(int s, int l) const { return K.encloses(l, NodeRef{false, s}); }

  /// An in-place tensor_tensor accumulation (dst=x, data1=x, op=nl.add).
  static bool accumulatesInPlace(const Statement &st) {
    if (!st.op || st.op->kind != OpKind::TensorTensor) return false;
    return llvm::any_of(st.writes, [](const Access &w) { return w.isAccumulate; });
  }

  /// Does a statement inside loop `l`, other than an in-place accumulation, read tensor `t`'s storage?
  bool readInLoop(int l, int t) const {
    int storage = storageOf(K, t);
    for (const auto &other : K.stmts) {
      if (!inside(other.id, l) || accumulatesInPlace(other)) continue;
      for (const Access &r : other.reads)
        if (storageOf(K, r.tensor) == storage) return true;
    }
    return false;
  }

  void checkAffineWrites() {
    for (const auto &st : K.stmts) {
      for (const Access &w : st.writes) {
        // An in-place accumulation is order-free while nothing else in the loop reads the partial result.
        bool inPlace = w.isAccumulate && accumulatesInPlace(st);
        if (w.isAccumulate && !inPlace) continue;
        const Tensor &t = K.tensors[w.tensor];
        for (int l : K.loopNest(st.parent)) {
          const Loop &loop = K.loops[l];
          if (loop.runsAs != LoopKind::Affine) continue;
          if (inPlace && !readInLoop(l, w.tensor)) continue;
          // A tensor defined inside the loop is private to each iteration.
          if (t.scope >= 0 && (t.scope == l || K.encloses(l, NodeRef{true, t.scope}))) continue;
          // A tile allocated in another loop's body and taken out of a list (`tiles[j]`, the nki dialect's
          // replacement for block dimensions) is one of that loop's instances; which one the IR does not
          // say, so no two iterations are known to write the same one.
          if (w.throughList && t.scope >= 0 && !K.encloses(t.scope, NodeRef{false, st.id})) continue;
          if (!w.exact) continue;
          auto trip = tripCount(K, l);
          if (!trip || *trip < 2) continue;
          // Two different iterations of `l` (one access against itself: either order is the same question).
          if (!mayOverlapDir(K, w, w, laterIterationDirs(K, l))) continue;
          report(Rule::AffineOutputDep, w.range,
                 llvm::formatv("different iterations of affine_range loop L{0} ('{1}', line {2}) write "
                               "the same elements of '{3}'; index it by '{1}', accumulate with +=, or "
                               "use sequential_range",
                               l, loop.iv, lineOf(loop.headerRange.begin), tensorName(w.tensor))
                     .str());
          break;
        }
      }
    }
  }

  uint32_t lineOf(uint32_t offset) const { return K.source ? K.source->lineCol(offset).line : 0; }

  void checkScopes() {
    for (const auto &st : K.stmts) {
      for (const auto &list : {&st.reads, &st.writes})
        for (const Access &a : *list) {
          const Tensor &t = K.tensors[a.tensor];
          if (t.scope < 0 || t.isArgument || a.throughList) continue;
          if (st.parent == t.scope || K.encloses(t.scope, NodeRef{false, st.id})) continue;
          report(Rule::Scope, a.range,
                 llvm::formatv("'{0}' is defined inside loop L{1} ('{2}') and used outside it; allocate "
                               "it before the loop (with a block dimension per iteration if needed)",
                               tensorName(a.tensor), t.scope, K.loops[t.scope].iv)
                     .str());
        }
    }
  }

  void checkSbufCapacity() {
    // Allocations that live for the whole kernel or loop body all coexist in the
    // worst case; tiles created inside loops count once (one iteration's worth).
    int64_t total = 0;
    for (const auto &t : K.tensors) {
      if (t.buffer != Buffer::SBUF || t.name == "<discarded>") continue;
      auto bytes = t.totalBytesPerPartition();
      if (!bytes) continue;
      int64_t before = total;
      total = pyint::saturatingAdd(total, *bytes);
      if (before <= O.sbufBytesPerPartition && total > O.sbufBytesPerPartition)
        report(Rule::SbufCapacity, t.range,
               llvm::formatv("SBUF tensors need {0} KiB per partition from here on, more than the {1} "
                             "KiB available on {2}; the compiler will spill to HBM (consider "
                             "shrink_buffer on block dimensions)",
                             totalSbuf() / 1024, O.sbufBytesPerPartition / 1024, O.target)
                   .str());
    }
  }

  int64_t totalSbuf() const {
    int64_t total = 0;
    for (const auto &t : K.tensors)
      if (t.buffer == Buffer::SBUF && t.name != "<discarded>")
        if (auto b = t.totalBytesPerPartition()) total = pyint::saturatingAdd(total, *b);
    return total;
  }
};

} // namespace

std::vector<Diagnostic> verify(const Kernel &kernel, const VerifyOptions &options) {
  std::vector<Diagnostic> out = Verifier(kernel, options).run();
  if (!kernel.gridInstances) return out;
  // The other instances of the launch grid: each finding once, at the first instance that has it (their
  // front-end diagnostics are the kernel's already).
  std::set<std::tuple<uint32_t, uint32_t, std::string>> seen;
  for (const Diagnostic &d : out) seen.insert({d.offset, d.endOffset, d.rule});
  for (size_t i = 0; i < kernel.gridInstances->size(); ++i) {
    std::string where = "in grid instance " + pycore::LaunchGrid::at(kernel.grid, int64_t(i) + 1).instanceText() + ": ";
    for (Diagnostic &d : Verifier((*kernel.gridInstances)[i], options).run())
      if (seen.insert({d.offset, d.endOffset, d.rule}).second) {
        d.message = where + d.message;
        out.push_back(std::move(d));
      }
  }
  std::stable_sort(out.begin(), out.end(), [](auto &a, auto &b) { return a.offset < b.offset; });
  return out;
}

void printDiagnostic(llvm::raw_ostream &os, const syntax::SourceBuffer &src, const Diagnostic &d, bool withSnippet) {
  const char *sev = d.severity == Diagnostic::Error ? "error" : d.severity == Diagnostic::Warning ? "warning" : "note";
  os << src.location(d.offset) << ": " << sev << ": " << d.message;
  if (!d.rule.empty()) os << " [" << d.rule << "]";
  os << "\n";
  if (!withSnippet) return;
  syntax::LineCol lc = src.lineCol(d.offset);
  llvm::StringRef line = src.lineText(lc.line);
  os << "  " << line << "\n  ";
  for (uint32_t i = 1; i < lc.col && i - 1 < line.size(); ++i) os << (line[i - 1] == '\t' ? '\t' : ' ');
  os << "^";
  syntax::LineCol endLc = src.lineCol(d.endOffset > d.offset ? d.endOffset : d.offset);
  if (endLc.line == lc.line)
    for (uint32_t i = lc.col + 1; i < endLc.col; ++i) os << "~";
  os << "\n";
}

} // namespace accelopt::analysis
