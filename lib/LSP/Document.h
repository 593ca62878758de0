// What the language server knows about one open document: its text and
// version, and (computed on demand, cached per version) the kernel IR of every
// kernel in it, the verifier's diagnostics, and performance estimates.
#pragma once

#include "LSP/Text.h"

#include "Analysis/Verifier.h"
#include "Memory/Store.h"
#include "NKI/FrontEnd.h"
#include "NKI/InputSources.h"
#include "Perf/Bench.h"
#include "Perf/Hardware.h"

#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace accelopt::lsp {

using json = nlohmann::json;

/// Settings from initializationOptions / workspace/didChangeConfiguration:
///   {"target": "trn1", "memory": path,
///    "inputs": {"<file or kernel name>": "a=f32[128,512]"},
///    "reference": {"<file>": "ref.py"},
///    "case": {"<file>": "<suite case name>"}, "suiteCases": true,
///    "grid": {"<file>": "2,3"}}  (the launch grid, as --grid)
/// A <file> key matches the document's URI, its path, or a path suffix
/// ("kernels/softmax.py", "softmax.py"). Relative reference paths are resolved
/// against the workspace root, else the document's directory.
struct Config {
  std::string target = "trn1";
  std::string memory; // optimization memory: preferred code actions
  std::map<std::string, std::string> inputs;
  std::map<std::string, std::string> references;
  std::map<std::string, std::string> cases;
  std::map<std::string, std::string> grids;
  bool suiteCases = true; // find input shapes of suite kernels by path
  std::string rootPath;   // workspace root (from initialize)

  /// Updates the fields present in `settings` (also accepted nested under
  /// "accelopt"); fails on fields of the wrong type.
  llvm::Error update(const json &settings);
  /// The value of `map` whose key matches the document (or nullptr).
  static const std::string *lookupFile(const std::map<std::string, std::string> &map, const std::string &uri,
                                       const std::string &path);
};

/// "file:///a/b%20c.py" -> "/a/b c.py"; other URIs are returned unchanged.
std::string uriToPath(const std::string &uri);
std::string pathToUri(const std::string &path);

/// Where input shapes come from; shared by every document. It caches what is
/// slow: numpy references (run in Python) and the suite manifest.
class InputResolver {
public:
  struct FileInputs {
    std::optional<nki::InputSpecs> specs; // from "inputs" or a suite case
    std::optional<nki::SuiteCase> suiteCase;
    std::string reference; // a configured reference to run (needs parameter names)
    std::string problem;   // a configured source failed: why
  };
  /// File-level shapes: "inputs" for the file, else "case", else the suite case
  /// whose kernel is this file; else the configured reference (left to the caller).
  FileInputs forFile(const Config &config, const std::string &uri, const std::string &path);
  /// Runs `reference` (once per reference and parameter list).
  llvm::Expected<nki::InputSpecs> fromReference(const std::string &reference,
                                                const std::vector<std::string> &paramNames);
  void clear();

private:
  std::mutex Lock;
  std::map<std::string, nki::InputSpecs> ReferenceCache; // "ref|p1,p2" -> specs
  std::optional<std::vector<nki::SuiteCase>> Suite;
  bool SuiteTried = false;
};

/// While one is alive on a thread, Analysis::estimate on that thread computes
/// nothing: an estimate that is not cached yet (or is being computed by another
/// thread) comes back as a placeholder and missed() turns true. The server
/// answers requests on its request thread this way and hands the ones that
/// missed to its estimate worker, so no request waits on the performance model.
class CachedEstimatesOnly {
public:
  CachedEstimatesOnly();
  ~CachedEstimatesOnly();
  CachedEstimatesOnly(const CachedEstimatesOnly &) = delete;
  CachedEstimatesOnly &operator=(const CachedEstimatesOnly &) = delete;
  bool missed() const { return Missed; }

private:
  friend class Analysis;
  CachedEstimatesOnly *Outer;
  bool Missed = false;
};

/// The line holding `offset` when it is an import of `neuronxcc.nki` (NKI 0.1): its trimmed text's
/// byte range; std::nullopt for any other line. The dialect hint and the migrate quick fix sit there.
std::optional<std::pair<uint32_t, uint32_t>> legacyImportLine(llvm::StringRef text, uint32_t offset);

/// One analysed version of a document. Immutable once built (apart from the
/// estimate cache, which has its own lock); shared between threads.
class Analysis {
public:
  struct KernelInfo {
    const nki::Kernel *kernel = nullptr;
    const nki::InputSpecs *inputs = nullptr; // the shapes the IR was built with
    std::optional<perf::RooflinePeak> peak;  // when the file is a suite case with a roofline
    std::string caseName;
  };
  struct Estimate {
    std::optional<perf::KernelEstimate> value;
    std::string error;
  };

  Analysis(std::string uri, std::string path, int64_t version, std::string text);
  Analysis(const Analysis &) = delete;
  Analysis &operator=(const Analysis &) = delete;

  /// Parses, builds the IR and verifies. Never throws on bad source.
  void build(const Config &config, InputResolver &inputs, const perf::HardwareDesc *hw);

  const std::string &uri() const { return Uri; }
  const std::string &path() const { return Path; }
  int64_t version() const { return Version; }
  const std::string &text() const { return Text; }
  const LineIndex &index() const { return Index; }
  const std::vector<KernelInfo> &kernels() const { return Kernels; }
  /// LSP Diagnostic objects.
  const json &diagnostics() const { return Diagnostics; }
  /// True when the front end built IR (no syntax error).
  bool ok() const { return !Kernels.empty(); }
  const std::optional<nki::InputSpecs> &fileInputs() const { return FileInputs; }
  /// The limits the diagnostics were checked against (the target's).
  const analysis::VerifyOptions &verifyOptions() const { return VerifyOpts; }

  /// The kernel whose definition contains `offset` (or null).
  const KernelInfo *kernelAt(uint32_t offset) const;
  const KernelInfo *kernelNamed(const std::string &name) const;
  /// The performance model's estimate of kernel `k` (cached). Under a
  /// CachedEstimatesOnly scope on this thread, an estimate not computed yet is
  /// not computed: a placeholder comes back and the scope records the miss.
  const Estimate &estimate(const KernelInfo &k, const perf::HardwareDesc &hw) const;

  struct Suggestions {
    std::vector<memory::PatternSuggestion> list;
    std::string error;
  };
  /// The optimization memory's suggestions for kernel `k` (Store::suggest with
  /// `query`), cached per store path: code actions at other loops of the same
  /// version reuse them.
  std::shared_ptr<const Suggestions> suggestions(const KernelInfo &k, memory::Store &store,
                                                 const memory::PatternQuery &query, size_t perPattern) const;

private:
  std::string Uri, Path;
  int64_t Version;
  const std::string Text;
  LineIndex Index;
  std::vector<nki::KernelFile> Files;
  std::vector<std::unique_ptr<nki::InputSpecs>> Specs;
  std::optional<nki::InputSpecs> FileInputs;
  std::vector<KernelInfo> Kernels;
  json Diagnostics = json::array();
  analysis::VerifyOptions VerifyOpts;

  mutable std::mutex EstimateLock;
  mutable std::map<const nki::Kernel *, Estimate> Estimates;
  mutable std::mutex SuggestionLock;
  mutable std::map<std::pair<const nki::Kernel *, std::string>, std::shared_ptr<const Suggestions>> SuggestionCache;

  void addDiagnostic(uint32_t begin, uint32_t end, int severity, const std::string &message, const std::string &rule);
  void addFrontEndFailure(const std::string &message);
  /// A hint on the first import of `neuronxcc.nki`: the file is in the old dialect, and the quick fix migrates it.
  void addDialectHints();
};

} // namespace accelopt::lsp
