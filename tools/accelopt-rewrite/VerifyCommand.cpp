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
cl::opt<std::string> ParamMap("map",
                             cl::desc("Bind the candidate's parameters to the original's: CAND=ORIG,... (default: by "
                                      "name, else by position)"),
                             cl::value_desc("CAND=ORIG,..."), cl::sub(VerifyCmd), cl::cat(category()));
cl::opt<double> Timeout("timeout", cl::desc("Per-run time limit in seconds (0: none)"), cl::init(0),
                        cl::sub(VerifyCmd), cl::cat(category()));

/// For each candidate parameter, the index of the original's parameter whose input it gets: by --map,
/// else by name, else (same count, other names) by position with a note.
llvm::Expected<std::vector<size_t>> bindParameters(const nki::Kernel &original, const nki::Kernel &candidate) {
  auto error = [](const llvm::Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "error: " + msg);
  };
  auto indexIn = [](const nki::Kernel &k, llvm::StringRef name) -> std::optional<size_t> {
    for (size_t i = 0; i < k.params.size(); ++i)
      if (k.params[i].name == name) return i;
    return std::nullopt;
  };
  std::vector<size_t> binding(candidate.params.size());
  if (!ParamMap.empty()) {
    std::vector<bool> mapped(candidate.params.size(), false);
    llvm::SmallVector<llvm::StringRef, 8> pairs;
    llvm::StringRef(ParamMap).split(pairs, ',', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef pair : pairs) {
      auto [cand, orig] = pair.split('=');
      auto c = indexIn(candidate, cand.trim()), o = indexIn(original, orig.trim());
      if (!c) return error("--map: '" + cand.trim() + "' is not a parameter of the candidate '" + candidate.name + "'");
      if (!o) return error("--map: '" + orig.trim() + "' is not a parameter of the original '" + original.name + "'");
      binding[*c] = *o;
      mapped[*c] = true;
    }
    std::vector<bool> used(original.params.size(), false);
    for (size_t i = 0; i < candidate.params.size(); ++i) {
      if (!mapped[i]) {
        auto o = indexIn(original, candidate.params[i].name);
        if (!o) return error("--map does not bind the candidate's parameter '" + candidate.params[i].name + "'");
        binding[i] = *o;
      }
      if (used[binding[i]])
        return error("--map binds two parameters to the original's '" + original.params[binding[i]].name + "'");
      used[binding[i]] = true;
    }
    return binding;
  }
  bool byName = candidate.params.size() == original.params.size();
  for (size_t i = 0; byName && i < candidate.params.size(); ++i) {
    auto o = indexIn(original, candidate.params[i].name);
    byName = o.has_value();
    if (o) binding[i] = *o;
  }
  if (byName) return binding;
  auto names = [](const nki::Kernel &k) {
    std::string out;
    for (const nki::KernelParam &p : k.params) out += (out.empty() ? "" : ", ") + p.name;
    return out;
  };
  if (candidate.params.size() != original.params.size())
    return error(llvm::formatv("the original takes {0} parameters ({1}) and the candidate {2} ({3}); bind them with "
                               "--map CAND=ORIG,...",
                               original.params.size(), names(original), candidate.params.size(), names(candidate))
                     .str());
  std::string how;
  for (size_t i = 0; i < candidate.params.size(); ++i) {
    binding[i] = i;
    how += (how.empty() ? "" : ", ") + candidate.params[i].name + "=" + original.params[i].name;
  }
  llvm::errs() << "accelopt-rewrite verify: note: the candidate names its parameters differently (" << names(candidate)
               << " vs " << names(original) << "); binding them by position: " << how << " (or give --map)\n";
  return binding;
}

int runVerify() {
  if (Files.size() != 2) {
    llvm::errs() << "accelopt-rewrite: error: verify takes two files: ORIGINAL CANDIDATE\n";
    return 2;
  }
  if (Seeds == 0) {  // nothing would run, and "equal" would be a claim without evidence
    llvm::errs() << "accelopt-rewrite verify: error: --seeds 0 compares nothing; give at least 1 seed\n";
    return 2;
  }
  Inputs.referenceTimeoutSeconds = Timeout;
  auto original = Inputs.load(Files[0]);
  if (!original) return reportError(original.takeError());
  auto candidate = Inputs.load(Files[1]);
  if (!candidate) return reportError(candidate.takeError());
  applyMemoryLimit(0);
  const nki::Kernel &ko = original->kernels.front(), &kc = candidate->kernels.front();
  interp::Tolerance tol{ATol, RTol, RelL2};
  interp::RunOptions opts;
  opts.timeoutSeconds = Timeout;
  auto binding = bindParameters(ko, kc);
  if (!binding) return reportError(binding.takeError());
  bool ok = true;
  for (unsigned s = 0; s < Seeds; ++s) {
    uint64_t seed = accelOptSeed(s);
    auto in = inputsForSeed(Inputs, ko, seed, true);
    if (!in) return reportError(in.takeError());
    // The candidate gets copies of the original's inputs, under its own parameter names.
    auto copy = interp::cloneArgs(in->args);
    if (!copy) return reportError(copy.takeError());
    std::vector<interp::KernelArg> argsC;
    for (size_t i = 0; i < kc.params.size(); ++i) {
      interp::KernelArg a = std::move((*copy)[(*binding)[i]]);
      a.name = kc.params[i].name;
      argsC.push_back(std::move(a));
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
