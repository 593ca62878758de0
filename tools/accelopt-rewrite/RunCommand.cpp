// accelopt-rewrite run: execute a kernel on the CPU interpreter.
#include "Command.h"
#include "KernelInputs.h"

#include "Interp/Compare.h"
#include "Interp/Npy.h"
#include "Profile/NumericCheck.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace accelopt::cli {
namespace {

cl::SubCommand RunCmd("run", "Run a kernel on seeded random inputs (or .npy files) with the CPU interpreter");
InputOptions Inputs(RunCmd);
cl::opt<std::string> File(cl::Positional, cl::desc("<kernel.py>"), cl::sub(RunCmd), cl::cat(category()));
cl::opt<uint64_t> Seed("seed", cl::desc("Seed of the random inputs (default 0)"), cl::init(0), cl::sub(RunCmd),
                       cl::cat(category()));
cl::opt<std::string> SaveDir("save", cl::desc("Write the outputs as DIR/output<i>.npy"), cl::value_desc("DIR"),
                             cl::sub(RunCmd), cl::cat(category()));
cl::opt<std::string> InputDir("input-dir", cl::desc("Read the inputs from DIR/<param>.npy"), cl::value_desc("DIR"),
                              cl::sub(RunCmd), cl::cat(category()));
cl::opt<double> Timeout("timeout", cl::desc("Stop after this many seconds (0: no limit)"), cl::init(0), cl::sub(RunCmd),
                        cl::cat(category()));
cl::opt<double> MemoryLimit("memory-limit", cl::desc("Cap on interpreter memory in GiB (default: 75% of RAM)"),
                            cl::init(0), cl::sub(RunCmd), cl::cat(category()));

int runRun() {
  if (!(MemoryLimit >= 0) || !(Timeout >= 0)) { // also NaN
    llvm::errs() << "accelopt-rewrite run: error: --memory-limit and --timeout take a number >= 0 (0: the default)\n";
    return 2;
  }
  Inputs.referenceTimeoutSeconds = Timeout;
  auto file = Inputs.load(File);
  if (!file) return reportError(file.takeError());
  applyMemoryLimit(MemoryLimit);
  int status = 0;
  for (auto &k : file->kernels) {
    auto in = !InputDir.empty() ? inputsFromDir(Inputs, k, InputDir) : inputsForSeed(Inputs, k, Seed, true);
    if (!in) return reportError(in.takeError());
    interp::RunOptions opts;
    opts.timeoutSeconds = Timeout;
    auto result = interp::runKernel(*file, k, std::move(in->args), opts);
    if (!result) {
      reportError(result.takeError());
      status = 1;
      continue;
    }
    for (auto &w : result->warnings) llvm::errs() << w << "\n";
    auto &st = result->stats;
    llvm::outs() << llvm::formatv("kernel {0}: {1} NKI calls in {2:F3} s ({3:F2} GFLOP/s of matmul)\n", k.name,
                                  st.instructions, st.seconds,
                                  st.seconds > 0 ? st.matmulFlops / st.seconds / 1e9 : 0.0);
    for (size_t i = 0; i < result->outputs.size(); ++i) {
      const auto &out = result->outputs[i];
      double sum = 0, absMax = 0;
      for (float v : out.values()) {
        sum += v;
        absMax = std::max(absMax, double(std::fabs(v)));
      }
      llvm::outs() << llvm::formatv("  output {0}: {1} {2}  sum {3:E6}  max|x| {4:E6}\n", i,
                                    interp::formatShape(out.shape()), nki::dtypeName(out.dtype()), sum, absMax);
      if (!SaveDir.empty()) {
        llvm::sys::fs::create_directories(SaveDir);
        llvm::SmallString<256> path(SaveDir);
        llvm::sys::path::append(path, (file->kernels.size() > 1 ? k.name + "_" : std::string()) + "output" +
                                          std::to_string(i) + ".npy");
        if (auto err = interp::writeNpy(path, out)) return reportError(std::move(err));
        llvm::outs() << "  saved " << path << "\n";
      }
    }
    if (!in->reference.empty() && in->reference.size() != result->outputs.size()) {
      // Never a silent pass: an output with nothing to compare against, or a reference output no kernel
      // output matches, is a failed comparison.
      llvm::errs() << llvm::formatv("accelopt-rewrite run: error: kernel {0} gives {1} output(s), the reference {2}; "
                                    "a kernel returns its outputs, or writes them into argument tensors\n",
                                    k.name, result->outputs.size(), in->reference.size());
      status = 1;
    }
    if (!in->reference.empty()) {
      for (size_t i = 0; i < result->outputs.size() && i < in->reference.size(); ++i) {
        // AccelOpt's correctness criterion against numpy is the relative L2 error, at the precision of
        // the kernel's narrowest dtype (a bf16 kernel cannot match numpy to fp32's bound).
        interp::Tolerance tol = profile::toleranceFor(k, interp::Tolerance{});
        auto c = interp::compareArrays(result->outputs[i], in->reference[i], tol);
        bool pass = c.shapesMatch && c.relL2 < tol.relL2;
        llvm::outs() << llvm::formatv(
            "  vs reference output {0}: relative L2 error {1:E3} ({2}, bound {3:E0}), max |error| "
            "{4:E3}, {5}\n",
            i, c.relL2, pass ? "pass" : "FAIL", tol.relL2, c.maxAbsError,
            c.allclose ? std::string("allclose")
                       : llvm::formatv("not allclose(atol {0}, rtol {1})", llvm::format("%g", tol.atol),
                                       llvm::format("%g", tol.rtol))
                             .str());
        if (!pass) status = 1;
      }
    }
  }
  return status;
}

RegisterCommand Registration(RunCmd, runRun);

} // namespace
} // namespace accelopt::cli
