// accelopt-rewrite batch: apply rewrite patterns to every NKI kernel file of a
// tree, like clang-tidy over a project. Three parts, usable on their own:
//   * file discovery (directories walked, .gitignore rules and hidden
//     directories respected, only files with an @nki.jit kernel kept);
//   * named patterns (shipped JSON files in rewrites/patterns, memory patterns,
//     or a concrete op list), all the same memory::Pattern underneath;
//   * the per-file pipeline: sites found by instantiatePattern, each checked
//     by the rewrite engine and numerically against the original, applied
//     greedily; different patterns' fixes merged with conflict detection.
#pragma once

#include "Interp/Compare.h"
#include "Memory/Pattern.h"
#include "NKI/FrontEnd.h"
#include "NKI/InputSources.h"

#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace accelopt::memory {
class Store;
}

namespace accelopt::search {

// ------------------------------------------------------------ discovery

/// True if `text` matches the gitignore-style `glob`: `*` and `?` never match
/// '/', `**` matches any run of characters including '/', `[abc]`/`[a-z]`/`[!a]`
/// match one character, `\x` matches x.
bool globMatch(llvm::StringRef glob, llvm::StringRef text);

/// The .gitignore rules met while walking a tree. Each file's rules apply below
/// its directory; later rules (deeper files, later lines) win, `!` re-includes.
class IgnoreRules {
public:
  /// Adds the rules of `text`, the .gitignore found in `dir`.
  void add(llvm::StringRef dir, llvm::StringRef text);
  /// Reads `<dir>/.gitignore` if there is one.
  void addDirectory(llvm::StringRef dir);
  /// Whether `path` (spelled with the same prefix as the dirs given to add) is ignored.
  bool ignored(llvm::StringRef path, bool isDirectory) const;

private:
  struct Rule {
    std::string base; // directory of the .gitignore, "" for the current directory
    std::string glob;
    bool negated = false, directoryOnly = false, anchored = false;
  };
  std::vector<Rule> Rules;
};

/// The Python files with an `@nki.jit` kernel under `paths`, sorted and unique.
/// Directories are walked recursively, skipping hidden directories (.git, ...),
/// __pycache__, and whatever the .gitignore files inside the walked directories
/// ignore (those of enclosing directories are not read). A file named
/// explicitly is always kept, so that it is reported if it has no kernel.
/// Fails when a path does not exist. A directory that cannot be read is added to
/// `problems` ("DIR: cannot read the directory: CAUSE; ...") when given.
llvm::Expected<std::vector<std::string>> findKernelFiles(llvm::ArrayRef<std::string> paths,
                                                         std::vector<std::string> *problems = nullptr);

// ------------------------------------------------------------- patterns

/// A rewrite to try on every kernel: a generalised pattern (whose sites are
/// found per kernel) or a concrete op list (ids as `show` prints them).
struct NamedPattern {
  std::string name; // "hoist-invariant-load", "memory-p3", "ops.json"
  std::string description;
  /// The user's own ops (--ops FILE); ops of shipped, remembered or imported patterns are not.
  bool trusted = false;
  std::optional<memory::Pattern> pattern;
  std::vector<nlohmann::json> concreteOps; // when there is no pattern
  /// The migration to the current nki dialect (`migrate-nki-0.3`): the whole file, not sites.
  bool migration = false;

  /// "accelopt-<op>" when every op is the same kind, else "accelopt-candidate".
  std::string diagnosticName() const;
};

/// Where shipped patterns are looked for: <exe dir>/../share/accelopt/rewrites/patterns,
/// then the source tree's rewrites/patterns.
std::vector<std::string> defaultPatternDirs(llvm::StringRef executablePath);

/// A pattern file: memory::Pattern JSON plus "description"; named after the file.
llvm::Expected<NamedPattern> loadPatternFile(llvm::StringRef path);
/// Every pattern file in `dirs` (a name found in an earlier dir wins) and the migration, by name.
llvm::Expected<std::vector<NamedPattern>> listPatterns(llvm::ArrayRef<std::string> dirs);
/// `batch --pattern migrate-nki-0.3`: `migrate` as a batch pattern (docs/migrate.md).
inline constexpr llvm::StringLiteral kMigrationPattern = "migrate-nki-0.3";
NamedPattern migrationPattern();
/// The pattern `name` from `dirs` (or the migration), or the file `name` when it ends in ".json".
llvm::Expected<NamedPattern> findPattern(llvm::ArrayRef<std::string> dirs, llvm::StringRef name);
/// The `limit` best remembered patterns (win rate, then id), named "memory-p<id>".
llvm::Expected<std::vector<NamedPattern>> memoryPatterns(memory::Store &store, size_t limit);

// ------------------------------------------------------------- pipeline

struct BatchOptions {
  std::vector<NamedPattern> patterns;
  unsigned jobs = 0;              // 0: hardware concurrency
  bool allowReplace = false;      // accept `replace` from untrusted patterns (--allow-replace)
  size_t maxSitesPerPattern = 32; // bounds the greedy loop per kernel and pattern
  // Numeric check of every applied site against the original kernel.
  bool numericCheck = true;
  unsigned seeds = 2; // AccelOpt's seeds 0, 21, ...
  interp::Tolerance tolerance;
  double timeoutSeconds = 60; // per interpreter run
  /// Shapes for kernels whose parameters are exactly these names (--inputs).
  std::optional<nki::InputSpecs> inputs;
  /// Suite cases: a kernel gets a case's shapes when the case's kernel is this
  /// file, or has the same file name and the same parameter names (a copy).
  std::vector<nki::SuiteCase> suite;
  /// The launch grid every kernel runs in (--grid); empty: its inputs' grid, else the file's own launch.
  std::vector<int64_t> grid;
  /// Migrate each file's NKI 0.1 kernels to the current dialect (`migrate`) instead of applying
  /// `patterns`: a file is migrated whole or, when anything resists, left as it is.
  bool migrate = false;
};

/// One fix kept for a file: a pattern's sites on one kernel, relative to the
/// original text.
struct BatchFix {
  std::string diagnosticName; // accelopt-<op>
  std::string pattern;
  std::string message; // the applied ops' descriptions
  uint32_t offset = 0; // first edit, in the original text
  clang::tooling::Replacements edits;
  int sites = 0;
};

struct FileResult {
  std::string path; // as discovered
  std::string absolutePath;
  bool failed = false; // unreadable, does not parse, no kernel
  std::string original, rewritten;
  /// "path:line:col: note|warning|error: ..." lines, in source order.
  std::vector<std::string> messages;
  std::vector<BatchFix> fixes;
  int applied = 0, refused = 0, conflicts = 0;
  /// "verified numerically (2 seeds, inputs from case X)", "not verified numerically (no inputs)", ...
  std::string verification;
  bool alreadyCurrent = false; // migrate: the file is in the nki dialect already

  bool changed() const { return !failed && rewritten != original; }
  /// "path: 2 rewrites applied (accelopt-hoist x2), 1 site refused; verified numerically (...)".
  std::string summary() const;
};

/// Runs the pipeline on one file (or migrates it, options.migrate); never writes anything.
FileResult processFile(llvm::StringRef path, const BatchOptions &options);
/// The migration of `text` (an editor's buffer of the file `path`), checked as processFile checks it.
FileResult migrateText(llvm::StringRef path, std::string text, const BatchOptions &options);
/// processFile on every file, in parallel (options.jobs); results in the order of `files`.
std::vector<FileResult> runBatch(llvm::ArrayRef<std::string> files, const BatchOptions &options);

/// Maps an offset in the text after `edits` back to the original text (an
/// offset inside replaced text maps to the start of the replaced range).
unsigned originalOffset(const clang::tooling::Replacements &edits, unsigned newOffset);

} // namespace accelopt::search
