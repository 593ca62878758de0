// accelopt-rewrite migrate FILE|DIR...: turn NKI 0.1 (`neuronxcc.nki`) kernels into the current
// `nki` dialect with minimal edits (lib/Rewrite/Migrate.h), each migrated kernel checked under the
// new dialect's rules and numerically against the original before anything is written; files are
// found and reported like `batch` (docs/migrate.md).
//
// Exit status: 0 every file migrated (or already current), 1 some file was left untouched (each
// reason at file:line:col) or failed, 2 bad usage.
#include "Command.h"
#include "KernelInputs.h"

#include "NKI/Dialect.h"
#include "Rewrite/Rewrite.h"
#include "Search/Batch.h"

#include "llvm/Support/raw_ostream.h"

namespace accelopt::cli {
namespace {

cl::SubCommand MigrateCmd("migrate", "Migrate NKI 0.1 (neuronxcc.nki) kernels under FILE|DIR... to the current nki "
                                     "dialect (exit 0 all migrated, 1 a file left untouched, 2 bad usage)");
cl::list<std::string> Paths(cl::Positional, cl::desc("<dir or kernel.py>..."), cl::sub(MigrateCmd),
                            cl::cat(category()));
cl::opt<std::string> To("to", cl::desc("Target dialect (only nki-0.3)"), cl::init("nki-0.3"), cl::value_desc("DIALECT"),
                        cl::sub(MigrateCmd), cl::cat(category()));
cl::opt<std::string> ExportFixes("export-fixes", cl::desc("Write all migrations as one clang-apply-replacements YAML"),
                                 cl::value_desc("FIXES.yaml"), cl::sub(MigrateCmd), cl::cat(category()));
cl::opt<bool> InPlace("in-place", cl::desc("Rewrite the kernel files in place (atomically)"), cl::sub(MigrateCmd),
                      cl::cat(category()));
cl::opt<bool> Diff("diff", cl::desc("Print unified diffs (diagnostics go to stderr)"), cl::sub(MigrateCmd),
                   cl::cat(category()));
cl::opt<unsigned> Jobs("j", cl::desc("Files processed in parallel (default: hardware concurrency)"), cl::init(0),
                       cl::value_desc("N"), cl::sub(MigrateCmd), cl::cat(category()));
cl::opt<std::string> InputsSpec("inputs",
                                cl::desc("Input shapes for kernels with exactly these parameters, "
                                         "e.g. 'x=f32[256,512]' (others use the suite manifest)"),
                                cl::value_desc("SPEC"), cl::sub(MigrateCmd), cl::cat(category()));
cl::opt<std::string> Manifest("manifest", cl::desc("Suite manifest (default: nkibench/manifest.json)"),
                              cl::value_desc("FILE"), cl::sub(MigrateCmd), cl::cat(category()), cl::Hidden);
cl::opt<unsigned> Seeds("seeds", cl::desc("Seeds of the numeric check (default 2)"), cl::init(2), cl::sub(MigrateCmd),
                        cl::cat(category()));
cl::opt<double> RTol("rtol", cl::desc("Relative tolerance (default 1e-2)"), cl::init(1e-2), cl::sub(MigrateCmd),
                     cl::cat(category()));
cl::opt<double> ATol("atol", cl::desc("Absolute tolerance (default 1e-4)"), cl::init(1e-4), cl::sub(MigrateCmd),
                     cl::cat(category()));
cl::opt<double> Timeout("timeout", cl::desc("Seconds per interpreter run (default 300)"), cl::init(300),
                        cl::sub(MigrateCmd), cl::cat(category()));
cl::opt<bool> NoNumericCheck("no-numeric-check",
                             cl::desc("Migrate kernels whose inputs are unknown without the numeric check"),
                             cl::sub(MigrateCmd), cl::cat(category()));

int usage(const std::string &msg) {
  llvm::StringRef text = llvm::StringRef(msg).trim();
  llvm::errs() << "accelopt-rewrite migrate: " << (text.contains("error:") ? "" : "error: ") << text << "\n";
  return 2;
}

int runMigrateCommand() {
  if (Paths.empty()) return usage("give at least one directory or kernel file");
  if (To != "nki-0.3") return usage("--to " + To + ": the only target is nki-0.3");
  if (int(InPlace) + int(Diff) + int(!ExportFixes.empty()) > 1)
    return usage("--in-place, --diff and --export-fixes exclude each other");
  if (Seeds == 0) return usage("--seeds 0 checks nothing; give at least 1 seed");

  search::BatchOptions options;
  options.migrate = true;
  options.numericCheck = !NoNumericCheck;
  options.jobs = Jobs;
  options.seeds = Seeds;
  options.tolerance.rtol = RTol;
  options.tolerance.atol = ATol;
  options.timeoutSeconds = Timeout;
  if (!InputsSpec.empty()) {
    auto specs = nki::parseInputSpecs(InputsSpec);
    if (!specs) return usage("--inputs: " + llvm::toString(specs.takeError()));
    options.inputs = std::move(*specs);
  }
  if (auto suite = nki::loadSuite({Manifest, ""})) {
    options.suite = std::move(*suite);
  } else if (!Manifest.empty()) {
    return usage(llvm::toString(suite.takeError()));
  } else {
    llvm::consumeError(suite.takeError());
  }

  std::vector<std::string> unreadable;
  auto files = search::findKernelFiles(Paths, &unreadable);
  if (!files) return usage(llvm::toString(files.takeError()));
  for (const std::string &problem : unreadable) llvm::errs() << "accelopt-rewrite: warning: " << problem << "\n";
  applyMemoryLimit(0);
  std::vector<search::FileResult> results = search::runBatch(*files, options);

  llvm::raw_ostream &diag = Diff ? llvm::errs() : llvm::outs();
  int migrated = 0, current = 0, untouched = 0, failed = 0;
  std::vector<rewrite::FixDiagnostic> fixes;
  for (search::FileResult &r : results) {
    // The numeric check is what makes a migration safe to write; without inputs it did not run.
    if (r.changed() && !NoNumericCheck && llvm::StringRef(r.verification).startswith("not verified")) {
      r.messages.push_back(r.path + ":1:1: error: not migrated: " + r.verification +
                           "; give --inputs, or --no-numeric-check to migrate without it");
      r.rewritten = r.original;
      r.fixes.clear();
    }
    if (InPlace && r.changed())
      if (auto err = syntax::rewriteFileInPlace(r.path, r.original, r.rewritten)) {
        r.messages.push_back(llvm::toString(std::move(err)));
        r.failed = true;
      }
    for (const std::string &m : r.messages) diag << m << "\n";
    if (r.failed) {
      ++failed;
      continue;
    }
    if (r.alreadyCurrent) {
      ++current;
      diag << r.path << ": already in the " << nki::dialectName(nki::Dialect::Nki) << " dialect\n";
    } else if (r.changed()) {
      ++migrated;
      diag << r.path << ": migrated to " << nki::dialectName(nki::Dialect::Nki) << "; " << r.verification << "\n";
    } else {
      ++untouched;
      diag << r.path << ": not migrated, left untouched\n";
    }
    if (Diff) llvm::outs() << rewrite::unifiedDiff(r.original, r.rewritten, r.path, r.path);
    for (const search::BatchFix &f : r.fixes)
      if (r.changed()) fixes.push_back({f.diagnosticName, f.message, r.absolutePath, f.offset, f.edits});
  }
  diag << "migrate: " << results.size() << (results.size() == 1 ? " file, " : " files, ") << migrated << " migrated, "
       << current << " already current, " << untouched << " left untouched, " << failed << " failed\n";
  if (!ExportFixes.empty())
    if (auto err = rewrite::exportFixes(ExportFixes, "", fixes)) {
      llvm::errs() << "accelopt-rewrite migrate: error: " << ExportFixes << ": " << llvm::toString(std::move(err))
                   << "\n";
      return 1;
    }
  return untouched || failed ? 1 : 0;
}

RegisterCommand Registration(MigrateCmd, runMigrateCommand);

} // namespace
} // namespace accelopt::cli
