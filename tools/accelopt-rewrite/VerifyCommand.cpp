// accelopt-rewrite verify: are two kernels numerically equal (and equal to the reference)?
#include "BackendOptions.h"
#include "Command.h"
#include "KernelInputs.h"

#include "Profile/NumericCheck.h"

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
cl::opt<double> Timeout("timeout", cl::desc("Per-run time limit in seconds (0: none)"), cl::init(0), cl::sub(VerifyCmd),
                        cl::cat(category()));
BackendOptions Backend(VerifyCmd, /*ownTimeout=*/false);
cl::opt<std::string> Target("target",
                            cl::desc("With --backend neuron: the device family when the host does not say (trn1 "
                                     "default, trn2)"),
                            cl::value_desc("NAME"), cl::init("trn1"), cl::sub(VerifyCmd), cl::cat(category()));

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
  if (Seeds == 0) { // nothing would run, and "equal" would be a claim without evidence
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
  // The bound comes from the original's dtypes (a bf16 kernel is compared at bf16's precision).
  profile::NumericCheckOptions check(profile::toleranceFor(ko, {ATol, RTol, RelL2}), Timeout);
  check.stopAtFirstDifference = false; // report every output of every seed
  auto binding = bindParameters(ko, kc);
  if (!binding) return reportError(binding.takeError());
  // --backend neuron: both kernels run on the device, their outputs compared alike.
  std::unique_ptr<profile::Backend> device;
  if (Backend.neuron()) {
    auto created = Backend.create(Target, Timeout);
    if (!created) return reportError(created.takeError());
    device = std::move(*created);
  }
  const auto *neuron = dynamic_cast<const profile::NeuronBackend *>(device.get());
  bool ok = true;
  for (unsigned s = 0; s < Seeds; ++s) {
    uint64_t seed = profile::accelOptSeed(s);
    auto in = inputsForSeed(Inputs, ko, seed, true);
    if (!in) return reportError(in.takeError());
    if (neuron) {
      profile::SeedBaseline baseline;
      baseline.seed = seed;
      auto originalRun = neuron->measure(ko, in->args);
      if (!originalRun) return reportError(originalRun.takeError());
      baseline.inputs = std::move(in->args);
      baseline.outputs = std::move(originalRun->outputs);
      baseline.reference = std::move(in->reference);
      auto args = profile::candidateInputs(baseline, kc, *binding);
      if (!args) return reportError(args.takeError());
      // The original ran, so a candidate that does not is the verdict, not a tool error.
      auto candidateRun = neuron->measure(kc, *args);
      profile::SeedCheck result;
      if (candidateRun) {
        llvm::outs() << llvm::formatv("seed {0}: latency median original {1:F4} ms, candidate {2:F4} ms (backend: "
                                      "{3}, {4} runs)\n",
                                      seed, originalRun->medianMs, candidateRun->medianMs,
                                      candidateRun->profile.backend, candidateRun->latenciesMs.size());
        result = profile::compareOutputs(baseline, candidateRun->outputs, check);
      } else {
        result.seed = seed;
        result.outcome = profile::SeedCheck::CandidateFailed;
        result.error = llvm::toString(candidateRun.takeError());
      }
      result.render(llvm::outs(), check.tolerance);
      ok &= result.equal();
      if (result.outcome != profile::SeedCheck::Compared) break;
      continue;
    }
    // One seed at a time: a full-size kernel's inputs and outputs are large.
    auto baseline = profile::captureSeed(*original, ko, seed, std::move(in->args), std::move(in->reference), check.run);
    if (!baseline) {
      if (baseline.errorIsA<profile::OriginalFailedError>()) {
        llvm::outs() << "seed " << seed << ": original failed: ";
        llvm::outs().flush();
      }
      return reportError(baseline.takeError());
    }
    profile::SeedCheck result = profile::checkSeed(*baseline, *candidate, kc, check, *binding);
    if (result.outcome == profile::SeedCheck::InputsFailed)
      return reportError(llvm::createStringError(llvm::inconvertibleErrorCode(), result.error));
    result.render(llvm::outs(), check.tolerance);
    ok &= result.equal();
    if (result.outcome != profile::SeedCheck::Compared) break;
  }
  llvm::outs() << (ok ? "verify: equal\n" : "verify: NOT equal\n");
  return ok ? 0 : 1;
}

RegisterCommand Registration(VerifyCmd, runVerify);

} // namespace
} // namespace accelopt::cli
