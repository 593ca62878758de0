#include "Search/Search.h"

#include "Analysis/Verifier.h"
#include "Memory/Hash.h"
#include "Profile/NumericCheck.h"
#include "Profile/SimulatorBackend.h"
#include "Rewrite/Rewrite.h"

#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>

namespace accelopt::search {

static llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

std::string normalisedHash(llvm::StringRef text) { return memory::sourceHash(text); }

namespace {

const nki::Kernel *selectKernel(const nki::KernelFile &file, const std::string &name) {
  for (const auto &k : file.kernels)
    if (name.empty() || k.name == name) return &k;
  return nullptr;
}

class Loop {
public:
  Loop(const SearchOptions &o, Planner &p, SearchObserver *obs, const nki::InputSpecs &inputs, std::string path)
      : O(o), P(p), Obs(obs), Inputs(inputs), Path(std::move(path)) {}

  llvm::Expected<SearchResult> run() {
    auto start = std::chrono::steady_clock::now();
    if (O.backend) {
      Backend = O.backend;
    } else {
      auto backend = profile::createBackend("sim", O.target);
      if (!backend) return backend.takeError();
      Backend = std::move(*backend);
    }
    auto source = syntax::SourceBuffer::fromFile(Path);
    if (!source) return source.takeError();
    std::string text = (*source)->text().str();
    auto file = parse(text);
    if (!file) return file.takeError();
    const nki::Kernel *kernel = selectKernel(*file, O.kernelName);
    if (!kernel) return error(Path + ": error: no kernel to optimize");
    auto diags = analysis::verify(*kernel);
    if (analysis::hasErrors(diags))
      return error(Path + ": error: the kernel does not verify; run 'accelopt-rewrite check' first");
    Candidate original;
    original.id = 0;
    original.text = text;
    original.hash = normalisedHash(text);
    auto profile = Backend->profile(*kernel, Inputs);
    if (!profile) return profile.takeError();
    original.profile = *profile;
    original.status = Candidate::Correct;
    if (auto err = makeBaseline(*file, *kernel)) return err;
    Result.candidates.push_back(original);
    Seen[original.hash] = 0;
    if (Obs) Obs->candidateEvaluated(original);
    std::vector<int> beam = {0};
    for (int it = 1; it <= O.iterations; ++it) {
      std::vector<Candidate> pending = propose(beam, it);
      double cutoff = 0;
      for (int b : beam) cutoff = std::max(cutoff, Result.candidates[b].latency());
      evaluate(pending, cutoff);
      IterationRecord rec;
      rec.iteration = it;
      rec.evaluated = pending.size();
      std::vector<int> fresh;
      for (auto &c : pending) {
        c.id = int(Result.candidates.size());
        if (c.status == Candidate::Correct) {
          fresh.push_back(c.id);
          ++rec.correct;
        }
        Seen[c.hash] = c.id;
        Result.candidates.push_back(std::move(c));
        if (Obs) Obs->candidateEvaluated(Result.candidates.back());
        if (Result.candidates.back().parent >= 0)
          P.observe(Result.candidates[Result.candidates.back().parent], Result.candidates.back());
      }
      beam = nextBeam(fresh, beam);
      if (Obs) Obs->beamSelected(it, beam);
      int best = bestCorrect();
      rec.bestId = best;
      rec.bestLatency = Result.candidates[best].latency();
      Result.iterations.push_back(rec);
      if (Obs) Obs->iterationDone(it, Result.candidates[best], Result.candidates.size() - 1,
                                  size_t(O.iterations) * O.beam * O.plans * O.samples);
    }
    Result.bestId = bestCorrect();
    Result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::move(Result);
  }

private:
  const SearchOptions &O;
  Planner &P;
  SearchObserver *Obs;
  const nki::InputSpecs &Inputs;
  std::string Path;
  std::shared_ptr<const profile::Backend> Backend;
  std::optional<profile::NumericBaseline> Baseline;
  SearchResult Result;
  std::map<std::string, int> Seen;

  llvm::Expected<nki::KernelFile> parse(const std::string &text) {
    auto src = syntax::SourceBuffer::fromText(Path, text);
    if (!src) return src.takeError();
    nki::FrontEndOptions fe;
    fe.inputs = &Inputs;
    fe.kernelName = O.kernelName;
    return nki::buildKernelFile(std::move(*src), fe);
  }

  profile::NumericCheckOptions numericOptions() const { return {O.tolerance, O.candidateTimeout}; }

  llvm::Error makeBaseline(const nki::KernelFile &file, const nki::Kernel &kernel) {
    auto baseline =
        profile::NumericBaseline::capture(file, kernel, Inputs, O.numericSeeds, numericOptions().run);
    if (!baseline)
      return llvm::handleErrors(baseline.takeError(), [](const profile::OriginalFailedError &e) {
        return error("the original kernel fails on the interpreter: " + e.message());
      });
    Baseline = std::move(*baseline);
    return llvm::Error::success();
  }

  /// Plans for every beam member, applied to their text; duplicates dropped.
  std::vector<Candidate> propose(const std::vector<int> &beam, int it) {
    std::vector<Candidate> out;
    std::map<std::string, bool> batch;
    for (size_t bi = 0; bi < beam.size(); ++bi) {
      const Candidate &parent = Result.candidates[beam[bi]];
      auto file = parse(parent.text);
      if (!file) {
        llvm::consumeError(file.takeError());
        continue;
      }
      uint64_t seed = O.seed * 1000003u + uint64_t(it) * 7919u + bi;
      std::vector<Plan> plans = P.propose(parent, *file, O.plans, O.samples, seed);
      auto src = syntax::SourceBuffer::fromText(Path, parent.text);
      if (!src) {
        llvm::consumeError(src.takeError());
        continue;
      }
      rewrite::CandidateOptions opts;
      opts.inputs = &Inputs;
      opts.kernelName = O.kernelName;
      opts.allowReplace = O.allowReplace;
      // Parsed and verified once for all of this parent's realisations.
      auto prepared = rewrite::PreparedKernel::prepare(**src, opts);
      if (!prepared) {
        llvm::consumeError(prepared.takeError());
        continue;
      }
      for (const Plan &plan : plans)
        for (const auto &ops : plan.realisations) {
          if (ops.empty() || int(parent.ops.size() + ops.size()) > O.maxOpsPerCandidate) continue;
          auto applied = rewrite::applyCandidate(*prepared, ops);
          if (applied.status != rewrite::Status::Applied) continue;  // refused: never a candidate
          Candidate c;
          c.parent = parent.id;
          c.iteration = it;
          c.plan = plan.description;
          c.patternId = plan.patternId;
          c.ops = parent.ops;
          c.ops.insert(c.ops.end(), ops.begin(), ops.end());
          c.text = std::move(applied.text);
          c.hash = normalisedHash(c.text);
          if (Seen.count(c.hash) || batch.count(c.hash)) continue;  // never re-evaluated
          if (Obs)
            if (auto known = Obs->known(c.hash)) {
              // Evaluated in an earlier (resumed) run: reuse its verdict and profile.
              c.status = known->status;
              c.profile = known->profile;
              c.error = known->error;
            }
          batch[c.hash] = true;
          out.push_back(std::move(c));
        }
    }
    return out;
  }

  void evaluate(std::vector<Candidate> &pending, double cutoff) {
    auto one = [this, cutoff](Candidate &c) {
      if (c.status != Candidate::Pending) return;
      auto file = parse(c.text);
      if (!file) {
        c.status = Candidate::Invalid;
        c.error = llvm::toString(file.takeError());
        return;
      }
      const nki::Kernel *k = selectKernel(*file, O.kernelName);
      if (!k || analysis::hasErrors(analysis::verify(*k))) {
        c.status = Candidate::Invalid;
        c.error = "does not verify";
        return;
      }
      // Profile first: it is cheap, and a candidate slower than the whole beam
      // can never be selected, so its numeric check can wait (--check-all).
      auto profile = Backend->profile(*k, Inputs);
      if (!profile) {
        c.status = Candidate::Invalid;
        c.error = llvm::toString(profile.takeError());
        return;
      }
      c.profile = *profile;
      if (!O.checkAll && c.latency() >= cutoff) {
        c.status = Candidate::Slower;
        return;
      }
      std::vector<profile::SeedCheck> checks = Baseline->check(*file, *k, numericOptions());
      if (!checks.empty() && !checks.back().equal()) {
        c.status = checks.back().outcome == profile::SeedCheck::InputsFailed ? Candidate::Invalid : Candidate::Incorrect;
        c.error = checks.back().firstDifference();
        return;
      }
      c.status = Candidate::Correct;
    };
    if (O.jobs <= 1) {
      for (auto &c : pending) one(c);
      return;
    }
    llvm::ThreadPool pool(llvm::hardware_concurrency(O.jobs));
    for (auto &c : pending) pool.async([&one, &c] { one(c); });
    pool.wait();
  }

  /// The best B correct new candidates, refilled from the previous beam.
  std::vector<int> nextBeam(std::vector<int> fresh, const std::vector<int> &previous) {
    auto byLatency = [this](int a, int b) {
      double la = Result.candidates[a].latency(), lb = Result.candidates[b].latency();
      return la != lb ? la < lb : a < b;
    };
    std::sort(fresh.begin(), fresh.end(), byLatency);
    std::vector<int> next(fresh.begin(), fresh.begin() + std::min<size_t>(fresh.size(), O.beam));
    std::vector<int> prev = previous;
    std::sort(prev.begin(), prev.end(), byLatency);
    for (int p : prev)
      if (int(next.size()) < O.beam && std::find(next.begin(), next.end(), p) == next.end()) next.push_back(p);
    return next;
  }

  int bestCorrect() const {
    int best = 0;
    for (const auto &c : Result.candidates)
      if (c.status == Candidate::Correct && c.latency() < Result.candidates[best].latency()) best = c.id;
    return best;
  }
};

} // namespace

llvm::Expected<SearchResult> optimize(llvm::StringRef path, const nki::InputSpecs &inputs, Planner &planner,
                                      const SearchOptions &options, SearchObserver *observer) {
  if (options.beam < 1 || options.plans < 1 || options.samples < 1 || options.iterations < 0)
    return error("error: --beam, --plans and --samples must be at least 1");
  Loop loop(options, planner, observer, inputs, path.str());
  return loop.run();
}

} // namespace accelopt::search
