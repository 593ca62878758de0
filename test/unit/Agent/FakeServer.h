// Test helper: runs test/Agent/Inputs/fake_openai.py on 127.0.0.1 (ephemeral
// port) with a scripted list of answers, and reads back what it received.
#pragma once

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace accelopt::agent::test {

inline std::string tempPath(const char *prefix, const char *suffix) {
  llvm::SmallString<128> p;
  if (llvm::sys::fs::createTemporaryFile(prefix, suffix, p)) ADD_FAILURE() << "cannot create a temporary file";
  return std::string(p);
}

/// A chat.completion answer carrying `content`.
inline nlohmann::json answer(const std::string &content, int promptTokens = 10, int completionTokens = 5) {
  return {{"content", content}, {"usage", {promptTokens, completionTokens}}};
}

class FakeServer {
public:
  explicit FakeServer(const nlohmann::json &script, double maxSeconds = 10) {
    ScriptFile = tempPath("agent-script", "json");
    RecordFile = tempPath("agent-record", "jsonl");
    StdoutFile = tempPath("agent-server", "out");
    std::ofstream(ScriptFile) << script.dump();
    std::string server = ACCELOPT_SOURCE_DIR "/test/Agent/Inputs/fake_openai.py";
    std::string seconds = std::to_string(maxSeconds);
    std::vector<llvm::StringRef> args = {"/usr/bin/python3", server,     "--script",      ScriptFile,
                                         "--record",         RecordFile, "--max-seconds", seconds};
    std::string err;
    bool failed = false;
    Pi = llvm::sys::ExecuteNoWait(
        "/usr/bin/python3", args, llvm::None,
        {llvm::Optional<llvm::StringRef>(""), llvm::Optional<llvm::StringRef>(StdoutFile), llvm::None}, 0, &err,
        &failed);
    if (failed || Pi.Pid <= 0) {
      ADD_FAILURE() << "cannot start the fake server: " << err;
      return;
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(StdoutFile);
      std::string word;
      if (in >> word && word == "PORT" && in >> Port) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!Port) ADD_FAILURE() << "the fake server printed no port";
  }

  ~FakeServer() {
    if (Pi.Pid > 0) {
      // Give it a moment to exit on its own (it stops after its script), then end it.
      llvm::sys::ProcessInfo done = llvm::sys::Wait(Pi, 0, false);
      if (done.Pid == 0) {
        ::kill(Pi.Pid, SIGTERM);
        llvm::sys::Wait(Pi, 0, true);
      }
    }
    for (const std::string &f : {ScriptFile, RecordFile, StdoutFile}) llvm::sys::fs::remove(f);
  }

  int port() const { return Port; }
  std::string baseUrl() const { return "http://127.0.0.1:" + std::to_string(Port) + "/v1"; }

  /// The requests received so far: {"path", "headers", "body", "time"}.
  std::vector<nlohmann::json> requests() const {
    std::vector<nlohmann::json> out;
    std::ifstream in(RecordFile);
    std::string line;
    while (std::getline(in, line))
      if (!line.empty()) out.push_back(nlohmann::json::parse(line));
    return out;
  }

private:
  std::string ScriptFile, RecordFile, StdoutFile;
  llvm::sys::ProcessInfo Pi;
  int Port = 0;
};

/// The text of all messages of a recorded request, joined.
inline std::string messagesText(const nlohmann::json &request) {
  std::string s;
  for (const auto &m : request["body"]["messages"]) s += m["content"].get<std::string>() + "\n";
  return s;
}

inline std::string readFile(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  return buf ? (*buf)->getBuffer().str() : std::string();
}

} // namespace accelopt::agent::test
