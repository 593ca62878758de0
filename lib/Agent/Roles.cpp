#include "Agent/Roles.h"

#include "Agent/JsonExtract.h"
#include "Rewrite/Rewrite.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>

namespace accelopt::agent {

const std::vector<std::string> &opKinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> names;
    for (const rewrite::Op *op : rewrite::allOps()) names.push_back(op->name().str());
    return names;
  }();
  return kinds;
}

static llvm::Error refusal(const llvm::Twine &msg) {
  return llvm::make_error<llvm::StringError>(msg.str(), llvm::inconvertibleErrorCode());
}

llvm::Expected<nlohmann::json> parseOpsAnswer(llvm::StringRef answer) {
  auto j = extractJson(answer, JsonShape::Any);
  if (!j) return j.takeError();
  nlohmann::json ops;
  if (j->is_array())
    ops = std::move(*j);
  else if (j->contains("ops") && (*j)["ops"].is_array())
    ops = (*j)["ops"];
  else if (j->contains("op"))
    ops = nlohmann::json::array({*j});
  else
    return refusal("expected a JSON array of op objects, got an object without \"ops\" or \"op\"");
  if (ops.empty()) return refusal("the op list is empty; give at least one op");
  for (size_t i = 0; i < ops.size(); ++i) {
    const nlohmann::json &op = ops[i];
    if (!op.is_object()) return refusal("op " + llvm::Twine(i + 1) + " is not a JSON object: " + op.dump());
    if (!op.contains("op") || !op["op"].is_string())
      return refusal("op " + llvm::Twine(i + 1) + " has no string field \"op\": " + op.dump());
  }
  return ops;
}

llvm::Expected<std::vector<std::string>> parsePlansAnswer(llvm::StringRef answer) {
  auto j = extractJson(answer, JsonShape::Any);
  if (!j) return j.takeError();
  nlohmann::json list;
  if (j->is_array())
    list = std::move(*j);
  else if (j->contains("plans") && (*j)["plans"].is_array())
    list = (*j)["plans"];
  else
    return refusal("expected {\"plans\": [\"...\"]}");
  std::vector<std::string> plans;
  std::set<std::string> seen;
  for (const nlohmann::json &p : list) {
    std::string text;
    if (p.is_string())
      text = p.get<std::string>();
    else if (p.is_object() && p.contains("plan") && p["plan"].is_string())
      text = p["plan"].get<std::string>();
    else if (p.is_object())
      text = p.dump();
    text = llvm::StringRef(text).trim().str();
    if (!text.empty() && seen.insert(text).second) plans.push_back(std::move(text));
  }
  if (plans.empty()) return refusal("the answer lists no plans");
  return plans;
}

void RoleLog::note(Role role, const std::string &text, nlohmann::json event) const {
  if (transcript) {
    event["role"] = roleName(role).str();
    transcript->write(std::move(event));
  }
  if (notes) {
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    *notes << "note: " << roleName(role) << ": " << text << "\n";
    notes->flush();
  }
}

// --- schemas for endpoints that enforce them ---------------------------------------

static nlohmann::json plansSchema() {
  return {{"type", "object"},
          {"properties", {{"plans", {{"type", "array"}, {"items", {{"type", "string"}}}}}}},
          {"required", {"plans"}}};
}

static nlohmann::json opsSchema() {
  return {{"type", "object"},
          {"properties",
           {{"ops",
             {{"type", "array"},
              {"items",
               {{"type", "object"},
                {"properties", {{"op", {{"type", "string"}, {"enum", opKinds()}}}}},
                {"required", {"op"}}}}}}}},
          {"required", {"ops"}}};
}

// --- Planner --------------------------------------------------------------------

llvm::Expected<std::vector<std::string>> Planner::propose(const KernelContext &ctx, unsigned n) const {
  auto prompt = Prompts.planner(ctx, n);
  if (!prompt) return prompt.takeError();
  ChatRequest req{*prompt, plansSchema(), "plans", "propose"};
  std::vector<std::string> reasons;
  for (unsigned attempt = 0;; ++attempt) {
    req.tag = llvm::formatv("propose try {0}", attempt + 1).str();
    auto resp = Client.complete(req);
    if (!resp) return resp.takeError();
    if (resp->dryRun) return std::vector<std::string>{};
    auto plans = parsePlansAnswer(resp->content);
    if (plans) {
      if (plans->size() > n) plans->resize(n);
      return plans;
    }
    std::string reason = llvm::toString(plans.takeError());
    reasons.push_back(reason);
    if (attempt >= FixerRetries) {
      std::string all = llvm::join(reasons, "; ");
      Log.note(Role::Planner, "no usable plans after " + std::to_string(attempt + 1) + " answers: " + all,
               {{"event", "dropped"}, {"reasons", reasons}});
      return refusal("planner: no usable plans after " + llvm::Twine(attempt + 1) + " answers: " + all);
    }
    req.messages.push_back({"assistant", resp->content});
    req.messages.push_back({"user", "That answer could not be used: " + reason +
                                        "\nReply with JSON only: {\"plans\": [\"<plan>\", ...]}"});
  }
}

// --- Executor -------------------------------------------------------------------

std::optional<Candidate> Executor::sample(const std::vector<ChatMessage> &prompt, unsigned index, unsigned k,
                                          const OpsValidator &validate, DroppedSample &dropped, bool &transportFailure,
                                          std::string &transportError) const {
  ChatRequest req{prompt, opsSchema(), "ops", ""};
  dropped.sample = index;
  for (unsigned attempt = 0;; ++attempt) {
    req.tag = llvm::formatv("realise sample {0}/{1} try {2}", index + 1, k, attempt + 1).str();
    auto resp = Client.complete(req);
    if (!resp) {
      transportFailure = true;
      transportError = llvm::toString(resp.takeError());
      dropped.reasons.push_back(transportError);
      Log.note(Role::Executor, llvm::formatv("sample {0}/{1} dropped: {2}", index + 1, k, transportError),
               {{"event", "dropped"}, {"sample", index}, {"reasons", dropped.reasons}});
      return std::nullopt;
    }
    if (resp->dryRun) return std::nullopt;

    std::string reason;
    auto ops = parseOpsAnswer(resp->content);
    if (!ops) {
      reason = "the answer is not a usable op list: " + llvm::toString(ops.takeError());
    } else if (validate) {
      if (llvm::Error err = validate(*ops)) reason = llvm::toString(std::move(err));
    }
    if (reason.empty()) {
      if (Log.transcript)
        Log.transcript->write({{"event", "accepted"}, {"role", "executor"}, {"sample", index}, {"ops", *ops}});
      return Candidate{std::move(*ops), index, attempt + 1};
    }
    dropped.reasons.push_back(reason);
    if (Log.transcript)
      Log.transcript->write(
          {{"event", "refused"}, {"role", "executor"}, {"sample", index}, {"attempt", attempt}, {"reason", reason}});
    if (attempt >= FixerRetries) {
      Log.note(Role::Executor,
               llvm::formatv("sample {0}/{1} dropped after {2} refused answer{3}; last: {4}", index + 1, k, attempt + 1,
                             attempt ? "s" : "", reason),
               {{"event", "dropped"}, {"sample", index}, {"reasons", dropped.reasons}});
      return std::nullopt;
    }
    auto retry = Prompts.executorRetry({reason});
    if (!retry) {
      dropped.reasons.push_back(llvm::toString(retry.takeError()));
      return std::nullopt;
    }
    req.messages.push_back({"assistant", resp->content});
    for (ChatMessage &m : *retry) req.messages.push_back(std::move(m));
  }
}

llvm::Expected<Realisation> Executor::realise(const KernelContext &ctx, llvm::StringRef plan, unsigned k,
                                              const OpsValidator &validate) const {
  auto prompt = Prompts.executor(ctx, plan);
  if (!prompt) return prompt.takeError();
  // Also render the follow-up once, so that a broken template fails here and
  // not in the middle of the samples.
  if (auto retry = Prompts.executorRetry({"x"}); !retry) return retry.takeError();

  // The samples run on their own threads; the validator (the rewrite engine)
  // is called by one of them at a time.
  std::mutex validateMutex;
  OpsValidator serialised;
  if (validate)
    serialised = [&](const nlohmann::json &ops) {
      std::lock_guard<std::mutex> lock(validateMutex);
      return validate(ops);
    };

  std::vector<std::optional<Candidate>> results(k);
  std::vector<DroppedSample> dropped(k);
  std::vector<char> transport(k, 0);
  std::vector<std::string> transportErrors(k);
  auto run = [&](unsigned i) {
    bool failed = false;
    results[i] = sample(*prompt, i, k, serialised, dropped[i], failed, transportErrors[i]);
    transport[i] = failed;
  };
  if (k == 1) {
    run(0);
  } else {
    std::vector<std::thread> threads;
    threads.reserve(k);
    for (unsigned i = 0; i < k; ++i) threads.emplace_back(run, i);
    for (std::thread &t : threads) t.join();
  }

  Realisation out;
  bool allTransport = k > 0;
  for (unsigned i = 0; i < k; ++i) {
    if (results[i])
      out.candidates.push_back(std::move(*results[i]));
    else if (!Client.dryRun())
      out.dropped.push_back(std::move(dropped[i]));
    if (!transport[i]) allTransport = false;
  }
  if (allTransport) return refusal("executor: every sample failed: " + transportErrors[0]);
  return out;
}

// --- Summarizer -----------------------------------------------------------------

llvm::Expected<std::string> Summarizer::summarize(llvm::StringRef slowListing, llvm::StringRef fastListing,
                                                  const nlohmann::json &ops, double speedup) const {
  auto prompt = Prompts.summarizer(slowListing, fastListing, ops, speedup);
  if (!prompt) return prompt.takeError();
  ChatRequest req{*prompt, std::nullopt, "experience", "summarize"};
  auto resp = Client.complete(req);
  if (!resp) return resp.takeError();
  if (resp->dryRun) return std::string();
  llvm::StringRef text = llvm::StringRef(resp->content).trim();
  // A lesson wrapped in a code fence: keep what is inside.
  if (text.startswith("```") && text.endswith("```") && text.size() > 6) {
    text = text.drop_front(3).drop_back(3);
    size_t nl = text.find('\n');
    if (nl != llvm::StringRef::npos && !text.take_front(nl).contains(' ')) text = text.drop_front(nl + 1);
    text = text.trim();
  }
  if (text.empty()) return refusal("summarizer: the answer is empty");
  return text.str();
}

// --- Session --------------------------------------------------------------------

llvm::Expected<std::unique_ptr<AgentSession>> AgentSession::create(const AgentConfig &config,
                                                                   const SessionOptions &options) {
  PromptLibrary prompts = PromptLibrary::builtin();
  if (!config.promptDir.empty()) {
    auto lib = PromptLibrary::withOverrides(config.promptDir);
    if (!lib) return lib.takeError();
    prompts = std::move(*lib);
  }
  if (!options.dryRun)
    for (Role role : AllRoles) {
      const std::string &var = config.endpoint(role).apiKeyEnv;
      if (!var.empty() && !std::getenv(var.c_str()))
        return refusal(llvm::formatv("{0}: the API key variable {1} (api_key_env) is not set in the environment; "
                                     "set it, or set api_key_env to \"\" for an endpoint without a key",
                                     roleName(role), var)
                           .str());
    }

  std::unique_ptr<AgentSession> s(new AgentSession(config, options, std::move(prompts)));
  if (!options.reportDir.empty()) {
    auto t = Transcript::open(Transcript::pathInReportDir(options.reportDir), Redactor::forConfig(config));
    if (!t) return t.takeError();
    s->TranscriptLog = std::move(*t);
  }
  s->Limit = std::make_shared<Semaphore>(config.maxConcurrency);
  RetryPolicy retry;
  retry.maxRetries = config.maxRetries;
  retry.initialS = config.backoffInitialS;
  retry.maxS = config.backoffMaxS;
  for (Role role : AllRoles)
    s->Clients[static_cast<int>(role)] = std::make_unique<ChatClient>(
        role, config.endpoint(role), retry, s->Limit, s->TranscriptLog.get(), &s->Ledger, options.dryRun);
  RoleLog log{s->TranscriptLog.get(), options.notes};
  s->PlannerRole = std::make_unique<Planner>(s->client(Role::Planner), s->Prompts, config.fixerRetries, log);
  s->ExecutorRole = std::make_unique<Executor>(s->client(Role::Executor), s->Prompts, config.fixerRetries, log);
  s->SummarizerRole = std::make_unique<Summarizer>(s->client(Role::Summarizer), s->Prompts, log);
  if (s->TranscriptLog)
    s->TranscriptLog->write({{"event", "session"}, {"dry_run", options.dryRun}, {"config", toJson(config)}});
  return s;
}

const ChatClient &AgentSession::client(Role role) const { return *Clients[static_cast<int>(role)]; }

llvm::Error AgentSession::writeUsage() const {
  if (Options.reportDir.empty()) return llvm::Error::success();
  llvm::SmallString<256> p(Options.reportDir);
  llvm::sys::path::append(p, "agent-usage.json");
  return Ledger.writeJson(p);
}

} // namespace accelopt::agent
