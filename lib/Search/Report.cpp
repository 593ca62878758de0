// The optimization report: markdown for people, JSON for tools, the diff of the
// best kernel, and an SVG chart of the best latency per iteration.
#include "Search/Search.h"

#include "Rewrite/Rewrite.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <algorithm>

namespace accelopt::search {

namespace {

std::string chart(const SearchResult &r) {
  // Best latency (sim estimate) after each iteration, iteration 0 = the original.
  std::vector<double> ys = {r.original().latency()};
  for (const auto &it : r.iterations) ys.push_back(it.bestLatency);
  double maxY = *std::max_element(ys.begin(), ys.end()) * 1.1;
  if (maxY <= 0) maxY = 1;
  const int W = 640, H = 320, left = 70, bottom = 40, top = 30, right = 20;
  double dx = ys.size() > 1 ? double(W - left - right) / double(ys.size() - 1) : 0;
  auto px = [&](size_t i) { return left + dx * double(i); };
  auto py = [&](double y) { return H - bottom - (H - bottom - top) * y / maxY; };
  std::string s = llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
                                "font-family=\"sans-serif\" font-size=\"12\">\n",
                                W, H)
                      .str();
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += llvm::formatv("<text x=\"{0}\" y=\"18\">best estimated latency per iteration (ms, backend: {1})</text>\n", left,
                     r.original().profile ? r.original().profile->backend : "sim")
           .str();
  s += llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/>\n", left, H - bottom,
                     W - right)
           .str();
  s += llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/>\n", left, H - bottom, top)
           .str();
  std::string points;
  for (size_t i = 0; i < ys.size(); ++i) {
    points += llvm::formatv("{0:F1},{1:F1} ", px(i), py(ys[i])).str();
    s += llvm::formatv("<circle cx=\"{0:F1}\" cy=\"{1:F1}\" r=\"3\" fill=\"steelblue\"/>\n", px(i), py(ys[i])).str();
    s += llvm::formatv("<text x=\"{0:F1}\" y=\"{1}\" text-anchor=\"middle\">{2}</text>\n", px(i), H - bottom + 16, i)
             .str();
  }
  s += "<polyline fill=\"none\" stroke=\"steelblue\" stroke-width=\"2\" points=\"" + points + "\"/>\n";
  for (int t = 0; t <= 4; ++t) {
    double y = maxY * t / 4;
    s +=
        llvm::formatv("<text x=\"{0}\" y=\"{1:F1}\" text-anchor=\"end\">{2:F4}</text>\n", left - 6, py(y) + 4, y).str();
  }
  s +=
      llvm::formatv("<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\">iteration</text>\n", (left + W) / 2, H - 6).str();
  return s + "</svg>\n";
}

/// The candidates from the original to `c`, each with the plan (and signal) that made it.
std::vector<const Candidate *> lineage(const SearchResult &r, const Candidate &c) {
  std::vector<const Candidate *> chain;
  for (const Candidate *at = &c; at->parent >= 0 && at->parent < int(r.candidates.size());
       at = &r.candidates[at->parent])
    chain.push_back(at);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

std::string joinKinds(const std::vector<std::string> &kinds) {
  std::string out;
  for (const auto &k : kinds) out += (out.empty() ? "" : ", ") + k;
  return out;
}

} // namespace

llvm::Error writeReport(llvm::StringRef dir, const SearchResult &r, const SearchOptions &o, const ReportContext &ctx) {
  if (auto ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "error: cannot create report directory '" + dir + "': " + ec.message());
  const Candidate &orig = r.original(), &best = r.best();
  double speedup = best.latency() > 0 ? orig.latency() / best.latency() : 1;
  std::string backend = orig.profile ? orig.profile->backend : "sim-trn1";
  nlohmann::ordered_json j;
  j["kernel"] = ctx.kernelPath;
  if (!ctx.caseName.empty()) j["case"] = ctx.caseName;
  j["backend"] = backend;
  j["planner"] = ctx.planner;
  j["options"] = {{"iterations", o.iterations},
                  {"beam", o.beam},
                  {"plans", o.plans},
                  {"samples", o.samples},
                  {"seed", o.seed},
                  {"target", o.target},
                  {"numeric_seeds", o.numericSeeds},
                  {"atol", o.tolerance.atol},
                  {"rtol", o.tolerance.rtol}};
  j["baseline"] = orig.profile ? orig.profile->toJSON() : nlohmann::ordered_json();
  j["best"] = best.profile ? best.profile->toJSON() : nlohmann::ordered_json();
  j["best_ops"] = best.ops;
  j["speedup"] = speedup;
  if (ctx.rooflinePeakMs) {
    j["roofline_peak_ms"] = *ctx.rooflinePeakMs;
    j["baseline_percent_of_peak"] = 100.0 * *ctx.rooflinePeakMs / orig.latency();
    j["best_percent_of_peak"] = 100.0 * *ctx.rooflinePeakMs / best.latency();
  }
  size_t counts[6] = {0, 0, 0, 0, 0, 0};
  for (const auto &c : r.candidates) counts[c.status]++;
  j["candidates"] = {{"total", r.candidates.size() - 1},
                     {"correct", counts[Candidate::Correct] - 1},
                     {"incorrect", counts[Candidate::Incorrect]},
                     {"invalid", counts[Candidate::Invalid]},
                     {"slower_unchecked", counts[Candidate::Slower]}};
  j["seconds"] = r.seconds;
  j["closures_scored"] = r.closures;
  j["budget_spent"] = r.budgetSpent;
  j["signals"] = nlohmann::json::array();
  for (const SignalReading &s : r.signals)
    j["signals"].push_back(
        {{"signal", s.name}, {"seen", s.seen}, {"evidence", s.evidence}, {"proposes", s.opKinds}, {"why", s.why}});
  j["best_choices"] = nlohmann::json::array();
  for (const Candidate *c : lineage(r, best))
    j["best_choices"].push_back(
        {{"candidate", c->id}, {"iteration", c->iteration}, {"plan", c->plan}, {"signal", c->signal}});
  j["iterations"] = nlohmann::json::array();
  for (const auto &it : r.iterations)
    j["iterations"].push_back({{"iteration", it.iteration},
                               {"best_latency_ms", it.bestLatency},
                               {"best_candidate", it.bestId},
                               {"evaluated", it.evaluated},
                               {"correct", it.correct}});
  if (!ctx.extra.is_null()) j["agents"] = ctx.extra;
  std::string diff = rewrite::unifiedDiff(orig.text, best.text, "a/" + llvm::sys::path::filename(ctx.kernelPath).str(),
                                          "b/" + llvm::sys::path::filename(ctx.kernelPath).str());

  std::string md;
  md += "# accelopt report: " + llvm::sys::path::filename(ctx.kernelPath).str() + "\n\n";
  md += "Latencies are estimates of the performance model (backend: " + backend + "), not measurements.\n\n";
  md += llvm::formatv("| | latency (ms) | speedup |{0}\n|---|---|---|{1}\n", ctx.rooflinePeakMs ? " % of peak |" : "",
                      ctx.rooflinePeakMs ? "---|" : "")
            .str();
  auto row = [&](const char *name, const Candidate &c) {
    md += llvm::formatv("| {0} | {1:F4} | {2:F3}x |", name, c.latency(), orig.latency() / c.latency()).str();
    if (ctx.rooflinePeakMs) md += llvm::formatv(" {0:F1} |", 100.0 * *ctx.rooflinePeakMs / c.latency()).str();
    md += "\n";
  };
  row("baseline", orig);
  row("best", best);
  md += llvm::formatv(
            "\n{0} candidates evaluated in {1:F1} s ({2} correct); planner: {3}; beam {4}, plans {5}, samples {6}, "
            "iterations {7}, seed {8}.\n",
            r.candidates.size() - 1, r.seconds, counts[Candidate::Correct] - 1, ctx.planner, o.beam, o.plans, o.samples,
            o.iterations, o.seed)
            .str();
  md += "\n## Best op sequence\n\n";
  if (best.ops.empty()) md += "(none: no candidate beat the original)\n";
  for (const auto &op : best.ops) md += "- `" + rewrite::formatOp(op) + "`\n";
  md += "\n## Why: profile signals of the original kernel\n\n| signal | seen | evidence | proposes "
        "|\n|---|---|---|---|\n";
  for (const SignalReading &s : r.signals)
    md += "| " + s.name + " | " + (s.seen ? "yes" : "no") + " | " + s.evidence + " | " + joinKinds(s.opKinds) + " |\n";
  md += "\nChoices that led to the best kernel:\n\n";
  std::vector<const Candidate *> choices = lineage(r, best);
  if (choices.empty()) md += "(none)\n";
  for (const Candidate *c : choices)
    md += llvm::formatv("- iteration {0}, candidate {1}: {2}{3}\n", c->iteration, c->id, c->plan,
                        c->signal.empty() ? std::string() : " [signal: " + c->signal + "]")
              .str();
  md += llvm::formatv("\n{0} structural closure(s) scored on the model{1}.\n", r.closures,
                      r.budgetSpent ? "; the search stopped when its budget was spent" : "")
            .str();
  md += "\n## Best per iteration\n\n| iteration | best latency (ms) | candidate | evaluated | correct "
        "|\n|---|---|---|---|---|\n";
  for (const auto &it : r.iterations)
    md += llvm::formatv("| {0} | {1:F4} | {2} | {3} | {4} |\n", it.iteration, it.bestLatency, it.bestId, it.evaluated,
                        it.correct)
              .str();
  md += "\n## Baseline profile\n\n```\n" + (orig.profile ? orig.profile->renderText() : "") + "```\n";
  md += "\n## Best profile\n\n```\n" + (best.profile ? best.profile->renderText() : "") + "```\n";
  md += "\n## Diff\n\n```diff\n" + diff + "```\n";
  md += "\n![best latency per iteration](latency.svg)\n";

  auto write = [&](const char *name, const std::string &text) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    return syntax::writeFileAtomically(path, text);
  };
  if (auto err = write("report.json", j.dump(2) + "\n")) return err;
  if (auto err = write("report.md", md)) return err;
  if (auto err = write("best.diff", diff)) return err;
  if (auto err = write("latency.svg", chart(r))) return err;
  nlohmann::json all = nlohmann::json::array();
  for (const auto &c : r.candidates)
    all.push_back({{"id", c.id},
                   {"parent", c.parent},
                   {"iteration", c.iteration},
                   {"status", statusNames(c.status).display.str()},
                   {"plan", c.plan},
                   {"signal", c.signal},
                   {"ops", c.ops},
                   {"latency_ms", c.profile ? nlohmann::json(c.latency()) : nlohmann::json()},
                   {"error", c.error},
                   {"ran_on", c.ranOn.empty() ? "local" : c.ranOn}});
  return write("candidates.json", all.dump(1) + "\n");
}

} // namespace accelopt::search
