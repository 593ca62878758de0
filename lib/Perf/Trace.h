// The instruction stream the trace builder (TraceBuilder.cpp) emits from the kernel IR and the timing
// model consumes: one entry per NKI instruction (compute or DMA) with the
// shapes that set its cost and the memory regions that order it, plus tensor
// declarations and loop markers. Everything is plain data in flat arrays so a
// multi-million-instruction stream costs no per-instruction heap allocation.
#pragma once

#include "NKI/OpTable.h"
#include "NKI/Types.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accelopt::perf {

/// What an instruction does: the instruction list the op table's rows lower to (NKI/OpTable.h).
using OpKind = nki::Instr;
inline constexpr unsigned kNumOpKinds = nki::kNumInstrs;

constexpr bool isDma(OpKind op) { return op >= OpKind::Load && op <= OpKind::DmaCopy; }

/// Canonical lower-case name ("nc_matmul", "tensor_tensor", "load", ...).
std::string_view opKindName(OpKind op);
std::optional<OpKind> parseOpKind(std::string_view name);

/// Bits of Instruction::flags.
enum InstructionFlag : uint16_t {
  /// nc_matmul(is_transpose=True): counted in transpose_flops; NC-v3 runs it in
  /// its faster transpose mode.
  IsTranspose = 1u << 0,
  /// is_stationary_onezero / is_moving_onezero: may double fp32 matmul speed.
  OneZeroOperand = 1u << 1,
  /// The op's documented fast path holds (all-16-bit unit-stride SBUF
  /// operands, zero-fill memset of bf16/fp16, bf16 add/max reduce).
  FastPath = 1u << 2,
  /// activation / tensor_scalar with a reduce result read out (+MIN_II).
  ReduceReadout = 1u << 3,
  /// Emitted for a language-level nl.* elementwise op or an SBUF `+=`, which
  /// the compiler lowers itself (rather than an explicit nisa instruction);
  /// costed with the op's `language_cycles_per_element` when the target has it.
  LanguageLevel = 1u << 4,
  /// The kernel names the instruction's engine (engine=) rather than leaving it to the compiler.
  EngineNamed = 1u << 5,
};

using TensorId = uint32_t;

/// A tensor the stream refers to. Declare every tensor, inputs included.
struct TensorInfo {
  nki::Buffer buffer = nki::Buffer::SBUF;
  /// Blocks = product of the dims left of par_dim (1 when there are none).
  /// The compiler places each block separately, so liveness is per block.
  uint32_t numBlocks = 1;
  /// SBUF/PSUM: partitions one block spans and bytes each partition holds.
  /// HBM (linear memory): partitions = 1, bytesPerPartition = total bytes.
  uint16_t partitions = 128;
  uint64_t bytesPerPartition = 0;
  std::string name;
};

/// A byte range of one block of a tensor that an instruction reads or writes.
/// SBUF/PSUM: [begin, end) is the free-dim byte range inside each partition
/// row of the block (partitions are not told apart, which is conservative).
/// HBM: the hull of the linear byte offsets touched, block = 0; list several
/// regions when one hull would falsely overlap a later write.
struct Region {
  TensorId tensor = 0;
  uint32_t block = 0;
  uint64_t begin = 0;
  uint64_t end = 0;
  /// HBM: when nonzero, the region is the runs [begin + k * pitch, + run) up to end (a tile of
  /// some columns of each row), not the whole range.
  uint32_t run = 0;
  uint32_t pitch = 0;
};

struct Instruction {
  OpKind op = OpKind::OtherCompute;
  /// Unknown lets the hardware description's default engine for the op decide.
  /// Ignored for DMA kinds.
  nki::Engine engine = nki::Engine::Unknown;
  /// Main input dtype (the moving operand of a matmul).
  nki::DType inputDType = nki::DType::Float32;
  /// nc_matmul / TensorE transpose: dtype of the stationary operand.
  nki::DType stationaryDType = nki::DType::Float32;
  uint16_t flags = 0; ///< InstructionFlag bits
  /// Partitions of the main input: the contraction size K for nc_matmul,
  /// the partitions a DMA touches (1 for HBM->HBM).
  uint16_t partitions = 128;
  /// N: elements per partition the engine streams from the main input (the
  /// moving operand of nc_matmul, reported unmasked because the PE array
  /// streams the full tile). Unused for DMA.
  uint32_t freeElems = 0;
  /// nc_matmul: free size of the stationary operand (output partitions M).
  uint32_t stationaryFreeElems = 0;
  /// DMA: total bytes moved and the contiguous bytes of one partition's
  /// descriptor (DMA efficiency depends on it, NKI.md §3.4).
  uint64_t bytes = 0;
  uint32_t bytesPerPartition = 0;
  /// Source attribution: the kernel statement id (the "S12" of `show`) and
  /// its line; -1 for instructions without a source statement.
  int32_t stmt = -1;
  int32_t line = -1;
  /// Filled by Trace::addInstruction: reads are regions[firstRegion,
  /// firstRegion + numReads), writes follow them.
  uint32_t firstRegion = 0;
  uint16_t numReads = 0;
  uint16_t numWrites = 0;

  bool has(InstructionFlag f) const { return (flags & f) != 0; }
};

enum class LoopKind : uint8_t {
  Affine,     ///< nl.affine_range: iterations may overlap
  Sequential, ///< nl.sequential_range / Python range: iterations do not overlap
  Static,     ///< nl.static_range: unrolled, iterations may overlap
};
enum class LoopEvent : uint8_t { Enter, NextIteration, Exit };

/// A loop event placed before instruction `beforeInstruction`.
struct LoopMarker {
  uint32_t beforeInstruction = 0;
  LoopEvent event = LoopEvent::Enter;
  LoopKind kind = LoopKind::Affine;
  int32_t loopId = -1; ///< the "L3" of `show`, for attribution
};

/// Kernel work the stream leaves out because the trace builder cannot model
/// it (an access it cannot size, a call it does not know, ...). An estimate of
/// a trace with any of these is a lower bound (issue I.2).
struct UnmodelledWork {
  int32_t stmt = -1; ///< the kernel statement, -1 when none
  int32_t line = -1;
  std::string what;   ///< the source text of the statement or sub-expression
  std::string reason; ///< why the model leaves it out
};

/// An instruction stream in program (trace) order.
class Trace {
public:
  TensorId addTensor(TensorInfo info) {
    Tensors.push_back(std::move(info));
    return static_cast<TensorId>(Tensors.size() - 1);
  }

  /// Appends `inst` with its regions; returns its index in the stream.
  uint32_t addInstruction(Instruction inst, llvm::ArrayRef<Region> reads, llvm::ArrayRef<Region> writes) {
    inst.firstRegion = static_cast<uint32_t>(Regions.size());
    inst.numReads = static_cast<uint16_t>(reads.size());
    inst.numWrites = static_cast<uint16_t>(writes.size());
    Regions.insert(Regions.end(), reads.begin(), reads.end());
    Regions.insert(Regions.end(), writes.begin(), writes.end());
    Instructions.push_back(inst);
    return static_cast<uint32_t>(Instructions.size() - 1);
  }

  /// Emit enterLoop before the first iteration, nextIteration between two
  /// iterations, exitLoop after the last one.
  void enterLoop(LoopKind kind, int32_t loopId) { mark(LoopEvent::Enter, kind, loopId); }
  void nextIteration(LoopKind kind, int32_t loopId) { mark(LoopEvent::NextIteration, kind, loopId); }
  void exitLoop(LoopKind kind, int32_t loopId) { mark(LoopEvent::Exit, kind, loopId); }

  void addUnmodelled(UnmodelledWork work) { Unmodelled.push_back(std::move(work)); }

  void reserve(size_t instructions, size_t regions) {
    Instructions.reserve(instructions);
    Regions.reserve(regions);
  }
  void clear() {
    Tensors.clear();
    Instructions.clear();
    Regions.clear();
    Markers.clear();
    Unmodelled.clear();
  }

  llvm::ArrayRef<TensorInfo> tensors() const { return Tensors; }
  llvm::ArrayRef<Instruction> instructions() const { return Instructions; }
  llvm::ArrayRef<Region> regions() const { return Regions; }
  llvm::ArrayRef<LoopMarker> markers() const { return Markers; }
  llvm::ArrayRef<UnmodelledWork> unmodelled() const { return Unmodelled; }
  llvm::ArrayRef<Region> reads(const Instruction &inst) const {
    return llvm::ArrayRef<Region>(Regions).slice(inst.firstRegion, inst.numReads);
  }
  llvm::ArrayRef<Region> writes(const Instruction &inst) const {
    return llvm::ArrayRef<Region>(Regions).slice(inst.firstRegion + inst.numReads, inst.numWrites);
  }

private:
  void mark(LoopEvent event, LoopKind kind, int32_t loopId) {
    Markers.push_back({static_cast<uint32_t>(Instructions.size()), event, kind, loopId});
  }

  std::vector<TensorInfo> Tensors;
  std::vector<Instruction> Instructions;
  std::vector<Region> Regions;
  std::vector<LoopMarker> Markers;
  std::vector<UnmodelledWork> Unmodelled;
};

} // namespace accelopt::perf
