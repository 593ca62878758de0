// The three LLM roles of the search loop, and the session that owns their
// clients, the shared concurrency limit, the usage ledger and the transcript.
//
//   Planner::propose    kernel context -> n one-step plans (text)
//   Executor::realise   plan -> k candidate op lists (JSON arrays), each checked
//                       by the caller's validator; a refused answer goes back to
//                       the executor with the reason, up to R times, then the
//                       sample is dropped (and logged)
//   Summarizer::summarize  slow/fast listings + ops + speedup -> experience text
//
// Nothing an LLM writes is executed: answers are parsed as JSON (or kept as
// text) and handed to the caller.
#pragma once

#include "Agent/ChatClient.h"
#include "Agent/Config.h"
#include "Agent/Prompts.h"
#include "Agent/Usage.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace accelopt::agent {

/// Checks one candidate (a JSON array of op objects): op names, ids, legality.
/// An error is a refusal; its message is shown to the executor. realise()
/// calls it from its sample threads, one call at a time.
using OpsValidator = std::function<llvm::Error(const nlohmann::json &ops)>;

/// The op kinds the executor may emit: every rewrite op, in catalogue order.
const std::vector<std::string> &opKinds();

/// Turns an executor answer into a JSON array of op objects: accepts a bare
/// array, {"ops": [...]}, or a single op object, anywhere in the text. Checks
/// only the shape (non-empty, each element an object with a string "op").
llvm::Expected<nlohmann::json> parseOpsAnswer(llvm::StringRef answer);
/// Plans from a planner answer ({"plans": [...]} or a bare array; elements are
/// strings or objects with a "plan" field).
llvm::Expected<std::vector<std::string>> parsePlansAnswer(llvm::StringRef answer);

/// Where roles report samples they dropped (besides the transcript).
struct RoleLog {
  Transcript *transcript = nullptr;
  llvm::raw_ostream *notes = nullptr; ///< e.g. llvm::errs(); may be null
  void note(Role role, const std::string &text, nlohmann::json event) const;
};

class Planner {
public:
  Planner(const ChatClient &client, const PromptLibrary &prompts, unsigned fixerRetries, RoleLog log)
      : Client(client), Prompts(prompts), FixerRetries(fixerRetries), Log(log) {}
  /// Up to n distinct plans. Empty in dry-run mode.
  llvm::Expected<std::vector<std::string>> propose(const KernelContext &ctx, unsigned n) const;

private:
  const ChatClient &Client;
  const PromptLibrary &Prompts;
  unsigned FixerRetries;
  RoleLog Log;
};

/// One accepted op list.
struct Candidate {
  nlohmann::json ops; ///< JSON array of op objects, accepted by the validator
  unsigned sample = 0;
  unsigned attempts = 1; ///< 1 + fixer rounds used
};

struct DroppedSample {
  unsigned sample = 0;
  std::vector<std::string> reasons; ///< one per refused answer (or the transport error)
};

struct Realisation {
  std::vector<Candidate> candidates; ///< in sample order
  std::vector<DroppedSample> dropped;
};

class Executor {
public:
  Executor(const ChatClient &client, const PromptLibrary &prompts, unsigned fixerRetries, RoleLog log)
      : Client(client), Prompts(prompts), FixerRetries(fixerRetries), Log(log) {}
  /// k independent samples (run concurrently; the session's semaphore bounds
  /// the requests in flight). Fails only when a prompt cannot be rendered or
  /// when every sample failed on transport (the first such error is returned).
  llvm::Expected<Realisation> realise(const KernelContext &ctx, llvm::StringRef plan, unsigned k,
                                      const OpsValidator &validate) const;

private:
  /// One sample with its fixer loop; returns the ops or fills `dropped`.
  std::optional<Candidate> sample(const std::vector<ChatMessage> &prompt, unsigned index, unsigned k,
                                  const OpsValidator &validate, DroppedSample &dropped, bool &transportFailure,
                                  std::string &transportError) const;

  const ChatClient &Client;
  const PromptLibrary &Prompts;
  unsigned FixerRetries;
  RoleLog Log;
};

class Summarizer {
public:
  Summarizer(const ChatClient &client, const PromptLibrary &prompts, RoleLog log)
      : Client(client), Prompts(prompts), Log(log) {}
  /// The lesson as plain text. Empty in dry-run mode. Normally slow -> fast
  /// (speedup > 1); a speedup < 1 (fast -> slow pair) asks what to avoid.
  llvm::Expected<std::string> summarize(llvm::StringRef slowListing, llvm::StringRef fastListing,
                                        const nlohmann::json &ops, double speedup) const;

private:
  const ChatClient &Client;
  const PromptLibrary &Prompts;
  RoleLog Log;
};

struct SessionOptions {
  /// Report directory of the run: the transcript goes to
  /// `<reportDir>/agent-transcript.jsonl`, writeUsage() to
  /// `<reportDir>/agent-usage.json`. "" = no transcript.
  std::string reportDir;
  bool dryRun = false;                ///< render and log prompts, send nothing
  llvm::raw_ostream *notes = nullptr; ///< dropped samples and other notes
};

/// Owns everything the roles share during one run.
class AgentSession {
public:
  /// Fails on a prompt_dir that cannot be read, an unset API-key variable (not
  /// in dry-run mode), or a transcript that cannot be created.
  static llvm::Expected<std::unique_ptr<AgentSession>> create(const AgentConfig &config, const SessionOptions &options);

  const Planner &planner() const { return *PlannerRole; }
  const Executor &executor() const { return *ExecutorRole; }
  const Summarizer &summarizer() const { return *SummarizerRole; }
  const ChatClient &client(Role role) const;

  const AgentConfig &config() const { return Config; }
  const PromptLibrary &prompts() const { return Prompts; }
  const UsageLedger &usage() const { return Ledger; }
  Transcript *transcript() const { return TranscriptLog.get(); }
  const std::shared_ptr<Semaphore> &limit() const { return Limit; }
  bool dryRun() const { return Options.dryRun; }

  /// Writes the ledger to `<reportDir>/agent-usage.json` (no-op without a report dir).
  llvm::Error writeUsage() const;

private:
  AgentSession(AgentConfig config, SessionOptions options, PromptLibrary prompts)
      : Config(std::move(config)), Options(std::move(options)), Prompts(std::move(prompts)) {}

  AgentConfig Config;
  SessionOptions Options;
  PromptLibrary Prompts;
  UsageLedger Ledger;
  std::unique_ptr<Transcript> TranscriptLog;
  std::shared_ptr<Semaphore> Limit;
  std::unique_ptr<ChatClient> Clients[3];
  std::unique_ptr<Planner> PlannerRole;
  std::unique_ptr<Executor> ExecutorRole;
  std::unique_ptr<Summarizer> SummarizerRole;
};

} // namespace accelopt::agent
