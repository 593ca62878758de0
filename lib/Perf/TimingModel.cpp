#include "Perf/TimingModel.h"

#include "llvm/ADT/IntervalMap.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace accelopt::perf {

namespace {

constexpr uint32_t kNil = std::numeric_limits<uint32_t>::max();
/// Stream position of "no further use".
constexpr uint32_t kNever = kNil;

/// Completion time of the last write to a byte range and the latest
/// completion of the reads since that write.
struct AccessTimes {
  double writeEnd = 0;
  double readEnd = 0;
  bool operator==(const AccessTimes &o) const { return writeEnd == o.writeEnd && readEnd == o.readEnd; }
};

/// Per-block access timelines of on-chip tensors: sorted singly linked lists
/// of disjoint byte ranges in one arena. Blocks are tiles, so a list rarely
/// holds more than a few ranges and a linear walk beats a tree.
class SegmentArena {
public:
  void clear() {
    Nodes.clear();
    Free = kNil;
  }

  double latest(uint32_t head, uint64_t begin, uint64_t end, bool includeReads) const {
    double t = 0;
    for (uint32_t cur = head; cur != kNil && Nodes[cur].begin < end; cur = Nodes[cur].next) {
      const Segment &s = Nodes[cur];
      if (s.end > begin) t = std::max(t, includeReads ? std::max(s.times.writeEnd, s.times.readEnd) : s.times.writeEnd);
    }
    return t;
  }

  void recordWrite(uint32_t &head, uint32_t begin, uint32_t end, double t) {
    uint32_t prev = kNil, cur = head;
    while (cur != kNil && Nodes[cur].end <= begin) {
      prev = cur;
      cur = Nodes[cur].next;
    }
    if (cur != kNil && Nodes[cur].begin < begin) {
      if (Nodes[cur].end > end) { // the write lands inside one range: split it in three
        uint32_t right = alloc(end, Nodes[cur].end, Nodes[cur].times, Nodes[cur].next);
        uint32_t middle = alloc(begin, end, {t, 0}, right);
        Nodes[cur].end = begin;
        Nodes[cur].next = middle;
        return;
      }
      Nodes[cur].end = begin;
      prev = cur;
      cur = Nodes[cur].next;
    }
    while (cur != kNil && Nodes[cur].end <= end) { // ranges the write covers entirely
      uint32_t covered = cur;
      cur = Nodes[cur].next;
      release(covered);
    }
    if (cur != kNil && Nodes[cur].begin < end) Nodes[cur].begin = end;
    link(head, prev, alloc(begin, end, {t, 0}, cur));
  }

  void recordRead(uint32_t &head, uint32_t begin, uint32_t end, double t) {
    uint32_t prev = kNil, cur = head;
    while (cur != kNil && Nodes[cur].end <= begin) {
      prev = cur;
      cur = Nodes[cur].next;
    }
    uint32_t pos = begin;
    while (pos < end) {
      if (cur == kNil || Nodes[cur].begin >= end) { // never accessed up to `end`
        link(head, prev, alloc(pos, end, {0, t}, cur));
        return;
      }
      if (Nodes[cur].begin > pos) { // never-accessed gap before `cur`
        uint32_t gap = alloc(pos, Nodes[cur].begin, {0, t}, cur);
        link(head, prev, gap);
        prev = gap;
        pos = Nodes[cur].begin;
        continue;
      }
      if (Nodes[cur].begin < pos) { // keep the part before the read as it is
        uint32_t rest = alloc(pos, Nodes[cur].end, Nodes[cur].times, Nodes[cur].next);
        Nodes[cur].end = pos;
        Nodes[cur].next = rest;
        prev = cur;
        cur = rest;
      }
      if (Nodes[cur].end > end) { // and the part after it
        uint32_t rest = alloc(end, Nodes[cur].end, Nodes[cur].times, Nodes[cur].next);
        Nodes[cur].end = end;
        Nodes[cur].next = rest;
      }
      Nodes[cur].times.readEnd = std::max(Nodes[cur].times.readEnd, t);
      pos = Nodes[cur].end;
      prev = cur;
      cur = Nodes[cur].next;
    }
  }

private:
  struct Segment {
    uint32_t begin, end;
    uint32_t next;
    AccessTimes times;
  };

  uint32_t alloc(uint32_t begin, uint32_t end, AccessTimes times, uint32_t next) {
    if (Free != kNil) {
      uint32_t i = Free;
      Free = Nodes[i].next;
      Nodes[i] = {begin, end, next, times};
      return i;
    }
    Nodes.push_back({begin, end, next, times});
    return static_cast<uint32_t>(Nodes.size() - 1);
  }
  void release(uint32_t i) {
    Nodes[i].next = Free;
    Free = i;
  }
  void link(uint32_t &head, uint32_t prev, uint32_t node) { (prev == kNil ? head : Nodes[prev].next) = node; }

  std::vector<Segment> Nodes;
  uint32_t Free = kNil;
};

/// Access timelines of HBM tensors: one interval map per tensor, because a
/// kernel output collects a range per store and a list would go quadratic.
using HbmMap = llvm::IntervalMap<uint64_t, AccessTimes, 8, llvm::IntervalMapHalfOpenInfo<uint64_t>>;

class HbmTimelines {
public:
  void reset(size_t tensors) {
    Maps.clear(); // before the allocator their nodes come from
    Maps.resize(tensors);
  }
  void track(TensorId tensor) { Maps[tensor] = std::make_unique<HbmMap>(Allocator); }
  bool tracked(TensorId tensor) const { return Maps[tensor] != nullptr; }

  double latest(TensorId tensor, uint64_t begin, uint64_t end, bool includeReads) const {
    double t = 0;
    for (auto it = Maps[tensor]->find(begin); it.valid() && it.start() < end; ++it)
      t = std::max(t, includeReads ? std::max(it.value().writeEnd, it.value().readEnd) : it.value().writeEnd);
    return t;
  }

  void recordWrite(TensorId tensor, uint64_t begin, uint64_t end, double t) {
    HbmMap &map = *Maps[tensor];
    takeOverlapping(map, begin, end);
    if (!Pieces.empty() && Pieces.front().begin < begin) map.insert(Pieces.front().begin, begin, Pieces.front().times);
    map.insert(begin, end, {t, 0});
    if (!Pieces.empty() && Pieces.back().end > end) map.insert(end, Pieces.back().end, Pieces.back().times);
  }

  /// The same over a region's row runs (Region::run), or its whole range.
  template <typename Fn> static void forEachRun(const Region &r, Fn fn) {
    if (!r.run) return fn(r.begin, r.end);
    for (uint64_t row = r.begin; row < r.end; row += r.pitch) fn(row, std::min(row + r.run, r.end));
  }
  double latest(const Region &r, bool includeReads) const {
    double t = 0;
    forEachRun(r, [&](uint64_t b, uint64_t e) { t = std::max(t, latest(r.tensor, b, e, includeReads)); });
    return t;
  }
  void recordRead(const Region &r, double t) {
    forEachRun(r, [&](uint64_t b, uint64_t e) { recordRead(r.tensor, b, e, t); });
  }
  void recordWrite(const Region &r, double t) {
    forEachRun(r, [&](uint64_t b, uint64_t e) { recordWrite(r.tensor, b, e, t); });
  }

  void recordRead(TensorId tensor, uint64_t begin, uint64_t end, double t) {
    HbmMap &map = *Maps[tensor];
    takeOverlapping(map, begin, end);
    uint64_t pos = begin;
    for (const Piece &p : Pieces) {
      if (p.begin < begin) map.insert(p.begin, begin, p.times);
      uint64_t from = std::max(p.begin, begin), to = std::min(p.end, end);
      if (from > pos) map.insert(pos, from, {0, t});
      map.insert(from, to, {p.times.writeEnd, std::max(p.times.readEnd, t)});
      if (p.end > end) map.insert(end, p.end, p.times);
      pos = to;
    }
    if (pos < end) map.insert(pos, end, {0, t});
  }

private:
  struct Piece {
    uint64_t begin, end;
    AccessTimes times;
  };
  /// Moves the ranges overlapping [begin, end) out of `map` into pieces_.
  void takeOverlapping(HbmMap &map, uint64_t begin, uint64_t end) {
    Pieces.clear();
    auto it = map.find(begin);
    while (it.valid() && it.start() < end) {
      Pieces.push_back({it.start(), it.stop(), it.value()});
      it.erase();
    }
  }

  HbmMap::Allocator Allocator;
  std::vector<std::unique_ptr<HbmMap>> Maps;
  std::vector<Piece> Pieces;
};

/// One resource that processes work at a fixed rate, filling idle gaps left
/// by work that had to wait: DMA rings serve whichever transfer is ready, so
/// a transfer issued later but ready earlier may run before it.
class BusyTimeline {
public:
  void reset() {
    Gaps.clear();
    Tail = 0;
  }
  double tail() const { return Tail; }

  /// Runs `work` ns no earlier than `start`; returns its finish time.
  double place(double start, double work) {
    if (work <= 0) return start;
    auto first = std::upper_bound(Gaps.begin(), Gaps.end(), start, [](double t, const Gap &g) { return t < g.end; });
    size_t i = static_cast<size_t>(first - Gaps.begin());
    while (i < Gaps.size()) {
      Gap &gap = Gaps[i];
      double from = std::max(gap.begin, start);
      double used = std::min(gap.end - from, work);
      double finish = from + used;
      work -= used;
      if (from > gap.begin && finish < gap.end) {
        Gap right{finish, gap.end};
        gap.end = from;
        Gaps.insert(Gaps.begin() + static_cast<ptrdiff_t>(i) + 1, right);
        i += 2;
      } else if (from > gap.begin) {
        gap.end = from;
        ++i;
      } else if (finish < gap.end) {
        gap.begin = finish;
      } else {
        Gaps.erase(Gaps.begin() + static_cast<ptrdiff_t>(i));
      }
      if (work <= 0) return finish;
    }
    double from = std::max(start, Tail);
    if (from > Tail) {
      Gaps.push_back({Tail, from});
      // Old gaps are rarely fillable; dropping them bounds the cost per call.
      if (Gaps.size() > kMaxGaps) Gaps.erase(Gaps.begin());
    }
    Tail = from + work;
    return Tail;
  }

  /// Where `work` ns would start without being split: the first idle slot
  /// at or after `start` that holds all of it, else the tail.
  double earliestWhole(double start, double work) const {
    auto first = std::upper_bound(Gaps.begin(), Gaps.end(), start, [](double t, const Gap &g) { return t < g.end; });
    for (auto it = first; it != Gaps.end(); ++it) {
      double from = std::max(it->begin, start);
      if (it->end - from >= work) return from;
    }
    return std::max(start, Tail);
  }

  /// Runs `work` ns unsplit, as early as earliestWhole says; returns its end.
  double placeWhole(double start, double work) {
    double from = earliestWhole(start, work);
    if (from >= Tail) return place(from, work);
    auto it = std::upper_bound(Gaps.begin(), Gaps.end(), from, [](double t, const Gap &g) { return t < g.end; });
    Gap &gap = *it;
    double finish = from + work;
    if (from > gap.begin && finish < gap.end) {
      Gap right{finish, gap.end};
      gap.end = from;
      Gaps.insert(it + 1, right);
    } else if (from > gap.begin) {
      gap.end = from;
    } else if (finish < gap.end) {
      gap.begin = finish;
    } else {
      Gaps.erase(it);
    }
    return finish;
  }

private:
  struct Gap {
    double begin, end;
  };
  static constexpr size_t kMaxGaps = 32;
  std::vector<Gap> Gaps;
  double Tail = 0;
};

/// DMA: transfers are triggered in order per kind (loads, stores and spills
/// sit on separate compiler queues), striped over the least busy queues, and
/// share the HBM bandwidth of the core.
class DmaSystem {
public:
  void reset(const DmaParams &params) {
    Params = &params;
    Queues.resize(params.queues);
    for (BusyTimeline &q : Queues) q.reset();
    Hbm.reset();
    LastTrigger.fill(0);
    Order.resize(params.queues);
  }

  struct Transfer {
    double end;
    double queueWorkNs; ///< summed over the queues used
    double start = 0;   ///< when the data starts moving
    unsigned stripes = 0;
  };

  Transfer run(OpKind kind, uint64_t bytes, uint32_t bytesPerPartition, unsigned partitions, uint64_t hbmBytes,
               double ready) {
    const DmaParams &p = *Params;
    double &lastTrigger = LastTrigger[static_cast<unsigned>(kind) - static_cast<unsigned>(OpKind::Load)];
    double trigger = std::max(ready, lastTrigger);
    lastTrigger = trigger;
    double start = trigger + p.fixedLatencyNs;

    unsigned stripes = std::clamp(partitions, 1u, p.queues);
    double perPartition = bytesPerPartition ? bytesPerPartition : static_cast<double>(bytes) / std::max(partitions, 1u);
    double stripeWork =
        static_cast<double>(bytes) / stripes / (p.queueBytesPerNs * p.efficiency(std::max(perPartition, 1.0)));
    Transfer t{start, stripeWork * stripes, start, stripes};
    if (bytes == 0) return t;
    for (unsigned i = 0; i < p.queues; ++i) Order[i] = i;
    if (stripes < p.queues)
      std::partial_sort(Order.begin(), Order.begin() + stripes, Order.end(),
                        [&](uint32_t a, uint32_t b) { return Queues[a].tail() < Queues[b].tail(); });
    for (unsigned i = 0; i < stripes; ++i) t.end = std::max(t.end, Queues[Order[i]].place(start, stripeWork));
    if (hbmBytes) t.end = std::max(t.end, Hbm.place(start, static_cast<double>(hbmBytes) / p.hbmBytesPerNs));
    return t;
  }

private:
  const DmaParams *Params = nullptr;
  std::vector<BusyTimeline> Queues;
  BusyTimeline Hbm;
  std::array<double, kNumOpKinds - static_cast<unsigned>(OpKind::Load)> LastTrigger{};
  std::vector<uint32_t> Order;
};

/// Whether a TensorE instruction runs in fp32 mode: any fp32 operand.
bool fp32Operands(const Instruction &inst) {
  if (inst.op == OpKind::Transpose) return inst.inputDType == nki::DType::Float32;
  return inst.inputDType == nki::DType::Float32 || inst.stationaryDType == nki::DType::Float32;
}

llvm::Error instructionError(size_t index, const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 ("instruction " + llvm::Twine(index) + ": " + what).str());
}

/// Where a DMA reads and writes: from its first regions, else its kind.
std::pair<nki::Buffer, nki::Buffer> dmaEndpoints(const Trace &trace, const Instruction &inst) {
  nki::Buffer src = nki::Buffer::SBUF, dst = nki::Buffer::SBUF;
  switch (inst.op) {
  case OpKind::Load:
  case OpKind::SpillReload: src = nki::Buffer::SharedHBM; break;
  case OpKind::Store:
  case OpKind::SpillSave: dst = nki::Buffer::SharedHBM; break;
  default: break;
  }
  auto reads = trace.reads(inst), writes = trace.writes(inst);
  if (!reads.empty()) src = trace.tensors()[reads.front().tensor].buffer;
  if (!writes.empty()) dst = trace.tensors()[writes.front().tensor].buffer;
  return {src, dst};
}

/// The compiler queue a DMA is triggered on: a copy from HBM to on-chip memory (nisa.dma_copy, the
/// current dialect's load) waits behind loads, one to HBM behind stores, like nl.load and nl.store.
OpKind triggerQueue(OpKind op, nki::Buffer src, nki::Buffer dst) {
  if (op != OpKind::DmaCopy) return op;
  if (nki::isHBM(src) && nki::isOnChip(dst)) return OpKind::Load;
  if (nki::isOnChip(src) && nki::isHBM(dst)) return OpKind::Store;
  return op;
}

} // namespace

std::optional<ComputeEngine> resolveEngine(const HardwareDesc &hw, const Instruction &inst) {
  if (inst.engine == nki::Engine::Unknown) return hw.cost(inst.op).engine;
  return toComputeEngine(inst.engine);
}

double computeCycles(const HardwareDesc &hw, const Instruction &inst, ComputeEngine engine, bool readsPsum) {
  const EngineParams &e = hw.engine(engine);
  bool onPeArray = engine == ComputeEngine::Tensor && (inst.op == OpKind::NcMatmul || inst.op == OpKind::Transpose);
  if (onPeArray) {
    // nc_transpose(data[P, F]) is the matmul of data (stationary) with a P x P
    // identity (moving): max(P, min(64, F)) (NKI.md §3.5).
    bool transpose = inst.op == OpKind::Transpose;
    double stationary = transpose ? inst.freeElems : inst.stationaryFreeElems;
    double moving = transpose ? inst.partitions : inst.freeElems;
    // Each pass over the array (fp32 takes several) also pays a fixed cost.
    double cycles = std::max(std::min(hw.matmul.initLatencyCycles, stationary), moving) + hw.matmul.passOverheadCycles;
    if (fp32Operands(inst)) {
      double speedup = 1;
      if (inst.has(OneZeroOperand)) speedup = std::max(speedup, hw.matmul.fp32OneZeroSpeedup);
      if (transpose || inst.has(IsTranspose)) speedup = std::max(speedup, hw.matmul.fp32TransposeSpeedup);
      cycles *= hw.matmul.fp32Factor / speedup;
    }
    return cycles;
  }
  const InstructionCost &c = hw.cost(inst.op);
  bool fast = inst.has(FastPath) || (c.psumInputIsFastPath && readsPsum);
  double perElement = fast                      ? c.fastCyclesPerElement
                      : inst.has(LanguageLevel) ? c.languageCyclesPerElement
                                                : c.cyclesPerElement;
  double cycles = perElement * inst.freeElems;
  if (c.usesMinII) cycles = std::max(cycles, e.minIICycles);
  cycles += c.fixedCycles;
  if (inst.has(ReduceReadout)) cycles += e.minIICycles;
  // Partitions beyond the engine's lanes take extra passes.
  double passes = std::ceil(static_cast<double>(std::max<uint16_t>(inst.partitions, 1)) / e.lanes);
  return cycles * passes;
}

double computeDurationNs(const HardwareDesc &hw, const Instruction &inst, ComputeEngine engine, bool readsPsum) {
  const EngineParams &e = hw.engine(engine);
  return (computeCycles(hw, inst, engine, readsPsum) + e.staticOverheadCycles) / e.clockGHz;
}

double isolatedDmaNs(const HardwareDesc &hw, uint64_t bytes, uint32_t bytesPerPartition, unsigned partitions,
                     bool touchesHbm) {
  DmaSystem dma;
  dma.reset(hw.dma);
  return dma.run(OpKind::Load, bytes, bytesPerPartition, partitions, touchesHbm ? bytes : 0, 0).end;
}

// -----------------------------------------------------------------------------

/// The state of one simulation; kept between runs so buffers are reused.
struct TimingModel::Simulation {
  enum class Residency : uint8_t { Untouched, Resident, Spilled, Dead };

  /// The TensorInfo fields the hot loop needs, packed.
  struct TensorState {
    uint64_t bytesPerPartition = 0;
    uint32_t firstBlock = 0;
    uint16_t partitions = 0;
    nki::Buffer buffer = nki::Buffer::Unknown;
    bool tracked = false; ///< written somewhere, so accesses must be ordered
    bool read = false;    ///< read somewhere
  };

  struct BlockState {
    uint32_t segments = kNil;  ///< on-chip access timeline (SegmentArena list)
    uint32_t nextUse = kNever; ///< next access after the current position
    uint32_t residentSlot = kNil;
    uint16_t psumBanks = 0; ///< bit mask of the PSUM banks held
    Residency residency = Residency::Untouched;
    bool dirty = false; ///< SBUF copy newer than its spilled HBM copy
    /// Holds only data loaded from a read-only HBM tensor: when evicted it is
    /// dropped and loaded again from there (rematerialised), not spilled.
    bool reloadable = false;
    bool inHbm = false;     ///< a spilled copy exists
    double availableAt = 0; ///< when a reloaded copy is back in SBUF
    double savedAt = 0;     ///< when the last spill save finished
    double lastWriteEnd = 0;
    double lastReadEnd = 0;
  };

  struct PsumBank {
    uint32_t occupant = kNil;
    double freeAt = 0;
  };

  struct HeapEntry {
    uint32_t nextUse;
    uint32_t block;
    bool operator<(const HeapEntry &o) const { return nextUse < o.nextUse; }
  };

  const HardwareDesc *target = nullptr;
  const Trace *trace = nullptr;
  SimulationResult result;

  std::vector<TensorState> tensors;
  std::vector<BlockState> blocks;
  std::vector<uint32_t> regionNextUse; ///< per region of an SBUF tensor
  SegmentArena segments;
  HbmTimelines hbm;
  DmaSystem dma;

  std::array<double, kNumComputeEngines> engineFree{};
  std::array<BusyTimeline, kNumComputeEngines> engineSlots; ///< with fill_idle_slots
  double barrier = 0;
  double computeFront = 0; ///< latest end of an engine instruction so far
  /// Without sequential barriers: what the current sequential_range
  /// iteration waits for per engine, and for its DMAs.
  std::array<double, kNumComputeEngines> engineFence{};
  double dmaFence = 0;
  double maxEnd = 0;

  // SBUF capacity: live blocks and the Belady heap (max next use on top).
  bool sbufOversubscribed = false;
  uint64_t liveSbufBytes = 0;
  std::vector<uint32_t> residentBlocks;
  std::vector<HeapEntry> evictionHeap;
  std::vector<PsumBank> psumBanks;
  /// Dead SBUF blocks whose last access ends at `at` (sbuf_reuse_waits).
  struct PendingFree {
    double at;
    uint64_t bytes;
  };
  std::vector<PendingFree> pendingFree;
  uint64_t pendingFreeBytes = 0;

  std::vector<StatementCost> statements; ///< indexed by statement id
  bool recordSchedule = false;

  /// scheduler.sink_loads_that_do_not_fit, per tensor: whether it is only written by loads of one
  /// input nothing writes (`copyOf` that input, `copyLoad` the load's instruction), whether SBUF
  /// pressure evicted it, and whether its loads are sunk to its readers (set before prepare()).
  std::vector<uint8_t> inputCopy, evictedCopy, sunk;
  std::vector<TensorId> copyOf;
  std::vector<uint64_t> liveOf, peakLiveOf; ///< SBUF bytes per partition live per tensor, and their peak
  /// scheduler.single_buffer_engine_tiles: tensors whose blocks only engines access (engineWritten)
  /// and that are live one at a time share one buffer; a new block waits for the previous one's last
  /// access.
  std::vector<uint8_t> engineWritten, oneBuffer;
  std::vector<double> lastAccessEnd;
  /// scheduler.fuse_elementwise_chains: per instruction, the one it is fused into (kNil: none) and
  /// the one fused into it.
  std::vector<uint32_t> fusedInto, fusedFrom;
  void findFusedChains();
  std::vector<uint32_t> copyLoad;
  bool isSunk(TensorId id) const { return id < sunk.size() && sunk[id]; }
  double sunkLoad(const Region &r, double ready);
  void schedule(const ScheduledInstruction &entry) {
    if (!recordSchedule) return;
    if (result.schedule.size() >= SimulationResult::kMaxScheduled) {
      result.scheduleTruncated = true;
      return;
    }
    result.schedule.push_back(entry);
  }

  llvm::Error prepare(const Trace &t, const HardwareDesc &hardware);
  void run();

  const TensorState &info(TensorId id) const { return tensors[id]; }
  uint32_t blockIndex(const Region &r) const { return tensors[r.tensor].firstBlock + r.block; }
  TensorId tensorOfBlock(uint32_t block) const {
    auto it = std::upper_bound(tensors.begin(), tensors.end(), block,
                               [](uint32_t b, const TensorState &t) { return b < t.firstBlock; });
    return static_cast<TensorId>(it - tensors.begin() - 1);
  }
  uint64_t blockFootprint(TensorId id) const { return info(id).bytesPerPartition * info(id).partitions; }

  void addResident(uint32_t block) {
    blocks[block].residentSlot = static_cast<uint32_t>(residentBlocks.size());
    residentBlocks.push_back(block);
  }
  void removeResident(uint32_t block) {
    uint32_t slot = blocks[block].residentSlot;
    uint32_t moved = residentBlocks.back();
    residentBlocks[slot] = moved;
    blocks[moved].residentSlot = slot;
    residentBlocks.pop_back();
    blocks[block].residentSlot = kNil;
  }
  void pushEviction(uint32_t block) {
    evictionHeap.push_back({blocks[block].nextUse, block});
    std::push_heap(evictionHeap.begin(), evictionHeap.end());
    // Stale entries pile up (one per access); rebuild from the resident set.
    if (evictionHeap.size() > 4 * residentBlocks.size() + 1024) {
      evictionHeap.clear();
      for (uint32_t b : residentBlocks) evictionHeap.push_back({blocks[b].nextUse, b});
      std::make_heap(evictionHeap.begin(), evictionHeap.end());
    }
  }

  double makeSbufSpace(uint64_t bytesPerPartition, uint32_t position);
  double waitForSbufSpace(uint64_t bytesPerPartition);
  double spillTransfer(OpKind kind, TensorId tensor, double ready, bool rematerialize = false);
  double allocatePsumBanks(uint32_t block, uint64_t bytesPerPartition);
  void releasePsumBanks(uint32_t block);
  double acquireBlock(const Region &r, bool isWrite, uint32_t position);
  void accountDma(const Instruction &inst, nki::Buffer src, nki::Buffer dst);
  void accountCompute(const Instruction &inst, ComputeEngine engine);
  /// Lists `inst`'s work as unmodelled (once per statement): the description has no cost for its op on `engine`.
  void noteUncosted(const Instruction &inst, ComputeEngine engine) {
    std::string op(opKindName(inst.op)), on(computeEngineName(engine));
    std::string reason = "the target description " + target->name + " has no cost for " + op + " on the " + on +
                         " engine; its time is left out";
    for (const UnmodelledWork &w : result.unmodelled)
      if (w.stmt == inst.stmt && w.reason == reason) return;
    result.unmodelled.push_back({inst.stmt, inst.line, op + " on " + on, std::move(reason)});
  }
  StatementCost &statement(const Instruction &inst) {
    auto index = static_cast<size_t>(inst.stmt);
    if (index >= statements.size()) statements.resize(index + 1);
    StatementCost &s = statements[index];
    s.stmt = inst.stmt;
    s.line = inst.line;
    return s;
  }
};

llvm::Error TimingModel::Simulation::prepare(const Trace &t, const HardwareDesc &hardware) {
  target = &hardware;
  const HardwareDesc &hw = hardware;
  trace = &t;
  result = SimulationResult{};
  auto tensorInfos = t.tensors();
  auto instructions = t.instructions();
  auto regions = t.regions();

  tensors.assign(tensorInfos.size(), TensorState{});
  uint64_t totalBlocks = 0;
  for (size_t i = 0; i < tensorInfos.size(); ++i) {
    const TensorInfo &ti = tensorInfos[i];
    if (ti.numBlocks == 0 || ti.bytesPerPartition == 0)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "tensor %zu (%s): no blocks or no bytes", i,
                                     ti.name.c_str());
    if (nki::isOnChip(ti.buffer) && ti.bytesPerPartition > std::numeric_limits<uint32_t>::max())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "tensor %zu (%s): %llu bytes per partition is not on-chip "
                                     "memory",
                                     i, ti.name.c_str(), static_cast<unsigned long long>(ti.bytesPerPartition));
    tensors[i] = {ti.bytesPerPartition, static_cast<uint32_t>(totalBlocks), ti.partitions, ti.buffer,
                  nki::isOnChip(ti.buffer)};
    totalBlocks += ti.numBlocks;
  }
  if (totalBlocks >= kNil) return llvm::createStringError(llvm::inconvertibleErrorCode(), "too many tensor blocks");
  if (instructions.size() >= kNever)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "too many instructions");

  for (size_t i = 0; i < instructions.size(); ++i) {
    const Instruction &inst = instructions[i];
    if (static_cast<size_t>(inst.firstRegion) + inst.numReads + inst.numWrites > regions.size())
      return instructionError(i, "regions out of range");
    if (!isDma(inst.op) && !resolveEngine(hw, inst))
      return instructionError(i, "compute op " + llvm::Twine(opKindName(inst.op).data()) +
                                     " on an engine without an instruction queue");
    for (unsigned k = 0; k < inst.numReads + inst.numWrites; ++k) {
      const Region &r = regions[inst.firstRegion + k];
      if (r.tensor >= tensorInfos.size())
        return instructionError(i, "tensor " + llvm::Twine(r.tensor) + " was never declared");
      const TensorInfo &ti = tensorInfos[r.tensor];
      if (r.block >= ti.numBlocks || r.begin > r.end || r.end > ti.bytesPerPartition ||
          (r.run && (r.pitch < r.run || nki::isOnChip(ti.buffer))))
        return instructionError(i, "region outside tensor " + llvm::Twine(r.tensor) + " (" + ti.name + ")");
      (k >= inst.numReads ? tensors[r.tensor].tracked : tensors[r.tensor].read) = true;
    }
  }
  inputCopy.assign(tensorInfos.size(), 0);
  evictedCopy.assign(tensorInfos.size(), 0);
  liveOf.assign(tensorInfos.size(), 0);
  engineWritten.assign(tensorInfos.size(), 1);
  oneBuffer.assign(tensorInfos.size(), 0);
  lastAccessEnd.assign(tensorInfos.size(), 0);
  for (const Instruction &inst : instructions)
    if (isDma(inst.op))
      for (const Region &w : t.writes(inst)) engineWritten[w.tensor] = 0;
  for (const Instruction &inst : instructions)
    if (isDma(inst.op))
      for (const Region &r : t.reads(inst)) engineWritten[r.tensor] = 0;
  peakLiveOf.assign(tensorInfos.size(), 0);
  copyOf.assign(tensorInfos.size(), 0);
  copyLoad.assign(tensorInfos.size(), kNil);
  sunk.resize(tensorInfos.size(), 0);
  if (hw.scheduler.sinkLoadsThatDoNotFit) {
    for (size_t i = 0; i < tensorInfos.size(); ++i) inputCopy[i] = tensors[i].buffer == nki::Buffer::SBUF;
    for (size_t i = 0; i < instructions.size(); ++i) {
      const Instruction &inst = instructions[i];
      auto reads = t.reads(inst);
      bool load = inst.op == OpKind::Load && reads.size() == 1 && !nki::isOnChip(info(reads[0].tensor).buffer) &&
                  !tensors[reads[0].tensor].tracked;
      for (const Region &w : t.writes(inst)) {
        if (!inputCopy[w.tensor]) continue;
        if (!load || (copyLoad[w.tensor] != kNil && copyOf[w.tensor] != reads[0].tensor)) {
          inputCopy[w.tensor] = 0;
          continue;
        }
        copyOf[w.tensor] = reads[0].tensor;
        if (copyLoad[w.tensor] == kNil) copyLoad[w.tensor] = static_cast<uint32_t>(i);
      }
    }
    for (size_t i = 0; i < tensorInfos.size(); ++i) sunk[i] = sunk[i] && inputCopy[i];
  }
  // An HBM tensor the kernel only writes (an output) orders nothing while its stores are disjoint
  // tiles the compiler does not chain (NKI.md §3.5: semaphores on real dependences); stores that write
  // the same elements must land in program order. A region's row runs are cut at the end of their
  // row (a masked tile's run covers its whole tile width); at most kMaxOutputRuns runs are compared.
  constexpr size_t kMaxOutputRuns = size_t(1) << 20;
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> outputRuns(tensorInfos.size());
  std::vector<uint8_t> tooMany(tensorInfos.size(), 0);
  for (const Instruction &inst : instructions)
    for (unsigned k = inst.numReads; k < inst.numReads + inst.numWrites; ++k) {
      const Region &r = regions[inst.firstRegion + k];
      if (nki::isOnChip(tensorInfos[r.tensor].buffer) || tensors[r.tensor].read || r.begin >= r.end ||
          tooMany[r.tensor])
        continue;
      auto &runs = outputRuns[r.tensor];
      if (!r.run) {
        runs.push_back({r.begin, r.end});
      } else {
        for (uint64_t row = r.begin; row < r.end && runs.size() <= kMaxOutputRuns; row += r.pitch)
          runs.push_back({row, std::min({row + r.run, r.end, (row / r.pitch + 1) * r.pitch})});
      }
      if (runs.size() > kMaxOutputRuns) {
        tooMany[r.tensor] = 1;
        runs.clear();
      }
    }
  hbm.reset(tensorInfos.size());
  for (size_t i = 0; i < tensorInfos.size(); ++i) {
    if (nki::isOnChip(tensorInfos[i].buffer) || !tensors[i].tracked) continue;
    auto &runs = outputRuns[i];
    llvm::sort(runs);
    bool overlapping = false;
    for (size_t k = 1, end = runs.empty() ? 0 : runs[0].second; k < runs.size() && !overlapping; ++k) {
      overlapping = runs[k].first < end;
      end = std::max(end, runs[k].second);
    }
    if (tensors[i].read || overlapping) hbm.track(static_cast<TensorId>(i));
  }

  // Backward pass: each on-chip access learns the position of the next access
  // to its block (the Belady key), each block its last access.
  blocks.assign(totalBlocks, BlockState{});
  regionNextUse.assign(regions.size(), kNever);
  for (size_t i = instructions.size(); i-- > 0;) {
    const Instruction &inst = instructions[i];
    auto own = regions.slice(inst.firstRegion, inst.numReads + inst.numWrites);
    for (size_t k = 0; k < own.size(); ++k) {
      if (!nki::isOnChip(info(own[k].tensor).buffer)) continue;
      BlockState &b = blocks[blockIndex(own[k])];
      regionNextUse[inst.firstRegion + k] = b.nextUse; // kNever: the last use of the block's value
    }
    for (const Region &r : own)
      if (nki::isOnChip(info(r.tensor).buffer)) blocks[blockIndex(r)].nextUse = static_cast<uint32_t>(i);
    // An SBUF write of a whole block that does not read it starts a new value: the value before it
    // dies at its last access, so a tile made in a sequential_range body (one buffer, rewritten
    // every iteration) is live one iteration at a time, not across the loop (RC21).
    for (const Region &w : t.writes(inst)) {
      if (info(w.tensor).buffer != nki::Buffer::SBUF || w.begin != 0 || w.end != info(w.tensor).bytesPerPartition)
        continue;
      bool reads = std::any_of(t.reads(inst).begin(), t.reads(inst).end(),
                               [&](const Region &r) { return r.tensor == w.tensor && r.block == w.block; });
      if (!reads) blocks[blockIndex(w)].nextUse = kNever;
    }
  }

  // Forward pass: the SBUF footprint of the live blocks, to know whether the
  // eviction machinery is needed at all.
  uint64_t live = 0, peak = 0;
  for (size_t i = 0; i < instructions.size(); ++i) {
    const Instruction &inst = instructions[i];
    auto own = regions.slice(inst.firstRegion, inst.numReads + inst.numWrites);
    for (const Region &r : own) {
      if (info(r.tensor).buffer != nki::Buffer::SBUF || isSunk(r.tensor)) continue;
      BlockState &b = blocks[blockIndex(r)];
      if (b.residency != Residency::Resident) { // untouched, or dead and written anew
        b.residency = Residency::Resident;
        live += info(r.tensor).bytesPerPartition;
        liveOf[r.tensor] += info(r.tensor).bytesPerPartition;
        peakLiveOf[r.tensor] = std::max(peakLiveOf[r.tensor], liveOf[r.tensor]);
      }
    }
    peak = std::max(peak, live);
    for (size_t k = 0; k < own.size(); ++k) {
      const Region &r = own[k];
      if (info(r.tensor).buffer != nki::Buffer::SBUF || isSunk(r.tensor)) continue;
      BlockState &b = blocks[blockIndex(r)];
      if (regionNextUse[inst.firstRegion + k] == kNever && b.residency == Residency::Resident) {
        b.residency = Residency::Dead;
        live -= info(r.tensor).bytesPerPartition;
        liveOf[r.tensor] -= info(r.tensor).bytesPerPartition;
      }
    }
  }
  for (BlockState &b : blocks) b.residency = Residency::Untouched;
  findFusedChains();
  if (hw.scheduler.singleBufferEngineTiles)
    for (size_t i = 0; i < tensorInfos.size(); ++i)
      oneBuffer[i] = tensors[i].buffer == nki::Buffer::SBUF && engineWritten[i] && tensorInfos[i].numBlocks > 1 &&
                     peakLiveOf[i] == tensors[i].bytesPerPartition;
  result.peakLiveSbufBytesPerPartition = peak;
  sbufOversubscribed = peak > hw.memory.sbufUsableBytesPerPartition();

  segments.clear();
  dma.reset(hw.dma);
  engineFree.fill(0);
  for (BusyTimeline &t : engineSlots) t.reset();
  barrier = maxEnd = 0;
  computeFront = dmaFence = 0;
  pendingFree.clear();
  pendingFreeBytes = 0;
  engineFence.fill(0);
  liveSbufBytes = 0;
  residentBlocks.clear();
  evictionHeap.clear();
  psumBanks.assign(hw.memory.psumBanks, PsumBank{});
  statements.clear();
  return llvm::Error::success();
}

namespace {
bool isElementwise(OpKind op) {
  switch (op) {
  case OpKind::Activation:
  case OpKind::TensorTensor:
  case OpKind::TensorScalar:
  case OpKind::ScalarTensorTensor:
  case OpKind::TensorCopy:
  case OpKind::Reciprocal: return true;
  default: return false;
  }
}
} // namespace

/// The compiler fuses an elementwise VectorE instruction into the next engine instruction when that
/// is an elementwise VectorE instruction too and the only reader of the tile the first one writes
/// (a tile only engines access): one instruction computes both, reading the first one's inputs.
void TimingModel::Simulation::findFusedChains() {
  auto instructions = trace->instructions();
  fusedInto.assign(instructions.size(), kNil);
  fusedFrom.assign(instructions.size(), kNil);
  if (!target->scheduler.fuseElementwiseChains) return;
  auto onVector = [&](const Instruction &inst) {
    return isElementwise(inst.op) && resolveEngine(*target, inst) == ComputeEngine::Vector &&
           (inst.engine != nki::Engine::Unknown || target->cost(inst.op).alternativeEngines.empty());
  };
  uint32_t prev = kNil;
  for (uint32_t i = 0; i < instructions.size(); ++i) {
    const Instruction &inst = instructions[i];
    if (isDma(inst.op)) continue;
    if (prev != kNil && onVector(instructions[prev]) && onVector(inst) && instructions[prev].numWrites == 1) {
      const Instruction &p = instructions[prev];
      const Region &w = trace->writes(p)[0];
      uint32_t wIndex = p.firstRegion + p.numReads;
      bool whole = w.begin == 0 && w.end == info(w.tensor).bytesPerPartition;
      unsigned readsOfIt = 0;
      bool lastReader = true;
      for (unsigned k = 0; k < inst.numReads; ++k) {
        const Region &r = trace->regions()[inst.firstRegion + k];
        if (r.tensor != w.tensor || r.block != w.block) continue;
        ++readsOfIt;
        lastReader &= regionNextUse[inst.firstRegion + k] == kNever;
      }
      if (info(w.tensor).buffer == nki::Buffer::SBUF && engineWritten[w.tensor] && whole &&
          regionNextUse[wIndex] == i && readsOfIt == 1 && lastReader) {
        fusedInto[prev] = i;
        fusedFrom[i] = prev;
      }
    }
    prev = i;
  }
}

double TimingModel::Simulation::spillTransfer(OpKind kind, TensorId tensor, double ready, bool rematerialize) {
  const TensorState &ti = info(tensor);
  uint64_t bytes = blockFootprint(tensor);
  auto transfer = dma.run(kind, bytes, static_cast<uint32_t>(ti.bytesPerPartition), ti.partitions, bytes, ready);
  result.dmaQueueBusyNs += transfer.queueWorkNs;
  ++result.dmaTransfers;
  schedule({transfer.start, transfer.end, kind, std::nullopt, UINT32_MAX, -1, -1, transfer.stripes, bytes});
  if (kind == OpKind::SpillSave) {
    result.spillSaveBytes += bytes;
    result.hbmWriteBytes += bytes;
    result.sbufReadBytes += bytes;
  } else {
    // Loading an input again is an ordinary HBM read, not spill traffic.
    if (!rematerialize) result.spillReloadBytes += bytes;
    result.hbmReadBytes += bytes;
    result.sbufWriteBytes += bytes;
  }
  maxEnd = std::max(maxEnd, transfer.end);
  return transfer.end;
}

/// Evicts the resident blocks needed furthest in the future until
/// `bytesPerPartition` more fit; returns when the freed space is usable.
double TimingModel::Simulation::makeSbufSpace(uint64_t bytesPerPartition, uint32_t position) {
  const HardwareDesc &hw = *target;
  double spaceAt = 0;
  uint64_t capacity = hw.memory.sbufUsableBytesPerPartition();
  while (liveSbufBytes + bytesPerPartition > capacity && !evictionHeap.empty()) {
    HeapEntry top = evictionHeap.front();
    BlockState &victim = blocks[top.block];
    if (victim.residency != Residency::Resident || victim.nextUse != top.nextUse) {
      std::pop_heap(evictionHeap.begin(), evictionHeap.end());
      evictionHeap.pop_back();
      continue; // stale entry
    }
    if (top.nextUse <= position) break; // everything left is used right now
    std::pop_heap(evictionHeap.begin(), evictionHeap.end());
    evictionHeap.pop_back();

    TensorId tensor = tensorOfBlock(top.block);
    if (inputCopy[tensor]) evictedCopy[tensor] = 1;
    if (victim.dirty) {
      // Spill code carries no source location (NKI.md §3.5), so it is not
      // attributed to a statement.
      victim.inHbm = true;
      victim.savedAt = spillTransfer(OpKind::SpillSave, tensor, std::max(victim.lastWriteEnd, victim.availableAt));
      victim.dirty = false;
      spaceAt = std::max(spaceAt, victim.savedAt);
    }
    spaceAt = std::max(spaceAt, victim.lastReadEnd);
    victim.residency = Residency::Spilled;
    removeResident(top.block);
    liveSbufBytes -= info(tensor).bytesPerPartition;
  }
  return spaceAt;
}

double TimingModel::Simulation::allocatePsumBanks(uint32_t block, uint64_t bytesPerPartition) {
  const HardwareDesc &hw = *target;
  uint64_t needed = std::max<uint64_t>(1, (bytesPerPartition + hw.memory.psumBankBytes - 1) / hw.memory.psumBankBytes);
  double readyAt = 0;
  uint16_t mask = 0;
  for (uint64_t n = 0; n < needed; ++n) {
    uint32_t best = kNil;
    for (uint32_t b = 0; b < psumBanks.size(); ++b)
      if (psumBanks[b].occupant == kNil && (best == kNil || psumBanks[b].freeAt < psumBanks[best].freeAt)) best = b;
    if (best == kNil) {
      ++result.psumOverflows;
      break;
    }
    psumBanks[best].occupant = block;
    readyAt = std::max(readyAt, psumBanks[best].freeAt);
    mask |= static_cast<uint16_t>(1u << best);
  }
  blocks[block].psumBanks = mask;
  return readyAt;
}

void TimingModel::Simulation::releasePsumBanks(uint32_t block) {
  const BlockState &b = blocks[block];
  for (uint32_t bank = 0; bank < psumBanks.size(); ++bank)
    if (b.psumBanks & (1u << bank)) psumBanks[bank] = {kNil, std::max(b.lastReadEnd, b.lastWriteEnd)};
}

/// Makes the block of `r` resident before instruction `position` uses it;
/// returns the earliest time the instruction may start as far as space and
/// reloads are concerned.
/// The memory of a dead block is reusable once its last access has finished.
/// A new block of `bytesPerPartition` needs that much of the SBUF not held by
/// live blocks nor by dead ones still being accessed: returns when it has it.
double TimingModel::Simulation::waitForSbufSpace(uint64_t bytesPerPartition) {
  auto capacity = static_cast<int64_t>(target->memory.sbufUsableBytesPerPartition());
  int64_t slack = capacity - static_cast<int64_t>(liveSbufBytes + bytesPerPartition);
  if (static_cast<int64_t>(pendingFreeBytes) <= slack) return 0;
  std::sort(pendingFree.begin(), pendingFree.end(),
            [](const PendingFree &a, const PendingFree &b) { return a.at > b.at; });
  // The latest-freed blocks may stay busy as long as they fit in the slack.
  int64_t held = 0;
  size_t keep = 0;
  while (keep < pendingFree.size() && held + static_cast<int64_t>(pendingFree[keep].bytes) <= slack)
    held += static_cast<int64_t>(pendingFree[keep++].bytes);
  double at = keep < pendingFree.size() ? pendingFree[keep].at : 0;
  pendingFree.resize(keep);
  pendingFreeBytes = static_cast<uint64_t>(held);
  return at;
}

/// The part `r` of a sunk tile, loaded from its input for the instruction that reads it once the
/// tile's previous reader has finished; returns when it is in SBUF.
double TimingModel::Simulation::sunkLoad(const Region &r, double ready) {
  const TensorState &ti = info(r.tensor);
  const Instruction &load = trace->instructions()[copyLoad[r.tensor]];
  uint64_t bytes = (r.end - r.begin) * ti.partitions;
  ready = std::max({ready, dmaFence, blocks[blockIndex(r)].lastReadEnd});
  auto transfer = dma.run(OpKind::Load, bytes, static_cast<uint32_t>(r.end - r.begin), ti.partitions, bytes, ready);
  result.dmaQueueBusyNs += transfer.queueWorkNs;
  ++result.dmaTransfers;
  result.hbmReadBytes += bytes;
  result.sbufWriteBytes += bytes;
  if (load.stmt >= 0) {
    statement(load).dmaNs += transfer.queueWorkNs / target->dma.queues;
    ++statement(load).instructions;
  }
  schedule({transfer.start, transfer.end, OpKind::Load, std::nullopt, copyLoad[r.tensor], load.stmt, load.line,
            transfer.stripes, bytes});
  maxEnd = std::max(maxEnd, transfer.end);
  return transfer.end;
}

double TimingModel::Simulation::acquireBlock(const Region &r, bool isWrite, uint32_t position) {
  uint32_t index = blockIndex(r);
  BlockState &b = blocks[index];
  const TensorState &ti = info(r.tensor);
  if (b.residency == Residency::Resident) return b.availableAt;

  if (ti.buffer == nki::Buffer::PSUM) {
    b.residency = Residency::Resident;
    return allocatePsumBanks(index, ti.bytesPerPartition);
  }

  double readyAt = sbufOversubscribed ? makeSbufSpace(ti.bytesPerPartition, position) : 0;
  if (oneBuffer[r.tensor]) readyAt = std::max(readyAt, lastAccessEnd[r.tensor]);
  if (target->scheduler.sbufReuseWaits) readyAt = std::max(readyAt, waitForSbufSpace(ti.bytesPerPartition));
  bool overwritesAll = isWrite && r.begin == 0 && r.end == ti.bytesPerPartition;
  if (b.residency == Residency::Spilled && b.inHbm && !overwritesAll) {
    b.availableAt = spillTransfer(OpKind::SpillReload, r.tensor, std::max(readyAt, b.savedAt), b.reloadable);
    readyAt = b.availableAt;
  }
  b.residency = Residency::Resident;
  liveSbufBytes += ti.bytesPerPartition;
  if (sbufOversubscribed) {
    addResident(index);
    b.nextUse = position; // pinned until this instruction has its operands
    pushEviction(index);
  }
  return readyAt;
}

/// Profile counters of one trace instruction (NKI.md §5 conventions).
void TimingModel::Simulation::accountDma(const Instruction &inst, nki::Buffer src, nki::Buffer dst) {
  (nki::isHBM(src) ? result.hbmReadBytes : result.sbufReadBytes) += inst.bytes;
  (nki::isHBM(dst) ? result.hbmWriteBytes : result.sbufWriteBytes) += inst.bytes;
  if (inst.op == OpKind::SpillSave) result.spillSaveBytes += inst.bytes;
  if (inst.op == OpKind::SpillReload) result.spillReloadBytes += inst.bytes;
}

void TimingModel::Simulation::accountCompute(const Instruction &inst, ComputeEngine engine) {
  const HardwareDesc &hw = *target;
  bool onPeArray = engine == ComputeEngine::Tensor && (inst.op == OpKind::NcMatmul || inst.op == OpKind::Transpose);
  bool fp32 = fp32Operands(inst);
  double factor = onPeArray && fp32 ? hw.profiler.fp32TensorAccessFactor : 1;
  auto add = [&](llvm::ArrayRef<Region> regions, uint64_t &sbuf, uint64_t &psum) {
    for (const Region &r : regions) {
      nki::Buffer buffer = info(r.tensor).buffer;
      auto bytes = static_cast<uint64_t>(static_cast<double>(r.end - r.begin) * factor);
      if (buffer == nki::Buffer::SBUF) sbuf += bytes;
      if (buffer == nki::Buffer::PSUM) psum += bytes;
    }
  };
  add(trace->reads(inst), result.sbufReadBytes, result.psumReadBytes);
  add(trace->writes(inst), result.sbufWriteBytes, result.psumWriteBytes);
  if (onPeArray) {
    bool transpose = inst.op == OpKind::Transpose;
    double macs = transpose ? double(inst.partitions) * inst.freeElems * inst.partitions
                            : double(inst.partitions) * inst.stationaryFreeElems * inst.freeElems;
    double flops = macs * (fp32 ? hw.profiler.flopsPerFp32Mac : hw.profiler.flopsPerMac);
    result.hardwareFlops += flops;
    if (transpose || inst.has(IsTranspose)) result.transposeFlops += flops;
  }
}

void TimingModel::Simulation::run() {
  const HardwareDesc &hw = *target;
  auto instructions = trace->instructions();
  auto markers = trace->markers();
  size_t nextMarker = 0;

  for (size_t position = 0; position < instructions.size(); ++position) {
    for (; nextMarker < markers.size() && markers[nextMarker].beforeInstruction <= position; ++nextMarker) {
      const LoopMarker &m = markers[nextMarker];
      // sequential_range iterations do not overlap (NKI.md §1.6).
      if (m.kind != LoopKind::Sequential || m.event != LoopEvent::NextIteration) continue;
      if (hw.scheduler.sequentialBarrier) {
        barrier = maxEnd;
      } else {
        // The next iteration's instructions follow this one's on every
        // engine, and its DMAs are issued after this one's engine work.
        engineFence = engineFree;
        dmaFence = computeFront;
      }
    }
    const Instruction &inst = instructions[position];
    auto pos = static_cast<uint32_t>(position);
    auto reads = trace->reads(inst);
    auto writes = trace->writes(inst);
    // A sunk load is issued by the tile's readers instead.
    if (!writes.empty() && std::all_of(writes.begin(), writes.end(), [&](const Region &w) { return isSunk(w.tensor); }))
      continue;

    double ready = barrier;
    bool readsPsum = false;
    for (const Region &r : reads) {
      const TensorState &ti = info(r.tensor);
      readsPsum |= ti.buffer == nki::Buffer::PSUM;
      if (isSunk(r.tensor))
        ready = std::max(ready, sunkLoad(r, barrier));
      else if (nki::isOnChip(ti.buffer))
        ready = std::max(ready, acquireBlock(r, false, pos));
    }
    for (const Region &r : writes)
      if (nki::isOnChip(info(r.tensor).buffer)) ready = std::max(ready, acquireBlock(r, true, pos));

    // Dependences: reads wait for writers, writes for readers and writers.
    for (const Region &r : reads) {
      if (!tensors[r.tensor].tracked || r.begin == r.end) continue;
      ready = std::max(ready, nki::isOnChip(info(r.tensor).buffer)
                                  ? segments.latest(blocks[blockIndex(r)].segments, r.begin, r.end, false)
                                  : hbm.latest(r, false));
    }
    for (const Region &r : writes) {
      if (r.begin == r.end || (!nki::isOnChip(info(r.tensor).buffer) && !hbm.tracked(r.tensor))) continue;
      ready = std::max(ready, nki::isOnChip(info(r.tensor).buffer)
                                  ? segments.latest(blocks[blockIndex(r)].segments, r.begin, r.end, true)
                                  : hbm.latest(r, true));
    }

    double end;
    // Without a barrier, a DMA inside a sequential_range is still issued in
    // program order: after the engine instructions before it (no prefetch of
    // the next iteration's data).
    if (isDma(inst.op)) ready = std::max(ready, dmaFence);
    if (isDma(inst.op)) {
      auto [src, dst] = dmaEndpoints(*trace, inst);
      uint64_t hbmBytes = (nki::isHBM(src) ? inst.bytes : 0) + (nki::isHBM(dst) ? inst.bytes : 0);
      auto transfer = dma.run(triggerQueue(inst.op, src, dst), inst.bytes, inst.bytesPerPartition, inst.partitions,
                              hbmBytes, ready);
      end = transfer.end;
      result.dmaQueueBusyNs += transfer.queueWorkNs;
      ++result.dmaTransfers;
      if (inst.stmt >= 0) statement(inst).dmaNs += transfer.queueWorkNs / hw.dma.queues;
      accountDma(inst, src, dst);
      schedule({transfer.start, end, inst.op, std::nullopt, pos, inst.stmt, inst.line, transfer.stripes, inst.bytes});
    } else {
      ComputeEngine engine = *resolveEngine(hw, inst); // checked in prepare()
      bool fill = hw.scheduler.fillIdleSlots;
      auto startOn = [&](ComputeEngine candidate, double duration) {
        auto c = static_cast<unsigned>(candidate);
        double from = std::max(ready, engineFence[c]);
        return fill ? engineSlots[c].earliestWhole(from, duration) : std::max(from, engineFree[c]);
      };
      double duration = computeDurationNs(hw, inst, engine, readsPsum);
      if (inst.has(EngineNamed) && !hw.cost(inst.op).costsOn(engine)) {
        // The description has no cost for the op on the engine the kernel names: its time is left
        // out (the estimate is a lower bound), never guessed.
        duration = 0;
        noteUncosted(inst, engine);
      }
      if (inst.engine == nki::Engine::Unknown) {
        // The compiler places an engine-agnostic op where it finishes first.
        double bestEnd = startOn(engine, duration) + duration;
        for (ComputeEngine alt : hw.cost(inst.op).alternativeEngines) {
          double d = computeDurationNs(hw, inst, alt, readsPsum);
          double altEnd = startOn(alt, d) + d;
          if (altEnd < bestEnd) {
            bestEnd = altEnd;
            engine = alt;
            duration = d;
          }
        }
      }
      auto e = static_cast<unsigned>(engine);
      double from = std::max(ready, engineFence[e]);
      end = fill ? engineSlots[e].placeWhole(from, duration) : std::max(from, engineFree[e]) + duration;
      engineFree[e] = std::max(engineFree[e], end);
      computeFront = std::max(computeFront, end);
      result.engineBusyNs[e] += duration;
      if (fusedInto[pos] == kNil) ++result.engineInstructions[e];
      if (inst.stmt >= 0) statement(inst).engineNs += duration;
      accountCompute(inst, engine);
      // A fused pair neither writes nor reads the tile between them.
      if (fusedInto[pos] != kNil) result.sbufWriteBytes -= writes[0].end - writes[0].begin;
      if (uint32_t from = fusedFrom[pos]; from != kNil) {
        const Region &w = trace->writes(trace->instructions()[from])[0];
        for (const Region &r : reads)
          if (r.tensor == w.tensor && r.block == w.block) result.sbufReadBytes -= r.end - r.begin;
      }
      schedule({end - duration, end, inst.op, engine, pos, inst.stmt, inst.line, 0, 0});
    }
    if (inst.stmt >= 0) ++statement(inst).instructions;
    maxEnd = std::max(maxEnd, end);
    // The instructions fused into this one read their inputs until it ends.
    for (uint32_t from = fusedFrom[pos]; from != kNil; from = fusedFrom[from]) {
      for (const Region &r : trace->reads(trace->instructions()[from])) {
        if (!nki::isOnChip(info(r.tensor).buffer)) continue;
        BlockState &b = blocks[blockIndex(r)];
        b.lastReadEnd = std::max(b.lastReadEnd, end);
        lastAccessEnd[r.tensor] = std::max(lastAccessEnd[r.tensor], end);
        if (tensors[r.tensor].tracked && r.begin < r.end)
          segments.recordRead(b.segments, static_cast<uint32_t>(r.begin), static_cast<uint32_t>(r.end), end);
      }
    }

    for (const Region &r : reads) {
      if (!tensors[r.tensor].tracked) continue;
      if (nki::isOnChip(info(r.tensor).buffer)) {
        BlockState &b = blocks[blockIndex(r)];
        b.lastReadEnd = std::max(b.lastReadEnd, end);
        lastAccessEnd[r.tensor] = std::max(lastAccessEnd[r.tensor], end);
        if (r.begin < r.end)
          segments.recordRead(b.segments, static_cast<uint32_t>(r.begin), static_cast<uint32_t>(r.end), end);
      } else if (r.begin < r.end) {
        hbm.recordRead(r, end);
      }
    }
    for (const Region &r : writes) {
      if (nki::isOnChip(info(r.tensor).buffer)) {
        BlockState &b = blocks[blockIndex(r)];
        b.lastWriteEnd = std::max(b.lastWriteEnd, end);
        lastAccessEnd[r.tensor] = std::max(lastAccessEnd[r.tensor], end);
        // A load from an input nobody writes leaves a copy of HBM data behind.
        bool fromInput = inst.op == OpKind::Load && reads.size() == 1 &&
                         !nki::isOnChip(info(reads.front().tensor).buffer) && !tensors[reads.front().tensor].tracked;
        bool wholeBlock = r.begin == 0 && r.end == info(r.tensor).bytesPerPartition;
        if (fromInput && (wholeBlock || b.reloadable) && !b.dirty) {
          b.reloadable = true;
          b.inHbm = true;
        } else {
          b.reloadable = false;
          b.dirty = true;
        }
        if (r.begin < r.end)
          segments.recordWrite(b.segments, static_cast<uint32_t>(r.begin), static_cast<uint32_t>(r.end), end);
      } else if (r.begin < r.end && hbm.tracked(r.tensor)) {
        hbm.recordWrite(r, end);
      }
    }

    // Unpin this instruction's blocks with their next use, free dead ones.
    auto own = trace->regions().slice(inst.firstRegion, inst.numReads + inst.numWrites);
    for (size_t k = 0; k < own.size(); ++k) {
      const Region &r = own[k];
      nki::Buffer buffer = info(r.tensor).buffer;
      if (!nki::isOnChip(buffer)) continue;
      uint32_t index = blockIndex(r);
      BlockState &b = blocks[index];
      if (b.residency != Residency::Resident) continue; // freed by an earlier region
      if (regionNextUse[inst.firstRegion + k] == kNever) {
        b.residency = Residency::Dead;
        if (buffer == nki::Buffer::PSUM) {
          releasePsumBanks(index);
        } else {
          liveSbufBytes -= info(r.tensor).bytesPerPartition;
          if (hw.scheduler.sbufReuseWaits) {
            pendingFree.push_back({std::max(b.lastReadEnd, b.lastWriteEnd), info(r.tensor).bytesPerPartition});
            pendingFreeBytes += info(r.tensor).bytesPerPartition;
          }
          if (sbufOversubscribed) removeResident(index);
        }
      } else if (sbufOversubscribed && buffer == nki::Buffer::SBUF) {
        b.nextUse = regionNextUse[inst.firstRegion + k];
        pushEviction(index);
      }
    }
  }

  result.makespanNs = maxEnd;
  for (const StatementCost &s : statements)
    if (s.instructions) result.statements.push_back(s);
  std::sort(result.statements.begin(), result.statements.end(),
            [](const StatementCost &a, const StatementCost &b) { return a.engineNs + a.dmaNs > b.engineNs + b.dmaNs; });
}

TimingModel::TimingModel(HardwareDesc hw) : Hw(std::move(hw)), Scratch(std::make_unique<Simulation>()) {}
TimingModel::~TimingModel() = default;
TimingModel::TimingModel(TimingModel &&) noexcept = default;
TimingModel &TimingModel::operator=(TimingModel &&) noexcept = default;

/// At most this many load statements are sunk (a simulation each).
constexpr unsigned kMaxSunkLoads = 4;

llvm::Expected<SimulationResult> TimingModel::simulate(const Trace &trace) {
  Scratch->sunk.clear();
  if (llvm::Error err = Scratch->prepare(trace, Hw)) return err;
  Scratch->recordSchedule = RecordSchedule;
  Scratch->run();
  // The compiler sinks the load of the largest set of loaded tiles that SBUF could not keep when
  // the other tiles fit without it, then looks again; each step is a simulation of its own.
  std::vector<uint8_t> sunk(trace.tensors().size(), 0);
  for (unsigned step = 0; Hw.scheduler.sinkLoadsThatDoNotFit && step < kMaxSunkLoads; ++step) {
    const Simulation &last = *Scratch;
    std::optional<TensorId> largest;
    for (TensorId t = 0; t < last.evictedCopy.size(); ++t)
      if (last.evictedCopy[t] && !sunk[t] && (!largest || last.peakLiveOf[t] > last.peakLiveOf[*largest])) largest = t;
    if (!largest ||
        last.result.peakLiveSbufBytesPerPartition - last.peakLiveOf[*largest] > Hw.memory.sbufUsableBytesPerPartition())
      break;
    sunk[*largest] = 1;
    Scratch->sunk = sunk;
    if (llvm::Error err = Scratch->prepare(trace, Hw)) return err;
    Scratch->run();
  }
  // The trace's unmodelled work first, then the instructions the description does not cost.
  Scratch->result.unmodelled.insert(Scratch->result.unmodelled.begin(), trace.unmodelled().begin(),
                                    trace.unmodelled().end());
  return std::move(Scratch->result);
}

std::string renderTimeline(const SimulationResult &result, llvm::StringRef kernelName, llvm::StringRef backend) {
  // Tracks: one per compute engine (an engine runs one instruction at a time), then per DMA kind
  // (the compiler's queues) as many lanes as transfers of that kind overlap, so that no two events
  // of one track overlap (trace viewers draw overlapping events of a track as if nested).
  constexpr unsigned kLanesPerKind = 1000; // past that many overlapping transfers, lanes are shared
  auto kindIndex = [](OpKind op) { return static_cast<unsigned>(op) - static_cast<unsigned>(OpKind::Load); };
  std::vector<unsigned> track(result.schedule.size(), 0);
  std::vector<size_t> dmaOrder;
  for (size_t i = 0; i < result.schedule.size(); ++i) {
    if (result.schedule[i].engine)
      track[i] = static_cast<unsigned>(*result.schedule[i].engine);
    else
      dmaOrder.push_back(i);
  }
  std::stable_sort(dmaOrder.begin(), dmaOrder.end(),
                   [&](size_t a, size_t b) { return result.schedule[a].startNs < result.schedule[b].startNs; });
  std::vector<std::vector<double>> laneEnds(kNumOpKinds);
  for (size_t i : dmaOrder) {
    const ScheduledInstruction &e = result.schedule[i];
    std::vector<double> &lanes = laneEnds[kindIndex(e.op)];
    size_t lane = lanes.size();
    for (size_t l = 0; l < lanes.size(); ++l)
      if (lanes[l] <= e.startNs) {
        lane = l;
        break;
      }
    if (lane == lanes.size()) {
      if (lanes.size() < kLanesPerKind)
        lanes.push_back(0);
      else
        lane = static_cast<size_t>(std::min_element(lanes.begin(), lanes.end()) - lanes.begin());
    }
    lanes[lane] = std::max(lanes[lane], e.endNs);
    track[i] = kNumComputeEngines + kindIndex(e.op) * kLanesPerKind + static_cast<unsigned>(lane);
  }

  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  auto metadata = [&](const char *what, std::optional<unsigned> tid, const std::string &name) {
    nlohmann::ordered_json meta;
    meta["name"] = what;
    meta["ph"] = "M";
    meta["pid"] = 0;
    if (tid) meta["tid"] = *tid;
    meta["args"] = {{"name", name}};
    events.push_back(std::move(meta));
  };
  metadata("process_name", std::nullopt, kernelName.str() + " (" + backend.str() + ", simulated)");
  std::vector<bool> used(kNumComputeEngines + kNumOpKinds * kLanesPerKind, false);
  for (unsigned t : track) used[t] = true;
  for (unsigned t = 0; t < used.size(); ++t) {
    if (!used[t]) continue;
    if (t < kNumComputeEngines) {
      metadata("thread_name", t, std::string(computeEngineName(static_cast<ComputeEngine>(t))) + " engine");
      continue;
    }
    unsigned kind = (t - kNumComputeEngines) / kLanesPerKind, lane = (t - kNumComputeEngines) % kLanesPerKind;
    metadata("thread_name", t,
             "DMA " + std::string(opKindName(static_cast<OpKind>(kind + static_cast<unsigned>(OpKind::Load)))) + " " +
                 std::to_string(lane));
  }
  for (size_t i = 0; i < result.schedule.size(); ++i) {
    const ScheduledInstruction &e = result.schedule[i];
    nlohmann::ordered_json event;
    std::string name(opKindName(e.op));
    if (e.stmt >= 0) name += " S" + std::to_string(e.stmt);
    event["name"] = name;
    event["cat"] = e.engine ? "compute" : "dma";
    event["ph"] = "X";
    event["ts"] = e.startNs * 1e-3; // trace-event times are microseconds
    event["dur"] = (e.endNs - e.startNs) * 1e-3;
    event["pid"] = 0;
    event["tid"] = track[i];
    nlohmann::ordered_json args;
    if (e.instruction != UINT32_MAX)
      args["instruction"] = e.instruction;
    else
      args["spill"] = true;
    if (e.stmt >= 0) args["stmt"] = "S" + std::to_string(e.stmt);
    if (e.line >= 0) args["line"] = e.line;
    if (!e.engine) {
      args["bytes"] = e.bytes;
      args["queues"] = e.queues;
    }
    event["args"] = std::move(args);
    events.push_back(std::move(event));
  }
  nlohmann::ordered_json out;
  out["traceEvents"] = std::move(events);
  out["displayTimeUnit"] = "ns";
  out["otherData"] = {{"kernel", kernelName.str()},
                      {"backend", backend.str()},
                      {"makespan_ns", result.makespanNs},
                      {"truncated", result.scheduleTruncated}};
  return out.dump() + "\n";
}

SimulationResult combineGrid(std::vector<SimulationResult> instances, int64_t gridSize, const HardwareDesc &hw) {
  if (instances.empty() || gridSize <= 1) return instances.empty() ? SimulationResult() : std::move(instances[0]);
  const bool alike = instances.size() == 1;
  const int64_t cores = std::min<int64_t>(std::max(1u, hw.launch.gridCores), gridSize);
  SimulationResult out = std::move(instances[0]);
  std::vector<double> coreNs(size_t(cores), 0.0);
  std::map<int32_t, size_t> statementAt;
  for (size_t k = 0; k < out.statements.size(); ++k) statementAt[out.statements[k].stmt] = k;
  const SimulationResult first = alike ? out : SimulationResult();
  coreNs[0] = out.makespanNs;
  for (int64_t i = 1; i < gridSize; ++i) {
    const SimulationResult &r = alike ? first : instances[size_t(i)];
    coreNs[size_t(i % cores)] += r.makespanNs;
    for (unsigned e = 0; e < kNumComputeEngines; ++e) {
      out.engineBusyNs[e] += r.engineBusyNs[e];
      out.engineInstructions[e] += r.engineInstructions[e];
    }
    out.dmaQueueBusyNs += r.dmaQueueBusyNs;
    out.dmaTransfers += r.dmaTransfers;
    out.hbmReadBytes += r.hbmReadBytes;
    out.hbmWriteBytes += r.hbmWriteBytes;
    out.psumReadBytes += r.psumReadBytes;
    out.psumWriteBytes += r.psumWriteBytes;
    out.sbufReadBytes += r.sbufReadBytes;
    out.sbufWriteBytes += r.sbufWriteBytes;
    out.spillSaveBytes += r.spillSaveBytes;
    out.spillReloadBytes += r.spillReloadBytes;
    out.hardwareFlops += r.hardwareFlops;
    out.transposeFlops += r.transposeFlops;
    out.peakLiveSbufBytesPerPartition = std::max(out.peakLiveSbufBytesPerPartition, r.peakLiveSbufBytesPerPartition);
    out.psumOverflows += r.psumOverflows;
    for (const StatementCost &c : r.statements) {
      auto [it, added] = statementAt.emplace(c.stmt, out.statements.size());
      if (added) {
        out.statements.push_back(c);
        continue;
      }
      StatementCost &into = out.statements[it->second];
      into.instructions += c.instructions;
      into.engineNs += c.engineNs;
      into.dmaNs += c.dmaNs;
    }
    for (const UnmodelledWork &w : r.unmodelled) {
      bool known = false;
      for (const UnmodelledWork &have : out.unmodelled) known |= have.stmt == w.stmt && have.reason == w.reason;
      if (!known) out.unmodelled.push_back(w);
    }
  }
  // Engine busy time per core, so that the active-time percentages stay fractions of the makespan.
  for (double &busy : out.engineBusyNs) busy /= double(cores);
  out.dmaQueueBusyNs /= double(cores);
  out.makespanNs = *std::max_element(coreNs.begin(), coreNs.end());
  std::stable_sort(out.statements.begin(), out.statements.end(), [](const StatementCost &a, const StatementCost &b) {
    return a.engineNs + a.dmaNs > b.engineNs + b.dmaNs;
  });
  return out;
}

} // namespace accelopt::perf
