// Property test of the rewrite engine: seeded random sequences of legal ops
// (length 1-4, each op drawn from the legal menu of the current text) over the
// kernels of our suite and, when the checkout is present, NKIBench. Every result
// re-parses and verifies with no error beyond the original's, every op the menu
// lists applies, and a whole sequence applied at once gives the same text as
// applying it op by op. ACCELOPT_PROPERTY_SEED overrides the seed.
#include "Rewrite/Rewrite.h"

#include "Analysis/Verifier.h"
#include "NKI/FrontEnd.h"
#include "NKI/InputSources.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>

using namespace accelopt;
using namespace accelopt::rewrite;

namespace {

struct Stats {
  int sequences = 0; // distinct op sequences applied (prefixes count too)
  int ops = 0;       // ops applied in all (op by op, plus whole-sequence replays)
  int menus = 0;     // legalOps calls
  double menuSeconds = 0;
  std::map<std::string, int> perOp;
};

std::map<std::string, int> errorCounts(const std::vector<nki::Diagnostic> &diags) {
  std::map<std::string, int> out;
  for (auto &d : diags)
    if (d.severity == nki::Diagnostic::Error) out[d.rule]++;
  return out;
}

class Explorer {
public:
  Explorer(const nki::SuiteCase &c, std::mt19937 &rng, Stats &stats, int width, std::vector<int> expand)
      : C(c), Rng(rng), S(stats), Width(width), Expand(std::move(expand)) {
    Opts = {&C.inputs, ""};
  }

  void run() {
    auto src = syntax::SourceBuffer::fromFile(C.kernelPath);
    ASSERT_TRUE(bool(src)) << C.kernelPath;
    Original = (*src)->text().str();
    auto f = nki::buildKernelFile(std::move(*src), {&C.inputs, ""});
    ASSERT_TRUE(bool(f)) << llvm::toString(f.takeError());
    ASSERT_EQ(f->kernels.size(), 1u);
    Baseline = errorCounts(analysis::verify(f->kernels.front()));
    explore(Original, {}, 0);
  }

private:
  const nki::SuiteCase &C;
  std::mt19937 &Rng;
  Stats &S;
  int Width;
  std::vector<int> Expand; // children explored further at each depth
  CandidateOptions Opts;
  std::string Original;
  std::map<std::string, int> Baseline;

  std::unique_ptr<syntax::SourceBuffer> buffer(const std::string &text) {
    auto b = syntax::SourceBuffer::fromText(C.kernelPath, text);
    EXPECT_TRUE(bool(b));
    return b ? std::move(*b) : nullptr;
  }

  /// Draws an op kind uniformly, then an instance of it.
  const LegalOp &draw(const std::vector<LegalOp> &menu) {
    std::map<std::string, std::vector<size_t>> byKind;
    for (size_t i = 0; i < menu.size(); ++i) byKind[menu[i].op["op"].get<std::string>()].push_back(i);
    auto it = byKind.begin();
    std::advance(it, std::uniform_int_distribution<size_t>(0, byKind.size() - 1)(Rng));
    auto &v = it->second;
    return menu[v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(Rng)]];
  }

  void check(const std::string &text, const std::vector<nlohmann::json> &seq) {
    auto f = nki::buildKernelFile(buffer(text), {&C.inputs, ""});
    ASSERT_TRUE(bool(f)) << C.name << ": " << dump(seq) << "\n" << llvm::toString(f.takeError());
    ASSERT_EQ(f->kernels.size(), 1u);
    for (auto &[rule, n] : errorCounts(analysis::verify(f->kernels.front()))) {
      auto b = Baseline.find(rule);
      EXPECT_LE(n, b == Baseline.end() ? 0 : b->second)
          << C.name << ": new '" << rule << "' error after " << dump(seq) << "\n"
          << text;
    }
  }

  static std::string dump(const std::vector<nlohmann::json> &seq) {
    std::string out = "[";
    for (auto &j : seq) out += (out.size() > 1 ? ", " : "") + formatOp(j);
    return out + "]";
  }

  void explore(const std::string &text, std::vector<nlohmann::json> seq, size_t depth) {
    if (depth >= 4 || ::testing::Test::HasFatalFailure()) return;
    auto src = buffer(text);
    if (!src) return;
    auto t0 = std::chrono::steady_clock::now();
    auto menu = legalOps(*src, Opts);
    S.menuSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++S.menus;
    ASSERT_TRUE(bool(menu)) << C.name << ": " << dump(seq) << "\n" << llvm::toString(menu.takeError());
    if (menu->empty()) return;
    int expand = depth < Expand.size() ? Expand[depth] : 0;
    for (int i = 0; i < Width; ++i) {
      const LegalOp &pick = draw(*menu);
      std::vector<nlohmann::json> next = seq;
      next.push_back(pick.op);
      // The listed op applies to the current text.
      auto res = applyCandidate(*src, {pick.op}, Opts);
      ASSERT_EQ(res.status, Status::Applied) << C.name << ": listed by legal but refused: " << dump(next) << "\n"
                                             << res.message;
      ++S.sequences;
      ++S.ops;
      ++S.perOp[pick.op["op"].get<std::string>()];
      check(res.text, next);
      // The whole sequence applied to the original text gives the same result
      // (checked for one sequence per menu: replays cost as much as the ops).
      if (next.size() > 1 && i == 0) {
        auto whole = applyCandidate(*buffer(Original), next, Opts);
        S.ops += int(next.size());
        ASSERT_EQ(whole.status, Status::Applied) << C.name << ": " << dump(next) << "\n" << whole.message;
        EXPECT_EQ(whole.text, res.text) << C.name << ": " << dump(next);
      }
      if (i < expand) explore(res.text, next, depth + 1);
    }
  }
};

/// A kernel of our own small suite (else an NKIBench kernel).
bool isOurs(const nki::SuiteCase &c) {
  return c.kernelPath.rfind(std::string(ACCELOPT_SOURCE_DIR) + "/nkibench/", 0) == 0;
}

std::vector<nki::SuiteCase> cases(bool &haveNkibench) {
  nki::SuiteLocation where;
  where.manifestPath = std::string(ACCELOPT_SOURCE_DIR) + "/nkibench/manifest.json";
  where.nkibenchRoot = ACCELOPT_NKIBENCH_DIR;
  haveNkibench = llvm::sys::fs::is_directory(ACCELOPT_NKIBENCH_DIR);
  auto suite = nki::loadSuite(where);
  EXPECT_TRUE(bool(suite)) << (suite ? "" : llvm::toString(suite.takeError()));
  if (!suite) return {};
  std::vector<nki::SuiteCase> out;
  for (auto &c : *suite) {
    if (!isOurs(c) && !haveNkibench) continue;
    out.push_back(c);
  }
  return out;
}

TEST(Property, RandomLegalSequencesApplyAndVerify) {
  uint32_t seed = 20261121;
  if (const char *s = std::getenv("ACCELOPT_PROPERTY_SEED")) seed = uint32_t(std::strtoul(s, nullptr, 10));
  std::mt19937 rng(seed);
  bool haveNkibench = false;
  auto all = cases(haveNkibench);
  ASSERT_FALSE(all.empty());
  Stats stats;
  auto t0 = std::chrono::steady_clock::now();
  int external = 0;
  for (auto &c : all) {
    bool big = !isOurs(c);
    external += big;
    // Menus are the expensive part (~0.2 s on a big kernel): draw several ops
    // from each menu and explore only a few prefixes further.
    // Under the sanitizers one child per level (about 40 % fewer menus; every kernel and depth still covered).
    int topExpand = ACCELOPT_SANITIZED || big ? 1 : 2;
    Explorer e(c, rng, stats, big ? 6 : 8, std::vector<int>{topExpand, 1, 1});
    e.run();
    if (HasFatalFailure()) return;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string perOp;
  for (auto &[op, n] : stats.perOp) perOp += " " + op + "=" + std::to_string(n);
  std::cout << "[property] seed " << seed << ": " << all.size() << " kernels (" << external << " NKIBench), "
            << stats.sequences << " sequences, " << stats.ops << " ops applied, " << stats.menus << " menus ("
            << stats.menuSeconds << " s), " << secs << " s; ops drawn:" << perOp << "\n";
  RecordProperty("seed", std::to_string(seed));
  RecordProperty("sequences", stats.sequences);
  RecordProperty("ops", stats.ops);
  RecordProperty("menus", stats.menus);
  EXPECT_GE(stats.sequences, ACCELOPT_SANITIZED ? 500 : 1000);
}

} // namespace
