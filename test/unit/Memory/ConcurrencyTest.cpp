// WAL with concurrent writers, clear errors for corrupted and locked files, and
// crash safety: a writer killed with SIGKILL loses nothing it committed.
#include "Memory/Hash.h"
#include "Memory/Store.h"

#include "MemoryTestUtil.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace accelopt;
using namespace accelopt::memory;
using namespace accelopt::memory::test;
using nlohmann::json;

namespace {

NewCandidate numbered(int64_t kernel, std::optional<int64_t> run, const std::string &tag, int i) {
  NewCandidate c;
  c.kernel = kernel;
  c.run = run;
  c.ops = json::array({{{"op", "unroll"}, {"loop", "L" + std::to_string(i % 5)}, {"factor", i}}});
  c.sourceHash = sourceHash(tag + std::to_string(i));
  c.status = CandidateStatus::Correct;
  c.iteration = i / 10;
  c.profiles.push_back({"sim-trn2", 1.0 + i, {{"latency", 1.0 + i}}});
  return c;
}

TEST(Concurrency, TwoThreadsWriteThroughWal) {
  ScratchDir dir;
  std::string path = dir.file("wal.db");
  int64_t kernel = 0;
  {
    auto s = Store::open(path);
    ASSERT_TRUE(bool(s));
    auto k = (*s)->upsertKernel({"k", "k.py", "h", ""});
    ASSERT_TRUE(bool(k));
    kernel = *k;
  }
  constexpr int PerThread = 60;
  std::atomic<int> failures{0};
  auto writer = [&](std::string tag) {
    StoreOptions o;
    o.busyTimeoutMs = 10000;
    auto s = Store::open(path, o); // one connection per thread
    if (!s) {
      llvm::consumeError(s.takeError());
      ++failures;
      return;
    }
    auto run = (*s)->beginRun(kernel, {{"writer", tag}});
    if (!run) {
      llvm::consumeError(run.takeError());
      ++failures;
      return;
    }
    for (int i = 0; i < PerThread; ++i) {
      auto r = (*s)->insertCandidate(numbered(kernel, *run, tag, i));
      if (!r) {
        llvm::consumeError(r.takeError());
        ++failures;
      }
      // Readers see committed rows while the other thread writes.
      auto c = (*s)->counts();
      if (!c) {
        llvm::consumeError(c.takeError());
        ++failures;
      }
    }
  };
  std::thread a(writer, "a"), b(writer, "b");
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
  auto s = Store::open(path);
  ASSERT_TRUE(bool(s));
  auto c = (*s)->counts();
  ASSERT_TRUE(bool(c));
  EXPECT_EQ(c->candidates, 2 * PerThread);
  EXPECT_EQ(c->profiles, 2 * PerThread);
  EXPECT_EQ(c->runs, 2);
  auto ok = (*s)->integrityCheck();
  ASSERT_TRUE(bool(ok));
  EXPECT_EQ(*ok, "ok");
}

TEST(Concurrency, SharedStoreFromTwoThreads) {
  auto s = Store::open(":memory:");
  ASSERT_TRUE(bool(s));
  auto k = (*s)->upsertKernel({"k", "k.py", "h", ""});
  ASSERT_TRUE(bool(k));
  std::atomic<int> failures{0};
  auto writer = [&](std::string tag) {
    for (int i = 0; i < 40; ++i)
      if (auto r = (*s)->insertCandidate(numbered(*k, std::nullopt, tag, i)); !r) {
        llvm::consumeError(r.takeError());
        ++failures;
      }
  };
  std::thread a(writer, "a"), b(writer, "b");
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
  auto c = (*s)->counts();
  ASSERT_TRUE(bool(c));
  EXPECT_EQ(c->candidates, 80);
}

TEST(Errors, CorruptedFileIsNotADatabase) {
  ScratchDir dir;
  std::string path = dir.file("garbage.db");
  {
    std::ofstream out(path);
    for (int i = 0; i < 200; ++i) out << "this is not an sqlite database, just text\n";
  }
  auto s = Store::open(path);
  ASSERT_FALSE(bool(s));
  llvm::Error err = s.takeError();
  EXPECT_EQ(errorKind(err), MemoryError::NotADatabase);
  std::string msg = llvm::toString(std::move(err));
  EXPECT_NE(msg.find("garbage.db: error: file is not a database"), std::string::npos) << msg;
}

TEST(Errors, DamagedPageIsReported) {
  ScratchDir dir;
  std::string path = dir.file("damaged.db");
  {
    auto s = Store::open(path);
    ASSERT_TRUE(bool(s));
    auto k = (*s)->upsertKernel({"k", "k.py", "h", ""});
    ASSERT_TRUE(bool(k));
    for (int i = 0; i < 200; ++i) ASSERT_TRUE(bool((*s)->insertCandidate(numbered(*k, std::nullopt, "x", i))));
    ASSERT_FALSE(bool((*s)->database().exec("PRAGMA wal_checkpoint(TRUNCATE)")));
  }
  // Overwrite page 3 onwards (table b-trees) with garbage, keep the header.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096 * 2);
    std::string junk(4096 * 4, '\x5a');
    f.write(junk.data(), std::streamsize(junk.size()));
  }
  auto s = Store::open(path);
  llvm::Error err = llvm::Error::success();
  if (!s) {
    err = s.takeError();
  } else {
    auto ok = (*s)->integrityCheck();
    if (!ok)
      err = ok.takeError();
    else {
      EXPECT_NE(*ok, "ok"); // reported, not a crash
      return;
    }
  }
  auto kind = errorKind(err);
  EXPECT_TRUE(kind == MemoryError::Corrupt || kind == MemoryError::NotADatabase);
  std::string msg = llvm::toString(std::move(err));
  EXPECT_NE(msg.find("damaged.db: error:"), std::string::npos) << msg;
}

TEST(Errors, LockedDatabase) {
  ScratchDir dir;
  std::string path = dir.file("locked.db");
  auto s = Store::open(path);
  ASSERT_TRUE(bool(s));
  auto k = (*s)->upsertKernel({"k", "k.py", "h", ""});
  ASSERT_TRUE(bool(k));
  // A second connection holds the write lock.
  auto holder = Database::open(path);
  ASSERT_TRUE(bool(holder));
  ASSERT_FALSE(bool((*holder)->exec("BEGIN IMMEDIATE; INSERT INTO kernels(name, source_hash) VALUES ('x', 'y');")));
  StoreOptions o;
  o.busyTimeoutMs = 100;
  auto waiting = Store::open(path, o); // opening an up-to-date memory needs no write lock
  ASSERT_TRUE(bool(waiting)) << llvm::toString(waiting.takeError());
  auto r = (*waiting)->insertCandidate(numbered(*k, std::nullopt, "l", 1));
  ASSERT_FALSE(bool(r));
  llvm::Error err = r.takeError();
  EXPECT_EQ(errorKind(err), MemoryError::Locked);
  std::string msg = llvm::toString(std::move(err));
  EXPECT_NE(msg.find("database is locked"), std::string::npos) << msg;
  EXPECT_NE(msg.find("100 ms"), std::string::npos) << msg;
  // Readers still read (WAL) while the writer holds its lock.
  auto c = (*waiting)->counts();
  ASSERT_TRUE(bool(c));
  EXPECT_EQ(c->kernels, 1);
  ASSERT_FALSE(bool((*holder)->exec("ROLLBACK")));
  auto again = (*waiting)->insertCandidate(numbered(*k, std::nullopt, "l", 1));
  ASSERT_TRUE(bool(again));
  EXPECT_TRUE(again->inserted);
}

// The child writes candidates one transaction each and reports every committed
// id on a pipe; the parent SIGKILLs it mid-run, then checks the database.
TEST(CrashSafety, KillAndResume) {
  ScratchDir dir;
  std::string path = dir.file("crash.db");
  int64_t kernel = 0, run = 0;
  {
    auto s = Store::open(path);
    ASSERT_TRUE(bool(s));
    auto k = (*s)->upsertKernel({"k", "k.py", "h", ""});
    ASSERT_TRUE(bool(k));
    kernel = *k;
    auto r = (*s)->beginRun(kernel, {{"beam", 2}});
    ASSERT_TRUE(bool(r));
    run = *r;
  }
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    auto s = Store::open(path);
    if (!s) _exit(3);
    for (int i = 0; i < 100000; ++i) {
      auto r = (*s)->insertCandidate(numbered(kernel, run, "crash", i));
      if (!r) _exit(4);
      if (i % 10 == 9 && (*s)->recordBeam(run, i / 10, {r->id})) _exit(5);
      int64_t id = r->id;
      if (write(fds[1], &id, sizeof id) != sizeof id) _exit(6);
    }
    _exit(0);
  }
  close(fds[1]);
  std::vector<int64_t> committed;
  int64_t id = 0;
  while (committed.size() < 57 && read(fds[0], &id, sizeof id) == sizeof id) committed.push_back(id);
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  close(fds[0]);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the writer ended before it was killed: " << status;
  ASSERT_EQ(committed.size(), 57u);

  auto s = Store::open(path);
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  auto ok = (*s)->integrityCheck();
  ASSERT_TRUE(bool(ok));
  EXPECT_EQ(*ok, "ok");
  for (int64_t c : committed) {
    auto rec = (*s)->getCandidate(c);
    ASSERT_TRUE(bool(rec));
    ASSERT_TRUE(rec->has_value()) << "committed candidate " << c << " lost";
    auto profiles = (*s)->profilesOf(c);
    ASSERT_TRUE(bool(profiles));
    EXPECT_EQ(profiles->size(), 1u) << "candidate and profile commit together";
  }
  // Resume: the run is unfinished, its state lists what was evaluated.
  auto latest = (*s)->latestRun(kernel, true);
  ASSERT_TRUE(bool(latest) && *latest);
  EXPECT_EQ((*latest)->id, run);
  auto state = (*s)->loadRunState(run);
  ASSERT_TRUE(bool(state));
  EXPECT_GE(state->evaluatedHashes.size(), committed.size());
  for (int i = 0; i < int(committed.size()); ++i)
    EXPECT_TRUE(state->evaluatedHashes.count(sourceHash("crash" + std::to_string(i)))) << i;
  EXPECT_GE(state->beamIteration, 4);
  ASSERT_EQ(state->beam.size(), 1u);
  // A resumed writer continues without duplicates.
  auto next = (*s)->insertCandidate(numbered(kernel, run, "crash", 0));
  ASSERT_TRUE(bool(next));
  EXPECT_FALSE(next->inserted);
  ASSERT_FALSE(bool((*s)->setRunStatus(run, RunStatus::Interrupted)));
}

} // namespace
