#include "LSP/Server.h"

#include "LSP/Features.h"
#include "LSP/Transport.h"

#include "Memory/Store.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

namespace accelopt::lsp {

namespace {
// JSON-RPC / LSP error codes.
constexpr int ParseError = -32700;
constexpr int InvalidRequest = -32600;
constexpr int MethodNotFound = -32601;
constexpr int InvalidParams = -32602;
constexpr int InternalError = -32603;
constexpr int ServerNotInitialized = -32002;
constexpr int RequestFailed = -32803;
constexpr int RequestCancelled = -32800;
constexpr int ContentModified = -32801;

constexpr const char *Version = "0.1.0";

const json &field(const json &j, const char *name) {
  static const json null;
  if (!j.is_object()) return null;
  auto it = j.find(name);
  return it == j.end() ? null : *it;
}
} // namespace

Server::Server(Sink out, ServerOptions options) : Out(std::move(out)), Options(options) {
  Hardware = hardware();
  if (Options.backgroundDiagnostics) {
    Worker = std::thread([this] { workerLoop(); });
    EstimateWorker = std::thread([this] { estimateLoop(); });
  }
}

Server::~Server() {
  {
    std::lock_guard<std::mutex> guard(Lock);
    Stop = true;
  }
  Wake.notify_all();
  {
    std::lock_guard<std::mutex> guard(EstimateLock);
    StopEstimates = true;
  }
  EstimateWake.notify_all();
  if (Worker.joinable()) Worker.join();
  if (EstimateWorker.joinable()) EstimateWorker.join();
}

// --- output -------------------------------------------------------------------------

void Server::send(const json &message) {
  std::lock_guard<std::mutex> guard(OutLock);
  Out(message);
}

void Server::reply(const json &id, json result) {
  send({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

void Server::replyError(const json &id, int code, const std::string &message) {
  send({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

void Server::notify(const std::string &method, json params) {
  send({{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
}

void Server::logMessage(int type, const std::string &message) {
  notify("window/logMessage", {{"type", type}, {"message", message}});
}

// --- dispatch ------------------------------------------------------------------------

void Server::handleText(const std::string &body) {
  json message;
  try {
    message = json::parse(body);
  } catch (const json::exception &e) {
    replyError(nullptr, ParseError, std::string("invalid JSON: ") + e.what());
    return;
  }
  handle(message);
}

void Server::handle(const json &message) {
  if (!message.is_object()) {
    replyError(nullptr, InvalidRequest, "a JSON-RPC message must be an object");
    return;
  }
  auto m = message.find("method");
  if (m == message.end()) return; // a response to a request of ours (we send none that need one)
  const json *id = nullptr;
  if (auto it = message.find("id"); it != message.end()) {
    if (!it->is_string() && !it->is_number_integer() && !it->is_null()) {
      replyError(nullptr, InvalidRequest, "request id must be a string or an integer");
      return;
    }
    id = &*it;
  }
  if (!m->is_string()) {
    if (id) replyError(*id, InvalidRequest, "\"method\" must be a string");
    return;
  }
  std::string method = m->get<std::string>();
  static const json emptyParams = json::object();
  const json &params = message.contains("params") ? message["params"] : emptyParams;

  if (method == "exit") {
    Exited = true;
    return;
  }
  if (!Initialized && method != "initialize") {
    if (id) replyError(*id, ServerNotInitialized, "the server is not initialized");
    return;
  }
  if (ShutdownRequested) {
    if (id) replyError(*id, InvalidRequest, "the server is shutting down");
    return;
  }
  try {
    dispatch(method, params, id);
  } catch (const json::exception &e) {
    if (id)
      replyError(*id, InvalidParams, "invalid parameters for " + method + ": " + e.what());
    else
      logMessage(1, "invalid parameters for " + method + ": " + e.what());
  } catch (const std::exception &e) {
    if (id)
      replyError(*id, InternalError, method + " failed: " + e.what());
    else
      logMessage(1, method + " failed: " + e.what());
  }
}

static uint32_t offsetOf(const Analysis &a, const json &position) {
  return a.index().offset(positionFromJson(position));
}

void Server::dispatch(const std::string &method, const json &params, const json *id) {
  auto docAnalysis = [&]() -> std::shared_ptr<const Analysis> {
    return analysis(params.at("textDocument").at("uri").get<std::string>());
  };

  if (method == "initialize") {
    if (!id) return;
    if (Initialized) {
      replyError(*id, InvalidRequest, "initialize was already received");
      return;
    }
    reply(*id, initialize(params));
    Initialized = true;
  } else if (method == "$/cancelRequest") {
    cancelRequest(params);
  } else if (method == "initialized" || method == "$/setTrace" || method == "textDocument/didSave" ||
             method == "workspace/didChangeWatchedFiles") {
    // Nothing to do.
  } else if (method == "shutdown") {
    ShutdownRequested = true;
    {
      std::lock_guard<std::mutex> guard(Lock);
      Pending.clear();
    }
    cancelAllEstimates("the server is shutting down");
    if (id) reply(*id, nullptr);
  } else if (method == "textDocument/didOpen") {
    didOpen(params);
  } else if (method == "textDocument/didChange") {
    didChange(params);
  } else if (method == "textDocument/didClose") {
    didClose(params);
  } else if (method == "workspace/didChangeConfiguration") {
    applySettings(field(params, "settings"));
  } else if (!id) {
    // Unknown notifications are ignored ($/... ones must be).
  } else if (method == "textDocument/hover" || method == "codeLens/resolve" || method == "workspace/executeCommand") {
    answerOrDefer(*id, method, params);
  } else if (method == "textDocument/inlayHint") {
    auto a = docAnalysis();
    if (!a) return reply(*id, json::array());
    const json &range = params.at("range");
    reply(*id, inlayHints(*a, offsetOf(*a, range.at("start")), offsetOf(*a, range.at("end"))));
  } else if (method == "textDocument/codeLens") {
    auto a = docAnalysis();
    reply(*id, a ? codeLenses(*a, hardware().get()) : json::array());
  } else if (method == "textDocument/codeAction") {
    reply(*id, codeAction(params));
  } else if (method == "codeAction/resolve") {
    const json &data = field(params, "data");
    std::string uri = field(data, "uri").is_string() ? data["uri"].get<std::string>() : "";
    auto a = analysis(uri);
    if (!a) return replyError(*id, RequestFailed, "document " + uri + " is not open");
    reply(*id, resolveCodeAction(*a, params));
  } else {
    replyError(*id, MethodNotFound, "method not supported: " + method);
  }
}

// --- requests that may need estimates ------------------------------------------------

Server::Answer Server::answerWithEstimates(const std::string &method, const json &params) {
  Answer answer;
  auto useDocument = [&](const std::string &uri) {
    answer.uri = uri;
    auto a = analysis(uri);
    if (a) answer.version = a->version();
    return a;
  };
  if (method == "textDocument/hover") {
    auto a = useDocument(params.at("textDocument").at("uri").get<std::string>());
    answer.result = a ? hover(*a, offsetOf(*a, params.at("position")), hardware().get()) : json();
  } else if (method == "codeLens/resolve") {
    const json &data = field(params, "data");
    auto a = useDocument(field(data, "uri").is_string() ? data["uri"].get<std::string>() : "");
    if (!a)
      answer.error = {RequestFailed, "document " + answer.uri + " is not open"};
    else
      answer.result = resolveCodeLens(*a, params, hardware().get());
  } else { // workspace/executeCommand
    const json &args = field(params, "arguments");
    if (args.is_array() && !args.empty() && args[0].is_string()) useDocument(args[0].get<std::string>());
    try {
      answer.result = executeCommand(params, answer.notifications);
    } catch (const std::runtime_error &e) { answer.error = {RequestFailed, e.what()}; }
  }
  return answer;
}

void Server::sendAnswer(const json &id, Answer answer) {
  for (json &n : answer.notifications) send(n);
  if (answer.error)
    replyError(id, answer.error->first, answer.error->second);
  else
    reply(id, std::move(answer.result));
}

void Server::answerOrDefer(const json &id, const std::string &method, const json &params) {
  if (!Options.backgroundDiagnostics) return sendAnswer(id, answerWithEstimates(method, params));
  Answer answer;
  {
    CachedEstimatesOnly cachedOnly;
    answer = answerWithEstimates(method, params);
    if (!cachedOnly.missed()) return sendAnswer(id, std::move(answer));
  }
  uint64_t generation;
  {
    std::lock_guard<std::mutex> guard(Lock);
    generation = Generation;
  }
  {
    std::lock_guard<std::mutex> guard(EstimateLock);
    EstimateQueue.push_back({id, method, params, answer.uri, answer.version, generation});
  }
  EstimateWake.notify_all();
}

void Server::cancelRequest(const json &params) {
  const json &id = field(params, "id");
  if (!id.is_string() && !id.is_number_integer()) return;
  std::lock_guard<std::mutex> guard(EstimateLock);
  for (auto it = EstimateQueue.begin(); it != EstimateQueue.end(); ++it)
    if (it->id == id) {
      EstimateQueue.erase(it);
      replyError(id, RequestCancelled, "request cancelled");
      EstimateIdle.notify_all();
      return;
    }
  // The worker cannot stop the model midway; its result will be dropped.
  if (RunningEstimate && *RunningEstimate == id && !RunningEstimateCancelled) {
    RunningEstimateCancelled = true;
    replyError(id, RequestCancelled, "request cancelled");
  }
  // Otherwise it was answered already (or never deferred): nothing to cancel.
}

void Server::cancelAllEstimates(const std::string &why) {
  std::lock_guard<std::mutex> guard(EstimateLock);
  for (const EstimateJob &job : EstimateQueue) replyError(job.id, RequestCancelled, why);
  EstimateQueue.clear();
  if (RunningEstimate && !RunningEstimateCancelled) {
    RunningEstimateCancelled = true;
    replyError(*RunningEstimate, RequestCancelled, why);
  }
  EstimateIdle.notify_all();
}

std::optional<Server::Answer> Server::staleAnswer(const EstimateJob &job) {
  std::lock_guard<std::mutex> guard(Lock);
  auto it = Docs.find(job.uri);
  int64_t now = it == Docs.end() ? -1 : it->second.version;
  if (now == job.version && Generation == job.generation) return std::nullopt;
  Answer stale;
  std::string what = now < 0
                         ? "was closed"
                         : "changed (version " + std::to_string(job.version) + " is now " + std::to_string(now) + ")";
  if (Generation != job.generation && now == job.version) what = "has new settings";
  stale.error = {ContentModified, "document " + job.uri + " " + what + "; the estimate was dropped"};
  return stale;
}

void Server::estimateLoop() {
  std::unique_lock<std::mutex> lock(EstimateLock);
  for (;;) {
    EstimateWake.wait(lock, [&] { return StopEstimates || !EstimateQueue.empty(); });
    if (StopEstimates) break;
    EstimateJob job = std::move(EstimateQueue.front());
    EstimateQueue.pop_front();
    RunningEstimate = job.id;
    RunningEstimateCancelled = false;
    lock.unlock();

    // A request for a version that is no longer current is not computed at all.
    std::optional<Answer> answer = staleAnswer(job);
    if (!answer) {
      try {
        answer = answerWithEstimates(job.method, job.params);
      } catch (const json::exception &e) {
        answer = Answer{};
        answer->error = {InvalidParams, "invalid parameters for " + job.method + ": " + e.what()};
      } catch (const std::exception &e) {
        answer = Answer{};
        answer->error = {InternalError, job.method + " failed: " + e.what()};
      }
      // The document changed while the model ran: that answer is for text the editor no longer has.
      if (auto stale = staleAnswer(job)) answer = std::move(stale);
    }

    lock.lock();
    // Decided under EstimateLock, so a $/cancelRequest cannot answer it a second time.
    if (!RunningEstimateCancelled) sendAnswer(job.id, std::move(*answer));
    RunningEstimate.reset();
    if (EstimateQueue.empty()) EstimateIdle.notify_all();
  }
  RunningEstimate.reset();
  EstimateIdle.notify_all();
}

bool Server::stopEstimates() {
  bool running;
  {
    std::lock_guard<std::mutex> guard(EstimateLock);
    StopEstimates = true;
    running = RunningEstimate.has_value();
  }
  EstimateWake.notify_all();
  return running;
}

void Server::waitEstimatesIdle() {
  std::unique_lock<std::mutex> lock(EstimateLock);
  EstimateIdle.wait(lock, [&] { return (EstimateQueue.empty() && !RunningEstimate) || StopEstimates; });
}

// --- lifecycle -------------------------------------------------------------------------

json Server::initialize(const json &params) {
  std::string root;
  if (const json &r = field(params, "rootUri"); r.is_string())
    root = uriToPath(r.get<std::string>());
  else if (const json &p = field(params, "rootPath"); p.is_string())
    root = p.get<std::string>();
  if (const json &folders = field(params, "workspaceFolders"); root.empty() && folders.is_array() && !folders.empty())
    if (const json &u = field(folders[0], "uri"); u.is_string()) root = uriToPath(u.get<std::string>());
  {
    std::lock_guard<std::mutex> guard(Lock);
    Settings.rootPath = root;
  }
  applySettings(field(params, "initializationOptions"));
  return {{"capabilities",
           {{"positionEncoding", "utf-16"},
            {"textDocumentSync", {{"openClose", true}, {"change", 2}}},
            {"hoverProvider", true},
            {"inlayHintProvider", {{"resolveProvider", false}}},
            {"codeLensProvider", {{"resolveProvider", true}}},
            {"codeActionProvider",
             {{"codeActionKinds", json::array({QuickFixKind, "refactor.rewrite", RewriteKindPrefix, MemoryKind})},
              {"resolveProvider", true}}},
            {"executeCommandProvider", {{"commands", json::array({ProfileCommand})}}}}},
          {"serverInfo", {{"name", "accelopt-lsp"}, {"version", Version}}}};
}

void Server::applySettings(const json &settings) {
  if (settings.is_null() || (settings.is_object() && settings.empty())) return;
  std::vector<std::string> uris;
  std::string problem;
  {
    std::lock_guard<std::mutex> guard(Lock);
    Config next = Settings;
    if (auto err = next.update(settings)) {
      problem = llvm::toString(std::move(err));
    } else {
      bool targetChanged = next.target != Settings.target;
      Settings = std::move(next);
      ++Generation;
      if (targetChanged || !Hardware) {
        auto hw = perf::loadTarget(Settings.target);
        if (hw) {
          Hardware = std::make_shared<const perf::HardwareDesc>(std::move(*hw));
          HardwareError.clear();
        } else {
          Hardware.reset();
          HardwareError = llvm::toString(hw.takeError());
          problem = "accelopt target '" + Settings.target + "': " + HardwareError;
        }
      }
      for (auto &[uri, doc] : Docs) uris.push_back(uri);
    }
  }
  Inputs.clear();
  if (!problem.empty()) notify("window/showMessage", {{"type", 2}, {"message", problem}});
  for (const std::string &uri : uris) schedule(uri, 0);
}

std::shared_ptr<const perf::HardwareDesc> Server::hardware() {
  std::lock_guard<std::mutex> guard(Lock);
  if (!Hardware && HardwareError.empty()) {
    auto hw = perf::loadTarget(Settings.target);
    if (hw)
      Hardware = std::make_shared<const perf::HardwareDesc>(std::move(*hw));
    else
      HardwareError = llvm::toString(hw.takeError());
  }
  return Hardware;
}

// --- documents --------------------------------------------------------------------------

void Server::didOpen(const json &params) {
  const json &td = params.at("textDocument");
  Document doc;
  doc.uri = td.at("uri").get<std::string>();
  doc.path = uriToPath(doc.uri);
  doc.text = td.at("text").get<std::string>();
  doc.version = td.value("version", int64_t(0));
  std::string uri = doc.uri;
  {
    std::lock_guard<std::mutex> guard(Lock);
    Docs[uri] = std::move(doc);
  }
  schedule(uri, Options.debounceMs);
}

void Server::didChange(const json &params) {
  const json &td = params.at("textDocument");
  std::string uri = td.at("uri").get<std::string>();
  std::vector<std::string> problems;
  {
    std::lock_guard<std::mutex> guard(Lock);
    auto it = Docs.find(uri);
    if (it == Docs.end()) {
      problems.push_back("didChange for " + uri + ", which is not open");
    } else {
      Document &doc = it->second;
      for (const json &change : params.at("contentChanges")) {
        if (auto err = applyContentChange(doc.text, change))
          problems.push_back("didChange " + uri + ": " + llvm::toString(std::move(err)));
      }
      if (const json &v = field(td, "version"); v.is_number_integer())
        doc.version = v.get<int64_t>();
      else
        ++doc.version;
    }
  }
  for (const std::string &p : problems) logMessage(1, p);
  schedule(uri, Options.debounceMs); // no-op for documents that are not open
}

void Server::didClose(const json &params) {
  std::string uri = params.at("textDocument").at("uri").get<std::string>();
  std::lock_guard<std::mutex> guard(Lock);
  Docs.erase(uri);
  Pending.erase(uri);
  notify("textDocument/publishDiagnostics", {{"uri", uri}, {"diagnostics", json::array()}});
}

// --- analyses and diagnostics --------------------------------------------------------------

std::shared_ptr<Analysis> Server::buildAnalysis(const std::string &uri, const std::string &path, int64_t version,
                                                const std::string &text, const Config &config,
                                                std::shared_ptr<const perf::HardwareDesc> hw) {
  auto a = std::make_shared<Analysis>(uri, path, version, text);
  a->build(config, Inputs, hw.get());
  return a;
}

std::shared_ptr<const Analysis> Server::analysis(const std::string &uri) {
  std::unique_lock<std::mutex> lock(Lock);
  auto it = Docs.find(uri);
  if (it == Docs.end()) return nullptr;
  Document &doc = it->second;
  if (doc.analysis && doc.analysis->version() == doc.version && doc.analysisGeneration == Generation)
    return doc.analysis;
  std::string path = doc.path, text = doc.text;
  int64_t version = doc.version;
  uint64_t gen = Generation;
  Config config = Settings;
  auto hw = Hardware;
  lock.unlock();
  std::shared_ptr<const Analysis> a = buildAnalysis(uri, path, version, text, config, hw);
  lock.lock();
  it = Docs.find(uri);
  if (it != Docs.end() && it->second.version == version && Generation == gen) {
    it->second.analysis = a;
    it->second.analysisGeneration = gen;
  }
  return a;
}

void Server::schedule(const std::string &uri, int delayMs) {
  {
    std::lock_guard<std::mutex> guard(Lock);
    if (!Docs.count(uri) || ShutdownRequested) return;
    Pending[uri] = std::chrono::steady_clock::now() + std::chrono::milliseconds(delayMs);
  }
  Wake.notify_all();
}

void Server::analyzeAndPublish(std::unique_lock<std::mutex> &lock, const std::string &uri) {
  auto it = Docs.find(uri);
  if (it == Docs.end()) return;
  Document &doc = it->second;
  std::shared_ptr<const Analysis> a;
  int64_t version = doc.version;
  if (doc.analysis && doc.analysis->version() == version && doc.analysisGeneration == Generation) {
    a = doc.analysis;
  } else {
    std::string path = doc.path, text = doc.text;
    uint64_t gen = Generation;
    Config config = Settings;
    auto hw = Hardware;
    lock.unlock();
    std::shared_ptr<const Analysis> built;
    try {
      built = buildAnalysis(uri, path, version, text, config, hw);
    } catch (const std::exception &e) {
      lock.lock();
      logMessage(1, "analysis of " + uri + " failed: " + e.what());
      return;
    }
    lock.lock();
    it = Docs.find(uri);
    // Overtaken by an edit, a close or new settings: the newer state is (or will be) pending.
    if (it == Docs.end() || it->second.version != version || Generation != gen) return;
    it->second.analysis = built;
    it->second.analysisGeneration = gen;
    a = built;
  }
  notify("textDocument/publishDiagnostics", {{"uri", uri}, {"version", version}, {"diagnostics", a->diagnostics()}});
}

void Server::workerLoop() {
  std::unique_lock<std::mutex> lock(Lock);
  while (!Stop) {
    if (Pending.empty()) {
      Busy = false;
      Idle.notify_all();
      Wake.wait(lock);
      continue;
    }
    auto next = Pending.begin();
    for (auto it = Pending.begin(); it != Pending.end(); ++it)
      if (it->second < next->second) next = it;
    // A copy: the entry may be erased (didClose, shutdown) while we wait.
    const auto deadline = next->second;
    if (std::chrono::steady_clock::now() < deadline) {
      Wake.wait_until(lock, deadline);
      continue;
    }
    Busy = true;
    std::string uri = next->first;
    Pending.erase(next);
    analyzeAndPublish(lock, uri);
  }
  Busy = false;
  Idle.notify_all();
}

void Server::flushDiagnostics() {
  std::unique_lock<std::mutex> lock(Lock);
  while (!Pending.empty()) {
    std::string uri = Pending.begin()->first;
    Pending.erase(Pending.begin());
    analyzeAndPublish(lock, uri);
  }
}

void Server::waitIdle() {
  if (!Options.backgroundDiagnostics) return flushDiagnostics();
  std::unique_lock<std::mutex> lock(Lock);
  Idle.wait(lock, [&] { return (Pending.empty() && !Busy) || Stop; });
}

// --- code actions --------------------------------------------------------------------------------

json Server::codeAction(const json &params) {
  auto a = analysis(params.at("textDocument").at("uri").get<std::string>());
  if (!a) return json::array();
  const json &context = field(params, "context");
  std::vector<std::string> only;
  if (const json &o = field(context, "only"); o.is_array())
    for (const json &k : o)
      if (k.is_string()) only.push_back(k.get<std::string>());
  uint32_t offset = offsetOf(*a, params.at("range").at("start"));
  // Quick fixes first, then the remembered pattern, then every rewrite op.
  json actions = json::array();
  if (kindWanted(QuickFixKind, only))
    for (json &fix : quickFixes(*a, field(context, "diagnostics"))) actions.push_back(std::move(fix));
  if (kindWanted(QuickFixKind, only))
    if (json migrate = migrationAction(*a, offset); !migrate.is_null()) actions.push_back(std::move(migrate));
  if (kindWanted(MemoryKind, only))
    if (std::shared_ptr<memory::Store> store = memoryStore()) {
      // A memory problem (bad rows, a locked file) must not cost the other actions.
      try {
        auto preferred = memoryAction(*a, offset, *store);
        if (!preferred)
          logMessage(2, "accelopt memory " + store->path() + ": " + llvm::toString(preferred.takeError()));
        else if (!preferred->is_null())
          actions.push_back(std::move(*preferred));
      } catch (const std::exception &e) { logMessage(2, "accelopt memory " + store->path() + ": " + e.what()); }
    }
  for (json &action : codeActions(*a, offset, only)) actions.push_back(std::move(action));
  return actions;
}

std::shared_ptr<memory::Store> Server::memoryStore() {
  std::string path, root;
  {
    std::lock_guard<std::mutex> guard(Lock);
    path = Settings.memory;
    root = Settings.rootPath;
  }
  if (!path.empty() && !llvm::sys::path::is_absolute(path) && !root.empty()) {
    llvm::SmallString<256> full(root);
    llvm::sys::path::append(full, path);
    path = std::string(full);
  }
  std::string problem;
  std::shared_ptr<memory::Store> store;
  {
    std::lock_guard<std::mutex> guard(MemoryLock);
    if (path != MemoryPath) {
      MemoryPath = path;
      MemoryStore.reset();
      MemoryTried = false;
    }
    if (!MemoryTried && !path.empty()) {
      MemoryTried = true;
      memory::StoreOptions options;
      options.create = false;      // an editor setting must not create databases
      options.busyTimeoutMs = 200; // a search writing to it must not stall the editor
      auto opened = memory::Store::open(path, options);
      if (opened)
        MemoryStore = std::move(*opened);
      else
        problem = llvm::toString(opened.takeError());
    }
    store = MemoryStore;
  }
  if (!problem.empty()) notify("window/showMessage", {{"type", 2}, {"message", "accelopt memory: " + problem}});
  return store;
}

// --- commands ----------------------------------------------------------------------------------

json Server::executeCommand(const json &params, std::vector<json> &notifications) {
  std::string command = params.at("command").get<std::string>();
  if (command != ProfileCommand) throw std::runtime_error("unknown command '" + command + "'");
  const json &args = field(params, "arguments");
  if (!args.is_array() || args.empty() || !args[0].is_string())
    throw std::runtime_error(std::string(ProfileCommand) + " takes [uri, kernel name]");
  std::string uri = args[0].get<std::string>();
  std::string kernel = args.size() > 1 && args[1].is_string() ? args[1].get<std::string>() : "";
  auto a = analysis(uri);
  if (!a) throw std::runtime_error("document " + uri + " is not open");
  auto hw = hardware();
  if (!hw) {
    std::lock_guard<std::mutex> guard(Lock); // applySettings may write it on the request thread
    throw std::runtime_error("no hardware target: " + HardwareError);
  }
  auto result = profileKernel(*a, kernel, *hw);
  if (!result) throw std::runtime_error(llvm::toString(result.takeError()));
  std::string summary = llvm::formatv("{0}: {1} latency {2:f4} ms", (*result)["kernel"].get<std::string>(),
                                      (*result)["backend"].get<std::string>(), (*result)["latency"].get<double>())
                            .str();
  if (result->contains("roofline"))
    summary += llvm::formatv(" ({0:f1}% of peak)", (*result)["roofline"]["percent_of_peak"].get<double>()).str();
  notifications.push_back(
      {{"jsonrpc", "2.0"}, {"method", "window/showMessage"}, {"params", {{"type", 3}, {"message", summary}}}});
  return *result;
}

// --- stdio ---------------------------------------------------------------------------------------

int runStdio(std::FILE *in, std::FILE *out, std::FILE *log, ServerOptions options) {
  MessageWriter writer(out);
  Server server([&](const json &m) { writer.write(m.dump(-1, ' ', false, json::error_handler_t::replace)); }, options);
  auto finish = [&](int code) {
    if (server.stopEstimates()) {
      std::fflush(out);
      if (log) std::fflush(log);
      std::_Exit(code);
    }
    return code;
  };
  MessageReader reader(in);
  while (auto body = reader.read()) {
    std::string problem = reader.takeError();
    if (!problem.empty() && log) std::fprintf(log, "accelopt-lsp: %s\n", problem.c_str());
    server.handleText(*body);
    if (server.exited()) return finish(server.exitCode());
  }
  std::string problem = reader.takeError();
  if (log && !problem.empty()) std::fprintf(log, "accelopt-lsp: %s\n", problem.c_str());
  return finish(1); // end of input without exit
}

} // namespace accelopt::lsp
