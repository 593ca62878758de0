// The language server driven without stdio: protocol lifecycle, diagnostics,
// incremental edits, half-typed code, the debounced worker, and code actions
// with an unusable optimization memory.
#include "LSP/Server.h"
#include "LSP/Transport.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

using namespace accelopt::lsp;

namespace {

const char *ServerKernel = R"(import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((256, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(2):
    t = nl.load(x[i * 128:(i + 1) * 128, 0:512])
    nl.store(out[i * 128:(i + 1) * 128, 0:512], value=t)
  big = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.sbuf)
  return out
)";

const char *Uri = "file:///tmp/accelopt-unit/k.py";

struct Session {
  std::mutex lock;
  std::vector<json> out;
  Server server;
  explicit Session(ServerOptions o = ServerOptions{150, false})
      : server(
            [this](const json &m) {
              std::lock_guard<std::mutex> g(lock);
              out.push_back(m);
            },
            o) {}

  json request(int id, const std::string &method, json params) {
    server.handle({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
    std::lock_guard<std::mutex> g(lock);
    for (auto it = out.rbegin(); it != out.rend(); ++it)
      if (it->contains("id") && (*it)["id"] == id && !it->contains("method")) return *it;
    ADD_FAILURE() << "no response to " << method;
    return {};
  }
  void notify(const std::string &method, json params) {
    server.handle({{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
  }
  /// The published diagnostics without the neuronxcc.nki dialect hint (test/LSP/dialect-hint.test asserts it).
  std::vector<json> diagnostics() {
    std::lock_guard<std::mutex> g(lock);
    std::vector<json> d;
    for (const json &m : out)
      if (m.value("method", "") == "textDocument/publishDiagnostics") {
        json params = m["params"];
        json kept = json::array();
        for (const json &x : params["diagnostics"])
          if (x.value("code", "") != "dialect") kept.push_back(x);
        params["diagnostics"] = kept;
        d.push_back(params);
      }
    return d;
  }
  void initialize(json options = json::object()) {
    json r = request(1, "initialize", {{"capabilities", json::object()}, {"initializationOptions", options}});
    ASSERT_TRUE(r.contains("result"));
    notify("initialized", json::object());
  }
  void open(const std::string &text, int version = 1) {
    notify("textDocument/didOpen",
           {{"textDocument", {{"uri", Uri}, {"languageId", "python"}, {"version", version}, {"text", text}}}});
  }
  void change(int version, json changes) {
    notify("textDocument/didChange",
           {{"textDocument", {{"uri", Uri}, {"version", version}}}, {"contentChanges", std::move(changes)}});
  }
  json hoverAt(int id, int line, int character) {
    return request(id, "textDocument/hover",
                   {{"textDocument", {{"uri", Uri}}}, {"position", {{"line", line}, {"character", character}}}});
  }
};

json edit(int l0, int c0, int l1, int c1, const std::string &text) {
  return {{"range", {{"start", {{"line", l0}, {"character", c0}}}, {"end", {{"line", l1}, {"character", c1}}}}},
          {"text", text}};
}

TEST(Server, InitializeAdvertisesCapabilities) {
  Session s;
  json r = s.request(1, "initialize", {{"capabilities", json::object()}});
  const json &caps = r["result"]["capabilities"];
  EXPECT_EQ(caps["textDocumentSync"]["change"], 2);
  EXPECT_EQ(caps["hoverProvider"], true);
  EXPECT_TRUE(caps.contains("inlayHintProvider"));
  EXPECT_EQ(caps["codeActionProvider"]["resolveProvider"], true);
  EXPECT_EQ(caps["executeCommandProvider"]["commands"][0], "accelopt.profile");
  EXPECT_EQ(r["result"]["serverInfo"]["name"], "accelopt-lsp");
}

TEST(Server, RefusesRequestsBeforeInitializeAndAfterShutdown) {
  Session s;
  json r = s.hoverAt(5, 0, 0);
  EXPECT_EQ(r["error"]["code"], -32002);
  s.initialize();
  EXPECT_TRUE(s.request(2, "shutdown", nullptr)["result"].is_null());
  EXPECT_EQ(s.hoverAt(3, 0, 0)["error"]["code"], -32600);
  EXPECT_FALSE(s.server.exited());
  s.notify("exit", nullptr);
  EXPECT_TRUE(s.server.exited());
  EXPECT_EQ(s.server.exitCode(), 0);
}

TEST(Server, ExitWithoutShutdownIsAnError) {
  Session s;
  s.initialize();
  s.notify("exit", nullptr);
  EXPECT_EQ(s.server.exitCode(), 1);
}

TEST(Server, MalformedMessagesGetErrorsNotCrashes) {
  Session s;
  s.initialize();
  s.server.handleText("{not json");
  s.server.handleText("[1, 2]");
  json r = s.request(7, "textDocument/hover", {{"position", 3}});
  EXPECT_EQ(r["error"]["code"], -32602);
  r = s.request(8, "no/such/method", json::object());
  EXPECT_EQ(r["error"]["code"], -32601);
  std::lock_guard<std::mutex> g(s.lock);
  ASSERT_GE(s.out.size(), 3u);
  EXPECT_EQ(s.out[1]["error"]["code"], -32700);
  EXPECT_EQ(s.out[2]["error"]["code"], -32600);
}

TEST(Server, VerifierDiagnosticsWithRuleCodes) {
  Session s;
  s.initialize({{"inputs", {{"k.py", "x=f32[256,512]"}}}});
  s.open(ServerKernel);
  s.server.flushDiagnostics();
  auto d = s.diagnostics();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]["version"], 1);
  ASSERT_EQ(d[0]["diagnostics"].size(), 1u) << d[0].dump();
  const json &diag = d[0]["diagnostics"][0];
  EXPECT_EQ(diag["code"], "partition-dim");
  EXPECT_EQ(diag["source"], "accelopt");
  EXPECT_EQ(diag["severity"], 1);
  EXPECT_EQ(diag["range"]["start"]["line"], 10);
  EXPECT_EQ(diag["range"]["start"]["character"], 8);
}

TEST(Server, IncrementalEditsAndHalfTypedCode) {
  Session s;
  s.initialize({{"inputs", {{"k.py", "x=f32[256,512]"}}}});
  s.open(ServerKernel);
  // Fix the error: 256 -> 128 partitions on line 10.
  s.change(2, json::array({edit(10, 20, 10, 23, "128")}));
  s.server.flushDiagnostics();
  auto d = s.diagnostics();
  ASSERT_EQ(d.size(), 1u) << "debounced: only the latest version is published";
  EXPECT_EQ(d[0]["version"], 2);
  EXPECT_TRUE(d[0]["diagnostics"].empty()) << d[0].dump();
  EXPECT_NE(s.server.analysis(Uri)->text().find("((128, 512)"), std::string::npos);

  // Half-typed code: an unclosed call. A syntax diagnostic, and requests still answer.
  s.change(3, json::array({edit(11, 0, 11, 0, "  y = nl.load(x[0:128, \n")}));
  s.server.flushDiagnostics();
  d = s.diagnostics();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[1]["version"], 3);
  ASSERT_FALSE(d[1]["diagnostics"].empty());
  EXPECT_EQ(d[1]["diagnostics"][0]["code"], "syntax");
  json r = s.hoverAt(10, 8, 4);
  EXPECT_TRUE(r.contains("result"));
  EXPECT_TRUE(r["result"].is_null());
  r = s.request(11, "textDocument/inlayHint",
                {{"textDocument", {{"uri", Uri}}},
                 {"range", {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 99}, {"character", 0}}}}}});
  EXPECT_EQ(r["result"], json::array());

  // Undo the half-typed line: back to a clean kernel, hover works again.
  s.change(4, json::array({edit(11, 0, 12, 0, "")}));
  s.server.flushDiagnostics();
  EXPECT_TRUE(s.diagnostics().back()["diagnostics"].empty());
  r = s.hoverAt(12, 8, 4); // `t` on "    t = nl.load(...)"
  ASSERT_TRUE(r["result"].is_object()) << r.dump();
  std::string md = r["result"]["contents"]["value"];
  EXPECT_NE(md.find("sbuf"), std::string::npos) << md;
  EXPECT_NE(md.find("[128, 512]"), std::string::npos) << md;
  EXPECT_NE(md.find("2048 B"), std::string::npos) << md;
}

TEST(Server, HoverLoopHeaderShowsTripCount) {
  Session s;
  s.initialize({{"inputs", {{"k.py", "x=f32[256,512]"}}}});
  s.open(ServerKernel);
  json r = s.hoverAt(2, 7, 10);
  ASSERT_TRUE(r["result"].is_object()) << r.dump();
  std::string md = r["result"]["contents"]["value"];
  EXPECT_NE(md.find("affine_range"), std::string::npos) << md;
  EXPECT_NE(md.find("trip count: 2"), std::string::npos) << md;
}

TEST(Server, CloseClearsDiagnostics) {
  Session s;
  s.initialize();
  s.open(ServerKernel);
  s.notify("textDocument/didClose", {{"textDocument", {{"uri", Uri}}}});
  s.server.flushDiagnostics();
  auto d = s.diagnostics();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(d[0]["diagnostics"].empty());
  EXPECT_EQ(s.server.analysis(Uri), nullptr);
}

TEST(Server, WorkerDebouncesAndPublishesLatestVersion) {
  ServerOptions o;
  o.debounceMs = 100;
  Session s(o);
  s.initialize({{"inputs", {{"k.py", "x=f32[256,512]"}}}});
  s.open(ServerKernel);
  for (int v = 2; v <= 6; ++v) s.change(v, json::array({edit(0, 0, 0, 0, "#\n")}));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (s.diagnostics().empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  s.server.waitIdle();
  auto d = s.diagnostics();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]["version"], 6);
  ASSERT_EQ(d[0]["diagnostics"].size(), 1u);
  EXPECT_EQ(d[0]["diagnostics"][0]["range"]["start"]["line"], 15); // moved down by 5 lines
}

TEST(Server, ConfigurationChangeRepublishes) {
  Session s;
  s.initialize();
  s.open(ServerKernel);
  s.server.flushDiagnostics();
  std::string before = s.hoverAt(2, 5, 11)["result"]["contents"]["value"]; // `x` in "def kernel(x):"
  EXPECT_NE(before.find("shape: unknown"), std::string::npos) << before;
  s.notify("workspace/didChangeConfiguration",
           {{"settings", {{"accelopt", {{"inputs", {{"kernel", "x=f32[256,512]"}}}}}}}});
  s.server.flushDiagnostics();
  auto d = s.diagnostics();
  ASSERT_EQ(d.size(), 2u);
  std::string after = s.hoverAt(3, 5, 11)["result"]["contents"]["value"];
  EXPECT_NE(after.find("[256, 512]"), std::string::npos) << "inputs keyed by kernel name: " << after;
}

TEST(Server, UnusableMemoryIsReportedOnceAndActionsStillWork) {
  std::string notADatabase = testing::TempDir() + "accelopt-lsp-not-a-db.sqlite";
  std::ofstream(notADatabase) << "this is not an SQLite file\n";
  for (const std::string &path : {notADatabase, testing::TempDir() + "accelopt-lsp-absent/memory.db"}) {
    Session s;
    s.initialize({{"inputs", {{"k.py", "x=f32[256,512]"}}}, {"memory", path}});
    s.open(ServerKernel);
    s.server.flushDiagnostics();
    json params = {{"textDocument", {{"uri", Uri}}},
                   {"range", {{"start", {{"line", 7}, {"character", 4}}}, {"end", {{"line", 7}, {"character", 4}}}}},
                   {"context", {{"diagnostics", json::array()}}}};
    for (int id = 2; id < 5; ++id) {
      json r = s.request(id, "textDocument/codeAction", params);
      ASSERT_TRUE(r["result"].is_array()) << r.dump();
      EXPECT_FALSE(r["result"].empty()) << "the rewrite actions do not need the memory";
    }
    int warnings = 0;
    for (const json &m : s.out)
      if (m.value("method", "") == "window/showMessage" &&
          llvm::StringRef(m["params"]["message"].get<std::string>()).startswith("accelopt memory: "))
        ++warnings;
    EXPECT_EQ(warnings, 1) << path;
  }
  std::remove(notADatabase.c_str());
}

TEST(Uri, PathConversions) {
  EXPECT_EQ(uriToPath("file:///a/b%20c.py"), "/a/b c.py");
  EXPECT_EQ(uriToPath("file://localhost/a.py"), "/a.py");
  EXPECT_EQ(uriToPath("untitled:Untitled-1"), "untitled:Untitled-1");
  EXPECT_EQ(pathToUri("/a/b c.py"), "file:///a/b%20c.py");
  EXPECT_EQ(uriToPath(pathToUri("/x/ü+y.py")), "/x/ü+y.py");
}

TEST(Config, FileKeysMatchUriPathOrSuffix) {
  std::map<std::string, std::string> m = {{"k.py", "short"}, {"dir/k.py", "longer"}, {"file:///u.py", "uri"}};
  EXPECT_EQ(*Config::lookupFile(m, "file:///x/dir/k.py", "/x/dir/k.py"), "longer");
  EXPECT_EQ(*Config::lookupFile(m, "file:///x/k.py", "/x/k.py"), "short");
  EXPECT_EQ(*Config::lookupFile(m, "file:///u.py", "/u.py"), "uri");
  EXPECT_EQ(Config::lookupFile(m, "file:///x/kk.py", "/x/kk.py"), nullptr);
  Config c;
  llvm::Error e = c.update(json{{"target", 3}});
  EXPECT_TRUE(bool(e)) << "a target must be a string";
  llvm::consumeError(std::move(e));
  EXPECT_FALSE(c.update(json{{"accelopt", {{"target", "trn2"}, {"reference", {{"k.py", "ref.py"}}}}}}));
  EXPECT_EQ(c.target, "trn2");
  EXPECT_EQ(c.references["k.py"], "ref.py");
}

TEST(Transport, FramesMessages) {
  std::string input = "Content-Length: 2\r\n\r\n{}Content-Type: x\r\ncontent-length: 7\r\n\r\n[1,2,3]";
  std::FILE *f = fmemopen(input.data(), input.size(), "r");
  MessageReader reader(f);
  EXPECT_EQ(reader.read().value_or("?"), "{}");
  EXPECT_EQ(reader.read().value_or("?"), "[1,2,3]");
  EXPECT_FALSE(reader.read().has_value());
  std::fclose(f);
  EXPECT_EQ(frame("abc"), "Content-Length: 3\r\n\r\nabc");
}

} // namespace

namespace {
// Two kernels whose estimates take the model a moment each (120,000 instructions).
const char *SlowKernels = R"(import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
  out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(300):
    for j in nl.affine_range(200):
      t = nl.load(x[0:128, 0:512])
      nl.store(out[0:128, 0:512], value=t)
  return out


@nki.jit
def kernel2(x):
  out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
  for i in nl.affine_range(200):
    for j in nl.affine_range(300):
      u = nl.load(x[0:128, 0:512])
      nl.store(out[0:128, 0:512], value=u)
  return out
)";
} // namespace

TEST(Server, EstimatesRunOnTheWorkerAndCancelledOnesAreAnsweredOnce) {
  ServerOptions o;
  o.debounceMs = 0;
  Session s(o);
  s.initialize({{"inputs", {{"k.py", "x=f32[128,512]"}}}});
  s.open(SlowKernels);
  // The background analysis of the opened text settles first: a later one would start a new estimate cache.
  s.server.waitIdle();
  auto resolve = [&](int id, const char *kernel) {
    s.server.handle(
        {{"jsonrpc", "2.0"},
         {"id", id},
         {"method", "codeLens/resolve"},
         {"params",
          {{"range", {{"start", {{"line", 5}, {"character", 0}}}, {"end", {{"line", 5}, {"character", 1}}}}},
           {"data", {{"uri", Uri}, {"version", 1}, {"kernel", kernel}}}}}});
  };
  auto answers = [&](int id) {
    std::lock_guard<std::mutex> g(s.lock);
    std::vector<json> found;
    for (const json &m : s.out)
      if (m.contains("id") && m["id"] == id && !m.contains("method")) found.push_back(m);
    return found;
  };
  resolve(2, "kernel");
  resolve(3, "kernel2");
  // Neither is answered on the request thread: both wait for the model.
  EXPECT_TRUE(answers(2).empty());
  EXPECT_TRUE(answers(3).empty());
  // Answered at once, whether it still waits or already runs.
  s.notify("$/cancelRequest", {{"id", 3}});
  ASSERT_EQ(answers(3).size(), 1u);
  EXPECT_EQ(answers(3)[0]["error"]["code"], -32800);
  s.server.waitEstimatesIdle();
  ASSERT_EQ(answers(2).size(), 1u);
  EXPECT_NE(answers(2)[0]["result"]["command"]["title"].get<std::string>().find("sim-trn1: "), std::string::npos)
      << answers(2)[0].dump();
  EXPECT_EQ(answers(3).size(), 1u) << "a cancelled request is answered once";
  // The estimate is kept: the same request is now answered on the request thread.
  resolve(4, "kernel");
  ASSERT_EQ(answers(4).size(), 1u);
  EXPECT_EQ(answers(4)[0]["result"], answers(2)[0]["result"]);
}
