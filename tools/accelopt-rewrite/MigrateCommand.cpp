// accelopt-rewrite migrate FILE|DIR...: turn NKI 0.1 (`neuronxcc.nki`) kernels into the current
// `nki` dialect with minimal edits (lib/Rewrite/Migrate.h), each migrated kernel checked under the
// new dialect's rules and numerically against the original before anything is written; files are
// found and reported like `batch` (docs/migrate.md).
//
// Exit status: 0 every file migrated (or already current), 1 some file was left untouched (each
// reason at file:line:col) or failed, 2 bad usage.
#include "Command.h"
#include "FileBatchOptions.h"
#include "KernelInputs.h"

#include "NKI/Dialect.h"
#include "Rewrite/Rewrite.h"
#include "Search/Batch.h"

#include "llvm/Support/raw_ostream.h"

namespace accelopt::cli {
namespace {

cl::SubCommand MigrateCmd("migrate", "Migrate NKI 0.1 (neuronxcc.nki) kernels under FILE|DIR... to the current nki "
                                     "dialect (exit 0 all migrated, 1 a file left untouched, 2 bad usage)");
cl::opt<std::string> To("to", cl::desc("Target dialect (only nki-0.3)"), cl::init("nki-0.3"), cl::value_desc("DIALECT"),
                        cl::sub(MigrateCmd), cl::cat(category()));
FileBatchOptions Opts(MigrateCmd, "migrations", /*timeoutSeconds=*/300,
                      "Migrate kernels whose inputs are unknown without the numeric check");

int usage(const std::string &msg) {
  llvm::StringRef text = llvm::StringRef(msg).trim();
  llvm::errs() << "accelopt-rewrite migrate: " << (text.contains("error:") ? "" : "error: ") << text << "\n";
  return 2;
}

int runMigrateCommand() {
  if (To != "nki-0.3") return usage("--to " + To + ": the only target is nki-0.3");
  search::BatchOptions options;
  options.migrate = true;
  if (llvm::Error err = Opts.fill(options)) return usage(llvm::toString(std::move(err)));

  std::vector<std::string> unreadable;
  auto files = search::findKernelFiles(Opts.paths, &unreadable);
  if (!files) return usage(llvm::toString(files.takeError()));
  for (const std::string &problem : unreadable) llvm::errs() << "accelopt-rewrite: warning: " << problem << "\n";
  applyMemoryLimit(0);
  std::vector<search::FileResult> results = search::runBatch(*files, options);

  llvm::raw_ostream &diag = Opts.diff ? llvm::errs() : llvm::outs();
  int migrated = 0, current = 0, untouched = 0, failed = 0;
  std::vector<rewrite::FixDiagnostic> fixes;
  for (search::FileResult &r : results) {
    if (Opts.inPlace && r.changed())
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
    if (Opts.diff) llvm::outs() << rewrite::unifiedDiff(r.original, r.rewritten, r.path, r.path);
    for (const search::BatchFix &f : r.fixes)
      if (r.changed()) fixes.push_back({f.diagnosticName, f.message, r.absolutePath, f.offset, f.edits});
  }
  diag << "migrate: " << results.size() << (results.size() == 1 ? " file, " : " files, ") << migrated << " migrated, "
       << current << " already current, " << untouched << " left untouched, " << failed << " failed\n";
  if (!Opts.exportFixes.empty())
    if (auto err = rewrite::exportFixes(Opts.exportFixes, "", fixes)) {
      llvm::errs() << "accelopt-rewrite migrate: error: " << Opts.exportFixes << ": " << llvm::toString(std::move(err))
                   << "\n";
      return 1;
    }
  return untouched || failed ? 1 : 0;
}

RegisterCommand Registration(MigrateCmd, runMigrateCommand);

} // namespace
} // namespace accelopt::cli
