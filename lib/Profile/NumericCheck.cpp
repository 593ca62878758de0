#include "Profile/NumericCheck.h"

#include "Interp/DTypeRounding.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace accelopt::profile {

char OriginalFailedError::ID = 0;

namespace {

std::string firstLine(llvm::StringRef text) { return text.trim().split('\n').first.str(); }

std::string outputsText(size_t n) { return std::to_string(n) + " output" + (n == 1 ? "" : "s"); }

} // namespace

interp::Tolerance widenTolerance(interp::Tolerance base, double epsilon) {
  base.atol = std::max(base.atol, epsilon);
  base.rtol = std::max(base.rtol, 2 * epsilon);
  base.relL2 = std::max(base.relL2, epsilon);
  return base;
}

double narrowestEpsilon(const nki::Kernel &original) {
  double epsilon = 0;
  for (const nki::Tensor &t : original.tensors)
    if (t.dtypeKnown && nki::isFloat(t.dtype)) epsilon = std::max(epsilon, interp::dtypeEpsilon(t.dtype));
  return epsilon;
}

llvm::Expected<SeedBaseline> captureSeed(const nki::KernelFile &file, const nki::Kernel &kernel, uint64_t seed,
                                         std::vector<interp::KernelArg> inputs, std::vector<interp::NDArray> reference,
                                         const interp::RunOptions &run) {
  auto copy = interp::cloneArgs(inputs);
  if (!copy) return copy.takeError();
  auto result = interp::runKernel(file, kernel, std::move(*copy), run);
  if (!result) return llvm::make_error<OriginalFailedError>(llvm::toString(result.takeError()));
  SeedBaseline b;
  b.seed = seed;
  b.inputs = std::move(inputs);
  b.outputs = std::move(result->outputs);
  b.reference = std::move(reference);
  return b;
}

llvm::Expected<std::vector<interp::KernelArg>> candidateInputs(const SeedBaseline &baseline, const nki::Kernel &kernel,
                                                               llvm::ArrayRef<size_t> binding) {
  auto copy = interp::cloneArgs(baseline.inputs);
  if (!copy || binding.empty()) return copy;
  // The candidate gets the original's inputs under its own parameter names.
  std::vector<interp::KernelArg> args;
  for (size_t i = 0; i < kernel.params.size() && i < binding.size(); ++i) {
    if (size_t(binding[i]) >= copy->size()) continue; // an input the reference leaves to the default
    interp::KernelArg a = std::move((*copy)[binding[i]]);
    a.name = kernel.params[i].name;
    args.push_back(std::move(a));
  }
  return args;
}

SeedCheck checkSeed(const SeedBaseline &baseline, const nki::KernelFile &file, const nki::Kernel &kernel,
                    const NumericCheckOptions &options, llvm::ArrayRef<size_t> binding) {
  SeedCheck c;
  c.seed = baseline.seed;
  c.originalOutputs = baseline.outputs.size();
  auto args = candidateInputs(baseline, kernel, binding);
  if (!args) {
    c.outcome = SeedCheck::InputsFailed;
    c.error = llvm::toString(args.takeError());
    return c;
  }
  auto result = interp::runKernel(file, kernel, std::move(*args), options.run);
  if (!result) {
    c.outcome = SeedCheck::CandidateFailed;
    c.error = llvm::toString(result.takeError());
    return c;
  }
  return compareOutputs(baseline, result->outputs, options);
}

SeedCheck compareOutputs(const SeedBaseline &baseline, const std::vector<interp::NDArray> &candidateOutputs,
                         const NumericCheckOptions &options) {
  SeedCheck c;
  c.seed = baseline.seed;
  c.originalOutputs = baseline.outputs.size();
  c.candidateOutputs = candidateOutputs.size();
  if (c.candidateOutputs != c.originalOutputs || c.originalOutputs == 0) { // nothing compared is never "equal"
    c.outcome = SeedCheck::OutputCount;
    return c;
  }
  for (size_t i = 0; i < c.originalOutputs; ++i) {
    const interp::NDArray &actual = candidateOutputs[i], &expected = baseline.outputs[i];
    OutputCheck o;
    o.index = i;
    o.candidateShape = actual.shape();
    o.originalShape = expected.shape();
    o.elements = expected.numel();
    o.vsOriginal = interp::compareArrays(actual, expected, options.tolerance);
    if (o.vsOriginal.shapesMatch && i < baseline.reference.size()) {
      // Against numpy, AccelOpt's criterion: relative L2 error under the bound.
      o.originalVsReference = interp::compareArrays(expected, baseline.reference[i], options.tolerance);
      o.candidateVsReference = interp::compareArrays(actual, baseline.reference[i], options.tolerance);
      auto passes = [&](const interp::Comparison &r) { return r.shapesMatch && r.relL2 < options.tolerance.relL2; };
      o.originalMatchesReference = passes(*o.originalVsReference);
      o.candidateMatchesReference = passes(*o.candidateVsReference);
    }
    bool equal = o.equal();
    c.outputs.push_back(std::move(o));
    if (!equal && options.stopAtFirstDifference) break;
  }
  return c;
}

static constexpr const char *kNothingToCompare =
    "neither kernel has an output (each returns nothing and writes no argument tensor): nothing to compare";

bool SeedCheck::equal() const {
  if (outcome != Compared) return false;
  for (const OutputCheck &o : outputs)
    if (!o.equal()) return false;
  return true;
}

std::string SeedCheck::firstDifference() const {
  switch (outcome) {
  case InputsFailed: return firstLine(error);
  case CandidateFailed: return "fails on the interpreter: " + firstLine(error);
  case OutputCount:
    if (originalOutputs == 0 && candidateOutputs == 0) return kNothingToCompare;
    return "returns " + outputsText(candidateOutputs) + ", the original " + std::to_string(originalOutputs);
  case Compared: break;
  }
  for (const OutputCheck &o : outputs) {
    if (!o.vsOriginal.shapesMatch)
      return llvm::formatv("output {0} has another shape than the original's", o.index).str();
    if (!o.vsOriginal.allclose)
      return llvm::formatv("output {0} differs from the original's (seed {1}, max |error| {2:E3} at {3})", o.index,
                           seed, o.vsOriginal.maxAbsError, o.vsOriginal.where(o.originalShape))
          .str();
    for (auto [who, matches, cmp] : {std::tuple("original", o.originalMatchesReference, &o.originalVsReference),
                                     std::tuple("candidate", o.candidateMatchesReference, &o.candidateVsReference)})
      if (!matches)
        return llvm::formatv("output {0} of the {1} is not within relative L2 of the numpy reference (seed {2}, "
                             "relative L2 {3:E3})",
                             o.index, who, seed, (*cmp)->relL2)
            .str();
  }
  return "";
}

/// A value as printf's %g prints it (1e-05, 0.01, -inf): formatv's fixed style rounds small values to 0.00.
static std::string shortest(double v) { return llvm::formatv("{0}", llvm::format("%.6g", v)).str(); }

void SeedCheck::render(llvm::raw_ostream &os, const interp::Tolerance &tolerance) const {
  switch (outcome) {
  case InputsFailed: os << "seed " << seed << ": " << firstLine(error) << "\n"; return;
  case CandidateFailed: os << "seed " << seed << ": candidate failed: " << error << "\n"; return;
  case OutputCount:
    if (originalOutputs == 0 && candidateOutputs == 0)
      os << "seed " << seed << ": " << kNothingToCompare << "\n";
    else
      os << llvm::formatv("seed {0}: original returns {1} outputs, candidate {2}\n", seed, originalOutputs,
                          candidateOutputs);
    return;
  case Compared: break;
  }
  for (const OutputCheck &o : outputs) {
    const interp::Comparison &c = o.vsOriginal;
    if (!c.shapesMatch) {
      os << llvm::formatv("seed {0}: output {1}: shape {2} differs from the original's {3}\n", seed, o.index,
                          interp::formatShape(o.candidateShape), interp::formatShape(o.originalShape));
      continue;
    }
    os << llvm::formatv("seed {0}: output {1}: {2}; max |error| {3:E3} at {4} (candidate {5}, original "
                        "{6}), {7} of {8} elements outside atol {9} + rtol {10}\n",
                        seed, o.index, c.allclose ? "equal" : "DIFFERENT", c.maxAbsError, c.where(o.originalShape),
                        shortest(c.worstActual), shortest(c.worstExpected), c.mismatches, o.elements,
                        shortest(tolerance.atol), shortest(tolerance.rtol));
    for (auto [who, matches, cmp] : {std::tuple("original", o.originalMatchesReference, &o.originalVsReference),
                                     std::tuple("candidate", o.candidateMatchesReference, &o.candidateVsReference)}) {
      if (!*cmp) continue;
      const interp::Comparison &r = **cmp;
      os << llvm::formatv("seed {0}: output {1} of the {2} vs the numpy reference: relative L2 {3:E3}{4}, "
                          "max |error| {5:E3}: {6}\n",
                          seed, o.index, who, r.relL2, r.shapesMatch ? "" : " (element counts differ)", r.maxAbsError,
                          matches ? "pass" : "FAIL");
    }
  }
}

llvm::Expected<NumericBaseline> NumericBaseline::capture(const nki::KernelFile &file, const nki::Kernel &kernel,
                                                         const nki::InputSpecs &specs, unsigned seeds,
                                                         const interp::RunOptions &run) {
  NumericBaseline b;
  for (unsigned i = 0; i < seeds; ++i) {
    uint64_t seed = accelOptSeed(i);
    auto args = interp::makeRandomInputs(specs, seed);
    if (!args) return args.takeError();
    auto s = captureSeed(file, kernel, seed, std::move(*args), {}, run);
    if (!s) return s.takeError();
    b.Seeds.push_back(std::move(*s));
  }
  return b;
}

std::vector<SeedCheck> NumericBaseline::check(const nki::KernelFile &file, const nki::Kernel &kernel,
                                              const NumericCheckOptions &options) const {
  std::vector<SeedCheck> out;
  for (const SeedBaseline &s : Seeds) {
    out.push_back(checkSeed(s, file, kernel, options));
    if (!out.back().equal()) break;
  }
  return out;
}

std::string NumericBaseline::firstDifference(const nki::KernelFile &file, const nki::Kernel &kernel,
                                             const NumericCheckOptions &options) const {
  std::vector<SeedCheck> checks = check(file, kernel, options);
  return checks.empty() ? "" : checks.back().firstDifference();
}

} // namespace accelopt::profile
