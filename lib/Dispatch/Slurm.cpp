#include "Dispatch/Slurm.h"
#include "Syntax/Errors.h"

#include "Memory/Hash.h"
#include "Profile/Backend.h"
#include "Profile/NeuronBackend.h"
#include "Syntax/SourceBuffer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <thread>

namespace accelopt::dispatch {

namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;
using search::Candidate;

namespace {

std::string pathJoin(llvm::StringRef a, llvm::StringRef b, llvm::StringRef c = "") {
  llvm::SmallString<256> p(a);
  path::append(p, b);
  if (!c.empty()) path::append(p, c);
  return std::string(p);
}

llvm::Expected<std::string> readFile(llvm::StringRef file) {
  auto buf = llvm::MemoryBuffer::getFile(file);
  if (!buf) return stringError(file + ": error: cannot read: " + buf.getError().message());
  return (*buf)->getBuffer().str();
}

llvm::Expected<nlohmann::json> readJson(llvm::StringRef file) {
  auto text = readFile(file);
  if (!text) return text.takeError();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return stringError(file + ": error: invalid JSON");
  return j;
}

/// Runs a Slurm client and returns its standard output; a non-zero exit is an
/// error carrying its standard error.
llvm::Expected<std::string> runTool(llvm::StringRef tool, const std::vector<std::string> &args) {
  auto program = llvm::sys::findProgramByName(tool);
  if (!program)
    return stringError("error: '" + tool + "' not found on PATH; --dispatch slurm needs the Slurm client tools");
  llvm::SmallString<128> out, err;
  if (fs::createTemporaryFile("accelopt-slurm", "out", out) || fs::createTemporaryFile("accelopt-slurm", "err", err))
    return stringError("error: cannot create a temporary file for " + tool);
  std::vector<llvm::StringRef> argv = {*program};
  for (const auto &a : args) argv.push_back(a);
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(out), llvm::StringRef(err)};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(*program, argv, llvm::None, redirects, /*SecondsToWait=*/120, 0, &message);
  auto stdoutText = readFile(out), stderrText = readFile(err);
  fs::remove(out);
  fs::remove(err);
  if (!stdoutText) return stdoutText.takeError();
  if (!stderrText) return stderrText.takeError();
  if (rc != 0)
    return stringError("error: " + tool + " failed (exit " + llvm::Twine(rc) +
                       "): " + llvm::StringRef(*stderrText).trim() + (message.empty() ? "" : " " + message));
  return *stdoutText;
}

std::optional<Candidate::Status> statusNamed(llvm::StringRef wire) {
  for (const search::StatusNames &n : search::CandidateStatusNames)
    if (n.status != Candidate::Pending && n.wire == wire) return n.status;
  return std::nullopt;
}

/// A verdict file as the worker writes it; nullopt while it is absent or not a
/// complete result (never half-read: files appear by rename).
std::optional<nlohmann::json> readResult(llvm::StringRef file) {
  if (!fs::exists(file)) return std::nullopt;
  auto j = readJson(file);
  if (!j) {
    llvm::consumeError(j.takeError());
    return std::nullopt;
  }
  if (!j->is_object() || !j->contains("status")) return std::nullopt;
  return *j;
}

bool applyResult(const nlohmann::json &r, Candidate &c) {
  auto status = statusNamed(r.value("status", ""));
  if (!status) return false;
  if (r.contains("profile") && !r["profile"].is_null()) {
    auto p = perf::Profile::fromJSON(r["profile"]);
    if (!p) {
      llvm::consumeError(p.takeError());
      return false;
    }
    c.profile = *p;
  }
  c.status = *status;
  c.error = r.value("error", "");
  c.ranOn = r.value("ran_on", "");
  return true;
}

/// The states after which a task will never write its result (sacct/squeue names).
bool failedState(llvm::StringRef state) {
  return state == "FAILED" || state == "TIMEOUT" || state == "CANCELLED" || state == "NODE_FAIL" ||
         state == "OUT_OF_MEMORY" || state == "BOOT_FAIL" || state == "DEADLINE" || state == "PREEMPTED" ||
         state.startswith("CANCELLED");
}
bool finishedState(llvm::StringRef state) { return state == "COMPLETED" || failedState(state); }

std::string hex(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return llvm::utohexstr(bits, /*LowerCase=*/true);
}

/// Quotes a word for the shell of sbatch --wrap.
std::string shellQuote(llvm::StringRef s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

/// Job arrays in one directory of the shared directory: submission, state
/// polling, one retry, results by rename. What a task does is in its spec
/// (runWorker reads it); what a result means is up to the caller.
class JobArrays {
public:
  struct Task {
    std::string key;
    nlohmann::json spec;                                // the batch entry, beside key and attempt
    std::function<bool(const nlohmann::json &)> accept; // false: not a complete result
    std::function<void(const std::string &reason)> fail;
    // State while it runs:
    std::string job; // "<array job>_<index>"
    unsigned attempt = 0;
    unsigned unseenPolls = 0, completedPolls = 0;
    bool done = false;
  };

  JobArrays(const SlurmOptions &o, std::string dir) : O(o), Dir(std::move(dir)) {}

  llvm::Error prepare() {
    for (const char *sub : {"job", "result", "log"})
      if (std::error_code ec = fs::create_directories(pathJoin(Dir, sub)))
        return stringError("error: cannot create '" + pathJoin(Dir, sub) + "': " + ec.message());
    return llvm::Error::success();
  }
  const std::string &dir() const { return Dir; }
  SlurmStats Stats;

  /// Runs every task that has no result yet; returns when each has one or failed.
  llvm::Error run(std::vector<Task> &tasks) {
    std::vector<Task *> toSubmit;
    for (Task &t : tasks) {
      if (auto r = readResult(resultFile(t.key)); r && t.accept(*r)) {
        t.done = true;
        ++Stats.reused;
        continue;
      }
      // Submitted by an earlier process (killed, then --resume): follow that job while Slurm still runs it.
      if (auto record = readJson(jobFile(t.key))) {
        t.job = record->value("job", "");
        t.attempt = record->value("attempt", 1u);
        auto states = query({&t});
        if (auto it = states.find(t.job); it != states.end() && !finishedState(it->second.state)) {
          ++Stats.adopted;
          notes() << "slurm: following job " << t.job << " of an earlier run\n";
          continue;
        }
        t.attempt = 0;
      } else {
        llvm::consumeError(record.takeError());
      }
      toSubmit.push_back(&t);
    }
    if (auto err = submit(toSubmit)) return err;

    std::map<std::string, std::string> notedReason; // job → pending reason already shown
    for (;;) {
      std::vector<Task *> open;
      for (Task &t : tasks)
        if (!t.done) {
          if (auto r = readResult(resultFile(t.key)); r && t.accept(*r))
            t.done = true;
          else
            open.push_back(&t);
        }
      if (open.empty()) return llvm::Error::success();
      std::this_thread::sleep_for(std::chrono::duration<double>(O.pollSeconds));
      auto states = query(open);
      std::vector<Task *> retry;
      for (Task *t : open) {
        if (readResult(resultFile(t->key))) continue; // arrived meanwhile: taken next round
        auto it = states.find(t->job);
        const TaskState *state = it == states.end() ? nullptr : &it->second;
        if (!state)
          ++t->unseenPolls;
        else if (state->state == "COMPLETED")
          ++t->completedPolls;
        else if (state->state == "PENDING" && notedReason[t->job] != state->reason) {
          notedReason[t->job] = state->reason;
          // The usual waits are not news; a drained or down node is.
          if (state->reason != "None" && state->reason != "Priority" && state->reason != "Resources")
            notes() << "slurm: job " << t->job << " pending (" << state->reason << ")\n";
        }
        TaskOutcome outcome =
            judgeTask(state, t->attempt, O.retries, t->unseenPolls * O.pollSeconds, t->completedPolls * O.pollSeconds);
        if (outcome.action == TaskOutcome::Retry) {
          notes() << "slurm: job " << t->job << " ended " << outcome.reason << "; retrying\n";
          ++Stats.retried;
          retry.push_back(t);
        } else if (outcome.action == TaskOutcome::Fail) {
          t->fail(failedTaskError(t->job, outcome, t->attempt));
          t->done = true;
          ++Stats.failed;
          notes() << "slurm: job " << t->job << " ended " << outcome.reason << "; marked failed\n";
        }
      }
      if (auto err = submit(retry)) return err;
    }
  }

private:
  SlurmOptions O;
  std::string Dir;

  llvm::raw_ostream &notes() { return O.notes ? *O.notes : llvm::nulls(); }
  std::string resultFile(llvm::StringRef key) const { return pathJoin(Dir, "result", (key + ".json").str()); }
  std::string jobFile(llvm::StringRef key) const { return pathJoin(Dir, "job", (key + ".json").str()); }

  /// Submits `tasks` as one job array; records each task's job id.
  llvm::Error submit(std::vector<Task *> tasks) {
    if (tasks.empty()) return llvm::Error::success();
    unsigned seq = 0;
    while (fs::exists(pathJoin(Dir, "batch-" + std::to_string(seq) + ".json"))) ++seq;
    std::string batchFile = pathJoin(Dir, "batch-" + std::to_string(seq) + ".json");
    nlohmann::json batch = nlohmann::json::array();
    for (Task *t : tasks) {
      ++t->attempt;
      nlohmann::json entry = t->spec;
      entry["key"] = t->key;
      entry["attempt"] = t->attempt;
      batch.push_back(entry);
    }
    if (auto err = syntax::writeFileAtomically(batchFile, batch.dump(1) + "\n")) return err;
    // --no-requeue: a task whose node fails ends NODE_FAIL and is retried once
    // like any other failure, instead of being requeued by Slurm as often as nodes fail.
    std::vector<std::string> args = {"--parsable", "--no-requeue", "--job-name=accelopt-eval",
                                     "--array=0-" + std::to_string(tasks.size() - 1),
                                     "--output=" + pathJoin(Dir, "log", "%A_%a.out")};
    if (!O.partition.empty()) args.push_back("--partition=" + O.partition);
    llvm::SmallVector<llvm::StringRef, 8> extra;
    llvm::StringRef(O.extraOptions).split(extra, ' ', -1, /*KeepEmpty=*/false);
    for (auto e : extra) args.push_back(e.str());
    args.push_back("--wrap=exec " + shellQuote(O.workerProgram) + " slurm-worker " + shellQuote(batchFile));
    auto out = runTool("sbatch", args);
    if (!out) return out.takeError();
    // --parsable: "<job id>[;<cluster>]".
    std::string job = llvm::StringRef(*out).trim().split(';').first.str();
    if (job.empty() || !llvm::all_of(job, llvm::isDigit))
      return stringError("error: sbatch answered '" + *out + "', not a job id");
    for (size_t i = 0; i < tasks.size(); ++i) {
      tasks[i]->job = job + "_" + std::to_string(i);
      tasks[i]->unseenPolls = tasks[i]->completedPolls = 0;
      nlohmann::json record = {{"job", tasks[i]->job}, {"attempt", tasks[i]->attempt}};
      if (auto err = syntax::writeFileAtomically(jobFile(tasks[i]->key), record.dump() + "\n")) return err;
    }
    Stats.submitted += tasks.size();
    notes() << "slurm: submitted job array " << job << " (" << tasks.size() << " task" << (tasks.size() == 1 ? "" : "s")
            << ")\n";
    return llvm::Error::success();
  }

  /// State, node and pending reason of each task Slurm still knows ("12_3" → ...).
  std::map<std::string, TaskState> query(const std::vector<Task *> &open) {
    std::map<std::string, TaskState> states;
    llvm::StringSet<> jobs;
    for (Task *t : open) jobs.insert(llvm::StringRef(t->job).split('_').first);
    if (jobs.empty()) return states;
    std::string list;
    for (auto &j : jobs) list += (list.empty() ? "" : ",") + j.getKey().str();
    auto out = runTool("squeue", {"-h", "-r", "-t", "all", "-j", list, "-o", "%i|%T|%N|%r"});
    if (!out) {
      llvm::consumeError(out.takeError()); // a transient controller hiccup: ask again next poll
      return states;
    }
    states = parseSqueue(*out);
    // Tasks squeue forgot (older than MinJobAge): ask the accounting, when there is one.
    for (Task *t : open) {
      if (states.count(t->job)) continue;
      auto acct = runTool("sacct", {"-n", "-P", "-X", "-j", t->job, "--format=JobID,State,NodeList"});
      if (!acct) {
        llvm::consumeError(acct.takeError());
        continue;
      }
      if (auto state = parseSacct(*acct, t->job)) states[t->job] = *state;
    }
    return states;
  }
};

/// The search's backend as a worker rebuilds it: its kind and, for the neuron
/// backend, every option of its measurements (they change a verdict).
nlohmann::json backendSpec(const search::SearchOptions &search) {
  const auto *neuron = dynamic_cast<const profile::NeuronBackend *>(search.backend.get());
  if (!neuron) return {{"kind", "sim"}};
  const profile::NeuronOptions &o = neuron->options();
  return {{"kind", "neuron"},     {"python", o.python},          {"warmup", o.warmup},
          {"runs", o.runs},       {"timeout", o.timeoutSeconds}, {"compile_options", o.compileOptions},
          {"keep_dir", o.keepDir}};
}

/// The backend of a run's context (backendSpec), for `target`.
llvm::Expected<std::shared_ptr<const profile::Backend>> backendOfSpec(const nlohmann::json &spec,
                                                                      llvm::StringRef target) {
  std::string kind = spec.is_object() ? spec.value("kind", "sim") : "sim";
  auto backend = profile::createBackend(kind, target);
  if (!backend) return backend.takeError();
  if (auto *neuron = dynamic_cast<profile::NeuronBackend *>(backend->get())) {
    profile::NeuronOptions o = neuron->options();
    o.python = spec.value("python", o.python);
    o.warmup = spec.value("warmup", o.warmup);
    o.runs = spec.value("runs", o.runs);
    o.timeoutSeconds = spec.value("timeout", o.timeoutSeconds);
    o.compileOptions = spec.value("compile_options", o.compileOptions);
    o.keepDir = spec.value("keep_dir", o.keepDir);
    neuron->setOptions(std::move(o));
  }
  return std::shared_ptr<const profile::Backend>(std::move(*backend));
}

llvm::Error checkSlurmAnswers() {
  if (auto out = runTool("squeue", {"-h", "-o", "%i"}); !out)
    return stringError("error: --dispatch slurm: Slurm does not answer: " + llvm::toString(out.takeError()));
  return llvm::Error::success();
}

} // namespace

std::map<std::string, TaskState> parseSqueue(llvm::StringRef text) {
  std::map<std::string, TaskState> states;
  llvm::SmallVector<llvm::StringRef, 16> lines;
  text.split(lines, '\n', -1, false);
  for (auto line : lines) {
    llvm::SmallVector<llvm::StringRef, 4> f;
    line.trim().split(f, '|');
    if (f.size() >= 4) states[f[0].str()] = {f[1].str(), f[2].str(), f[3].str()};
  }
  return states;
}

std::optional<TaskState> parseSacct(llvm::StringRef text, llvm::StringRef job) {
  llvm::SmallVector<llvm::StringRef, 4> f;
  text.split('\n').first.trim().split(f, '|');
  if (f.size() < 3 || f[0] != job) return std::nullopt;
  return TaskState{f[1].split(' ').first.str(), f[2].str(), ""};
}

TaskOutcome judgeTask(const TaskState *state, unsigned attempt, unsigned retries, double unseenSeconds,
                      double completedSeconds) {
  TaskOutcome outcome;
  if (!state) {
    // Unknown to squeue and sacct: give a just-submitted task time to show up.
    if (unseenSeconds >= 30) outcome.reason = "vanished from the queue";
  } else if (failedState(state->state)) {
    outcome.reason = state->state + (state->node.empty() ? "" : " on " + state->node);
  } else if (state->state == "COMPLETED") {
    // The result is renamed into place before the task exits; allow a shared file system to catch up.
    if (completedSeconds >= 10) outcome.reason = "COMPLETED without writing a result";
  }
  if (!outcome.reason.empty()) outcome.action = attempt <= retries ? TaskOutcome::Retry : TaskOutcome::Fail;
  return outcome;
}

std::string failedTaskError(llvm::StringRef job, const TaskOutcome &outcome, unsigned attempt) {
  return ("slurm job " + job + " ended " + outcome.reason + " (after " + llvm::Twine(attempt) + " attempts)").str();
}

struct SlurmEvaluator::Impl {
  explicit Impl(const SlurmOptions &o, std::string dir) : Arrays(o, std::move(dir)) {}
  JobArrays Arrays;
};

SlurmEvaluator::SlurmEvaluator(std::unique_ptr<Impl> impl) : I(std::move(impl)) {}
SlurmEvaluator::~SlurmEvaluator() = default;
const SlurmStats &SlurmEvaluator::stats() const { return I->Arrays.Stats; }
llvm::StringRef SlurmEvaluator::runDir() const { return I->Arrays.dir(); }

llvm::Expected<std::unique_ptr<SlurmEvaluator>> SlurmEvaluator::create(const SlurmOptions &options,
                                                                       llvm::StringRef kernelPath,
                                                                       const nki::InputSpecs &inputs,
                                                                       const search::SearchOptions &search) {
  // Slurm must answer before anything is written.
  if (auto err = checkSlurmAnswers()) return err;
  auto text = readFile(kernelPath);
  if (!text) return text.takeError();
  llvm::SmallString<256> absKernel(kernelPath), shared(options.sharedDir);
  fs::make_absolute(absKernel);
  fs::make_absolute(shared);
  // Everything that changes a verdict; a run with the same context reuses results.
  nlohmann::json context = {{"kernel_path", std::string(absKernel)},
                            {"inputs", nki::formatInputSpecs(inputs)},
                            {"grid", inputs.grid},
                            {"kernel_name", search.kernelName},
                            {"target", search.target},
                            {"numeric_seeds", search.numericSeeds},
                            {"atol", search.tolerance.atol},
                            {"rtol", search.tolerance.rtol},
                            {"rel_l2", search.tolerance.relL2},
                            {"candidate_timeout", search.candidateTimeout},
                            {"check_all", search.checkAll},
                            {"backend", backendSpec(search)}};
  std::string run = memory::sourceHash(*text + "\n" + context.dump()).substr(0, 16);
  auto impl = std::make_unique<Impl>(options, pathJoin(shared, run));
  if (auto err = impl->Arrays.prepare()) return err;
  std::string dir = impl->Arrays.dir();
  if (std::error_code ec = fs::create_directories(pathJoin(dir, "cand")))
    return stringError("error: cannot create '" + pathJoin(dir, "cand") + "': " + ec.message());
  if (auto err = syntax::writeFileAtomically(pathJoin(dir, "original.py"), *text)) return err;
  if (auto err = syntax::writeFileAtomically(pathJoin(dir, "context.json"), context.dump(1) + "\n")) return err;
  return std::unique_ptr<SlurmEvaluator>(new SlurmEvaluator(std::move(impl)));
}

llvm::Error SlurmEvaluator::evaluate(const std::vector<Candidate *> &pending, double cutoff) {
  std::vector<JobArrays::Task> tasks;
  for (Candidate *c : pending) {
    JobArrays::Task t;
    // The same candidate under another beam cutoff may get another verdict (Slower or checked).
    t.key = c->hash.substr(0, 32) + "-" + hex(cutoff);
    t.spec = {{"kind", "candidate"}, {"cutoff", cutoff}};
    t.accept = [c](const nlohmann::json &r) { return applyResult(r, *c); };
    t.fail = [c](const std::string &reason) {
      c->status = Candidate::Invalid;
      c->error = reason;
      c->ranOn = "slurm";
    };
    std::string file = pathJoin(I->Arrays.dir(), "cand", t.key + ".py");
    if (!fs::exists(file))
      if (auto err = syntax::writeFileAtomically(file, c->text)) return err;
    tasks.push_back(std::move(t));
  }
  return I->Arrays.run(tasks);
}

void profileCase(CaseProfile &c) {
  c.ranOn = "local";
  auto backend = profile::createBackend("sim", c.target);
  if (!backend) {
    c.error = llvm::toString(backend.takeError());
    return;
  }
  nki::FrontEndOptions opts;
  opts.inputs = &c.inputs;
  auto file = nki::loadKernelFile(c.kernelPath, opts);
  if (!file) {
    c.error = llvm::toString(file.takeError());
    return;
  }
  if (file->kernels.empty()) {
    c.error = "no kernel";
    return;
  }
  auto estimate = (*backend)->estimate(file->kernels.front(), c.inputs);
  if (!estimate) {
    c.error = llvm::toString(estimate.takeError());
    return;
  }
  c.estimatedMs = estimate->profile.latency;
  if (estimate->profile.isLowerBound()) {
    c.unmodelled = estimate->profile.unmodelled.size();
    c.lowerBoundNote = estimate->profile.lowerBoundNote();
  }
}

llvm::Error profileOnSlurm(const SlurmOptions &options, std::vector<CaseProfile> &cases) {
  if (auto err = checkSlurmAnswers()) return err;
  llvm::SmallString<256> shared(options.sharedDir);
  fs::make_absolute(shared);
  JobArrays arrays(options, pathJoin(shared, "bench"));
  if (auto err = arrays.prepare()) return err;
  std::vector<JobArrays::Task> tasks;
  for (CaseProfile &c : cases) {
    llvm::SmallString<256> kernel(c.kernelPath);
    fs::make_absolute(kernel);
    auto text = readFile(kernel);
    if (!text) {
      // Unreadable here: bench reports it as the local run would.
      llvm::consumeError(text.takeError());
      profileCase(c);
      continue;
    }
    JobArrays::Task t;
    t.spec = {{"kind", "profile"},
              {"kernel_path", std::string(kernel)},
              {"inputs", nki::formatInputSpecs(c.inputs)},
              {"grid", c.inputs.grid},
              {"target", c.target}};
    // The kernel's text is part of the key: an edited kernel is profiled again.
    t.key = memory::sourceHash(*text + "\n" + t.spec.dump()).substr(0, 32);
    CaseProfile *out = &c;
    t.accept = [out](const nlohmann::json &r) {
      if (!r.contains("estimated_ms")) return false;
      out->estimatedMs = r.value("estimated_ms", 0.0);
      out->unmodelled = r.value("unmodelled", size_t(0));
      out->lowerBoundNote = r.value("lower_bound_note", "");
      out->error = r.value("error", "");
      out->ranOn = r.value("ran_on", "");
      return true;
    };
    t.fail = [out](const std::string &reason) {
      out->error = reason;
      out->ranOn = "slurm";
    };
    tasks.push_back(std::move(t));
  }
  if (auto err = arrays.run(tasks)) return err;
  if (options.notes)
    *options.notes << "slurm: " << arrays.Stats.submitted << " tasks submitted, " << arrays.Stats.retried
                   << " retried, " << arrays.Stats.failed << " failed, " << arrays.Stats.reused
                   << " results reused from " << arrays.dir() << "\n";
  return llvm::Error::success();
}

llvm::Error runWorker(llvm::StringRef batchFile, unsigned index, llvm::StringRef where) {
  auto batch = readJson(batchFile);
  if (!batch) return batch.takeError();
  if (!batch->is_array() || index >= batch->size())
    return stringError(batchFile + ": error: no task " + llvm::Twine(index) + " in this batch");
  const nlohmann::json &task = (*batch)[index];
  std::string runDir = std::string(path::parent_path(batchFile));
  std::string key = task.value("key", "");
  if (task.value("kind", "") == "profile") {
    auto inputs = nki::parseInputSpecs(task.value("inputs", ""));
    if (!inputs) return inputs.takeError();
    inputs->grid = task.value("grid", std::vector<int64_t>{});
    CaseProfile c;
    c.kernelPath = task.value("kernel_path", "");
    c.inputs = *inputs;
    c.target = task.value("target", "trn1");
    profileCase(c);
    nlohmann::json result = {{"status", "done"},           {"estimated_ms", c.estimatedMs},
                             {"unmodelled", c.unmodelled}, {"lower_bound_note", c.lowerBoundNote},
                             {"error", c.error},           {"ran_on", where.str()}};
    return syntax::writeFileAtomically(pathJoin(runDir, "result", key + ".json"), result.dump(1) + "\n");
  }
  auto context = readJson(pathJoin(runDir, "context.json"));
  if (!context) return context.takeError();
  auto original = readFile(pathJoin(runDir, "original.py"));
  if (!original) return original.takeError();
  auto candidateText = readFile(pathJoin(runDir, "cand", key + ".py"));
  if (!candidateText) return candidateText.takeError();
  auto inputs = nki::parseInputSpecs(context->value("inputs", ""));
  if (!inputs) return inputs.takeError();
  inputs->grid = context->value("grid", std::vector<int64_t>{});
  search::SearchOptions options;
  options.kernelName = context->value("kernel_name", "");
  options.target = context->value("target", "trn1");
  options.numericSeeds = context->value("numeric_seeds", 2u);
  options.tolerance.atol = context->value("atol", options.tolerance.atol);
  options.tolerance.rtol = context->value("rtol", options.tolerance.rtol);
  options.tolerance.relL2 = context->value("rel_l2", options.tolerance.relL2);
  options.candidateTimeout = context->value("candidate_timeout", options.candidateTimeout);
  options.checkAll = context->value("check_all", false);
  // The backend the user chose (--backend), with its options.
  auto backend = backendOfSpec(context->value("backend", nlohmann::json()), options.target);
  if (!backend) return backend.takeError();
  options.backend = std::move(*backend);
  // Fault injection for the cluster test: the candidate of the first task of
  // the first batch holds for ACCELOPT_FAULT_WORKER_HOLD seconds on its first
  // attempt, or on its first ACCELOPT_FAULT_WORKER_HOLD_ATTEMPTS attempts, until
  // it is cancelled (scancel mid-run) or exceeds its time limit (--time).
  if (const char *hold = std::getenv("ACCELOPT_FAULT_WORKER_HOLD")) {
    const char *attempts = std::getenv("ACCELOPT_FAULT_WORKER_HOLD_ATTEMPTS");
    auto first = readJson(pathJoin(runDir, "batch-0.json"));
    if (!first) return first.takeError();
    bool heldCandidate = first->is_array() && !first->empty() && (*first)[0].value("key", "") == key;
    if (heldCandidate && task.value("attempt", 1) <= (attempts ? std::atoi(attempts) : 1))
      std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(hold)));
  }
  auto evaluator = search::CandidateEvaluator::create(context->value("kernel_path", ""), *original, *inputs, options);
  if (!evaluator) return evaluator.takeError();
  Candidate c;
  c.text = *candidateText;
  (*evaluator)->evaluate(c, task.value("cutoff", 0.0));
  nlohmann::json result = {
      {"status", search::statusNames(c.status).wire.str()},
      {"error", c.error},
      {"ran_on", where.str()},
      {"profile", c.profile ? nlohmann::json::parse(c.profile->toJSON().dump()) : nlohmann::json()}};
  return syntax::writeFileAtomically(pathJoin(runDir, "result", key + ".json"), result.dump(1) + "\n");
}

} // namespace accelopt::dispatch
