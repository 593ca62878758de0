#include "Perf/Roofline.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

using namespace accelopt::perf;

namespace {

double eval(llvm::StringRef text, const ExprVariables &vars = {}) {
  auto v = evaluateExpression(text, vars);
  if (!v) {
    ADD_FAILURE() << llvm::toString(v.takeError());
    return NAN;
  }
  return v->asDouble();
}

std::string evalError(llvm::StringRef text, const ExprVariables &vars = {}) {
  auto v = evaluateExpression(text, vars);
  if (v) return "";
  return llvm::toString(v.takeError());
}

TEST(Expression, Arithmetic) {
  ExprVariables vars;
  vars["M"] = ExprValue::ofInteger(4096);
  vars["N"] = ExprValue::ofInteger(2048);
  vars["x"] = ExprValue::ofReal(0.5);
  EXPECT_EQ(eval("2*M*N + M", vars), 2.0 * 4096 * 2048 + 4096);
  EXPECT_EQ(eval("410 * 1024**3"), 410.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(eval("2 * 128 * 1.12e9"), 2 * 128 * 1.12e9);
  EXPECT_EQ(eval("23.75e12"), 23.75e12);
  EXPECT_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(eval("2**3**2"), 512); // right-associative
  EXPECT_EQ(eval("-2**2"), -4);    // ** binds tighter than unary minus
  EXPECT_EQ(eval("2**-1"), 0.5);
  EXPECT_EQ(eval("7 // 2"), 3);
  EXPECT_EQ(eval("-7 // 2"), -4); // floor, as in Python
  EXPECT_EQ(eval("7 / 2"), 3.5);
  EXPECT_EQ(eval("7.5 // 2"), 3);
  EXPECT_EQ(eval("x * M - -1", vars), 2049);
  EXPECT_EQ(eval(" 1e3 + .5 "), 1000.5);
  auto exact = evaluateExpression("3 * (2**62 // 3)", {});
  ASSERT_TRUE(bool(exact));
  EXPECT_TRUE(exact->isInteger);
  EXPECT_EQ(exact->integer, 3 * ((int64_t(1) << 62) / 3));
}

TEST(Expression, Errors) {
  EXPECT_NE(evalError("2*Q").find("unknown name 'Q'"), std::string::npos);
  EXPECT_NE(evalError("1/0").find("division by zero"), std::string::npos);
  EXPECT_NE(evalError("1//0").find("division by zero"), std::string::npos);
  EXPECT_NE(evalError("2**64").find("integer overflow"), std::string::npos);
  EXPECT_NE(evalError("9223372036854775807 + 1").find("integer overflow"), std::string::npos);
  EXPECT_NE(evalError("(1 + 2").find("missing ')'"), std::string::npos);
  EXPECT_NE(evalError("1 +").find("unexpected end"), std::string::npos);
  EXPECT_NE(evalError("1 $ 2").find("unexpected '$'"), std::string::npos);
  EXPECT_NE(evalError("__import__('os')").find("unknown name"), std::string::npos);
  EXPECT_NE(evalError(std::string(1000, '(') + "1" + std::string(1000, ')')).find("nested too deeply"),
            std::string::npos);
}

TEST(Roofline, BuiltinMatchesTheDataFile) {
  auto builtin = Roofline::builtin();
  ASSERT_TRUE(bool(builtin)) << llvm::toString(builtin.takeError());
  auto file = Roofline::load(std::string(ACCELOPT_SOURCE_DIR) + "/nkibench/roofline.json");
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_EQ(builtin->problems(), file->problems());
  EXPECT_EQ(builtin->problems().size(), 14u);
  EXPECT_DOUBLE_EQ(builtin->peakBandwidth(), 410.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(builtin->peakVecFlops(), 2 * 128 * 1.12e9);
  EXPECT_DOUBLE_EQ(builtin->peakMatmulFlops(), 23.75e12);
}

TEST(Roofline, RejectsBadFormulas) {
  auto bad = Roofline::parse(R"({"constants": {"peak_bandwidth": {"expr": "1"},
      "peak_vec_flops": {"expr": "1"}, "peak_matmul_flops": {"expr": "1"}},
      "problems": {"p": {"vec_flops": "2*", "mm_flops": "0", "total_bytes": "0"}}})",
                             "test.json");
  ASSERT_FALSE(bool(bad));
  std::string message = llvm::toString(bad.takeError());
  EXPECT_NE(message.find("problems.p.vec_flops"), std::string::npos) << message;

  // Names are placeholders while checking, so this is only a grammar check.
  auto fine = Roofline::parse(R"json({"constants": {"peak_bandwidth": {"expr": "1"},
      "peak_vec_flops": {"expr": "1"}, "peak_matmul_flops": {"expr": "1"}},
      "problems": {"p": {"vec_flops": "M // (N - 1)", "mm_flops": "0", "total_bytes": "0"}}})json",
                              "test.json");
  EXPECT_TRUE(bool(fine)) << llvm::toString(fine.takeError());

  auto roofline = Roofline::builtin();
  ASSERT_TRUE(bool(roofline));
  auto unknown = roofline->peak("conv2d", {});
  ASSERT_FALSE(bool(unknown));
  EXPECT_NE(llvm::toString(unknown.takeError()).find("no roofline formulas"), std::string::npos);
  auto missingValue = roofline->peak("matmul", {});
  ASSERT_FALSE(bool(missingValue));
  EXPECT_NE(llvm::toString(missingValue.takeError()).find("unknown name"), std::string::npos);
}

TEST(Roofline, MatchesTheStoredPeaksOfAllNkiBenchCases) {
  std::string path = std::string(ACCELOPT_NKIBENCH_DIR) + "/measured/trn1_baselines.json";
  if (!llvm::sys::fs::exists(path)) GTEST_SKIP() << "no NKIBench checkout at " << path;
  std::ifstream in(path);
  nlohmann::json cases = nlohmann::json::parse(in);
  auto roofline = Roofline::builtin();
  ASSERT_TRUE(bool(roofline)) << llvm::toString(roofline.takeError());
  ASSERT_EQ(cases.size(), 14u);
  for (const nlohmann::json &c : cases) {
    std::string problem = c["problem"];
    auto values = variablesFromJSON(c["values"]);
    ASSERT_TRUE(bool(values)) << llvm::toString(values.takeError());
    auto peak = roofline->peak(problem, *values);
    ASSERT_TRUE(bool(peak)) << problem << ": " << llvm::toString(peak.takeError());
    double stored = c["roofline_peak_ms"];
    EXPECT_LE(std::fabs(peak->peakMs / stored - 1), 1e-6) << problem << ": " << peak->peakMs << " vs " << stored;
    EXPECT_EQ(rooflineBoundName(peak->bound), c["bound"].get<std::string>()) << problem;
    double measured = c["measured_trn1"]["latency"];
    EXPECT_NEAR(peak->fractionOfPeak(measured), c["baseline_pct_of_peak"].get<double>(), 1e-6) << problem;
  }
}

} // namespace
