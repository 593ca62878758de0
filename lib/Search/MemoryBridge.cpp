#include "Search/MemoryBridge.h"

#include "Memory/Pattern.h"
#include "Rewrite/Rewrite.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace accelopt::search {

static memory::CandidateStatus toStore(Candidate::Status s) {
  switch (s) {
  case Candidate::Correct: return memory::CandidateStatus::Correct;
  case Candidate::Incorrect: return memory::CandidateStatus::Incorrect;
  case Candidate::Invalid:
  case Candidate::Refused: return memory::CandidateStatus::Refused;
  default: return memory::CandidateStatus::Applied; // profiled, not (yet) checked numerically
  }
}

static Candidate::Status fromStore(memory::CandidateStatus s) {
  switch (s) {
  case memory::CandidateStatus::Correct: return Candidate::Correct;
  case memory::CandidateStatus::Incorrect: return Candidate::Incorrect;
  case memory::CandidateStatus::Refused: return Candidate::Invalid;
  case memory::CandidateStatus::Applied: return Candidate::Slower;
  }
  return Candidate::Slower;
}

llvm::Expected<std::unique_ptr<MemoryBridge>> MemoryBridge::open(memory::Store &store, const nki::Kernel &kernel,
                                                                 const nlohmann::json &config, bool resume,
                                                                 memory::ExperienceConfig experiences) {
  std::unique_ptr<MemoryBridge> b(new MemoryBridge(store));
  b->Experiences = experiences;
  b->Input = kernel.source ? kernel.source->path().str() : "";
  auto id = store.recordKernel(kernel);
  if (!id) return id.takeError();
  b->Kernel = *id;
  if (resume) {
    auto last = store.latestRun(b->Kernel, /*unfinishedOnly=*/true);
    if (!last) return last.takeError();
    if (*last) {
      b->Run = (*last)->id;
      b->Resumed = true;
      if (auto err = store.setRunStatus(b->Run, memory::RunStatus::Running)) return err;
      return b;
    }
  }
  auto run = store.beginRun(b->Kernel, config);
  if (!run) return run.takeError();
  b->Run = *run;
  return b;
}

void MemoryBridge::note(llvm::Error err) {
  if (!err) return;
  if (!FirstError)
    FirstError = std::move(err);
  else
    llvm::consumeError(std::move(err));
}

std::optional<Candidate> MemoryBridge::known(const std::string &hash) {
  // Only a resumed run replays: a fresh run evaluates everything it proposes.
  if (!Resumed) return std::nullopt;
  auto rec = S.findCandidateByHash(Kernel, hash);
  if (!rec) {
    note(rec.takeError());
    return std::nullopt;
  }
  if (!*rec || (*rec)->run != Run) return std::nullopt;
  Candidate c;
  c.status = fromStore((*rec)->status);
  c.error = (*rec)->error;
  if (auto profiles = S.profilesOf((*rec)->id)) {
    for (auto &p : *profiles)
      if (auto parsed = perf::Profile::fromJSON(p.profile))
        c.profile = *parsed;
      else
        llvm::consumeError(parsed.takeError());
  } else {
    note(profiles.takeError());
  }
  if (c.status == Candidate::Correct && !c.profile) return std::nullopt; // incomplete: evaluate again
  ++Reused;
  return c;
}

void MemoryBridge::candidateEvaluated(const Candidate &c) {
  memory::NewCandidate row;
  row.kernel = Kernel;
  row.run = Run;
  if (c.parent >= 0 && DbId.count(c.parent)) row.parent = DbId[c.parent];
  row.ops = c.ops;
  row.sourceHash = c.hash;
  row.status = toStore(c.status);
  row.error = c.error;
  row.iteration = c.iteration;
  if (c.profile) row.profiles.push_back({c.profile->backend, c.profile->latency, c.profile->toJSON()});
  auto inserted = S.insertCandidate(row);
  if (!inserted) {
    note(inserted.takeError());
    return;
  }
  if (!inserted->inserted && c.profile) {
    // Known from an earlier run: keep this profile beside the stored ones when
    // its backend has none yet (a measurement next to an estimate).
    auto stored = S.profilesOf(inserted->id);
    if (!stored) {
      note(stored.takeError());
    } else if (std::none_of(stored->begin(), stored->end(),
                            [&](const memory::ProfileRecord &p) { return p.backend == c.profile->backend; })) {
      auto added = S.addProfile(inserted->id, row.profiles.front());
      if (!added) note(added.takeError());
    }
  }
  DbId[c.id] = inserted->id;
  Seen[c.id] = c;
  if (c.id > 0) ThisIteration.push_back(c.id);
  // A memory pattern's candidate is one try of that pattern; a win if it beat its parent.
  if (c.patternId && c.parent >= 0 && Seen.count(c.parent)) {
    bool win = c.status == Candidate::Correct && c.latency() < Seen[c.parent].latency();
    note(S.recordPatternTry(c.patternId, win));
  }
}

void MemoryBridge::beamSelected(int iteration, const std::vector<int> &beam) {
  std::vector<int64_t> rows;
  for (int id : beam)
    if (DbId.count(id)) rows.push_back(DbId[id]);
  note(S.recordBeam(Run, iteration, rows));
}

void MemoryBridge::iterationDone(int iteration, const Candidate &, size_t, size_t) {
  // Experiences: every evaluated parent -> child step of this iteration;
  // the store keeps AccelOpt's selection (thresholds, top-K, bounded queue).
  std::vector<memory::ExperiencePair> pairs;
  for (int id : ThisIteration) {
    const Candidate &child = Seen[id];
    if (child.status != Candidate::Correct || !Seen.count(child.parent)) continue;
    const Candidate &parent = Seen[child.parent];
    memory::ExperiencePair p;
    p.from = DbId[child.parent];
    p.to = DbId[id];
    p.fromLatencyMs = parent.latency();
    p.toLatencyMs = child.latency();
    std::vector<nlohmann::json> step(child.ops.begin() + std::min(parent.ops.size(), child.ops.size()),
                                     child.ops.end());
    p.ops = step;
    std::string opsText;
    for (auto &op : step) opsText += (opsText.empty() ? "" : ", ") + rewrite::formatOp(op);
    p.summary = llvm::formatv("{0} made the kernel {1:F3}x {2} ({3} estimate)", opsText,
                              p.speedup() >= 1 ? p.speedup() : 1 / p.speedup(), p.speedup() >= 1 ? "faster" : "slower",
                              child.profile ? child.profile->backend : "sim")
                    .str();
    pairs.push_back(std::move(p));
  }
  ThisIteration.clear();
  if (pairs.empty()) return;
  auto stored = S.addExperiences(Kernel, iteration, pairs, Experiences);
  if (!stored) {
    note(stored.takeError());
    return;
  }
  // Winning steps become patterns, generalised over the parent kernel's structure.
  for (const auto &p : pairs) {
    if (p.speedup() <= Experiences.positiveThreshold) continue;
    int parentId = -1;
    for (auto &[sid, row] : DbId)
      if (row == p.from) parentId = sid;
    if (parentId < 0) continue;
    auto src = syntax::SourceBuffer::fromText(Input, Seen[parentId].text);
    if (!src) {
      llvm::consumeError(src.takeError());
      continue;
    }
    auto file = nki::buildKernelFile(std::move(*src), {});
    if (!file) {
      llvm::consumeError(file.takeError());
      continue;
    }
    std::vector<nlohmann::json> ops = p.ops.get<std::vector<nlohmann::json>>();
    auto pattern = memory::generalisePattern(file->kernels.front(), ops);
    if (!pattern) {
      llvm::consumeError(pattern.takeError());
      continue;
    }
    auto id = S.addPattern(*pattern, Kernel);
    if (!id) note(id.takeError());
  }
}

SuggestionSource MemoryBridge::suggestions(size_t limit) {
  return [this, limit](const nki::Kernel &k) {
    std::vector<Suggestion> out;
    memory::PatternQuery q;
    q.limit = limit;
    auto found = S.suggest(k, q, 1);
    if (!found) {
      llvm::consumeError(found.takeError());
      return out;
    }
    for (auto &s : *found)
      out.push_back(
          {s.pattern, llvm::formatv("pattern p{0} from memory (win rate {1:F2})", s.pattern, s.winRate).str(), s.ops});
    return out;
  };
}

std::vector<std::tuple<std::string, nlohmann::json, double>> MemoryBridge::lessons(size_t limit) {
  std::vector<std::tuple<std::string, nlohmann::json, double>> out;
  auto rows = S.experiences(0, limit);
  if (!rows) {
    llvm::consumeError(rows.takeError());
    return out;
  }
  for (auto &r : *rows) out.emplace_back(r.summary, r.ops, r.speedup);
  return out;
}

llvm::Error MemoryBridge::finish(bool ok) {
  if (auto err = S.setRunStatus(Run, ok ? memory::RunStatus::Finished : memory::RunStatus::Failed))
    note(std::move(err));
  return std::move(FirstError);
}

} // namespace accelopt::search
