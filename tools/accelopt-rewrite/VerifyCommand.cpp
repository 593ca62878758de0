// accelopt-rewrite verify: are two kernels numerically equal (and equal to the reference)?
#include "Command.h"
#include "KernelInputs.h"

#include "Interp/Compare.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace accelopt::cli {
namespace {

cl::SubCommand VerifyCmd("verify", "Run ORIGINAL and CANDIDATE on K seeds and compare (exit 0 equal, 1 not)");
InputOptions Inputs(VerifyCmd);
cl::list<std::string> Files(cl::Positional, cl::desc("<original.py> <candidate.py>"), cl::sub(VerifyCmd),
                            cl::cat(category()));
cl::opt<unsigned> Seeds("seeds", cl::desc("Number of seeds (AccelOpt's 0, 21, 42, ...; default 5)"), cl::init(5),
                        cl::sub(VerifyCmd), cl::cat(category()));
cl::opt<double> RTol("rtol", cl::desc("Relative tolerance (default 1e-2)"), cl::init(1e-2), cl::sub(VerifyCmd),
                     cl::cat(category()));
cl::opt<double> ATol("atol", cl::desc("Absolute tolerance (default 1e-4)"), cl::init(1e-4), cl::sub(VerifyCmd),
                     cl::cat(category()));
cl::opt<double> RelL2("rel-l2", cl::desc("Relative L2 error bound against the reference (default 2e-5)"),
                      cl::init(2e-5), cl::sub(VerifyCmd), cl::cat(category()));
cl::opt<double> Timeout("timeout", cl::desc("Per-run time limit in seconds (0: none)"), cl::init(0),
                        cl::sub(VerifyCmd), cl::cat(category()));

int runVerify() {
  if (Files.size() != 2) {
    llvm::errs() << "accelopt-rewrite: error: verify takes two files: ORIGINAL CANDIDATE\n";
    return 2;
  }
  if (Seeds == 0) {  // nothing would run, and "equal" would be a claim without evidence
    llvm::errs() << "accelopt-rewrite verify: error: --seeds 0 compares nothing; give at least 1 seed\n";
    return 2;
  }
  auto original = Inputs.load(Files[0]);
  if (!original) return reportError(original.takeError());
  auto candidate = Inputs.load(Files[1]);
  if (!candidate) return reportError(candidate.takeError());
  applyMemoryLimit(0);
  const nki::Kernel &ko = original->kernels.front(), &kc = candidate->kernels.front();
  interp::Tolerance tol{ATol, RTol, RelL2};
  interp::RunOptions opts;
  opts.timeoutSeconds = Timeout;
  bool ok = true;
  for (unsigned s = 0; s < Seeds; ++s) {
    uint64_t seed = accelOptSeed(s);
    auto in = inputsForSeed(Inputs, ko, seed, true);
    if (!in) return reportError(in.takeError());
    auto in2 = inputsForSeed(Inputs, kc, seed, false);  // same specs/seed: identical random inputs
    std::vector<interp::KernelArg> argsC;
    if (!in->reference.empty() || !Inputs.resolvedReference.empty()) {
      auto copy = interp::cloneArgs(in->args);
      if (!copy) return reportError(copy.takeError());
      argsC = std::move(*copy);
      if (!in2) llvm::consumeError(in2.takeError());
    } else {
      if (!in2) return reportError(in2.takeError());
      argsC = std::move(in2->args);
    }
    auto ro = interp::runKernel(*original, ko, std::move(in->args), opts);
    if (!ro) {
      llvm::outs() << "seed " << seed << ": original failed: ";
      llvm::outs().flush();
      return reportError(ro.takeError());
    }
    auto rc = interp::runKernel(*candidate, kc, std::move(argsC), opts);
    if (!rc) {
      std::string msg = llvm::toString(rc.takeError());
      llvm::outs() << "seed " << seed << ": candidate failed: " << msg << "\n";
      ok = false;
      break;
    }
    if (ro->outputs.size() != rc->outputs.size()) {
      llvm::outs() << llvm::formatv("seed {0}: original returns {1} outputs, candidate {2}\n", seed,
                                    ro->outputs.size(), rc->outputs.size());
      ok = false;
      break;
    }
    for (size_t i = 0; i < ro->outputs.size(); ++i) {
      auto c = interp::compareArrays(rc->outputs[i], ro->outputs[i], tol);
      const auto &shape = ro->outputs[i].shape();
      if (!c.shapesMatch) {
        llvm::outs() << llvm::formatv("seed {0}: output {1}: shape {2} differs from the original's {3}\n", seed, i,
                                      interp::formatShape(rc->outputs[i].shape()), interp::formatShape(shape));
        ok = false;
        continue;
      }
      llvm::outs() << llvm::formatv("seed {0}: output {1}: {2}; max |error| {3:E3} at {4} (candidate {5:G}, original "
                                    "{6:G}), {7} of {8} elements outside atol {9} + rtol {10}\n",
                                    seed, i, c.allclose ? "equal" : "DIFFERENT", c.maxAbsError, c.where(shape),
                                    c.worstActual, c.worstExpected, c.mismatches, ro->outputs[i].numel(), ATol.getValue(),
                                    RTol.getValue());
      ok &= c.allclose;
      if (i < in->reference.size()) {
        for (auto *run : {&*ro, &*rc}) {
          auto r = interp::compareArrays(run->outputs[i], in->reference[i], tol);
          // Against numpy, AccelOpt's criterion: relative L2 error under the bound.
          bool pass = r.shapesMatch && r.relL2 < RelL2;
          llvm::outs() << llvm::formatv("seed {0}: output {1} of the {2} vs the numpy reference: relative L2 {3:E3}{4}, "
                                        "max |error| {5:E3}: {6}\n",
                                        seed, i, run == &*ro ? "original" : "candidate", r.relL2,
                                        r.shapesMatch ? "" : " (element counts differ)", r.maxAbsError,
                                        pass ? "pass" : "FAIL");
          ok &= pass;
        }
      }
    }
  }
  llvm::outs() << (ok ? "verify: equal\n" : "verify: NOT equal\n");
  return ok ? 0 : 1;
}

RegisterCommand Registration(VerifyCmd, runVerify);

} // namespace
} // namespace accelopt::cli
