// accelopt-rewrite batch DIR...: apply rewrite patterns to every @nki.jit
// kernel file of a tree, like clang-tidy over a project (lib/Search/Batch.h).
//
// Exit status: 0 every file processed (refused sites and dropped conflicts are
// reported, not failures), 1 some file failed (unreadable, does not parse, no
// kernel, could not be written) or the fixes file could not be written,
// 2 bad usage (options, unknown pattern, missing path, bad --ops / memory DB).
#include "Command.h"
#include "FileBatchOptions.h"
#include "KernelInputs.h"

#include "Memory/Store.h"
#include "Rewrite/Rewrite.h"
#include "Search/Batch.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace accelopt::cli {
namespace {

cl::SubCommand BatchCmd("batch", "Apply rewrite patterns to every @nki.jit kernel file under DIR... "
                                 "(exit 0 ok, 1 a file failed, 2 bad usage)");
cl::list<std::string> PatternNames("pattern",
                                   cl::desc("A shipped pattern (see --list-patterns) or a pattern FILE.json; "
                                            "repeatable or comma-separated"),
                                   cl::value_desc("NAME"), cl::CommaSeparated, cl::sub(BatchCmd), cl::cat(category()));
cl::opt<std::string> OpsFile("ops", cl::desc("A JSON file with one op or an array of ops, applied to every kernel"),
                             cl::value_desc("FILE.json"), cl::sub(BatchCmd), cl::cat(category()));
cl::opt<std::string> FromMemory("from-memory", cl::desc("Use the best patterns of this optimization memory"),
                                cl::value_desc("DB"), cl::sub(BatchCmd), cl::cat(category()));
cl::opt<unsigned> MaxPatterns("max-patterns", cl::desc("How many memory patterns --from-memory uses (default 5)"),
                              cl::init(5), cl::sub(BatchCmd), cl::cat(category()));
cl::opt<bool> ListPatterns("list-patterns", cl::desc("Print the shipped patterns with their descriptions"),
                           cl::sub(BatchCmd), cl::cat(category()));
cl::opt<bool>
    AllowReplace("allow-replace",
                 cl::desc("Accept 'replace' ops (arbitrary code) from shipped, remembered or imported patterns"),
                 cl::sub(BatchCmd), cl::cat(category()));
cl::opt<unsigned> MaxSites("max-sites", cl::desc("At most this many sites per kernel and pattern (default 32)"),
                           cl::init(32), cl::sub(BatchCmd), cl::cat(category()));

FileBatchOptions Opts(BatchCmd, "fixes", /*timeoutSeconds=*/60, "Skip the numeric check even when inputs are known");

int usage(const std::string &msg) {
  // Messages of the libraries already say "error:" (after a file name, if any).
  llvm::StringRef text = llvm::StringRef(msg).trim();
  llvm::errs() << "accelopt-rewrite batch: " << (text.contains("error:") ? "" : "error: ") << text << "\n";
  return 2;
}

std::vector<std::string> patternDirs() {
  static int anchor;
  return search::defaultPatternDirs(llvm::sys::fs::getMainExecutable("accelopt-rewrite", &anchor));
}

int runListPatterns() {
  auto patterns = search::listPatterns(patternDirs());
  if (!patterns) return usage(llvm::toString(patterns.takeError()));
  for (const search::NamedPattern &p : *patterns)
    llvm::outs() << p.name << "  [" << p.diagnosticName() << "]\n    " << p.description << "\n";
  return 0;
}

/// The rewrites to try, from exactly one of --pattern, --ops, --from-memory.
llvm::Expected<std::vector<search::NamedPattern>> chosenPatterns() {
  std::vector<search::NamedPattern> out;
  if (!PatternNames.empty()) {
    std::vector<std::string> dirs = patternDirs();
    for (const std::string &name : PatternNames) {
      auto p = search::findPattern(dirs, name);
      if (!p) return p.takeError();
      bool repeated = false;
      for (const auto &q : out) repeated |= q.name == p->name;
      if (!repeated) out.push_back(std::move(*p));
    }
    return out;
  }
  if (!OpsFile.empty()) {
    auto buf = llvm::MemoryBuffer::getFile(OpsFile);
    if (!buf) return llvm::createStringError(buf.getError(), OpsFile + ": error: " + buf.getError().message());
    auto ops = rewrite::parseOps((*buf)->getBuffer());
    if (!ops)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), OpsFile + ": " + llvm::toString(ops.takeError()));
    search::NamedPattern p;
    p.name = llvm::sys::path::filename(OpsFile).str();
    p.description = "the ops of " + OpsFile;
    p.concreteOps = std::move(*ops);
    p.trusted = true; // the user's own ops, as with `apply --ops`
    out.push_back(std::move(p));
    return out;
  }
  if (!llvm::sys::fs::exists(FromMemory))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), FromMemory + ": error: no such memory database");
  memory::StoreOptions so;
  so.create = false;
  auto store = memory::Store::open(FromMemory, so);
  if (!store) return store.takeError();
  auto patterns = search::memoryPatterns(**store, MaxPatterns);
  if (!patterns) return patterns.takeError();
  if (patterns->empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), FromMemory + ": error: the memory has no patterns");
  return std::move(*patterns);
}

int runBatchCommand() {
  if (ListPatterns) return runListPatterns();
  if (Opts.paths.empty()) return usage("give at least one directory or kernel file");
  if (int(!PatternNames.empty()) + int(!OpsFile.empty()) + int(!FromMemory.empty()) != 1)
    return usage("give exactly one of --pattern NAME, --ops FILE.json and --from-memory DB");
  search::BatchOptions options;
  if (llvm::Error err = Opts.fill(options)) return usage(llvm::toString(std::move(err)));
  auto patterns = chosenPatterns();
  if (!patterns) return usage(llvm::toString(patterns.takeError()));
  options.patterns = std::move(*patterns);
  if (llvm::any_of(options.patterns, [](const search::NamedPattern &p) { return p.migration; })) {
    // The migration rewrites the whole file; other patterns run on the migrated kernels afterwards.
    if (options.patterns.size() != 1)
      return usage(std::string(search::kMigrationPattern) + " rewrites whole files; give it alone");
    options.migrate = true;
    options.patterns.clear();
  }
  options.maxSitesPerPattern = MaxSites;
  options.allowReplace = AllowReplace;

  std::vector<std::string> unreadable;
  auto files = search::findKernelFiles(Opts.paths, &unreadable);
  if (!files) return usage(llvm::toString(files.takeError()));
  for (const std::string &problem : unreadable) llvm::errs() << "accelopt-rewrite: warning: " << problem << "\n";
  applyMemoryLimit(0);
  std::vector<search::FileResult> results = search::runBatch(*files, options);

  // In --diff mode stdout is the patch; everything else goes to stderr.
  llvm::raw_ostream &diag = Opts.diff ? llvm::errs() : llvm::outs();
  bool anyFailed = false;
  int applied = 0, refused = 0, conflicts = 0, failed = 0;
  std::vector<rewrite::FixDiagnostic> fixes;
  for (search::FileResult &r : results) {
    if (Opts.inPlace && r.changed())
      if (auto err = syntax::rewriteFileInPlace(r.path, r.original, r.rewritten)) {
        r.messages.push_back(llvm::toString(std::move(err)));
        r.failed = true;
      }
    for (const std::string &m : r.messages) diag << m << "\n";
    if (r.failed) {
      anyFailed = true;
      ++failed;
      continue;
    }
    diag << r.summary() << "\n";
    applied += r.applied;
    refused += r.refused;
    conflicts += r.conflicts;
    if (Opts.diff) llvm::outs() << rewrite::unifiedDiff(r.original, r.rewritten, r.path, r.path);
    for (const search::BatchFix &f : r.fixes)
      fixes.push_back({f.diagnosticName, f.message, r.absolutePath, f.offset, f.edits});
  }
  diag << "batch: " << results.size() << (results.size() == 1 ? " file, " : " files, ") << applied
       << (applied == 1 ? " rewrite" : " rewrites") << " applied, " << refused << (refused == 1 ? " site" : " sites")
       << " refused, " << conflicts << (conflicts == 1 ? " conflict" : " conflicts") << ", " << failed << " failed\n";
  if (!Opts.exportFixes.empty())
    if (auto err = rewrite::exportFixes(Opts.exportFixes, "", fixes)) {
      llvm::errs() << "accelopt-rewrite batch: error: " << Opts.exportFixes << ": " << llvm::toString(std::move(err))
                   << "\n";
      return 1;
    }
  return anyFailed ? 1 : 0;
}

RegisterCommand Registration(BatchCmd, runBatchCommand);

} // namespace
} // namespace accelopt::cli
