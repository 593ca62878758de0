// Every row of the NKI op table, end to end: for each row a small kernel calls the op with
// arguments made from the row's parameter roles and slots; the verifier accepts it (`check`), the
// interpreter runs it on 8x8 tiles (`run`) and computes what the row declares, and the trace
// builder lowers it to the row's instruction on the row's engine (`profile`). A row the
// interpreter has no kernel for fails here. Lives in the Search binary, the lowest one that links
// Analysis, Interp and Perf together.
#include "Analysis/Verifier.h"
#include "Interp/Interpreter.h"
#include "Interp/TileOps.h"
#include "NKI/FrontEnd.h"
#include "NKI/OpTable.h"
#include "Perf/TraceBuilder.h"
#include "Syntax/SourceBuffer.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

namespace accelopt {
namespace {

using nki::OpInfo;
using nki::OpKind;
using nki::Role;
using nki::Slot;

constexpr int64_t kN = 8; // tiles are kN x kN

/// x and y: positive values, inside every activation function's valid range (log, sqrt, rsqrt).
float inputValue(int which, int64_t i) { return 0.25f + float(i) / 64.0f + float(which) * 0.125f; }

/// The function argument the kernel passes where a row takes one.
std::string functionArgument(const OpInfo &op, const nki::ParamInfo &p) {
  if (p.slot == Slot::Func && op.kind == OpKind::Activation) return "nl.exp";
  return "nl.add";
}

/// The argument for parameter `p`, or "" when the call leaves it out.
std::string argumentFor(const OpInfo &op, const nki::ParamInfo &p) {
  switch (p.slot) {
  case Slot::Data:
    if (op.kind == OpKind::BnAggr) return "s"; // statistics from bn_stats
    return op.kind == OpKind::Load ? "x" : "a";
  case Slot::Data2: return "b";
  case Slot::Stationary: return "a";
  case Slot::Moving: return "b";
  case Slot::Dest: return "out";
  case Slot::Func: return functionArgument(op, p);
  case Slot::Fill: return "2.0";
  case Slot::Host: return "np.identity(8, dtype=np.float32)";
  case Slot::Predicate: return "nl.greater(a, 0.75)";
  case Slot::Like: return "a";
  case Slot::None: break;
  }
  if (!p.required) return "";
  switch (p.role) {
  case Role::Func: return functionArgument(op, p);
  case Role::Operand: return op.kind == OpKind::Dropout ? "0.0" : "2.0"; // a drop probability keeps all
  case Role::Shape: return "(8, 8)";
  case Role::DType: return "nl.float32";
  case Role::Int: return "1";
  case Role::Any:
    if (op.kind == OpKind::Iota) return "nl.arange(8)[:, None] * 8 + nl.arange(8)[None, :]";
    if (op.kind == OpKind::AffineSelect) return "nl.arange(8)[:, None] >= nl.arange(8)[None, :]";
    if (op.kind == OpKind::LoopReduce) return "[i]";
    if (p.name == "reduce_res") return "nl.ndarray((8, 1), dtype=nl.float32, buffer=nl.sbuf)";
    return "<no argument for a required '" + std::string(p.name) + "'>";
  default: return "<no argument for a required '" + std::string(p.name) + "'>";
  }
}

std::string callOf(const OpInfo &op) {
  std::string call = std::string(op.name) + "(";
  bool first = true;
  for (const nki::ParamInfo &p : op.params) {
    std::string arg = argumentFor(op, p);
    if (arg.empty()) continue;
    call += (first ? "" : ", ") + std::string(p.name) + "=" + arg;
    first = false;
  }
  return call + ")";
}

struct RowKernel {
  std::string source;
  int callLine = 0;     // the line of the statement that calls the op
  int64_t outCols = kN; // the output is [kN, outCols]
};

/// The kernel exercising `op`; its output is what the op computed from x and y.
RowKernel kernelFor(const OpInfo &op) {
  std::vector<std::string> body;
  int callAt = -1;
  auto callStatement = [&](std::string line) {
    callAt = int(body.size());
    body.push_back(std::move(line));
  };
  RowKernel k;
  switch (op.kind) {
  case OpKind::Alloc:
    callStatement("r = " + callOf(op));
    if (op.slot(Slot::Host))
      body.push_back("nl.store(out, value=nl.load(r))");
    else if (op.numerics.fill || op.slot(Slot::Fill))
      body.push_back("nl.store(out, value=r)");
    else
      body.push_back("nl.store(out, value=a)"); // an uninitialised tensor has nothing to show
    break;
  case OpKind::Store:
  case OpKind::DmaCopy: callStatement(callOf(op)); break;
  case OpKind::LoopReduce:
    body.push_back("acc = nl.zeros((8, 8), dtype=nl.float32)");
    body.push_back("for i in nl.affine_range(2):");
    callStatement("  acc[nl.arange(8)[:, None], nl.arange(8)[None, :]] = " + callOf(op));
    body.push_back("nl.store(out, value=acc)");
    break;
  case OpKind::Broadcast:
    body.push_back("row = nl.load(x[0:1, :])");
    // The method form (tile.broadcast_to) or the function form with the tile as its data operand.
    callStatement(op.slot(Slot::Data) ? "r = " + std::string(op.name) + "(row, (8, 8))"
                                      : "r = row.broadcast_to((8, 8))");
    body.push_back("nl.store(out, value=r)");
    break;
  case OpKind::BnAggr: body.push_back("s = nisa.bn_stats(a)"); [[fallthrough]];
  case OpKind::BnStats:
    k.outCols = op.resultFree;
    callStatement("r = " + callOf(op));
    body.push_back("nl.store(out, value=r)");
    break;
  case OpKind::Reduce: k.outCols = 1; [[fallthrough]];
  case OpKind::Load:
  case OpKind::Copy:
  case OpKind::Matmul:
  case OpKind::Transpose:
  case OpKind::Activation:
  case OpKind::TensorTensor:
  case OpKind::TensorScalar:
  case OpKind::Scan:
  case OpKind::Reciprocal:
  case OpKind::Memset:
  case OpKind::Iota:
  case OpKind::AffineSelect:
  case OpKind::Select:
  case OpKind::Dropout:
    callStatement("r = " + callOf(op));
    body.push_back("nl.store(out, value=r)");
    break;
  }
  const std::vector<std::string> head = {"import numpy as np",
                                         "import neuronxcc.nki as nki",
                                         "import neuronxcc.nki.language as nl",
                                         "import neuronxcc.nki.isa as nisa",
                                         "",
                                         "@nki.jit",
                                         "def k(x, y):",
                                         "  out = nl.ndarray((8, " + std::to_string(k.outCols) +
                                             "), dtype=nl.float32, buffer=nl.shared_hbm)",
                                         "  a = nl.load(x)",
                                         "  b = nl.load(y)"};
  for (const std::string &line : head) k.source += line + "\n";
  for (const std::string &line : body) k.source += "  " + line + "\n";
  k.source += "  return out\n";
  k.callLine = int(head.size()) + callAt + 1;
  return k;
}

interp::NDArray input(int which) {
  std::vector<float> values(kN * kN);
  for (int64_t i = 0; i < kN * kN; ++i) values[i] = inputValue(which, i);
  return std::move(*interp::NDArray::fromValues({kN, kN}, nki::DType::Float32, values));
}

/// What the row computes on x (and y), when the row or the argument the kernel passed fixes it.
std::optional<float> expectedAt(const OpInfo &op, int64_t r, int64_t c) {
  float x = inputValue(0, r * kN + c), y = inputValue(1, r * kN + c);
  const nki::Numerics &n = op.numerics;
  switch (op.kind) {
  case OpKind::TensorTensor: return interp::applyAlu(n.alu.value_or(nki::AluOp::Add), x, y);
  case OpKind::Activation: return interp::applyActivation(n.act.value_or(nki::ActFunc::Exp), x * n.scale);
  case OpKind::Reduce: {
    nki::AluOp alu = n.alu.value_or(nki::AluOp::Add);
    interp::NDArray in = input(0);
    interp::NDArray out = std::move(*interp::NDArray::allocate({kN, 1}, nki::DType::Float32));
    llvm::consumeError(interp::tensorReduce(out.asTile(), alu, in.asTile()));
    return out.data()[r] / (n.mean ? float(kN) : 1.0f);
  }
  case OpKind::Load:
    if (op.shape == nki::ShapeRule::TransposePF) return inputValue(0, c * kN + r); // nl.load_transpose2d
    return x;
  case OpKind::Copy:
  case OpKind::Store:
  case OpKind::DmaCopy: return x;
  case OpKind::Transpose: return inputValue(0, c * kN + r);
  case OpKind::Broadcast: return inputValue(0, c);
  case OpKind::LoopReduce: return 2 * x; // add over two iterations, from a zero accumulator
  case OpKind::Memset: return 2.0f;
  case OpKind::Iota: return float(r * kN + c);
  case OpKind::Alloc:
    if (n.fill) return *n.fill;
    if (op.slot(Slot::Fill)) return 2.0f;
    if (op.slot(Slot::Host)) return r == c ? 1.0f : 0.0f;
    return x;
  case OpKind::TensorScalar: return op.slot(Slot::Data2) ? x + 2.0f + y : x + 2.0f; // scalar_tensor_tensor: + b
  case OpKind::Select: return x > 0.75f ? x : y;
  case OpKind::AffineSelect: return r >= c ? x : 2.0f; // on_false_value 2.0 above the diagonal
  case OpKind::Dropout: return x;                      // drop probability 0
  case OpKind::BnStats:
  case OpKind::BnAggr: {
    // Population statistics of row r's even (parity 0) and odd elements, or of all of them.
    auto stats = [&](int64_t parity, int64_t step) {
      double sum = 0, squares = 0;
      int64_t count = 0;
      for (int64_t j = parity; j < kN; j += step, ++count) sum += inputValue(0, r * kN + j);
      double mean = sum / double(count);
      for (int64_t j = parity; j < kN; j += step) squares += std::pow(inputValue(0, r * kN + j) - mean, 2);
      return std::array<double, 3>{double(count), mean, squares};
    };
    if (op.kind == OpKind::BnStats) return float(stats(c / 3, 2)[c % 3]);
    auto all = stats(0, 1);
    return float(c == 0 ? all[1] : all[2] / all[0]);
  }
  case OpKind::Matmul:
  case OpKind::Scan: return std::nullopt; // checked by their own tests
  }
  return std::nullopt;
}

TEST(OpTableRows, EveryRowIsCheckedRunAndLowered) {
  for (const OpInfo &op : nki::allOps()) {
    SCOPED_TRACE(std::string(op.name));
    // An elementwise or reduction row says what it computes, or takes it as an argument.
    if (op.kind == OpKind::TensorTensor || op.kind == OpKind::Reduce || op.kind == OpKind::LoopReduce)
      EXPECT_TRUE(op.numerics.alu || op.slot(Slot::Func)) << "no ALU op declared";
    if (op.kind == OpKind::Activation)
      EXPECT_TRUE(op.numerics.act || op.slot(Slot::Func)) << "no activation function declared";

    RowKernel k = kernelFor(op);
    SCOPED_TRACE(k.source);
    auto specs = nki::parseInputSpecs("x=f32[8,8],y=f32[8,8]");
    ASSERT_TRUE(bool(specs)) << llvm::toString(specs.takeError());
    nki::FrontEndOptions options;
    options.inputs = &*specs;
    auto file = nki::buildKernelFile(std::move(*syntax::SourceBuffer::fromText("row.py", k.source)), options);
    ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
    const nki::Kernel &kernel = file->kernels.front();

    // check
    for (const nki::Diagnostic &d : analysis::verify(kernel))
      EXPECT_NE(d.severity, nki::Diagnostic::Error) << d.message << " [" << d.rule << "]";

    // run
    std::vector<interp::KernelArg> args(2);
    args[0].name = "x";
    args[0].array = input(0);
    args[1].name = "y";
    args[1].array = input(1);
    auto ran = interp::runKernel(*file, kernel, std::move(args));
    if (!ran) {
      ADD_FAILURE() << "the interpreter does not run it: " << llvm::toString(ran.takeError());
    } else {
      ASSERT_EQ(ran->outputs.size(), 1u);
      const interp::NDArray &out = ran->outputs[0];
      ASSERT_EQ(out.shape(), (std::vector<int64_t>{kN, k.outCols}));
      for (int64_t r = 0; r < kN; ++r)
        for (int64_t c = 0; c < k.outCols; ++c) {
          float got = out.data()[r * k.outCols + c];
          EXPECT_TRUE(std::isfinite(got)) << "[" << r << ", " << c << "] = " << got;
          if (auto want = expectedAt(op, r, c)) EXPECT_FLOAT_EQ(got, *want) << "[" << r << ", " << c << "]";
        }
    }

    // profile: the call's statement lowers to the row's instruction on the row's engine.
    auto trace = perf::buildTrace(kernel);
    ASSERT_TRUE(bool(trace)) << llvm::toString(trace.takeError());
    bool lowered = false, onEngine = false;
    size_t atCall = 0;
    for (const perf::Instruction &inst : trace->instructions()) {
      if (inst.line != k.callLine) continue;
      ++atCall;
      if (inst.op != op.instr) continue;
      lowered = true;
      onEngine |= inst.engine == op.engine || op.engine == nki::Engine::Vector;
    }
    if (op.instr == nki::Instr::None) {
      EXPECT_EQ(atCall, 0u) << "a row without an instruction costs nothing";
    } else {
      EXPECT_TRUE(lowered) << "no " << perf::opKindName(op.instr) << " instruction on line " << k.callLine;
      EXPECT_TRUE(onEngine) << "not on " << nki::engineName(op.engine);
    }
  }
}

} // namespace
} // namespace accelopt
