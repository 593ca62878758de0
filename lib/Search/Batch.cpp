#include "Search/Batch.h"
#include "Syntax/Errors.h"
#include "Syntax/JsonNesting.h"

#include "Analysis/Verifier.h"
#include "Interp/Interpreter.h"
#include "Memory/Store.h"
#include "NKI/Dialect.h"
#include "Profile/NumericCheck.h"
#include "Rewrite/Migrate.h"
#include "Rewrite/Rewrite.h"
#include "Syntax/AstWalks.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Compiler.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ThreadPool.h"

#include <algorithm>
#include <malloc.h>
#include <set>

#ifndef ACCELOPT_SOURCE_DIR
#define ACCELOPT_SOURCE_DIR "."
#endif

namespace accelopt::search {

using nlohmann::json;

namespace {

std::string firstLine(llvm::StringRef text) { return text.trim().split('\n').first.str(); }

/// "PATH:12:3: error: msg" stays; "PATH: error: msg" or "error: msg" gets a
/// position, so every failure reads `path:line:col: error: ...`.
std::string locatedError(llvm::StringRef path, llvm::StringRef message) {
  std::string line = firstLine(message);
  llvm::StringRef rest(line);
  if (rest.consume_front(path) && rest.consume_front(":")) {
    if (!rest.empty() && llvm::isDigit(rest.front())) return message.trim().str();
    rest = rest.ltrim();
  }
  rest.consume_front("error:");
  return (path + ":1:1: error: " + rest.ltrim()).str();
}

std::string plural(size_t n, llvm::StringRef word) {
  return std::to_string(n) + " " + word.str() + (n == 1 ? "" : "s");
}

} // namespace

// ------------------------------------------------------------ discovery

namespace {

/// gitignore glob matching. Every (glob position, text position) a `*` tries is remembered once it has
/// failed, so `*a*a*a*a*a*ab` against a long name costs a few thousand steps, not an exponential
/// number (reliability report D14).
class GlobMatcher {
public:
  GlobMatcher(llvm::StringRef glob, llvm::StringRef text) : Glob0(glob), Text0(text) {}
  bool matches() { return match(Glob0, Text0); }

private:
  llvm::StringRef Glob0, Text0;
  llvm::DenseSet<std::pair<unsigned, unsigned>> Failed;

  bool match(llvm::StringRef glob, llvm::StringRef text) {
    std::pair<unsigned, unsigned> state(unsigned(glob.data() - Glob0.data()), unsigned(text.data() - Text0.data()));
    if (Failed.count(state)) return false;
    if (matchFrom(glob, text)) return true;
    Failed.insert(state);
    return false;
  }

  bool matchFrom(llvm::StringRef glob, llvm::StringRef text) {
    while (!glob.empty()) {
      char c = glob.front();
      if (c == '*') {
        bool anyDepth = glob.startswith("**");
        llvm::StringRef rest = glob.drop_front(anyDepth ? 2 : 1);
        // "**/x" also matches "x" (zero directories).
        if (anyDepth && rest.startswith("/") && match(rest.drop_front(), text)) return true;
        for (size_t i = 0; i <= text.size(); ++i) {
          if (match(rest, text.drop_front(i))) return true;
          if (i < text.size() && !anyDepth && text[i] == '/') return false;
        }
        return false;
      }
      if (text.empty()) return false;
      if (c == '?') {
        if (text.front() == '/') return false;
      } else if (c == '[') {
        size_t start = 1;
        bool negated = start < glob.size() && (glob[start] == '!' || glob[start] == '^');
        if (negated) ++start;
        size_t close = start < glob.size() ? glob.find(']', start + 1) : llvm::StringRef::npos;
        if (close != llvm::StringRef::npos) {
          llvm::StringRef set = glob.slice(start, close);
          bool in = false;
          for (size_t i = 0; i < set.size(); ++i) {
            if (i + 2 < set.size() && set[i + 1] == '-') {
              in |= set[i] <= text.front() && text.front() <= set[i + 2];
              i += 2;
            } else {
              in |= set[i] == text.front();
            }
          }
          if (in == negated || text.front() == '/') return false;
          glob = glob.drop_front(close + 1);
          text = text.drop_front();
          continue;
        }
        if (text.front() != '[') return false; // no closing bracket: a literal '['
      } else {
        if (c == '\\' && glob.size() > 1) glob = glob.drop_front();
        if (glob.front() != text.front()) return false;
      }
      glob = glob.drop_front();
      text = text.drop_front();
    }
    return text.empty();
  }
};

} // namespace

bool globMatch(llvm::StringRef glob, llvm::StringRef text) { return GlobMatcher(glob, text).matches(); }

void IgnoreRules::add(llvm::StringRef dir, llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, 32> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.rtrim("\r").rtrim(" \t");
    if (line.empty() || line.startswith("#")) continue;
    Rule rule;
    rule.base = dir.str();
    if (line.consume_front("!")) rule.negated = true;
    if (line.consume_back("/")) rule.directoryOnly = true;
    // A slash before the end anchors the rule to the .gitignore's directory.
    rule.anchored = line.contains('/');
    line.consume_front("/");
    if (line.empty()) continue;
    rule.glob = line.str();
    Rules.push_back(std::move(rule));
  }
}

void IgnoreRules::addDirectory(llvm::StringRef dir) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, ".gitignore");
  if (auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true)) add(dir, (*buf)->getBuffer());
}

bool IgnoreRules::ignored(llvm::StringRef path, bool isDirectory) const {
  bool result = false;
  for (const Rule &rule : Rules) {
    if (rule.directoryOnly && !isDirectory) continue;
    llvm::StringRef rel = path;
    if (!rule.base.empty() && !(rel.consume_front(rule.base) && rel.consume_front("/"))) continue;
    llvm::StringRef subject = rule.anchored ? rel : llvm::sys::path::filename(rel);
    if (globMatch(rule.glob, subject)) result = !rule.negated;
  }
  return result;
}

namespace {

/// Unreadable .py files count as kernels, so that the pipeline reports them.
bool hasKernel(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  return !buf || (*buf)->getBuffer().contains("@nki.jit");
}

void walk(llvm::StringRef dir, IgnoreRules &rules, std::vector<std::string> &out, std::vector<std::string> &problems) {
  rules.addDirectory(dir);
  std::error_code ec;
  llvm::sys::fs::directory_iterator it(dir, ec, /*follow_symlinks=*/false), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string &path = it->path();
    llvm::StringRef name = llvm::sys::path::filename(path);
    llvm::sys::fs::file_type type = it->type();
    if (type == llvm::sys::fs::file_type::symlink_file) {
      // Follow symlinked files, never symlinked directories (no cycles).
      llvm::sys::fs::file_status st;
      if (llvm::sys::fs::status(path, st) || st.type() != llvm::sys::fs::file_type::regular_file) continue;
      type = st.type();
    }
    if (type == llvm::sys::fs::file_type::directory_file) {
      if (name.startswith(".") || name == "__pycache__" || rules.ignored(path, true)) continue;
      walk(path, rules, out, problems);
    } else if (type == llvm::sys::fs::file_type::regular_file) {
      if (name.endswith(".py") && !rules.ignored(path, false) && hasKernel(path)) out.push_back(path);
    }
  }
  // An unreadable directory (permissions, removed meanwhile) would otherwise look empty.
  if (ec) problems.push_back(dir.str() + ": cannot read the directory: " + ec.message() + "; its files are skipped");
}

} // namespace

llvm::Expected<std::vector<std::string>> findKernelFiles(llvm::ArrayRef<std::string> paths,
                                                         std::vector<std::string> *problems) {
  std::vector<std::string> unreadable;
  std::vector<std::string> out;
  for (const std::string &given : paths) {
    llvm::StringRef root = llvm::StringRef(given).rtrim('/');
    if (root.empty()) root = given; // "/"
    llvm::sys::fs::file_status st;
    if (auto ec = llvm::sys::fs::status(root, st)) return stringError(given + ": error: " + ec.message());
    if (st.type() == llvm::sys::fs::file_type::directory_file) {
      IgnoreRules rules;
      walk(root, rules, out, unreadable);
    } else {
      out.push_back(root.str());
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (problems) problems->insert(problems->end(), unreadable.begin(), unreadable.end());
  return out;
}

// ------------------------------------------------------------- patterns

std::string NamedPattern::diagnosticName() const {
  if (migration) return "accelopt-migrate";
  const std::vector<json> &ops = pattern ? pattern->ops : concreteOps;
  std::set<std::string> kinds;
  for (const json &op : ops) kinds.insert(op.is_object() ? op.value("op", "?") : "?");
  return kinds.size() == 1 ? "accelopt-" + *kinds.begin() : "accelopt-candidate";
}

std::vector<std::string> defaultPatternDirs(llvm::StringRef executablePath) {
  std::vector<std::string> dirs;
  if (!executablePath.empty()) {
    llvm::SmallString<256> dir(llvm::sys::path::parent_path(llvm::sys::path::parent_path(executablePath)));
    llvm::sys::path::append(dir, "share", "accelopt", "rewrites");
    llvm::sys::path::append(dir, "patterns");
    dirs.push_back(dir.str().str());
  }
  dirs.push_back(std::string(ACCELOPT_SOURCE_DIR) + "/rewrites/patterns");
  return dirs;
}

llvm::Expected<NamedPattern> loadPatternFile(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf) return stringError(path + ": error: cannot read pattern: " + buf.getError().message());
  if (llvm::Error err = syntax::checkJsonNesting((*buf)->getBuffer(), path)) return std::move(err);
  json j;
  try {
    j = json::parse((*buf)->getBuffer().begin(), (*buf)->getBuffer().end());
  } catch (const json::exception &e) { return stringError(path + ": error: invalid JSON: " + e.what()); }
  auto pattern = memory::Pattern::fromJson(j);
  if (!pattern) return stringError(path + ": " + llvm::toString(pattern.takeError()));
  // Every placeholder must be declared, or instantiation fails on every kernel.
  for (size_t i = 0; i < pattern->ops.size(); ++i) {
    const json &op = pattern->ops[i];
    if (!op.is_object() || !op.contains("op") || !op["op"].is_string())
      return stringError(path + ": error: op " + std::to_string(i) + " is not an object with \"op\"");
    for (auto it = op.begin(); it != op.end(); ++it)
      if (it.key() != "op" && memory::isPlaceholder(*it) && !pattern->var(it->get<std::string>(), int(i)))
        return stringError(path + ": error: op " + std::to_string(i) + " uses the undeclared placeholder " +
                           it->dump());
  }
  NamedPattern named;
  named.name = llvm::sys::path::stem(path).str();
  named.description = j.value("description", pattern->description());
  named.pattern = std::move(*pattern);
  return named;
}

llvm::Expected<std::vector<NamedPattern>> listPatterns(llvm::ArrayRef<std::string> dirs) {
  std::map<std::string, NamedPattern> byName;
  for (const std::string &dir : dirs) {
    if (!llvm::sys::fs::is_directory(dir)) continue;
    std::vector<std::string> files;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
      if (llvm::StringRef(it->path()).endswith(".json")) files.push_back(it->path());
    std::sort(files.begin(), files.end());
    for (const std::string &file : files) {
      auto pattern = loadPatternFile(file);
      if (!pattern) return pattern.takeError();
      byName.try_emplace(pattern->name, std::move(*pattern));
    }
  }
  byName.try_emplace(std::string(kMigrationPattern), migrationPattern());
  std::vector<NamedPattern> out;
  for (auto &[name, pattern] : byName) out.push_back(std::move(pattern));
  return out;
}

NamedPattern migrationPattern() {
  NamedPattern p;
  p.name = std::string(kMigrationPattern);
  p.description = "migrates NKI 0.1 (neuronxcc.nki) kernels to the nki 0.3 dialect: the file whole, verified "
                  "equal on the interpreter, or left untouched (docs/migrate.md)";
  p.migration = true;
  return p;
}

llvm::Expected<NamedPattern> findPattern(llvm::ArrayRef<std::string> dirs, llvm::StringRef name) {
  if (name.endswith(".json")) return loadPatternFile(name);
  if (name == kMigrationPattern) return migrationPattern();
  for (const std::string &dir : dirs) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name + ".json");
    if (llvm::sys::fs::exists(path)) return loadPatternFile(path);
  }
  std::string known;
  if (auto all = listPatterns(dirs)) {
    for (const NamedPattern &p : *all) known += (known.empty() ? "" : ", ") + p.name;
  } else {
    llvm::consumeError(all.takeError());
  }
  return stringError("error: unknown pattern '" + name +
                     "' (shipped patterns: " + (known.empty() ? "none found" : known) + "; see --list-patterns)");
}

llvm::Expected<std::vector<NamedPattern>> memoryPatterns(memory::Store &store, size_t limit) {
  auto records = store.listPatterns();
  if (!records) return records.takeError();
  std::stable_sort(records->begin(), records->end(),
                   [](const memory::PatternRecord &a, const memory::PatternRecord &b) {
                     return a.winRate() != b.winRate() ? a.winRate() > b.winRate() : a.id < b.id;
                   });
  std::vector<NamedPattern> out;
  for (const memory::PatternRecord &r : *records) {
    if (out.size() >= limit) break;
    NamedPattern p;
    p.name = "memory-p" + std::to_string(r.id);
    p.description = r.description.empty() ? r.pattern.description() : r.description;
    p.pattern = r.pattern;
    out.push_back(std::move(p));
  }
  return out;
}

// ------------------------------------------------------------- pipeline

unsigned originalOffset(const clang::tooling::Replacements &edits, unsigned newOffset) {
  int64_t shift = 0; // (new - old) length before the current replacement
  for (const clang::tooling::Replacement &r : edits) {
    int64_t newStart = int64_t(r.getOffset()) + shift;
    if (int64_t(newOffset) < newStart) break;
    if (int64_t(newOffset) < newStart + int64_t(r.getReplacementText().size())) return r.getOffset();
    shift += int64_t(r.getReplacementText().size()) - int64_t(r.getLength());
  }
  return unsigned(std::max<int64_t>(0, int64_t(newOffset) - shift));
}

namespace {

struct Message {
  uint32_t offset = 0; // in the original text
  std::string text;    // "note: ...", without the location
};

/// One kernel of a file: its input shapes and, when they are known, the
/// original's outputs on every seed (the numeric baseline).
struct KernelContext {
  std::string name;
  uint32_t defOffset = 0;
  std::optional<nki::InputSpecs> inputs;
  std::string inputsLabel;   // "case X", "--inputs"
  std::vector<int64_t> grid; // --grid; empty: the inputs' or the file's
  bool numeric = false;
  std::string verification; // for the summary
  std::optional<profile::NumericBaseline> baseline;
  /// The numeric check's bound: the options' tolerance widened to the original's narrowest dtype.
  interp::Tolerance tolerance;
  std::map<std::string, std::string> verdicts; // rewritten text -> "" (equal) or the mismatch
  int verifierErrors = 0;
  const nki::InputSpecs *specs() const { return inputs ? &*inputs : nullptr; }
};

/// A pattern's greedy result on one kernel.
struct Group {
  const KernelContext *kernel = nullptr;
  BatchFix fix;
  std::vector<Message> applied; // one per applied site
  std::vector<Message> refused; // the sites still refused at the end
  std::vector<Message> remarks; // neither applied nor refused (iteration bound)
};

llvm::Expected<nki::KernelFile> parseText(llvm::StringRef path, llvm::StringRef text, const KernelContext &k) {
  auto src = syntax::SourceBuffer::fromText(path.str(), text.str());
  if (!src) return src.takeError();
  nki::FrontEndOptions fe;
  fe.inputs = k.specs();
  fe.kernelName = k.name;
  fe.grid = k.grid;
  return nki::buildKernelFile(std::move(*src), fe);
}

int countErrors(const nki::Kernel &k) {
  int n = 0;
  for (const nki::Diagnostic &d : analysis::verify(k)) n += d.severity == nki::Diagnostic::Error;
  return n;
}

/// The spec names are the kernel's parameters (order aside), less parameters that have a default.
bool sameNames(const nki::Kernel &k, const nki::InputSpecs &specs) {
  std::set<std::string> a, b, optional;
  for (const nki::KernelParam &p : k.params) a.insert(p.name);
  if (k.def)
    for (const syntax::Param &p : k.def->params)
      if (p.defaultValue) optional.insert(p.name);
  for (const nki::InputSpec &s : specs) b.insert(s.name);
  for (const std::string &name : optional)
    if (!b.count(name)) a.erase(name);
  return a == b;
}

void findInputs(KernelContext &ctx, const nki::Kernel &k, llvm::StringRef path, const BatchOptions &options) {
  if (options.inputs && sameNames(k, *options.inputs)) {
    ctx.inputs = options.inputs;
    ctx.inputsLabel = "--inputs";
    return;
  }
  for (const nki::SuiteCase &c : options.suite)
    if (llvm::sys::fs::equivalent(c.kernelPath, path) && sameNames(k, c.inputs)) {
      ctx.inputs = c.inputs;
      ctx.inputsLabel = "case " + c.name;
      return;
    }
  // A copy of a suite kernel keeps its file name and parameters.
  for (const nki::SuiteCase &c : options.suite)
    if (llvm::sys::path::filename(c.kernelPath) == llvm::sys::path::filename(path) && sameNames(k, c.inputs)) {
      ctx.inputs = c.inputs;
      ctx.inputsLabel = "case " + c.name + ", by file name";
      return;
    }
}

/// The kernel's inputs, and the launch grid --grid gives (it overrides the inputs' own).
/// Two traces of one tensor (a loop that allocates it at another size per iteration): the dimensions
/// that differ become -1; a different rank or an unknown shape makes the whole shape unknown.
void mergeShape(std::optional<std::vector<int64_t>> &into, const std::optional<std::vector<int64_t>> &other) {
  if (!into || !other || into->size() != other->size()) {
    into.reset();
    return;
  }
  for (size_t d = 0; d < into->size(); ++d)
    if ((*into)[d] != (*other)[d]) (*into)[d] = -1;
}

void resolveInputs(KernelContext &ctx, const nki::Kernel &k, llvm::StringRef path, const BatchOptions &options) {
  findInputs(ctx, k, path, options);
  ctx.grid = options.grid;
  if (ctx.inputs && !options.grid.empty()) ctx.inputs->grid = options.grid;
}

profile::NumericCheckOptions numericOptions(const BatchOptions &options) {
  return {options.tolerance, options.timeoutSeconds};
}

void makeBaseline(KernelContext &ctx, const nki::KernelFile &file, const nki::Kernel &k, const BatchOptions &options) {
  if (!options.numericCheck) {
    ctx.verification = "not verified numerically (--no-numeric-check)";
    return;
  }
  if (!ctx.inputs) {
    ctx.verification = "not verified numerically (no inputs)";
    return;
  }
  auto baseline = profile::NumericBaseline::capture(file, k, *ctx.inputs, options.seeds, numericOptions(options).run);
  if (!baseline) {
    std::string why;
    llvm::handleAllErrors(
        baseline.takeError(),
        [&](const profile::OriginalFailedError &e) {
          why = "the original fails on the interpreter: " + firstLine(e.message());
        },
        [&](const llvm::ErrorInfoBase &e) { why = firstLine(e.message()); });
    ctx.verification = "not verified numerically (" + why + ")";
    return;
  }
  ctx.baseline = std::move(*baseline);
  ctx.tolerance = profile::toleranceFor(k, options.tolerance);
  ctx.numeric = true;
  ctx.verification =
      "verified numerically (" + plural(options.seeds, "seed") + ", inputs from " + ctx.inputsLabel + ")";
}

/// "" when `text`'s kernel matches the baseline on every seed, else why not.
std::string numericMismatch(KernelContext &ctx, llvm::StringRef path, const std::string &text,
                            const BatchOptions &options) {
  if (auto it = ctx.verdicts.find(text); it != ctx.verdicts.end()) return it->second;
  std::string verdict = [&]() -> std::string {
    auto file = parseText(path, text, ctx);
    if (!file) return "does not parse: " + firstLine(llvm::toString(file.takeError()));
    if (!ctx.baseline) return "";
    profile::NumericCheckOptions check = numericOptions(options);
    check.tolerance = ctx.tolerance; // the original's dtypes
    return ctx.baseline->firstDifference(*file, file->kernels.front(), check);
  }();
  ctx.verdicts[text] = verdict;
  return verdict;
}

/// Applies `pattern` greedily to one kernel, starting from the original text:
/// find the sites, take the first one the engine accepts and the numeric check
/// confirms, re-instantiate on the new text (ids changed), until no site is left.
Group runPattern(llvm::StringRef path, const std::string &original, KernelContext &ctx, const NamedPattern &pattern,
                 const BatchOptions &options) {
  Group g;
  g.kernel = &ctx;
  g.fix.diagnosticName = pattern.diagnosticName();
  g.fix.pattern = pattern.name;
  const std::string tag = " [" + pattern.name + "]";
  std::string text = original;
  clang::tooling::Replacements merged; // relative to the original
  // Text this pattern wrote, in the current text: a site that would edit it
  // again is a rewrite of a rewrite (unroll the unrolled loop), not a new site.
  std::vector<std::pair<unsigned, unsigned>> produced;
  auto rewritesOwnText = [&](const clang::tooling::Replacements &edits) {
    for (const clang::tooling::Replacement &e : edits)
      for (auto [b, end] : produced) {
        unsigned eEnd = e.getOffset() + e.getLength();
        bool hit = e.getLength() == 0 ? b < e.getOffset() && e.getOffset() < end : e.getOffset() < end && b < eEnd;
        if (hit) return true;
      }
    return false;
  };
  size_t round = 0;
  for (; round < options.maxSitesPerPattern; ++round) {
    rewrite::CandidateOptions co;
    co.inputs = ctx.specs();
    co.kernelName = ctx.name;
    co.allowReplace = pattern.trusted || options.allowReplace;
    // Parsed and verified once per round for every site tried on it.
    syntax::SourceBuffer source(path.str(), text);
    auto prepared = rewrite::PreparedKernel::prepare(source, co);
    if (!prepared) {
      llvm::consumeError(prepared.takeError()); // the engine re-parsed it: not expected
      break;
    }
    const nki::Kernel &k = prepared->kernel();
    std::vector<std::vector<json>> sites;
    if (pattern.pattern) {
      memory::InstantiateOptions io;
      io.maxResults = 64;
      auto found = memory::instantiatePattern(*pattern.pattern, k, io);
      if (!found) {
        g.refused = {{ctx.defOffset, "note: " + g.fix.diagnosticName + ": cannot instantiate: " +
                                         firstLine(llvm::toString(found.takeError())) + tag}};
        break;
      }
      for (memory::Instantiation &inst : *found) sites.push_back(std::move(inst.ops));
    } else if (round == 0) {
      sites.push_back(pattern.concreteOps);
    }
    g.refused.clear();
    bool progressed = false;
    for (const std::vector<json> &ops : sites) {
      rewrite::CandidateResult res = rewrite::applyCandidate(*prepared, ops);
      if (res.status == rewrite::Status::Applied) {
        if (res.text == text || res.edits.empty() || rewritesOwnText(res.edits)) continue;
        uint32_t at = originalOffset(merged, res.edits.begin()->getOffset());
        std::string what = llvm::join(res.descriptions, "; ");
        if (ctx.numeric) {
          std::string bad = numericMismatch(ctx, path, res.text, options);
          if (!bad.empty()) {
            g.refused.push_back(
                {at, "note: " + g.fix.diagnosticName + " dropped: " + what + ": numeric mismatch: " + bad + tag});
            continue;
          }
        }
        g.applied.push_back({at, "note: applied " + g.fix.diagnosticName + ": " + what + tag});
        for (auto &[b, end] : produced) {
          b = res.edits.getShiftedCodePosition(b);
          end = res.edits.getShiftedCodePosition(end);
        }
        int64_t shift = 0;
        for (const clang::tooling::Replacement &e : res.edits) {
          unsigned start = unsigned(int64_t(e.getOffset()) + shift);
          if (!e.getReplacementText().empty())
            produced.push_back({start, start + unsigned(e.getReplacementText().size())});
          shift += int64_t(e.getReplacementText().size()) - int64_t(e.getLength());
        }
        merged = merged.merge(res.edits);
        text = std::move(res.text);
        g.fix.message += (g.fix.message.empty() ? "" : "; ") + what;
        ++g.fix.sites;
        progressed = true;
        break;
      }
      if (res.status == rewrite::Status::Refused) {
        const rewrite::Refusal &r = res.refusal;
        g.refused.push_back({originalOffset(merged, r.offset), "note: " + g.fix.diagnosticName + " refused: " + r.op +
                                                                   " " + r.ids + ": " + r.reason + tag});
      } else {
        // Bad input: e.g. an --ops id that this kernel does not have.
        std::string msg = firstLine(res.message);
        if (size_t e = msg.find("error: "); e != std::string::npos) msg = msg.substr(e + 7);
        g.refused.push_back({ctx.defOffset, "note: " + g.fix.diagnosticName + " not applicable to kernel '" + ctx.name +
                                                "': " + msg + tag});
      }
    }
    if (!progressed) break;
  }
  if (round == options.maxSitesPerPattern)
    g.remarks.push_back({ctx.defOffset, "note: " + g.fix.diagnosticName + ": stopped after " + plural(round, "site") +
                                            " (--max-sites)" + tag});
  g.fix.edits = std::move(merged);
  g.fix.offset = g.fix.edits.empty() ? 0 : g.fix.edits.begin()->getOffset();
  return g;
}

bool overlaps(const clang::tooling::Replacement &a, const clang::tooling::Replacement &b) {
  unsigned aEnd = a.getOffset() + a.getLength(), bEnd = b.getOffset() + b.getLength();
  if (a.getLength() == 0 && b.getLength() == 0) return a.getOffset() == b.getOffset();
  if (a.getLength() == 0) return b.getOffset() < a.getOffset() && a.getOffset() < bEnd;
  if (b.getLength() == 0) return a.getOffset() < b.getOffset() && b.getOffset() < aEnd;
  return a.getOffset() < bEnd && b.getOffset() < aEnd;
}

/// The final text of the kept groups must parse, verify no worse and (when
/// known) compute what the original does: each group was checked alone.
std::string jointProblem(llvm::StringRef path, const std::string &text, std::vector<KernelContext> &kernels,
                         const std::set<const KernelContext *> &touched, const BatchOptions &options) {
  for (KernelContext &ctx : kernels) {
    if (!touched.count(&ctx)) continue;
    auto file = parseText(path, text, ctx);
    if (!file) return "the result does not parse: " + firstLine(llvm::toString(file.takeError()));
    if (countErrors(file->kernels.front()) > ctx.verifierErrors)
      return "the result has new verifier errors in kernel '" + ctx.name + "'";
    if (ctx.numeric)
      if (std::string bad = numericMismatch(ctx, path, text, options); !bad.empty())
        return "numeric mismatch in kernel '" + ctx.name + "': " + bad;
  }
  return "";
}

} // namespace

std::string FileResult::summary() const {
  std::string out = path + ": " + plural(size_t(applied), "rewrite") + " applied";
  std::map<std::string, int> byName;
  for (const BatchFix &f : fixes) byName[f.diagnosticName] += f.sites;
  if (!byName.empty()) {
    out += " (";
    bool first = true;
    for (auto &[name, n] : byName) {
      out += (first ? "" : ", ") + name + " x" + std::to_string(n);
      first = false;
    }
    out += ")";
  }
  out += ", " + plural(size_t(refused), "site") + " refused";
  if (conflicts) out += ", " + plural(size_t(conflicts), "conflicting fix") + " dropped";
  if (applied && !verification.empty()) out += "; " + verification;
  if (alreadyCurrent) out += "; already in the nki 0.3 dialect";
  return out;
}

FileResult migrateFile(llvm::StringRef path, std::optional<std::string> text, const BatchOptions &options);

/// A file's result that reports `err` and leaves the file as it was.
static FileResult failedFile(FileResult r, llvm::StringRef path, llvm::Error err) {
  r.failed = true;
  r.messages.push_back(locatedError(path, llvm::toString(std::move(err))));
  r.rewritten = r.original;
  return r;
}

/// The first steps of every file's work: its paths and text in `r`, its kernels read without shapes.
/// `text`: the file's text as an editor holds it, instead of what is on disk.
static llvm::Expected<nki::KernelFile> openKernelFile(llvm::StringRef path, FileResult &r,
                                                      std::optional<std::string> text = std::nullopt,
                                                      bool entryFunctionsAsKernels = false) {
  r.path = path.str();
  llvm::SmallString<256> abs(path);
  llvm::sys::fs::make_absolute(abs);
  llvm::sys::path::remove_dots(abs, /*remove_dot_dot=*/true);
  r.absolutePath = abs.str().str();
  auto source =
      text ? syntax::SourceBuffer::fromText(path.str(), std::move(*text)) : syntax::SourceBuffer::fromFile(path);
  if (!source) return source.takeError();
  r.original = (*source)->text().str();
  r.rewritten = r.original;
  nki::FrontEndOptions fe;
  fe.entryFunctionsAsKernels = entryFunctionsAsKernels;
  return nki::buildKernelFile(std::move(*source), fe);
}

FileResult processFile(llvm::StringRef path, const BatchOptions &options) {
  if (options.migrate) return migrateFile(path, std::nullopt, options);
  FileResult r;
  auto fail = [&](llvm::Error err) { return failedFile(r, path, std::move(err)); };
  auto shapeless = openKernelFile(path, r);
  if (!shapeless) return fail(shapeless.takeError());

  std::vector<KernelContext> kernels(shapeless->kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    const nki::Kernel &k = shapeless->kernels[i];
    KernelContext &ctx = kernels[i];
    ctx.name = k.name;
    ctx.defOffset = k.def ? k.def->range.begin : 0;
    resolveInputs(ctx, k, path, options);
    auto file = parseText(path, r.original, ctx);
    if (!file) return fail(file.takeError());
    ctx.verifierErrors = countErrors(file->kernels.front());
    makeBaseline(ctx, *file, file->kernels.front(), options);
  }

  // Every pattern on every kernel, each from the original text.
  std::vector<Group> groups;
  for (KernelContext &ctx : kernels)
    for (const NamedPattern &pattern : options.patterns)
      groups.push_back(runPattern(path, r.original, ctx, pattern, options));

  std::vector<Message> messages;
  std::vector<size_t> kept; // indices into groups, in merge order
  clang::tooling::Replacements all;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    Group &g = groups[gi];
    messages.insert(messages.end(), g.refused.begin(), g.refused.end());
    messages.insert(messages.end(), g.remarks.begin(), g.remarks.end());
    if (g.fix.sites == 0) continue;
    // A fix overlapping a kept one is reported and dropped, never merged.
    std::optional<std::pair<size_t, uint32_t>> conflict; // kept group, offset
    for (const clang::tooling::Replacement &mine : g.fix.edits) {
      for (size_t ki : kept)
        for (const clang::tooling::Replacement &theirs : groups[ki].fix.edits)
          if (!conflict && overlaps(mine, theirs)) conflict = {{ki, mine.getOffset()}};
    }
    clang::tooling::Replacements merged = all;
    if (!conflict)
      for (const clang::tooling::Replacement &mine : g.fix.edits)
        if (auto err = merged.add(mine)) {
          llvm::consumeError(std::move(err));
          conflict = {{kept.empty() ? gi : kept.back(), mine.getOffset()}};
          break;
        }
    if (conflict) {
      const Group &first = groups[conflict->first];
      messages.push_back({conflict->second, "warning: conflicting fixes " + first.fix.diagnosticName + " [" +
                                                first.fix.pattern + "] and " + g.fix.diagnosticName + " [" +
                                                g.fix.pattern + "]; keeping the first, dropping " +
                                                plural(size_t(g.fix.sites), "rewrite") + " of " + g.fix.pattern});
      ++r.conflicts;
      continue;
    }
    all = std::move(merged);
    kept.push_back(gi);
  }

  // Groups checked alone may still not combine; drop the latest until they do.
  while (kept.size() > 1) {
    clang::tooling::Replacements combined;
    for (size_t ki : kept)
      for (const clang::tooling::Replacement &e : groups[ki].fix.edits) llvm::consumeError(combined.add(e));
    auto text = clang::tooling::applyAllReplacements(r.original, combined);
    std::string problem = text ? "" : llvm::toString(text.takeError());
    std::set<const KernelContext *> touched;
    for (size_t ki : kept) touched.insert(groups[ki].kernel);
    if (problem.empty()) problem = jointProblem(path, *text, kernels, touched, options);
    if (problem.empty()) break;
    const Group &last = groups[kept.back()];
    messages.push_back({last.fix.offset, "warning: " + last.fix.diagnosticName + " [" + last.fix.pattern +
                                             "] does not combine with the fixes before it (" + problem +
                                             "); dropping " + plural(size_t(last.fix.sites), "rewrite")});
    ++r.conflicts;
    kept.pop_back();
  }

  all = clang::tooling::Replacements();
  std::set<const KernelContext *> verifiedKernels;
  for (size_t ki : kept) {
    Group &g = groups[ki];
    for (const clang::tooling::Replacement &e : g.fix.edits) llvm::consumeError(all.add(e));
    messages.insert(messages.end(), g.applied.begin(), g.applied.end());
    r.applied += g.fix.sites;
    verifiedKernels.insert(g.kernel);
    r.fixes.push_back(std::move(g.fix));
  }
  for (const Group &g : groups) r.refused += int(g.refused.size());
  auto text = clang::tooling::applyAllReplacements(r.original, all);
  if (!text) return fail(text.takeError());
  r.rewritten = std::move(*text);

  std::vector<std::string> verdicts;
  for (const KernelContext &ctx : kernels)
    if (verifiedKernels.count(&ctx)) verdicts.push_back(ctx.verification);
  bool allSame = std::all_of(verdicts.begin(), verdicts.end(), [&](const std::string &v) { return v == verdicts[0]; });
  if (!verdicts.empty() && allSame) {
    r.verification = verdicts[0];
  } else {
    for (const KernelContext &ctx : kernels)
      if (verifiedKernels.count(&ctx))
        r.verification += (r.verification.empty() ? "" : "; ") + ("kernel '" + ctx.name + "' ") + ctx.verification;
  }

  auto buffer = syntax::SourceBuffer(r.path, r.original);
  std::stable_sort(messages.begin(), messages.end(),
                   [](const Message &a, const Message &b) { return a.offset < b.offset; });
  for (const Message &m : messages) {
    syntax::LineCol lc = buffer.lineCol(m.offset);
    r.messages.push_back(llvm::formatv("{0}:{1}:{2}: {3}", r.path, lc.line, lc.col, m.text).str());
  }
  return r;
}

/// The file's kernels in the current dialect: the migration's edits, kept only when every kernel of
/// the migrated text is free of errors under the nki dialect's rules and equal to the original on
/// the numeric check; otherwise each reason is reported at its place in the original.
FileResult migrateText(llvm::StringRef path, std::string text, const BatchOptions &options) {
  return migrateFile(path, std::move(text), options);
}

/// An on-chip tile an op returns (the migration allocates it: `nl.ndarray((128, 1), dtype=nl.float32,
/// buffer=nl.sbuf)`), when the trace knows its shape and dtype.
static std::optional<rewrite::TracedTile> tileAllocation(const nki::Tensor &t) {
  rewrite::TracedTile tile;
  for (const nki::SymInt &d : t.shape)
    if (d.value) tile.shape.push_back(*d.value);
  if (!t.isTile || !t.shapeKnown || !t.dtypeKnown || tile.shape.empty() || tile.shape.size() != t.shape.size() ||
      !nki::isOnChip(t.buffer))
    return std::nullopt;
  tile.dtype = std::string(nki::dtypeName(t.dtype));
  tile.buffer = std::string(nki::bufferName(t.buffer));
  return tile;
}

FileResult migrateFile(llvm::StringRef path, std::optional<std::string> buffer, const BatchOptions &options) {
  FileResult r;
  auto fail = [&](llvm::Error err) { return failedFile(r, path, std::move(err)); };
  // Plain kernel functions (a harness elsewhere wraps them) migrate too.
  auto shapeless = openKernelFile(path, r, std::move(buffer), /*entryFunctionsAsKernels=*/true);
  if (!shapeless) return fail(shapeless.takeError());
  if (nki::dialectOfImports(*shapeless->module) == nki::Dialect::Nki) {
    r.alreadyCurrent = true;
    return r;
  }
  const syntax::SourceBuffer &original = shapeless->source();
  auto refuse = [&](uint32_t offset, const std::string &message) {
    r.messages.push_back(original.location(offset) + ": error: " + message);
  };
  // Each kernel traced with its inputs: its baseline, and the shapes of the tiles its ISA calls create.
  std::vector<KernelContext> kernels(shapeless->kernels.size());
  std::map<uint32_t, rewrite::TracedTile> tiles;                    // statement offset -> the tile it creates
  std::map<uint32_t, std::optional<rewrite::TracedTile>> callTiles; // call offset -> the tile it returns
  // Offset of an operand (a subscript or a whole-tile name) -> the traced shape of the tile it moves there.
  std::map<uint32_t, std::optional<std::vector<int64_t>>> operandTiles;
  // Tensor name -> traced shape, file-wide and per kernel (its def's text); nullopt where the name has two
  // shapes or an unknown dimension. Code outside every kernel (a helper several kernels call) gets the
  // file-wide shape, known when all kernels agree.
  using ShapeMap = std::map<std::string, std::optional<std::vector<int64_t>>>;
  std::vector<std::pair<syntax::ByteRange, ShapeMap>> kernelShapes;
  ShapeMap shapes;
  // Offset of a use (a subscript or a whole-tile name) -> the traced shape of the tensor it reads or
  // writes there: a name bound to tensors of several shapes (`t = nl.zeros(...)`, later `t = nl.load(...)`).
  std::map<uint32_t, std::optional<std::vector<int64_t>>> useShapes;
  // Per kernel, the errors its original already has with its inputs (an assertion the inputs of
  // another kernel of the file fail): the migration is not blamed for them, and the kernel is not run.
  std::vector<std::set<std::pair<uint32_t, std::string>>> originalErrors(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    KernelContext &ctx = kernels[i];
    ctx.name = shapeless->kernels[i].name;
    resolveInputs(ctx, shapeless->kernels[i], path, options);
    auto before = parseText(path, r.original, ctx);
    if (!before) return fail(before.takeError());
    const nki::Kernel &k = before->kernels.front();
    // -1 for a dimension the trace keeps symbolic (an extent that depends on a loop variable).
    auto shapeOf = [](const nki::Tensor &t) {
      std::optional<std::vector<int64_t>> dims(std::in_place);
      for (const nki::SymInt &d : t.shape) dims->push_back(d.value ? *d.value : -1);
      if (!t.shapeKnown || t.shape.empty()) dims.reset();
      return dims;
    };
    for (const nki::Statement &st : k.stmts)
      for (const auto *accesses : {&st.reads, &st.writes})
        for (const nki::Access &a : *accesses) {
          if (a.tensor < 0 || size_t(a.tensor) >= k.tensors.size()) continue;
          auto dims = shapeOf(k.tensors[size_t(a.tensor)]);
          auto [it, fresh] = useShapes.emplace(a.range.begin, dims);
          if (!fresh) mergeShape(it->second, dims);
          std::optional<std::vector<int64_t>> moved(std::in_place);
          for (int64_t e : a.tileShape) moved->push_back(e > 0 ? e : -1);
          if (!a.exact || a.tileShape.empty()) moved.reset();
          auto [tile, first] = operandTiles.emplace(a.range.begin, moved);
          if (!first) mergeShape(tile->second, moved);
        }
    if (ctx.inputs)
      for (const nki::Diagnostic &d : analysis::verify(k))
        if (d.severity == nki::Diagnostic::Error) originalErrors[i].insert({d.offset, d.rule});
    ShapeMap &own = kernelShapes.emplace_back(k.def ? k.def->range : syntax::ByteRange{}, ShapeMap{}).second;
    for (const nki::Tensor &t : k.tensors) {
      if (t.name.empty()) continue;
      auto dims = shapeOf(t);
      for (ShapeMap *m : {&own, &shapes}) {
        auto [it, fresh] = m->emplace(t.name, dims);
        if (!fresh) mergeShape(it->second, dims);
      }
    }
    // What another file's function made (its syntax is in that file) is that file's to migrate.
    auto foreign = [&](int stmt) { return stmt >= 0 && k.stmts[size_t(stmt)].foreign >= 0; };
    for (const nki::Statement &st : k.stmts) {
      if (st.definesTensor < 0 || !st.syntax || foreign(st.id)) continue;
      if (auto a = tileAllocation(k.tensors[size_t(st.definesTensor)])) tiles[st.syntax->range.begin] = *a;
    }
    // Every tile an op call returns, by the call (its range): one hoisted from an expression writes it.
    for (const nki::Tensor &t : k.tensors) {
      if (!t.isTile || t.range.end <= t.range.begin || foreign(t.definedBy)) continue;
      auto a = tileAllocation(t);
      auto [it, fresh] = callTiles.emplace(t.range.begin, a);
      if (!fresh && it->second != a) it->second.reset(); // two traces disagree
    }
    // A call that writes a subscript (`m[...] = nisa.op(...)`): a tile of the region it writes.
    for (const nki::Statement &st : k.stmts) {
      if (!st.op || !st.syntax || !st.syntax->value || st.syntax->value->kind != syntax::ExprKind::Call ||
          st.writes.size() != 1 || st.writes[0].tensor < 0 || foreign(st.id))
        continue;
      nki::Tensor region = k.tensors[size_t(st.writes[0].tensor)];
      region.isTile = true;
      region.shape.clear();
      for (int64_t d : st.writes[0].tileShape)
        region.shape.push_back(d > 0 ? nki::SymInt::known(d) : nki::SymInt::symbolic("?"));
      auto a = tileAllocation(region);
      auto [it, fresh] = callTiles.emplace(st.syntax->value->range.begin, a);
      if (!fresh && it->second != a) it->second.reset();
    }
  }
  rewrite::Migration migration = rewrite::migrateToCurrentDialect(
      *shapeless->module,
      [&](const syntax::Stmt &s) -> std::optional<rewrite::TracedTile> {
        auto it = tiles.find(s.range.begin);
        return it == tiles.end() ? std::nullopt : std::optional<rewrite::TracedTile>(it->second);
      },
      [&](llvm::StringRef name, uint32_t at) -> std::optional<std::vector<int64_t>> {
        if (auto use = useShapes.find(at); use != useShapes.end() && use->second) return use->second;
        const ShapeMap *in = &shapes;
        for (const auto &[range, own] : kernelShapes)
          if (range.begin <= at && at < range.end) in = &own;
        auto it = in->find(name.str());
        return it == in->end() ? std::nullopt : it->second;
      },
      [&](const syntax::Expr &call) -> std::optional<rewrite::TracedTile> {
        auto it = callTiles.find(call.range.begin);
        return it == callTiles.end() ? std::nullopt : it->second;
      },
      [&](uint32_t at) -> std::optional<std::vector<int64_t>> {
        auto it = operandTiles.find(at);
        if (it == operandTiles.end() || !it->second ||
            llvm::any_of(*it->second, [](int64_t e) { return e < 0; })) // traces differ: no one size
          return std::nullopt;
        return it->second;
      });
  for (const rewrite::MigrationProblem &p : migration.problems) refuse(p.offset, p.message);
  if (!r.messages.empty()) {
    r.refused = int(r.messages.size());
    return r;
  }
  // The originals run on the interpreter only for a file the edits cover whole: a full-size
  // kernel's baseline takes as much memory as its tensors, for nothing when the file is refused.
  for (KernelContext &ctx : kernels) {
    if (!originalErrors[size_t(&ctx - kernels.data())].empty()) {
      ctx.verification = "not run: its original has errors with these inputs";
      continue;
    }
    auto before = parseText(path, r.original, ctx);
    if (!before) return fail(before.takeError());
    makeBaseline(ctx, *before, before->kernels.front(), options);
  }
  auto text = clang::tooling::applyAllReplacements(r.original, migration.edits);
  if (!text) return fail(text.takeError());

  // A kernel without inputs that another kernel of the file, one with inputs, calls is traced in place at
  // that call (its body, not its interface), so the caller's numeric check covers it.
  std::vector<std::string> called;
  auto calledByChecked = [&](size_t i) {
    bool found = false;
    for (size_t j = 0; j < kernels.size() && !found; ++j) {
      const nki::Kernel &caller = shapeless->kernels[j];
      if (j == i || !kernels[j].inputs || !caller.def) continue;
      syntax::forEachExpr(caller.def, [&](const syntax::Expr *x) {
        found |= x->kind == syntax::ExprKind::Call && x->base && x->base->kind == syntax::ExprKind::Name &&
                 x->base->name == shapeless->kernels[i].name;
      });
    }
    return found;
  };
  std::vector<std::string> verdicts, notRun;
  bool unverified = false;
  for (KernelContext &ctx : kernels) {
    size_t i = size_t(&ctx - kernels.data());
    const nki::Kernel &k = shapeless->kernels[i];
    auto after = parseText(path, *text, ctx);
    if (!after) {
      refuse(k.def ? k.def->range.begin : 0,
             "the migrated kernel '" + k.name + "' does not parse: " + firstLine(llvm::toString(after.takeError())));
      continue;
    }
    for (const nki::Diagnostic &d : analysis::verify(after->kernels.front())) {
      uint32_t at = originalOffset(migration.edits, d.offset);
      if (d.severity == nki::Diagnostic::Error && !originalErrors[i].count({at, d.rule}))
        refuse(at, "after migration: " + d.message + (d.rule.empty() ? "" : " [" + d.rule + "]"));
    }
    if (!originalErrors[i].empty()) {
      notRun.push_back(k.name);
      continue;
    }
    if (!ctx.inputs && options.numericCheck && calledByChecked(i)) {
      called.push_back(k.name);
      continue;
    }
    if (std::string why = numericMismatch(ctx, path, *text, options); !why.empty())
      refuse(k.def ? k.def->range.begin : 0,
             "the migrated kernel '" + k.name + "' is not equal to the original: " + why);
    verdicts.push_back(ctx.verification);
    unverified |= llvm::StringRef(ctx.verification).startswith("not verified");
  }
  if (!r.messages.empty()) {
    r.refused = int(r.messages.size());
    return r;
  }
  r.rewritten = std::move(*text);
  r.applied = 1;
  uint32_t first = migration.edits.empty() ? 0 : migration.edits.begin()->getOffset();
  r.fixes.push_back({migrationPattern().diagnosticName(), std::string(kMigrationPattern),
                     "migrate to the nki dialect (NKI 0.3)", first, migration.edits, 1});
  for (const std::string &v : verdicts)
    if (r.verification.find(v) == std::string::npos) r.verification += (r.verification.empty() ? "" : "; ") + v;
  if (!called.empty())
    r.verification += (r.verification.empty() ? "" : "; ") + llvm::join(called, ", ") + " checked through " +
                      (called.size() == 1 ? "its callers" : "their callers");
  if (!notRun.empty())
    r.verification += (r.verification.empty() ? "" : "; ") + std::string("not run: ") + llvm::join(notRun, ", ") +
                      " (the original" + (notRun.size() == 1 ? " has" : "s have") + " errors with these inputs)";
  // The numeric check is what makes a migration safe to write; without inputs it did not run.
  if (options.numericCheck && (unverified || verdicts.empty())) {
    if (verdicts.empty())
      r.verification =
          "not verified numerically (no kernel runs with these inputs" +
          (notRun.empty() ? std::string()
                          : ": the original of " + llvm::join(notRun, ", ") + " has errors with them, see check") +
          ")";
    r.messages.push_back(r.path + ":1:1: error: not migrated: " + r.verification +
                         "; give --inputs, or --no-numeric-check to migrate without it");
    r.rewritten = r.original;
    r.fixes.clear();
    r.applied = 0;
    r.refused = 1;
  }
  return r;
}

/// One file, then its inputs and outputs handed back to the system: glibc keeps freed blocks of the
/// numeric check's arrays in its arenas, and a batch over 2,000 files grew to 4 GB (report D15).
/// Under AddressSanitizer the sanitizer owns the heap, and glibc's trim walks arenas that were never
/// set up (a SEGV in mtrim from a worker thread), so there is nothing of glibc's to hand back.
FileResult processFileAndRelease(llvm::StringRef path, const BatchOptions &options) {
  FileResult r = processFile(path, options);
#if !LLVM_ADDRESS_SANITIZER_BUILD
  ::malloc_trim(0);
#endif
  return r;
}

std::vector<FileResult> runBatch(llvm::ArrayRef<std::string> files, const BatchOptions &options) {
  std::vector<FileResult> results(files.size());
  if (options.jobs == 1 || files.size() <= 1) {
    for (size_t i = 0; i < files.size(); ++i) results[i] = processFileAndRelease(files[i], options);
    return results;
  }
  llvm::ThreadPool pool(llvm::hardware_concurrency(options.jobs));
  for (size_t i = 0; i < files.size(); ++i)
    pool.async([&results, &files, &options, i] { results[i] = processFileAndRelease(files[i], options); });
  pool.wait();
  return results;
}

} // namespace accelopt::search
