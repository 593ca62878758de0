#include "Perf/TraceBuilder.h"

#include "Perf/Hardware.h"

#include "NKI/Rules.h"

#include "NKI/OpTable.h"
#include "NKI/Platform.h"
#include "NKI/PyCore.h"
#include "Syntax/AstWalks.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>

namespace accelopt::perf {

namespace {

using nki::Access;
using nki::Buffer;
using nki::Kernel;
using nki::Statement;
using nki::Tensor;

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

/// An integer affine in the loop counters: constant + sum(coeff * n[loop]).
struct Form {
  int64_t constant = 0;
  llvm::SmallVector<std::pair<int, int64_t>, 4> terms;

  void add(int loop, int64_t coeff) {
    if (coeff == 0) return;
    for (auto &[l, c] : terms)
      if (l == loop) {
        c += coeff;
        return;
      }
    terms.push_back({loop, coeff});
  }
  void add(const nki::Affine &a, int64_t scale) {
    constant += a.constant * scale;
    for (auto &[l, c] : a.terms) add(l, c * scale);
  }
  int64_t eval(const int64_t *counters) const {
    int64_t v = constant;
    for (auto &[l, c] : terms) v += c * counters[l];
    return v;
  }
};

/// Rows above this are tracked as one range (conservative, bounded work per access).
constexpr int64_t kMaxHbmRuns = 256;

/// One region of one instruction, compiled: block and first byte are affine
/// in the loop counters, the length is fixed.
struct RegionForm {
  TensorId tensor = 0;
  Form block;
  Form begin;
  int64_t span = 0;
  uint32_t numBlocks = 1;
  uint64_t bytesPerPartition = 0;
  uint32_t run = 0, pitch = 0; ///< HBM rows: Region::run and Region::pitch

  Region eval(const int64_t *counters) const {
    Region r;
    r.tensor = tensor;
    int64_t b = block.eval(counters);
    r.block = static_cast<uint32_t>(std::clamp<int64_t>(b, 0, int64_t(numBlocks) - 1));
    auto limit = static_cast<int64_t>(bytesPerPartition);
    int64_t first = begin.eval(counters);
    int64_t last = first + span;
    r.begin = static_cast<uint64_t>(std::clamp<int64_t>(first, 0, limit));
    r.end = static_cast<uint64_t>(std::clamp<int64_t>(last, static_cast<int64_t>(r.begin), limit));
    if (run && r.begin == static_cast<uint64_t>(first)) {
      r.run = run;
      r.pitch = pitch;
    }
    return r;
  }
};

/// Block 0 of `tensor` from first to last byte; callers add the block index.
RegionForm wholeBlockOf(TensorId tensor, const TensorInfo &info) {
  RegionForm f;
  f.tensor = tensor;
  f.numBlocks = info.numBlocks;
  f.bytesPerPartition = info.bytesPerPartition;
  f.span = static_cast<int64_t>(info.bytesPerPartition);
  return f;
}

/// One instruction a statement issues per instance.
struct InstructionTemplate {
  Instruction inst;
  llvm::SmallVector<RegionForm, 3> reads;
  llvm::SmallVector<RegionForm, 1> writes;
  /// Issued only in the first iteration of these loops (a load the compiler hoists out of them).
  llvm::SmallVector<int, 2> firstIterationOnly;
};

/// Shape facts of one access, from its tile shape.
struct TileFacts {
  uint32_t partitions = 1;
  uint64_t freeElems = 1;
  nki::DType dtype = nki::DType::Float32;
  bool onChip = true;
};

class Builder {
public:
  Builder(const Kernel &k, const TraceBuildOptions &options) : K(k), Options(options) {}

  llvm::Expected<Trace> run() {
    if (llvm::Error err = checkShapes()) return err;
    TensorIds.assign(K.tensors.size(), kUnmapped);
    Templates.resize(K.stmts.size());
    findHoistedLoads();
    findReusedTransposes();
    for (const Statement &s : K.stmts)
      if (llvm::Error err = compileWithNestedCalls(s)) return err;
    applyReusedTransposes();
    noteUnknownCalls();
    std::stable_sort(Unmodelled.begin(), Unmodelled.end(),
                     [](const UnmodelledWork &a, const UnmodelledWork &b) { return a.stmt < b.stmt; });
    for (UnmodelledWork &w : Unmodelled) BuiltTrace.addUnmodelled(std::move(w));

    // A loop whose body emits no instruction is not walked at all: 4096^3 empty iterations once took
    // 10 GB of loop markers and never ended (reliability report D5).
    LoopEmits.assign(K.loops.size(), false);
    for (const Statement &s : K.stmts)
      if (!Templates[s.id].empty())
        for (int l = s.parent; l >= 0 && !LoopEmits[l]; l = K.loops[l].parent) LoopEmits[l] = true;

    uint64_t total = 0, regions = 0;
    for (const Statement &s : K.stmts) {
      uint64_t n = llvm::SaturatingMultiply(instancesOf(s.parent), uint64_t(Templates[s.id].size()));
      total = llvm::SaturatingAdd(total, n);
      for (const InstructionTemplate &t : Templates[s.id])
        regions = llvm::SaturatingAdd(
            regions, llvm::SaturatingMultiply(instancesOf(s.parent), uint64_t(t.reads.size() + t.writes.size())));
    }
    // Loop markers are trace entries too: one per iteration plus the exit, per instance of the loop.
    uint64_t markers = 0;
    for (const nki::Loop &l : K.loops)
      if (LoopEmits[l.id] && trip(l.id) > 0)
        markers =
            llvm::SaturatingAdd(markers, llvm::SaturatingMultiply(instancesOf(l.parent), uint64_t(trip(l.id)) + 1));
    if (llvm::SaturatingAdd(total, markers) > Options.maxInstructions)
      return fail("kernel '" + K.name + "': the trace would have " + llvm::Twine(total) + " instructions and " +
                  llvm::Twine(markers) + " loop events, more than the limit of " +
                  llvm::Twine(Options.maxInstructions));
    BuiltTrace.reserve(total, regions);
    Counters.assign(std::max<size_t>(K.loops.size(), 1), 0);
    walk(K.body);
    return std::move(BuiltTrace);
  }

private:
  std::vector<bool> LoopEmits;            // per loop: some statement in its body emits instructions
  std::vector<UnmodelledWork> Unmodelled; // in statement order once the templates are compiled
  static constexpr TensorId kUnmapped = std::numeric_limits<TensorId>::max();

  const Kernel &K;
  const TraceBuildOptions &Options;
  Trace BuiltTrace;
  std::vector<TensorId> TensorIds;
  /// Per tensor: the loops whose iterations share one copy of it (a tile the compiler hoists).
  std::vector<llvm::SmallVector<int, 2>> SharedLoops;
  /// Per statement id: the loops a load into a tile it fills whole is hoisted out of.
  std::vector<llvm::SmallVector<int, 2>> HoistedLoadLoops;
  /// Per statement: the loops it is issued for only once (an invariant transpose the compiler
  /// reuses); per tensor: the loops whose iterations all access that one copy of it.
  std::vector<llvm::SmallVector<int, 2>> ReusedStmtLoops, ReusedTensorLoops;
  std::vector<std::vector<InstructionTemplate>> Templates;
  std::vector<int64_t> Counters;
  llvm::SmallVector<Region, 8> ReadBuf, WriteBuf;

  // --- shapes -------------------------------------------------------------

  llvm::Error checkShapes() const {
    // Code CPython would stop on (a module never imported) or accelopt refuses by name has no trace: say so,
    // never estimate 0 ms.
    for (const nki::Diagnostic &d : K.diagnostics)
      if (d.severity == nki::Diagnostic::Error && (d.rule == nki::Rule::Imports || d.rule == nki::Rule::Unsupported))
        return fail((K.source ? K.source->location(d.offset) : K.name) + ": error: " + d.message +
                    "; nothing to estimate");
    auto needShapes = [&](const llvm::Twine &what) { return unknownSize(what.str()); };
    for (const nki::Loop &l : K.loops)
      if (!l.tripCount.isKnown() || *l.tripCount.value < 0)
        return needShapes("the trip count of L" + llvm::Twine(l.id) + " '" + l.tripCount.str() + "'");
    for (const nki::KernelParam &p : K.params)
      if (p.tensor >= 0 && !K.tensors[p.tensor].shapeKnown) return needShapes("the shape of argument '" + p.name + "'");
    return llvm::Error::success();
  }

  /// A size the trace needs but the front end could not compute: without input shapes, ask for them;
  /// with them, say that this size is still unknown (never "needs input shapes" when they were given).
  llvm::Error unknownSize(const std::string &what) const {
    bool shapesGiven = llvm::all_of(
        K.params, [&](const nki::KernelParam &p) { return p.tensor < 0 || K.tensors[p.tensor].shapeKnown; });
    if (!shapesGiven)
      return fail("kernel '" + K.name + "' needs input shapes to build a trace (" + what +
                  " is unknown); give --inputs, --reference or --case");
    return fail("kernel '" + K.name + "': the model cannot build a trace: " + what +
                " is not known at trace time from the given input shapes (it changes between iterations of a "
                "loop, as a partial last tile does, or comes from code accelopt does not evaluate)");
  }

  int64_t trip(int loop) const { return *K.loops[loop].tripCount.value; }

  /// Instances of a statement or tensor scope directly inside `loop`.
  uint64_t instancesOf(int loop) const {
    uint64_t n = 1;
    for (int l = loop; l >= 0; l = K.loops[l].parent) n = llvm::SaturatingMultiply(n, static_cast<uint64_t>(trip(l)));
    return n;
  }

  /// A tile made inside a loop gets a buffer per iteration of each enclosing
  /// affine/static loop (the compiler rotates them); the iterations of a
  /// sequential loop reuse one buffer, so they are ordered by its reuse.
  bool rotatesBuffers(int loop) const { return K.loops[loop].runsAs != nki::LoopKind::Sequential; }
  /// Whether the copies of `tensor` (-1: a compiler temporary) rotate with the iterations of `loop`.
  bool rotatesBuffers(int loop, int tensor) const {
    return rotatesBuffers(loop) && (tensor < 0 || !llvm::is_contained(SharedLoops[tensor], loop));
  }
  uint64_t buffersOf(int loop, int tensor = -1) const {
    uint64_t n = 1;
    for (int l = loop; l >= 0; l = K.loops[l].parent)
      if (rotatesBuffers(l, tensor)) n *= static_cast<uint64_t>(trip(l));
    return n;
  }

  /// The linear buffer index inside `loop` (outermost counter slowest), scaled.
  void addInstanceIndex(Form &f, int loop, int64_t scale, int tensor = -1) const {
    int64_t stride = scale;
    for (int l = loop; l >= 0; l = K.loops[l].parent) {
      if (!rotatesBuffers(l, tensor)) continue;
      f.add(l, stride);
      stride *= trip(l);
    }
  }

  /// The compiler hoists a load out of every enclosing loop its address does not depend on, when
  /// it reads an input nothing writes into a tile nothing else writes and the hoisted copies fit SBUF
  /// (target scheduler.hoist_invariant_loads): the iterations of those loops share one copy of the
  /// tile, loaded in their first iteration. When SBUF pressure evicts a copy, the simulation loads it
  /// again from the input.
  void findHoistedLoads() {
    SharedLoops.assign(K.tensors.size(), {});
    HoistedLoadLoops.assign(K.stmts.size(), {});
    if (!Options.hoistInvariantLoads) return;
    computeLiveness();
    std::vector<unsigned> writers(K.tensors.size(), 0);
    for (const Statement &s : K.stmts)
      for (const Access &a : s.writes) ++writers[storageOf(a.tensor)];
    for (const Statement &s : K.stmts) {
      // A mask may select other elements in every iteration: such a load is left where it is.
      if (!s.op || s.parent < 0 || s.hasMask || s.kind == nki::StmtKind::Accumulate) continue;
      // `t = nl.load(...)`, or a tile allocated in the loop body and filled whole, once, by
      // `t[...] = nl.load(...)` or `nisa.dma_copy(dst=t, ...)`.
      int tileId = -1;
      if (s.writes.empty() && s.op->kind == nki::OpKind::Load && s.definesTensor >= 0)
        tileId = s.definesTensor;
      else if (s.writes.size() == 1 && (s.op->kind == nki::OpKind::Load || s.op->kind == nki::OpKind::DmaCopy) &&
               s.writes.front().exact &&
               llvm::all_of(s.writes.front().dims, [](const nki::IndexDim &d) { return d.full; }))
        tileId = s.writes.front().tensor;
      if (tileId < 0 || s.id < 0 || s.id >= static_cast<int>(K.stmts.size())) continue;
      const Tensor &tile = K.tensors[tileId];
      if (storageOf(tile.id) != tile.id || writers[tile.id] != s.writes.size() || tile.scope != s.parent ||
          !nki::isOnChip(bufferOf(tile)))
        continue;
      const Access *src = readSlot(s, nki::Slot::Data);
      if (!src && s.reads.size() == 1) src = &s.reads.front();
      if (!src || !src->exact) continue;
      const Tensor &input = K.tensors[storageOf(src->tensor)];
      if (!input.isArgument || writers[input.id] || !nki::isHBM(bufferOf(input))) continue;
      auto usesLoop = [&](int loop) {
        for (const nki::IndexDim &d : src->dims)
          if (!d.full)
            for (auto &[l, c] : d.base.terms)
              if (l == loop && c != 0) return true;
        return false;
      };
      auto layout = layoutOf(tile);
      if (!layout) {
        llvm::consumeError(layout.takeError());
        continue;
      }
      // Hoisted out of `l`, the tile needs a copy per iteration of the loops inside `l` it still
      // rotates with, all live at once across `l`: the compiler hoists only when they fit SBUF beside
      // what else is live in `l` at its peak (tiles the loop body makes, tensors live across the loop,
      // loads hoisted before).
      uint64_t copies = 1;
      for (int l = s.parent; l >= 0; l = K.loops[l].parent) {
        uint64_t hoisted = copies * layout->blocksPerInstance * layout->bytesPerPartition;
        if (!usesLoop(l) && hoisted + peakLiveSbuf(l, tile.id) <= Options.hoistBytesPerPartition) {
          SharedLoops[tile.id].push_back(l);
          HoistedLoadLoops[s.id].push_back(l);
          // From now on the copies are live across `l`, for the next decisions.
          LiveBytes[tile.id] = hoisted;
          LiveScope[tile.id] = K.loops[l].parent;
          TensorSpan[tile.id].first = std::min(TensorSpan[tile.id].first, LoopSpan[l].first);
          TensorSpan[tile.id].second = std::max(TensorSpan[tile.id].second, LoopSpan[l].second);
        } else if (rotatesBuffers(l))
          copies *= static_cast<uint64_t>(trip(l));
      }
    }
  }

  // --- SBUF liveness in program order (what the hoisting decisions check) ----

  /// Program position of every statement; per loop, the positions of its body [first, last]; per
  /// on-chip tensor (by storage), the positions of its first and last access, the bytes per partition
  /// it holds while live (one instance: its blocks in one iteration of its scope), and the loop it is
  /// made in (-1: the kernel), which a hoisted load moves outward.
  std::vector<int> StmtPos;
  std::vector<std::pair<int, int>> LoopSpan, TensorSpan;
  std::vector<uint64_t> LiveBytes, BlockBytes;
  std::vector<int> LiveScope;

  void placeInProgramOrder(const std::vector<nki::NodeRef> &body, int &next) {
    for (const nki::NodeRef &node : body) {
      if (!node.isLoop) {
        StmtPos[node.index] = next++;
        continue;
      }
      int first = next;
      placeInProgramOrder(K.loops[node.index].body, next);
      LoopSpan[node.index] = {first, next - 1};
    }
  }

  void computeLiveness() {
    StmtPos.assign(K.stmts.size(), -1);
    LoopSpan.assign(K.loops.size(), {0, -1});
    TensorSpan.assign(K.tensors.size(), {std::numeric_limits<int>::max(), -1});
    LiveBytes.assign(K.tensors.size(), 0);
    BlockBytes.assign(K.tensors.size(), 0);
    LiveScope.assign(K.tensors.size(), -1);
    int next = 0;
    placeInProgramOrder(K.body, next);
    for (const Statement &s : K.stmts) {
      int p = s.id >= 0 && s.id < int(StmtPos.size()) ? StmtPos[s.id] : -1;
      if (p < 0) continue;
      auto touch = [&](int tensor) {
        if (tensor < 0) return;
        std::pair<int, int> &span = TensorSpan[storageOf(tensor)];
        span.first = std::min(span.first, p);
        span.second = std::max(span.second, p);
      };
      for (const Access &a : s.reads) touch(a.tensor);
      for (const Access &a : s.writes) touch(a.tensor);
      touch(s.definesTensor);
    }
    for (const Tensor &t : K.tensors) {
      if (t.isArgument || storageOf(t.id) != t.id || bufferOf(t) != Buffer::SBUF || TensorSpan[t.id].second < 0)
        continue;
      auto layout = layoutOf(t);
      if (!layout) {
        llvm::consumeError(layout.takeError());
        continue;
      }
      LiveBytes[t.id] = layout->blocksPerInstance * layout->bytesPerPartition;
      BlockBytes[t.id] = layout->bytesPerPartition;
      LiveScope[t.id] = t.scope;
    }
    // A tile accessed inside a loop nested in its scope is live until that loop ends: every iteration
    // reads it.
    for (const Statement &s : K.stmts) {
      auto extend = [&](int tensor) {
        if (tensor < 0) return;
        int t = storageOf(tensor);
        if (LiveBytes[t] == 0) return;
        for (int l = s.parent; l >= 0 && l != LiveScope[t]; l = K.loops[l].parent) {
          if (LoopSpan[l].second < LoopSpan[l].first) continue;
          TensorSpan[t].first = std::min(TensorSpan[t].first, LoopSpan[l].first);
          TensorSpan[t].second = std::max(TensorSpan[t].second, LoopSpan[l].second);
        }
      };
      for (const Access &a : s.reads) extend(a.tensor);
      for (const Access &a : s.writes) extend(a.tensor);
    }
  }

  /// The peak SBUF bytes per partition live during one iteration of `loop`, leaving out tensor
  /// `except`: a tensor made outside the loop that the loop accesses (or that is live across it)
  /// holds its bytes in every iteration; a tile made inside the loop from its first access to its
  /// last (one instance of it: the iterations of an inner loop reuse its memory). A tensor larger than
  /// SBUF is never resident whole: the compiler streams it a block at a time (sinks its loads or spills
  /// it, scheduler.sink_loads_that_do_not_fit), so it holds one block.
  uint64_t peakLiveSbuf(int loop, int except) const {
    auto [lo, hi] = LoopSpan[loop];
    if (hi < lo) return 0;
    uint64_t across = 0;
    std::vector<int64_t> delta(static_cast<size_t>(hi - lo + 2), 0);
    for (size_t t = 0; t < LiveBytes.size(); ++t) {
      auto [first, last] = TensorSpan[t];
      if (LiveBytes[t] == 0 || int(t) == except || last < lo || first > hi) continue;
      auto bytes = static_cast<int64_t>(LiveBytes[t] > Options.hoistBytesPerPartition ? BlockBytes[t] : LiveBytes[t]);
      if (LiveScope[t] < 0 || !nestedIn(LiveScope[t], loop)) {
        across += static_cast<uint64_t>(bytes);
        continue;
      }
      delta[std::max(first, lo) - lo] += bytes;
      delta[std::min(last, hi) - lo + 1] -= bytes;
    }
    int64_t live = 0, peak = 0;
    for (int64_t d : delta) peak = std::max(peak, live += d);
    return across + static_cast<uint64_t>(peak);
  }

  bool nestedIn(int loop, int ancestor) const {
    for (int l = loop; l >= 0; l = K.loops[l].parent)
      if (l == ancestor) return true;
    return false;
  }

  static bool sameAffine(const nki::Affine &a, const nki::Affine &b) {
    return a.known && b.known && a.constant == b.constant && a.terms == b.terms;
  }

  static bool accessUsesLoop(const Access &a, int loop) {
    for (const nki::IndexDim &d : a.dims)
      if (!d.full && (!d.base.known || d.base.coeff(loop) != 0)) return true;
    return false;
  }

  /// Whether the value an explicit transpose reads through `a` is the same in every iteration of
  /// `loop`: a tile loaded (in the same iteration, into the block the transpose reads) from an input
  /// nothing writes at an address that does not depend on `loop`, or a tile written only outside
  /// `loop` and read at an index that does not depend on it (the identity).
  bool invariantRead(const Access &a, int loop, const std::vector<llvm::SmallVector<int, 2>> &writers) const {
    int tile = storageOf(a.tensor);
    if (!a.exact || !nki::isOnChip(bufferOf(K.tensors[tile])) || writers[tile].empty()) return false;
    bool writtenInside = llvm::any_of(writers[tile], [&](int w) { return nestedIn(K.stmts[w].parent, loop); });
    if (!writtenInside) return !accessUsesLoop(a, loop);
    if (writers[tile].size() != 1) return false;
    const Statement &w = K.stmts[writers[tile].front()];
    if (!w.op || w.op->kind != nki::OpKind::Load || w.hasMask || w.kind == nki::StmtKind::Accumulate) return false;
    const Access *src = readSlot(w, nki::Slot::Data);
    if (!src && w.reads.size() == 1) src = &w.reads.front();
    if (!src || !src->exact || accessUsesLoop(*src, loop)) return false;
    const Tensor &input = K.tensors[storageOf(src->tensor)];
    if (!input.isArgument || !writers[input.id].empty() || !nki::isHBM(bufferOf(input))) return false;
    // The transpose reads the block this iteration's load wrote, at an offset the loop does not move.
    int blockDims = K.tensors[a.tensor].blockDims();
    for (int d = blockDims; d < int(a.dims.size()); ++d)
      if (!a.dims[d].full && (!a.dims[d].base.known || a.dims[d].base.coeff(loop) != 0)) return false;
    if (w.writes.empty()) return true; // `t = nl.load(...)`: the current iteration's copy of the tile
    const Access &dst = w.writes.front();
    if (dst.tensor != a.tensor || int(dst.dims.size()) < blockDims || int(a.dims.size()) < blockDims) return false;
    for (int d = 0; d < blockDims; ++d)
      if (dst.dims[d].full != a.dims[d].full || !sameAffine(dst.dims[d].base, a.dims[d].base)) return false;
    return true;
  }

  /// The compiler computes an explicit TensorE transpose of a loop-invariant loaded tile once for
  /// the loop (target scheduler.reuse_invariant_transposes): the statement is issued in the loop's
  /// first iteration only, and every access to its result, which nothing else writes, reads that
  /// iteration's copy. nl.matmul's own transpose of its x operand is not reused (NKIBench
  /// matmul_add_rmsnorm and add_rmsnorm_matmul do all of theirs on trn1).
  ///
  /// The same for any other engine instruction whose operands are invariant (target
  /// scheduler.hoist_invariant_compute): its result is then kept for every iteration of the loops
  /// inside `l`, beside the operands those copies are computed from and one iteration's other tiles,
  /// and the compiler hoists only when all of them fit SBUF.
  void findReusedTransposes() {
    ReusedStmtLoops.assign(K.stmts.size(), {});
    ReusedTensorLoops.assign(K.tensors.size(), {});
    if (!Options.reuseInvariantTransposes && !Options.hoistInvariantCompute) return;
    std::vector<llvm::SmallVector<int, 2>> writers(K.tensors.size()), accessors(K.tensors.size());
    for (const Statement &s : K.stmts) {
      auto note = [&](std::vector<llvm::SmallVector<int, 2>> &list, int tensor) {
        int t = storageOf(tensor);
        if (!llvm::is_contained(list[t], s.id)) list[t].push_back(s.id);
      };
      bool alloc = s.op && s.op->kind == nki::OpKind::Alloc;
      for (const Access &a : s.writes) {
        note(writers, a.tensor);
        note(accessors, a.tensor);
      }
      for (const Access &a : s.reads) note(accessors, a.tensor);
      if (s.definesTensor >= 0 && !alloc) {
        note(writers, s.definesTensor);
        note(accessors, s.definesTensor);
      }
    }
    for (const Statement &s : K.stmts) {
      bool transpose = s.op && (s.op->kind == nki::OpKind::Transpose ||
                                (s.op->kind == nki::OpKind::Matmul && s.flag("is_transpose")));
      bool compute = s.op && hoistableCompute(s.op->kind);
      if (!(transpose ? Options.reuseInvariantTransposes : compute && Options.hoistInvariantCompute) || s.parent < 0 ||
          s.hasMask || s.kind == nki::StmtKind::Accumulate)
        continue;
      int result = s.writes.size() == 1                       ? storageOf(s.writes.front().tensor)
                   : s.writes.empty() && s.definesTensor >= 0 ? storageOf(s.definesTensor)
                                                              : -1;
      if (result < 0 || K.tensors[result].isArgument || !nki::isOnChip(bufferOf(K.tensors[result])) ||
          writers[result].size() != 1)
        continue;
      auto layout = layoutOf(K.tensors[result]);
      if (!layout) {
        llvm::consumeError(layout.takeError());
        continue;
      }
      std::vector<const Access *> operands = operandReads(s);
      // Reused for `l`, the result needs a copy per iteration of the loops inside `l` it still rotates
      // with, all kept at once: the compiler reuses it only when they fit SBUF (the NKIBench matmul,
      // whose 32 x 5 x 8 transposes of 512 B per partition would need 640 KiB, does every one).
      uint64_t copies = 1;
      for (int l = s.parent; l >= 0; l = K.loops[l].parent) {
        nki::LoopKind kind = K.loops[l].kind;
        // Code motion moves the instruction out of one loop at a time: not out of a sequential_range
        // (the compiler leaves it as written), nor past an affine loop it is not invariant in.
        // Unrolled loops (static_range, the nki dialect's `range`) are no loops to it; nor, as this pass
        // was measured (d9fbbad), 0.1's `range`.
        bool unrolled = K.loops[l].runsAs == nki::LoopKind::Static || kind == nki::LoopKind::PyRange;
        if (compute && kind == nki::LoopKind::Sequential) break;
        if (!compute && !rotatesBuffers(l)) continue;
        bool invariant =
            !operands.empty() && llvm::all_of(operands, [&](const Access *a) { return invariantRead(*a, l, writers); });
        invariant &= llvm::all_of(accessors[result], [&](int u) { return nestedIn(K.stmts[u].parent, l); });
        uint64_t bytes = copies * layout->bytesPerPartition;
        if (compute) {
          // Every iteration writes the same value to the same place, and the copies live beside their operands.
          invariant &= llvm::none_of(s.writes, [&](const Access &w) { return accessUsesLoop(w, l); });
          llvm::SmallVector<int, 4> seen;
          for (const Access *a : operands) {
            int t = storageOf(a->tensor);
            if (llvm::is_contained(seen, t)) continue;
            seen.push_back(t);
            auto operand = layoutOf(K.tensors[t]);
            if (!operand) {
              llvm::consumeError(operand.takeError());
              invariant = false;
              continue;
            }
            bool perInner = K.tensors[t].scope >= 0 && K.tensors[t].scope != l && nestedIn(K.tensors[t].scope, l);
            bytes += (perInner ? copies : 1) * operand->blocksPerInstance * operand->bytesPerPartition;
          }
          // ... and beside one iteration's working set: every other SBUF tile the loop body makes.
          for (const Tensor &t : K.tensors) {
            if (t.isArgument || t.scope < 0 || !nestedIn(t.scope, l) || storageOf(t.id) != t.id || t.id == result ||
                llvm::is_contained(seen, t.id) || bufferOf(t) != Buffer::SBUF)
              continue;
            auto tile = layoutOf(t);
            if (!tile) {
              llvm::consumeError(tile.takeError());
              continue;
            }
            bytes += tile->blocksPerInstance * tile->bytesPerPartition;
          }
        }
        invariant &= bytes <= Options.hoistBytesPerPartition;
        if (!invariant && compute && !unrolled) break;
        if (!invariant) {
          copies *= static_cast<uint64_t>(trip(l));
          continue;
        }
        ReusedStmtLoops[s.id].push_back(l);
        ReusedTensorLoops[result].push_back(l);
        if (K.tensors[result].scope >= 0 && !llvm::is_contained(SharedLoops[result], l))
          SharedLoops[result].push_back(l);
      }
    }
  }

  /// Engine instructions that compute a value from their operands alone (no DMA, no matmul, no
  /// random numbers, no accumulation across iterations).
  static bool hoistableCompute(nki::OpKind kind) {
    switch (kind) {
    case nki::OpKind::Copy:
    case nki::OpKind::Activation:
    case nki::OpKind::TensorTensor:
    case nki::OpKind::TensorScalar:
    case nki::OpKind::Reduce:
    case nki::OpKind::Scan:
    case nki::OpKind::Reciprocal:
    case nki::OpKind::Select:
    case nki::OpKind::BnStats:
    case nki::OpKind::BnAggr: return true;
    default: return false;
    }
  }

  /// Issues the reused transposes and hoisted instructions once and points every access to their
  /// results at that copy.
  void applyReusedTransposes() {
    if (!Options.reuseInvariantTransposes && !Options.hoistInvariantCompute) return;
    std::vector<llvm::SmallVector<int, 2>> byId(BuiltTrace.tensors().size());
    for (size_t t = 0; t < K.tensors.size(); ++t)
      if (!ReusedTensorLoops[t].empty() && TensorIds[t] != kUnmapped) byId[TensorIds[t]] = ReusedTensorLoops[t];
    auto collapse = [&](RegionForm &f) {
      const auto &loops = byId[f.tensor];
      if (loops.empty()) return;
      auto drop = [&](Form &form) {
        llvm::erase_if(form.terms,
                       [&](const std::pair<int, int64_t> &t) { return llvm::is_contained(loops, t.first); });
      };
      drop(f.block);
      drop(f.begin);
    };
    for (const Statement &s : K.stmts)
      for (InstructionTemplate &t : Templates[s.id]) {
        t.firstIterationOnly.append(ReusedStmtLoops[s.id].begin(), ReusedStmtLoops[s.id].end());
        for (RegionForm &f : t.reads) collapse(f);
        for (RegionForm &f : t.writes) collapse(f);
      }
  }

  int storageOf(int t) const {
    while (K.tensors[t].aliasOf >= 0 && K.tensors[t].aliasOf != t) t = K.tensors[t].aliasOf;
    return t;
  }

  static Buffer bufferOf(const Tensor &t) { return t.buffer == Buffer::Unknown ? Buffer::SBUF : t.buffer; }

  /// Whether every dimension of T is known when the kernel is traced (not bounded by a run-time value).
  static bool shapeKnown(const Tensor &t) {
    return llvm::all_of(t.shape, [](const nki::SymInt &d) { return d.isKnown() && *d.value >= 0; });
  }

  llvm::Expected<std::vector<int64_t>> shapeOf(const Tensor &t) const {
    if (!shapeKnown(t)) return unknownSize("the shape of '" + t.name + "' " + t.shapeString());
    std::vector<int64_t> shape;
    for (const nki::SymInt &d : t.shape) shape.push_back(*d.value);
    return shape;
  }

  /// Blocks of one instance of an on-chip tensor, and its blocks in all.
  struct OnChipLayout {
    uint64_t blocksPerInstance = 1;
    uint64_t instances = 1;
    uint32_t partitions = 1;
    uint64_t bytesPerPartition = 0;
  };

  llvm::Expected<OnChipLayout> layoutOf(const Tensor &t) const {
    auto shape = shapeOf(t);
    if (!shape) return shape.takeError();
    OnChipLayout l;
    int par = std::clamp(t.parDim, 0, std::max(0, int(shape->size()) - 1));
    for (int d = 0; d < par; ++d) l.blocksPerInstance *= static_cast<uint64_t>((*shape)[d]);
    l.partitions = shape->empty() ? 1 : static_cast<uint32_t>(std::max<int64_t>((*shape)[par], 1));
    uint64_t elems = 1;
    for (size_t d = par + 1; d < shape->size(); ++d) elems *= static_cast<uint64_t>((*shape)[d]);
    l.bytesPerPartition = std::max<uint64_t>(elems, 1) * nki::dtypeBytes(t.dtype);
    // A tile made inside a loop is a fresh buffer in every iteration.
    if (!t.isArgument) l.instances = buffersOf(t.scope, t.id);
    return l;
  }

  llvm::Expected<TensorId> tensorId(int id) {
    int storage = storageOf(id);
    if (TensorIds[storage] != kUnmapped) return TensorIds[storage];
    const Tensor &t = K.tensors[storage];
    Buffer buffer = bufferOf(t);
    TensorInfo info;
    info.buffer = buffer;
    info.name = t.name;
    if (info.name.empty()) info.name.append("t").append(std::to_string(t.id));
    if (nki::isHBM(buffer)) {
      auto shape = shapeOf(t);
      if (!shape) return shape.takeError();
      uint64_t elems = 1;
      for (int64_t d : *shape) elems *= static_cast<uint64_t>(d);
      info.numBlocks = 1;
      info.partitions = 1;
      info.bytesPerPartition = std::max<uint64_t>(elems, 1) * nki::dtypeBytes(t.dtype);
    } else {
      auto l = layoutOf(t);
      if (!l) return l.takeError();
      // A loop that never runs (or a zero block dim) still declares one block.
      uint64_t blocks = std::max<uint64_t>(l->blocksPerInstance * l->instances, 1);
      if (blocks >= (1u << 30))
        return fail("tensor '" + info.name + "' has too many blocks (" + llvm::Twine(blocks) + ")");
      info.numBlocks = static_cast<uint32_t>(blocks);
      info.partitions = static_cast<uint16_t>(std::min<uint32_t>(l->partitions, 65535));
      info.bytesPerPartition = l->bytesPerPartition;
    }
    TensorId id2 = BuiltTrace.addTensor(std::move(info));
    TensorIds[storage] = id2;
    return id2;
  }

  // --- accesses -----------------------------------------------------------

  /// Element range [lo, hi] of one index dimension relative to its base.
  static void dimExtent(const nki::IndexDim &d, int64_t size, bool &useBase, int64_t &lo, int64_t &hi) {
    if (d.full || !d.base.known) {
      useBase = false;
      lo = 0;
      hi = std::max<int64_t>(size - 1, 0);
      return;
    }
    useBase = true;
    lo = hi = 0;
    for (const nki::ArangeTerm &a : d.aranges) {
      int64_t reach = a.coeff * (a.extent - 1);
      lo += std::min<int64_t>(0, reach);
      hi += std::max<int64_t>(0, reach);
    }
  }

  /// Compiles access `a` into a region form: the block index and the first
  /// byte are affine in the loop counters, the length is fixed.
  llvm::Expected<RegionForm> compileAccess(const Access &a) {
    auto id = tensorId(a.tensor);
    if (!id) return id.takeError();
    const Tensor &view = K.tensors[a.tensor];
    auto shape = shapeOf(view);
    if (!shape) return shape.takeError();
    const TensorInfo &info = BuiltTrace.tensors()[*id];
    RegionForm f;
    f.tensor = *id;
    f.numBlocks = info.numBlocks;
    f.bytesPerPartition = info.bytesPerPartition;
    int64_t elemBytes = nki::dtypeBytes(view.dtype);
    int rank = int(shape->size());
    bool hbm = nki::isHBM(info.buffer);
    int par = hbm ? -1 : std::clamp(view.parDim, 0, std::max(0, rank - 1));

    // Free (or, for HBM, all) dimensions: linear element offsets in the row.
    // The contiguous run ends at the innermost dim the tile does not cover whole; its pitch is the
    // stride of the next dim out that the tile spans (out[:, r, :] of a [P, R, N] tensor: runs of N
    // elements every R * N).
    int64_t stride = 1, spanElems = 0, runElems = 0, pitchElems = 0;
    bool runEnded = false;
    for (int d = rank - 1; d > par; --d) {
      nki::IndexDim full;
      full.full = true;
      const nki::IndexDim &dim = d < int(a.dims.size()) ? a.dims[d] : full;
      bool useBase;
      int64_t lo, hi;
      dimExtent(dim, (*shape)[d], useBase, lo, hi);
      if (useBase) f.begin.add(dim.base, stride * elemBytes);
      f.begin.constant += lo * stride * elemBytes;
      spanElems += (hi - lo) * stride;
      if (!runEnded) {
        runElems = (hi - lo + 1) * stride;
        runEnded = hi - lo + 1 < (*shape)[d];
      } else if (pitchElems == 0 && hi > lo) {
        pitchElems = stride;
      }
      stride *= (*shape)[d];
    }
    f.span = (spanElems + 1) * elemBytes;
    // A tile of some columns of several rows of an HBM tensor touches one run per row: tiles side by
    // side in a row are disjoint although their first-to-last ranges overlap.
    int64_t pitchBytes = pitchElems * elemBytes;
    if (hbm && runElems * elemBytes < pitchBytes && f.span > pitchBytes && pitchBytes <= UINT32_MAX &&
        f.span / pitchBytes < kMaxHbmRuns) {
      f.run = static_cast<uint32_t>(runElems * elemBytes);
      f.pitch = static_cast<uint32_t>(pitchBytes);
    }
    if (hbm) return f;

    // Block dimensions, then the instance of a tile made inside a loop.
    int64_t blockStride = 1;
    for (int d = par - 1; d >= 0; --d) {
      if (d < int(a.dims.size())) {
        const nki::IndexDim &dim = a.dims[d];
        if (!dim.full && dim.base.known) {
          f.block.add(dim.base, blockStride);
          int64_t lo = 0;
          for (const nki::ArangeTerm &t : dim.aranges) lo += std::min<int64_t>(0, t.coeff * (t.extent - 1));
          f.block.constant += lo * blockStride;
        }
      }
      blockStride *= (*shape)[d];
    }
    const Tensor &storage = K.tensors[storageOf(a.tensor)];
    if (!storage.isArgument && storage.scope >= 0) addInstanceIndex(f.block, storage.scope, blockStride, storage.id);
    return f;
  }

  /// The whole current-instance block of a tile a statement creates.
  llvm::Expected<RegionForm> wholeTile(int tensor) {
    auto id = tensorId(tensor);
    if (!id) return id.takeError();
    const TensorInfo &info = BuiltTrace.tensors()[*id];
    RegionForm f = wholeBlockOf(*id, info);
    const Tensor &t = K.tensors[tensor];
    int storage = storageOf(tensor);
    if (t.scope >= 0 && !nki::isHBM(info.buffer))
      addInstanceIndex(f.block, t.scope, info.numBlocks / std::max<uint64_t>(buffersOf(t.scope, storage), 1), storage);
    return f;
  }

  /// A compiler temporary of one statement: one block per statement instance.
  llvm::Expected<RegionForm> scratch(const Statement &s, Buffer buffer, uint32_t partitions, uint64_t bytesPerPartition,
                                     const char *what) {
    TensorInfo info;
    info.buffer = buffer;
    uint64_t instances = std::max<uint64_t>(buffersOf(s.parent), 1);
    if (instances >= (1u << 30)) return fail("too many instances of S" + llvm::Twine(s.id));
    info.numBlocks = static_cast<uint32_t>(instances);
    info.partitions = static_cast<uint16_t>(std::clamp<uint32_t>(partitions, 1, 65535));
    info.bytesPerPartition = std::max<uint64_t>(bytesPerPartition, 1);
    info.name.append("S").append(std::to_string(s.id)).append(".").append(what);
    TensorId id = BuiltTrace.addTensor(std::move(info));
    RegionForm f = wholeBlockOf(id, BuiltTrace.tensors()[id]);
    addInstanceIndex(f.block, s.parent, 1);
    return f;
  }

  TileFacts facts(const Access &a) const {
    TileFacts t;
    const Tensor &tensor = K.tensors[a.tensor];
    t.dtype = tensor.dtype;
    t.onChip = nki::isOnChip(bufferOf(K.tensors[storageOf(a.tensor)]));
    std::vector<int64_t> shape = a.tileShape;
    if (shape.empty() || std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d <= 0; })) {
      // Fall back to the tensor's own tile shape.
      shape.clear();
      int start = std::max(0, tensor.blockDims());
      for (size_t d = start; d < tensor.shape.size(); ++d) shape.push_back(tensor.shape[d].value.value_or(1));
    }
    if (shape.empty()) return t;
    t.partitions = static_cast<uint32_t>(std::max<int64_t>(shape[0], 1));
    for (size_t d = 1; d < shape.size(); ++d) t.freeElems *= static_cast<uint64_t>(std::max<int64_t>(shape[d], 1));
    return t;
  }

  // --- unmodelled work -----------------------------------------------------

  int32_t lineOf(uint32_t offset) const { return K.source ? static_cast<int32_t>(K.source->lineCol(offset).line) : -1; }
  std::string textOf(syntax::ByteRange range) const {
    std::string text = K.source ? K.source->slice(range).str() : std::string();
    std::replace(text.begin(), text.end(), '\n', ' ');
    if (text.size() > 90) text = text.substr(0, 87) + "...";
    return text;
  }
  void unmodelled(const Statement &s, syntax::ByteRange what, const std::string &reason) {
    for (const UnmodelledWork &w : Unmodelled)
      if (w.stmt == s.id && w.reason == reason) return;
    Unmodelled.push_back({s.id, lineOf(s.range.begin), textOf(what.empty() ? s.range : what), reason});
  }
  llvm::Error skipped(const Statement &s, const std::string &reason) {
    unmodelled(s, s.range, reason);
    return llvm::Error::success();
  }

  /// Calls the front end does not know and code it could not analyse at trace time (a condition
  /// it cannot decide) leave their work out of the trace.
  void noteUnknownCalls() {
    for (const nki::Diagnostic &d : K.diagnostics) {
      bool unknownCall = d.rule == "unknown-api";
      // A call of a function from a module the kernel imports that was not found next to it (the wording of
      // nki::ModuleImports, NKI/Imports.cpp): whatever it does is not in the IR.
      bool unfollowed = d.rule == "host-code" && llvm::StringRef(d.message).startswith("module '") &&
                        llvm::StringRef(d.message).contains("was not found next to");
      if (!unknownCall && !unfollowed && !(d.rule == "trace-time" && d.severity == nki::Diagnostic::Warning)) continue;
      for (const Statement &s : K.stmts)
        if (s.range.contains(d.offset)) {
          syntax::ByteRange at{d.offset, std::max(d.offset, d.endOffset)};
          unmodelled(s, at,
                     unknownCall ? std::string("a call the model does not know; its work is not traced")
                                 : "not analysed at trace time (" + d.message + ")");
          break;
        }
    }
  }

  /// Calls nested in another call's arguments (`nl.store(out, nl.exp(nl.load(a)))`) are one IR
  /// statement whose inner results are tiles of its own: each inner call is traced as a statement
  /// of its own, innermost first, then the outer call reads their tiles.
  llvm::Error compileWithNestedCalls(const Statement &s) {
    // A tile whose shape is not known at trace time (a slice bounded by a run-time value) has no layout:
    // the statements that touch it are left out of the estimate, by name, and the rest is still estimated.
    llvm::SmallVector<int, 8> touched{s.definesTensor};
    for (const auto *list : {&s.reads, &s.writes})
      for (const Access &a : *list) touched.push_back(a.tensor);
    for (int id : touched)
      if (id >= 0) {
        const Tensor &t = K.tensors[storageOf(id)];
        if (!shapeKnown(t))
          return skipped(s, "a tile whose shape is not known at trace time ('" + (t.name.empty() ? "<tile>" : t.name) +
                                "' " + t.shapeString() + ")");
      }
    // A statement that reads tiles without an NKI call computes with a function the model does not
    // see into (a helper function of the kernel file, say).
    if (!s.op && !s.reads.empty() && s.writes.empty() &&
        (s.kind == nki::StmtKind::Assign || s.kind == nki::StmtKind::Python))
      unmodelled(s, s.range, "computes with a call the model does not trace into");
    // A call statement of a function the kernel defines (`body(i)`) runs code the model does not see.
    if (!s.op && s.kind == nki::StmtKind::Python && s.syntax && s.syntax->kind == syntax::StmtKind::Expr &&
        s.syntax->value && s.syntax->value->kind == syntax::ExprKind::Call) {
      // A statement traced from another file's function has its syntax in that file.
      const nki::ForeignCall *from = K.foreignOf({false, s.id});
      const syntax::SourceBuffer *text = from ? from->source : K.source;
      llvm::StringRef callee = text ? text->slice(s.syntax->value->range) : llvm::StringRef();
      callee = callee.take_until([](char c) { return c == '('; }).trim();
      auto [receiver, method] = callee.rsplit('.');
      bool listMutation = !method.empty() && nki::pycore::isListMutator(method) &&
                          llvm::all_of(receiver, [](char c) { return llvm::isAlnum(c) || c == '_'; });
      // The front end traced a function defined in the kernel in place: its statements follow the call.
      const syntax::Stmt *inlined = K.def && size_t(s.id) + 1 < K.stmts.size()
                                        ? nki::pycore::nestedFunctionAt(*K.def, K.stmts[size_t(s.id) + 1].range.begin)
                                        : nullptr;
      // A module-level function it called (a sub-kernel) was traced in place too: the next statement lies
      // outside the kernel's source.
      bool nextOutsideKernel = false;
      if (K.def && size_t(s.id) + 1 < K.stmts.size()) {
        uint32_t next = K.stmts[size_t(s.id) + 1].range.begin;
        nextOutsideKernel = next < K.def->range.begin || next >= K.def->range.end;
        // A function of another file was traced in place: the next statement is that call's.
        int nextForeign = K.stmts[size_t(s.id) + 1].foreign;
        nextOutsideKernel |= nextForeign >= 0 && nextForeign != s.foreign;
      }
      // The call is the statement itself (`body(i)`) or nested in its expressions (`nl.add(load(i), 1)`).
      bool traced = false;
      if (inlined || nextOutsideKernel)
        syntax::forEachExpr(s.syntax, [&](const syntax::Expr *e) {
          bool named =
              e->kind == syntax::ExprKind::Call && e->base &&
              (e->base->kind == syntax::ExprKind::Name || (!inlined && e->base->kind == syntax::ExprKind::Attribute));
          traced |= named && (!inlined || e->base->name == inlined->name);
        });
      if (callee != "print" && callee != "pass" && !listMutation && !traced)
        unmodelled(s, s.range, "a call the model does not trace into");
    }
    // An `.ap()` view spans its whole tensor (every dimension `full`) with a pattern of known counts: which
    // elements is left open, how many is not, so it moves a known number of bytes. Any other inexact
    // access (a gather through run-time row numbers, an unresolved index) leaves the model guessing.
    auto unsized = [&](const Access &a) {
      bool patterned = !a.tileShape.empty() && llvm::all_of(a.tileShape, [](int64_t d) { return d > 0; }) &&
                       llvm::all_of(a.dims, [](const nki::IndexDim &d) { return d.full; });
      return !a.exact && !patterned && !indirectSized(s, a);
    };
    for (const Access &a : s.reads)
      if (unsized(a)) unmodelled(s, a.range, "an access the model cannot size (an index it does not resolve)");
    for (const Access &a : s.writes)
      if (unsized(a)) unmodelled(s, a.range, "an access the model cannot size (an index it does not resolve)");
    auto ownTile = [&](int t) {
      const Tensor &tensor = K.tensors[t];
      return tensor.isTile && tensor.definedBy == s.id;
    };
    bool nested = std::any_of(s.reads.begin(), s.reads.end(), [&](const Access &a) { return ownTile(a.tensor); });
    if (!nested) return compileStatement(s);

    std::vector<bool> claimed(s.reads.size(), false), readTile(K.tensors.size(), false);
    for (size_t i = 0; i < s.reads.size(); ++i) {
      const Access &a = s.reads[i];
      if (!ownTile(a.tensor) || readTile[a.tensor]) continue;
      readTile[a.tensor] = true;
      const Tensor &tile = K.tensors[a.tensor];
      auto inside = [&](const Access &r) {
        return r.range.begin >= tile.range.begin && r.range.end <= tile.range.end && !r.range.empty();
      };
      Statement inner;
      inner.id = s.id;
      inner.kind = nki::StmtKind::Op;
      inner.parent = s.parent;
      inner.range = s.range;
      inner.definesTensor = tile.id;
      inner.hasMask = s.hasMask;
      for (size_t j = 0; j < i; ++j)
        if (!claimed[j] && inside(s.reads[j])) {
          inner.reads.push_back(s.reads[j]);
          claimed[j] = true;
        }
      // The front end records the row that computed the tile (`nl.exp(x)`, `a * b`); else the callee's
      // spelling finds it.
      inner.op = tile.producer;
      llvm::StringRef call = K.source ? K.source->slice(tile.range) : llvm::StringRef();
      std::string callee = call.take_until([](char c) { return c == '('; }).trim().str();
      if (!inner.op) inner.op = nki::lookupOp(callee);
      // A tile method (`row.broadcast_to(shape)`) is in the op table as "tile.<method>".
      if (!inner.op && callee.find('.') != std::string::npos)
        inner.op = nki::lookupOp("tile" + callee.substr(callee.rfind('.')));
      if (!inner.op) {
        unmodelled(s, tile.range, "a call nested in another call's arguments that the model does not know");
        continue;
      }
      inner.callee = std::string(inner.op->name);
      if (llvm::Error err = compileStatement(inner)) return err;
    }
    Statement outer = s;
    outer.reads.clear();
    for (size_t i = 0; i < s.reads.size(); ++i)
      if (!claimed[i]) outer.reads.push_back(s.reads[i]);
    // The statement's own result is the one tile of its own it does not read.
    if (outer.definesTensor >= 0 && ownTile(outer.definesTensor) && readTile[outer.definesTensor]) {
      outer.definesTensor = -1;
      for (const Tensor &t : K.tensors)
        if (ownTile(t.id) && !readTile[t.id]) outer.definesTensor = t.id;
    }
    return compileStatement(outer);
  }

  /// The on-chip tiles whose values index access `a` of `s` (`t[idx_tile, i_f]`: an indirect DMA, a
  /// gather or scatter through run-time row numbers): the reads of `s` inside a's subscript.
  llvm::SmallVector<const Access *, 1> indexTilesOf(const Statement &s, const Access &a) const {
    llvm::SmallVector<const Access *, 1> out;
    if (a.range.empty()) return out;
    for (const Access &r : s.reads)
      if (&r != &a && !r.range.empty() && r.range.begin >= a.range.begin && r.range.end <= a.range.end &&
          !(r.range.begin == a.range.begin && r.range.end == a.range.end) &&
          nki::isOnChip(bufferOf(K.tensors[storageOf(r.tensor)])))
        out.push_back(&r);
    return out;
  }

  /// An indirect access moves a known number of elements (one per element of its index tiles, times
  /// the dimensions it slices) although which ones is left to run time: the model sizes it when every
  /// other dimension is resolved.
  bool indirectSized(const Statement &s, const Access &a) const {
    if (a.exact || a.usesBasic || indexTilesOf(s, a).empty() || a.tileShape.empty() ||
        llvm::any_of(a.tileShape, [](int64_t d) { return d <= 0; }))
      return false;
    return llvm::all_of(a.dims, [](const nki::IndexDim &d) {
      return d.full || d.base.known ||
             (!d.aranges.empty() && llvm::all_of(d.aranges, [](const nki::ArangeTerm &t) { return t.extent > 0; }));
    });
  }

  // --- statements ---------------------------------------------------------

  llvm::StringRef sourceOf(const Statement &s) const { return K.source ? K.source->slice(s.range) : llvm::StringRef(); }

  /// The read of the parameter that supplies `slot` in the statement's op-table row.
  const Access *readSlot(const Statement &s, nki::Slot slot) const {
    const nki::ParamInfo *p = s.op->slot(slot);
    if (!p) return nullptr;
    for (const Access &a : s.reads)
      if (a.param == p->name) return &a;
    return nullptr;
  }

  /// The engine an instruction of the statement is issued on: the one its `engine=` argument names,
  /// else the row's. A VectorE row is engine-agnostic: the compiler may place it on another engine that
  /// finishes first, so the target decides (Unknown).
  static nki::Engine issueEngine(const Statement &s) {
    if (s.engine != nki::Engine::Unknown) return s.engine;
    return s.op->engine == nki::Engine::Vector ? nki::Engine::Unknown : s.op->engine;
  }
  /// Sets the engine `s` issues `inst` on, flagging an engine the kernel names.
  static void issueOn(Instruction &inst, const Statement &s) {
    inst.engine = issueEngine(s);
    if (s.engine != nki::Engine::Unknown) inst.flags |= EngineNamed;
  }

  /// The operand reads of the op (without the destination re-read of `+=`).
  std::vector<const Access *> operandReads(const Statement &s) const {
    std::vector<const Access *> out;
    for (size_t i = 0; i < s.reads.size(); ++i) {
      const Access &a = s.reads[i];
      if (a.isAccumulate) continue; // loop_reduce's destination
      if (s.kind == nki::StmtKind::Accumulate && !s.writes.empty() && i + 1 == s.reads.size() && a.param.empty() &&
          a.tensor == s.writes.front().tensor)
        continue;
      out.push_back(&a);
    }
    return out;
  }

  llvm::Error compileStatement(const Statement &s) {
    std::vector<InstructionTemplate> &out = Templates[s.id];
    int32_t line = K.source ? static_cast<int32_t>(K.source->lineCol(s.range.begin).line) : -1;
    auto base = [&](OpKind op) {
      Instruction inst;
      inst.op = op;
      inst.stmt = s.id;
      inst.line = line;
      return inst;
    };
    auto addReads = [&](InstructionTemplate &t, llvm::ArrayRef<const Access *> reads) -> llvm::Error {
      for (const Access *a : reads) {
        auto f = compileAccess(*a);
        if (!f) return f.takeError();
        t.reads.push_back(*f);
      }
      return llvm::Error::success();
    };

    // The destination: a subscript written, or the new tile the statement binds. The read-out tile of a
    // fused free-axis reduction (the op table's reduce_res parameter: activation, activation_reduce,
    // tensor_scalar_reduce) is written by the same instruction.
    const nki::ParamInfo *reduceRes = s.op ? s.op->param("reduce_res") : nullptr;
    const Access *dest = nullptr;
    llvm::SmallVector<const Access *, 1> reduceWrites;
    for (const Access &a : s.writes)
      if (reduceRes && a.param == reduceRes->name)
        reduceWrites.push_back(&a);
      else if (!dest)
        dest = &a;
    auto destForm = [&]() -> llvm::Expected<RegionForm> {
      if (dest) return compileAccess(*dest);
      if (s.definesTensor >= 0) return wholeTile(s.definesTensor);
      return fail("no destination");
    };
    auto destFacts = [&](const TileFacts &fallback) -> TileFacts {
      if (dest) return facts(*dest);
      if (s.definesTensor >= 0) {
        Access whole;
        whole.tensor = s.definesTensor;
        return facts(whole);
      }
      return fallback;
    };
    auto destBuffer = [&]() -> Buffer {
      int t = dest ? dest->tensor : s.definesTensor;
      return t >= 0 ? bufferOf(K.tensors[storageOf(t)]) : Buffer::SBUF;
    };
    bool hasDest = dest || s.definesTensor >= 0;
    // Issues `t` writing the destination.
    auto issueToDest = [&](InstructionTemplate t) -> llvm::Error {
      auto w = destForm();
      if (!w) return w.takeError();
      t.writes.push_back(*w);
      for (const Access *r : reduceWrites) {
        auto f = compileAccess(*r);
        if (!f) return f.takeError();
        t.writes.push_back(*f);
        t.inst.flags |= ReduceReadout; // the accumulator registers read out (+MIN_II, NKI.md §1.8)
      }
      out.push_back(std::move(t));
      return llvm::Error::success();
    };
    // Issues `t` writing a new compiler temporary, which it returns for the next instruction to read.
    auto issueToScratch = [&](InstructionTemplate t, Buffer buffer, uint32_t partitions, uint64_t bytesPerPartition,
                              const char *what) -> llvm::Expected<RegionForm> {
      auto tmp = scratch(s, buffer, partitions, bytesPerPartition, what);
      if (!tmp) return tmp.takeError();
      t.writes.push_back(*tmp);
      out.push_back(std::move(t));
      return tmp;
    };
    // Every read, the destination re-read of `+=` included.
    auto allReads = [&] {
      std::vector<const Access *> reads;
      for (const Access &a : s.reads) reads.push_back(&a);
      return reads;
    };

    if (!s.op) {
      // `t[...] += tile` without a call: a VectorE add.
      if (s.kind == nki::StmtKind::Accumulate && dest && !s.reads.empty()) {
        InstructionTemplate t;
        t.inst = base(OpKind::TensorTensor);
        t.inst.flags |= LanguageLevel;
        TileFacts f = facts(*dest);
        t.inst.partitions = static_cast<uint16_t>(std::min<uint32_t>(f.partitions, 65535));
        t.inst.freeElems = static_cast<uint32_t>(f.freeElems);
        t.inst.inputDType = f.dtype;
        if (llvm::Error err = addReads(t, allReads())) return err;
        return issueToDest(std::move(t));
      }
      return llvm::Error::success();
    }

    nki::OpKind kind = s.op->kind;
    std::vector<const Access *> operands = operandReads(s);
    const Access *first = operands.empty() ? nullptr : operands.front();
    TileFacts in = first ? facts(*first) : TileFacts{};

    auto compute = [&](OpKind op, const TileFacts &f) {
      InstructionTemplate t;
      t.inst = base(op);
      t.inst.engine = nki::Engine::Unknown;
      t.inst.partitions = static_cast<uint16_t>(std::min<uint32_t>(f.partitions, 65535));
      t.inst.freeElems = static_cast<uint32_t>(std::min<uint64_t>(f.freeElems, UINT32_MAX));
      t.inst.inputDType = t.inst.stationaryDType = f.dtype;
      return t;
    };
    // SBUF `+=` (and PSUM `+=` of a non-matmul): the op's result goes to a
    // temporary and a VectorE add folds it into the destination.
    bool accumulateWithAdd =
        s.kind == nki::StmtKind::Accumulate && dest && !(kind == nki::OpKind::Matmul && destBuffer() == Buffer::PSUM);

    auto finish = [&](InstructionTemplate t, const TileFacts &resultFacts) -> llvm::Error {
      if (!hasDest) {
        out.push_back(std::move(t));
        return llvm::Error::success();
      }
      if (!accumulateWithAdd) return issueToDest(std::move(t));
      TileFacts d = destFacts(resultFacts);
      Buffer tmpBuffer = kind == nki::OpKind::Matmul ? Buffer::PSUM : Buffer::SBUF;
      auto tmp = issueToScratch(std::move(t), tmpBuffer, d.partitions, d.freeElems * nki::dtypeBytes(d.dtype), "acc");
      if (!tmp) return tmp.takeError();
      InstructionTemplate add = compute(OpKind::TensorTensor, d);
      add.inst.flags |= LanguageLevel;
      add.reads.push_back(*tmp);
      auto cur = compileAccess(*dest);
      if (!cur) return cur.takeError();
      add.reads.push_back(*cur);
      add.writes.push_back(*cur);
      out.push_back(std::move(add));
      return llvm::Error::success();
    };

    switch (kind) {
    case nki::OpKind::Alloc: {
      // nl.zeros / nl.full in SBUF fill every block; PSUM accumulators start
      // with an overwriting matmul (lazy_initialization), so cost nothing.
      if (s.op->instr != OpKind::Memset || s.definesTensor < 0) return llvm::Error::success();
      const Tensor &t = K.tensors[s.definesTensor];
      if (bufferOf(t) != Buffer::SBUF) return llvm::Error::success();
      auto id = tensorId(s.definesTensor);
      if (!id) return id.takeError();
      const TensorInfo &info = BuiltTrace.tensors()[*id];
      uint64_t perInstance = info.numBlocks / std::max<uint64_t>(buffersOf(t.scope, t.id), 1);
      if (perInstance > 4096) perInstance = 1; // one fill standing for all
      for (uint64_t b = 0; b < perInstance; ++b) {
        TileFacts f;
        f.partitions = info.partitions;
        f.freeElems = info.bytesPerPartition / nki::dtypeBytes(t.dtype);
        f.dtype = t.dtype;
        InstructionTemplate m = compute(s.op->instr, f);
        RegionForm w = wholeBlockOf(*id, info);
        w.block.constant = static_cast<int64_t>(b);
        if (t.scope >= 0) addInstanceIndex(w.block, t.scope, static_cast<int64_t>(perInstance), t.id);
        m.writes.push_back(w);
        out.push_back(std::move(m));
      }
      return llvm::Error::success();
    }
    case nki::OpKind::Load:
    case nki::OpKind::Store:
    case nki::OpKind::DmaCopy: {
      const Access *src = readSlot(s, nki::Slot::Data);
      if (!src) src = first;
      if (!src) return skipped(s, "a transfer whose source the model does not know");
      if (!hasDest) return skipped(s, "a transfer whose destination the model does not know");
      TileFacts sf = facts(*src);
      TileFacts df = destFacts(sf);
      // Element count of the transfer: the on-chip side's tile, unmasked.
      const TileFacts &tile = sf.onChip ? sf : df;
      InstructionTemplate t;
      t.inst = base(s.op->instr);
      issueOn(t.inst, s);
      t.inst.partitions = static_cast<uint16_t>(std::min<uint32_t>(tile.partitions, 65535));
      t.inst.inputDType = sf.dtype;
      // Bytes moved: the HBM side's elements (a load with dtype= reads the source dtype and casts on
      // the way in, RC13); the destination's for on-chip copies.
      const Access *hbmSide = !sf.onChip ? src : (!df.onChip ? dest : nullptr);
      nki::DType movedDType = hbmSide ? K.tensors[hbmSide->tensor].dtype : df.dtype;
      uint64_t perPartition = tile.freeElems * nki::dtypeBytes(movedDType);
      t.inst.bytes = perPartition * tile.partitions;
      // Descriptor size: the contiguous run on the HBM side.
      uint64_t run = perPartition;
      if (hbmSide) run = std::min(run, contiguousBytesPerPartition(K.tensors[hbmSide->tensor], *hbmSide));
      // A transposing load (nl.load_transpose2d) gathers every element of a partition from another HBM row.
      if (s.op->shape == nki::ShapeRule::TransposePF) run = nki::dtypeBytes(movedDType);
      t.inst.bytesPerPartition = static_cast<uint32_t>(std::clamp<uint64_t>(run, 1, UINT32_MAX));

      if (kind == nki::OpKind::Store && nki::isOnChip(bufferOf(K.tensors[storageOf(src->tensor)])) &&
          bufferOf(K.tensors[storageOf(src->tensor)]) == Buffer::PSUM) {
        // A PSUM value is first copied to SBUF by the compiler (NKI.md §1.8).
        InstructionTemplate copy = compute(OpKind::TensorCopy, sf);
        if (llvm::Error err = addReads(copy, {src})) return err;
        auto tmp = issueToScratch(std::move(copy), Buffer::SBUF, sf.partitions,
                                  sf.freeElems * nki::dtypeBytes(sf.dtype), "sb");
        if (!tmp) return tmp.takeError();
        t.reads.push_back(*tmp);
      } else if (llvm::Error err = addReads(t, {src})) {
        return err;
      }
      // An indirect DMA reads its index tiles first: its descriptors (one per element row, each the
      // row's contiguous bytes: the run above) are made from their values.
      for (const Access *side : {src, dest})
        if (side)
          for (const Access *index : indexTilesOf(s, *side))
            if (llvm::Error err = addReads(t, {index})) return err;
      if (s.writes.empty() && s.definesTensor >= 0)
        t.firstIterationOnly = SharedLoops[storageOf(s.definesTensor)];
      else if (s.id >= 0 && s.id < static_cast<int>(HoistedLoadLoops.size()))
        t.firstIterationOnly = HoistedLoadLoops[s.id];
      return issueToDest(std::move(t));
    }
    case nki::OpKind::Matmul: {
      const Access *stationary = readSlot(s, nki::Slot::Stationary);
      const Access *moving = readSlot(s, nki::Slot::Moving);
      if (!stationary || !moving) return skipped(s, "a matmul whose operands the model does not know");
      TileFacts st = facts(*stationary), mv = facts(*moving);
      // TensorE reads only SBUF: nl.matmul's compiler copies an operand it finds in PSUM (an nl.transpose
      // result) to SBUF first (NKI.md §1.8).
      auto sbufOperand = [&](const Access &a, const TileFacts &f) -> llvm::Expected<RegionForm> {
        if (bufferOf(K.tensors[storageOf(a.tensor)]) != Buffer::PSUM) return compileAccess(a);
        InstructionTemplate copy = compute(OpKind::TensorCopy, f);
        if (llvm::Error err = addReads(copy, {&a})) return err;
        return issueToScratch(std::move(copy), Buffer::SBUF, f.partitions, f.freeElems * nki::dtypeBytes(f.dtype),
                              "operand.sb");
      };
      RegionForm stationaryForm;
      if (nki::matmulTransposesStationary(*s.op, s.flag("transpose_x"))) {
        // nl.matmul(x, y): x [M, K] is first transposed on TensorE (identity
        // matmul into PSUM) and copied to SBUF (NKI.md §1.8).
        InstructionTemplate tr = compute(OpKind::Transpose, st);
        issueOn(tr.inst, s);
        tr.inst.flags |= OneZeroOperand;
        auto xForm = sbufOperand(*stationary, st);
        if (!xForm) return xForm.takeError();
        tr.reads.push_back(*xForm);
        auto psumT = issueToScratch(std::move(tr), Buffer::PSUM, static_cast<uint32_t>(st.freeElems),
                                    uint64_t(st.partitions) * 4, "xT.psum");
        if (!psumT) return psumT.takeError();
        TileFacts tf;
        tf.partitions = static_cast<uint32_t>(st.freeElems);
        tf.freeElems = st.partitions;
        tf.dtype = nki::DType::Float32;
        InstructionTemplate copy = compute(OpKind::TensorCopy, tf);
        copy.reads.push_back(*psumT);
        auto sbT = issueToScratch(std::move(copy), Buffer::SBUF, tf.partitions,
                                  uint64_t(st.partitions) * nki::dtypeBytes(st.dtype), "xT");
        if (!sbT) return sbT.takeError();
        stationaryForm = *sbT;
        st.partitions = tf.partitions; // the stationary operand is [K, M] now
        st.freeElems = tf.freeElems;
      } else {
        auto f = sbufOperand(*stationary, st);
        if (!f) return f.takeError();
        stationaryForm = *f;
      }
      if (s.flag(nki::kPerfModeParam)) {
        // Double row (NKI/Platform.h): [K, 2, F] operands contract over K x 2 in the time of K.
        st.partitions *= nki::kDoubleRowPacking;
        st.freeElems /= nki::kDoubleRowPacking;
        mv.freeElems /= nki::kDoubleRowPacking;
      }
      InstructionTemplate mm = compute(s.op->instr, mv);
      issueOn(mm.inst, s);
      mm.inst.partitions = static_cast<uint16_t>(std::min<uint32_t>(st.partitions, 65535));
      mm.inst.stationaryFreeElems = static_cast<uint32_t>(st.freeElems);
      mm.inst.freeElems = static_cast<uint32_t>(mv.freeElems);
      mm.inst.inputDType = mv.dtype;
      mm.inst.stationaryDType = st.dtype;
      if (s.flag("is_transpose")) mm.inst.flags |= IsTranspose;
      if (s.flag("is_stationary_onezero") || s.flag("is_moving_onezero")) mm.inst.flags |= OneZeroOperand;
      mm.reads.push_back(stationaryForm);
      auto mf = sbufOperand(*moving, facts(*moving));
      if (!mf) return mf.takeError();
      mm.reads.push_back(*mf);
      TileFacts result;
      result.partitions = static_cast<uint32_t>(st.freeElems);
      result.freeElems = mv.freeElems;
      return finish(std::move(mm), result);
    }
    case nki::OpKind::Transpose: {
      if (!first) return llvm::Error::success();
      InstructionTemplate t = compute(s.op->instr, in);
      issueOn(t.inst, s);
      if (llvm::Error err = addReads(t, operands)) return err;
      TileFacts r;
      r.partitions = static_cast<uint32_t>(in.freeElems);
      r.freeElems = in.partitions;
      return finish(std::move(t), r);
    }
    case nki::OpKind::Broadcast: {
      // Partition broadcast: a TensorE matmul with a ones row (NKI.md §3.5).
      if (!first) return llvm::Error::success();
      TileFacts d = destFacts(in);
      InstructionTemplate t = compute(s.op->instr, in);
      issueOn(t.inst, s);
      t.inst.partitions = static_cast<uint16_t>(std::min<uint32_t>(in.partitions, 65535));
      t.inst.stationaryFreeElems = d.partitions;
      t.inst.freeElems = static_cast<uint32_t>(in.freeElems);
      t.inst.flags |= OneZeroOperand;
      if (llvm::Error err = addReads(t, operands)) return err;
      return finish(std::move(t), d);
    }
    case nki::OpKind::LoopReduce: {
      if (!first || !dest) return llvm::Error::success();
      InstructionTemplate t = compute(s.op->instr, in);
      t.inst.flags |= LanguageLevel;
      if (llvm::Error err = addReads(t, allReads())) return err;
      return issueToDest(std::move(t));
    }
    default: break;
    }

    OpKind op = s.op->instr;
    TileFacts main = in;
    if (op == OpKind::TensorTensor) {
      // A tile with a per-partition (P,1) vector or a scalar lowers to
      // tensor_scalar (NKI.md §3.5, nl.multiply(tile, vector)).
      uint64_t widest = 0, narrowest = UINT64_MAX;
      size_t tiles = 0;
      for (const Access *a : operands) {
        TileFacts f = facts(*a);
        if (f.freeElems > widest) {
          widest = f.freeElems;
          main = f;
        }
        narrowest = std::min(narrowest, f.freeElems);
        ++tiles;
      }
      if (tiles < 2 || (narrowest == 1 && widest > 1)) op = OpKind::TensorScalar;
    }
    if (op == OpKind::Memset || op == OpKind::Iota || !first) { main = destFacts(in); }
    InstructionTemplate t = compute(op, main);
    // A row that fixes its ALU op (nl.add) is a language-level op the compiler lowers itself.
    if (op == OpKind::TensorTensor && s.op->numerics.alu) t.inst.flags |= LanguageLevel;
    issueOn(t.inst, s);
    if (llvm::Error err = addReads(t, operands)) return err;
    return finish(std::move(t), main);
  }

  // --- the walk -----------------------------------------------------------

  /// The share of a masked statement's tile this instance keeps, per partition and along the free axes
  /// (a partial last tile: `mask=(i * 128 + ip < n)`); nullopt when the mask keeps nothing.
  struct MaskedShare {
    double partitions = 1;
    double free = 1;
  };
  std::optional<MaskedShare> maskedShare(const Statement &s, const int64_t *n) const {
    MaskedShare share;
    auto holds = [&](const nki::MaskBound &m) {
      int64_t base = m.base.constant;
      for (auto &[loop, coeff] : m.base.terms) base += coeff * n[loop];
      return base < 0;
    };
    if (!s.unlessAll.empty() && llvm::all_of(s.unlessAll, holds)) return std::nullopt; // the if branch's
    for (const nki::MaskBound &m : s.maskBounds) {
      int64_t base = m.base.constant;
      for (auto &[loop, coeff] : m.base.terms) base += coeff * n[loop];
      if (m.axis < 0) {
        if (base >= 0) return std::nullopt;
        continue;
      }
      int64_t kept = m.kept(base);
      if (kept == 0) return std::nullopt;
      double &ratio = m.axis == 0 ? share.partitions : share.free;
      ratio = std::min(ratio, double(kept) / double(m.extent));
    }
    return share;
  }

  void emit(const Statement &s) {
    const int64_t *n = Counters.data();
    std::optional<MaskedShare> share = MaskedShare{};
    if (!s.maskBounds.empty() || !s.unlessAll.empty()) share = maskedShare(s, n);
    if (!share) return; // the mask keeps no element of this instance: nothing is issued
    for (const InstructionTemplate &t : Templates[s.id]) {
      if (llvm::any_of(t.firstIterationOnly, [&](int loop) { return n[loop] != 0; })) continue;
      ReadBuf.clear();
      WriteBuf.clear();
      for (const RegionForm &f : t.reads) ReadBuf.push_back(f.eval(n));
      for (const RegionForm &f : t.writes) WriteBuf.push_back(f.eval(n));
      if (share->partitions == 1 && share->free == 1) {
        BuiltTrace.addInstruction(t.inst, ReadBuf, WriteBuf);
        continue;
      }
      // A DMA moves only the kept elements; VectorE/ScalarE/GpSimd stream only the kept free elements
      // (their partitions work in parallel, so masked-out partitions save no time); TensorE streams its
      // full moving tile whatever the mask (freeElems is reported unmasked).
      Instruction inst = t.inst;
      auto scaled = [](uint64_t v, double r) { return uint64_t(std::llround(double(v) * r)); };
      if (isDma(inst.op)) {
        inst.bytes = std::max<uint64_t>(1, scaled(inst.bytes, share->partitions * share->free));
        inst.partitions = uint16_t(std::max<uint64_t>(1, scaled(inst.partitions, share->partitions)));
        inst.bytesPerPartition =
            uint32_t(std::max<uint64_t>(1, std::min<uint64_t>(inst.bytesPerPartition, inst.bytes / inst.partitions)));
      } else if (inst.op != OpKind::NcMatmul && inst.op != OpKind::Transpose) {
        inst.freeElems = uint32_t(std::max<uint64_t>(1, scaled(inst.freeElems, share->free)));
      }
      BuiltTrace.addInstruction(inst, ReadBuf, WriteBuf);
    }
  }

  static LoopKind traceKind(nki::LoopKind k) {
    switch (k) {
    case nki::LoopKind::Affine: return LoopKind::Affine;
    case nki::LoopKind::Static: return LoopKind::Static;
    case nki::LoopKind::Sequential: return LoopKind::Sequential;
    case nki::LoopKind::PyRange: break; // resolved by the dialect (Loop::runsAs): never here
    }
    return LoopKind::Affine;
  }

  void walk(const std::vector<nki::NodeRef> &body) {
    for (const nki::NodeRef &node : body) {
      if (!node.isLoop) {
        if (!Templates[node.index].empty()) emit(K.stmts[node.index]);
        continue;
      }
      const nki::Loop &loop = K.loops[node.index];
      int64_t n = trip(loop.id);
      if (n <= 0 || !LoopEmits[loop.id]) continue;
      LoopKind kind = traceKind(loop.runsAs);
      BuiltTrace.enterLoop(kind, loop.id);
      for (int64_t i = 0; i < n; ++i) {
        if (i > 0) BuiltTrace.nextIteration(kind, loop.id);
        Counters[loop.id] = i;
        walk(loop.body);
      }
      BuiltTrace.exitLoop(kind, loop.id);
      Counters[loop.id] = 0;
    }
  }
};

} // namespace

uint64_t contiguousBytesPerPartition(const nki::Tensor &tensor, const nki::Access &access) {
  int64_t elemBytes = nki::dtypeBytes(tensor.dtype);
  uint64_t run = 1;
  for (int d = int(tensor.shape.size()) - 1; d >= 0; --d) {
    int64_t size = tensor.shape[d].value.value_or(1);
    if (d >= int(access.dims.size()) || access.dims[d].full) {
      run *= static_cast<uint64_t>(std::max<int64_t>(size, 1));
      continue;
    }
    const nki::IndexDim &dim = access.dims[d];
    // A single unit-stride arange on a free axis of the tile extends the run.
    const nki::ArangeTerm *unit = nullptr;
    size_t freeTerms = 0;
    for (const nki::ArangeTerm &a : dim.aranges) {
      if (a.extent <= 1) continue;
      ++freeTerms;
      if (a.axis != 0 && a.coeff == 1) unit = &a;
    }
    if (freeTerms == 0) {
      // A fixed index: the run cannot extend through this dimension.
      break;
    }
    if (freeTerms != 1 || !unit) break;
    run *= static_cast<uint64_t>(unit->extent);
    if (unit->extent != size) break;
  }
  return run * static_cast<uint64_t>(elemBytes);
}

TraceBuildOptions traceOptionsFor(const HardwareDesc &hw) {
  TraceBuildOptions options;
  options.hoistInvariantLoads = hw.scheduler.hoistInvariantLoads;
  options.hoistBytesPerPartition = hw.memory.sbufUsableBytesPerPartition();
  options.reuseInvariantTransposes = hw.scheduler.reuseInvariantTransposes;
  options.hoistInvariantCompute = hw.scheduler.hoistInvariantCompute;
  return options;
}

llvm::Expected<Trace> buildTrace(const nki::Kernel &kernel, const TraceBuildOptions &options) {
  return Builder(kernel, options).run();
}

} // namespace accelopt::perf
