// The accelopt language server: LSP 3.17 over JSON-RPC 2.0. The class handles
// parsed messages and emits messages through a callback, so it can be driven
// without stdio (tests, benchmarks); runStdio() connects it to a byte stream.
//
// Diagnostics are computed on a worker thread, debounced after each
// didOpen/didChange; a push always carries the latest version of its document
// (an analysis overtaken by a newer edit is dropped, not published).
//
// Performance estimates never run on the request thread: a request that needs
// one not computed yet (hover on a loop, codeLens/resolve, accelopt.profile) is
// answered by the estimate worker, in arrival order, while the request thread
// goes on. `$/cancelRequest` answers a waiting or running one with
// RequestCancelled (-32800) at once; one whose document changed before its
// answer was sent gets ContentModified (-32801).
#pragma once

#include "LSP/Document.h"

#include "Perf/Hardware.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace accelopt::memory {
class Store;
}

namespace accelopt::lsp {

struct ServerOptions {
  /// Delay after the last edit before diagnostics are computed.
  int debounceMs = 150;
  /// false: no worker threads; diagnostics are published by flushDiagnostics()
  /// and estimates are computed on the request thread (unit tests and benchmarks).
  bool backgroundDiagnostics = true;
};

class Server {
public:
  using Sink = std::function<void(const json &)>;

  explicit Server(Sink out, ServerOptions options = {});
  ~Server();
  Server(const Server &) = delete;
  Server &operator=(const Server &) = delete;

  /// Handles one message body (JSON text); malformed JSON gets a parse error response.
  void handleText(const std::string &body);
  /// Handles one parsed message (request, notification, or a response to us).
  void handle(const json &message);

  /// True once `exit` was received; exitCode() is 0 if `shutdown` came first.
  bool exited() const { return Exited; }
  int exitCode() const { return ShutdownRequested ? 0 : 1; }

  /// Analyses and publishes every document with pending diagnostics now, on
  /// the calling thread.
  void flushDiagnostics();
  /// Blocks until the worker has nothing pending or running (tests).
  void waitIdle();
  /// Blocks until the estimate worker has no request waiting or running (tests).
  void waitEstimatesIdle();
  /// Keeps the estimate worker from starting queued requests; true if it is
  /// computing one now (which cannot be stopped midway).
  bool stopEstimates();

  /// The current analysis of a document (built now if out of date); null if
  /// the document is not open.
  std::shared_ptr<const Analysis> analysis(const std::string &uri);

private:
  struct Document {
    std::string uri, path, text;
    int64_t version = 0;
    std::shared_ptr<const Analysis> analysis; // latest built (may be of an older version)
    uint64_t analysisGeneration = 0;
  };

  Sink Out;
  ServerOptions Options;
  bool Initialized = false, ShutdownRequested = false, Exited = false;

  // Shared with the worker, guarded by Lock.
  std::mutex Lock;
  std::condition_variable Wake, Idle;
  std::map<std::string, Document> Docs;
  std::map<std::string, std::chrono::steady_clock::time_point> Pending;
  Config Settings;
  uint64_t Generation = 1; // bumped when settings change: analyses of older generations are stale
  std::shared_ptr<const perf::HardwareDesc> Hardware;
  std::string HardwareError;
  bool Stop = false, Busy = false;
  std::thread Worker;
  InputResolver Inputs;
  std::mutex OutLock;
  int64_t NextRequestId = 1;

  // The optimization memory of the "memory" setting: opened by the first code
  // action request that needs it (never for diagnostics) and kept open until
  // the setting names another file. A failed open is reported once per path.
  std::mutex MemoryLock;
  std::string MemoryPath;
  std::shared_ptr<memory::Store> MemoryStore;
  bool MemoryTried = false;

  void send(const json &message);
  void reply(const json &id, json result);
  void replyError(const json &id, int code, const std::string &message);
  void notify(const std::string &method, json params);
  void logMessage(int type, const std::string &message);

  void dispatch(const std::string &method, const json &params, const json *id);

  // --- requests that may need performance estimates ---
  /// What a request is answered with: a result or an error, and notifications
  /// sent just before it.
  struct Answer {
    json result;
    std::optional<std::pair<int, std::string>> error;
    std::vector<json> notifications;
    std::string uri;      // the document the answer was computed on ("" if none)
    int64_t version = -1; // its version (-1: not open)
  };
  struct EstimateJob {
    json id;
    std::string method;
    json params;
    std::string uri;
    int64_t version;
    uint64_t generation;
  };
  std::mutex EstimateLock; // guards the fields below; taken before OutLock
  std::condition_variable EstimateWake, EstimateIdle;
  std::deque<EstimateJob> EstimateQueue;
  std::optional<json> RunningEstimate; // id of the request the worker is computing
  bool RunningEstimateCancelled = false, StopEstimates = false;
  std::thread EstimateWorker;

  /// hover, codeLens/resolve, workspace/executeCommand.
  Answer answerWithEstimates(const std::string &method, const json &params);
  /// Answers now when no estimate is missing, else queues the request for the estimate worker.
  void answerOrDefer(const json &id, const std::string &method, const json &params);
  void sendAnswer(const json &id, Answer answer);
  void cancelRequest(const json &params);
  /// Answers every queued request (and the running one) with RequestCancelled.
  void cancelAllEstimates(const std::string &why);
  /// The answer to `job` if its document is still at the job's version and settings.
  std::optional<Answer> staleAnswer(const EstimateJob &job);
  void estimateLoop();
  json initialize(const json &params);
  void applySettings(const json &settings);
  void didOpen(const json &params);
  void didChange(const json &params);
  void didClose(const json &params);
  json executeCommand(const json &params, std::vector<json> &notifications);
  json codeAction(const json &params);
  /// The cached Store of the "memory" setting (null when unset or unusable).
  std::shared_ptr<memory::Store> memoryStore();

  void schedule(const std::string &uri, int delayMs);
  void workerLoop();
  /// Analyses the pending document `uri` and publishes; Lock is held on entry and exit.
  void analyzeAndPublish(std::unique_lock<std::mutex> &lock, const std::string &uri);
  std::shared_ptr<Analysis> buildAnalysis(const std::string &uri, const std::string &path, int64_t version,
                                          const std::string &text, const Config &config,
                                          std::shared_ptr<const perf::HardwareDesc> hw);
  std::shared_ptr<const perf::HardwareDesc> hardware();
};

/// Serves LSP on `in`/`out` until `exit` or end of input; returns the exit code.
/// Problems with the stream are logged to `log` (may be null). When an estimate
/// is still running then, the process ends at once (std::_Exit after flushing
/// `out`): the performance model cannot be stopped midway, and the editor
/// expects the server gone.
int runStdio(std::FILE *in, std::FILE *out, std::FILE *log, ServerOptions options = {});

} // namespace accelopt::lsp
