#include "LSP/Document.h"
#include "NKI/Dialect.h"
#include "NKI/PyCore.h"

#include "Analysis/Verifier.h"
#include "Profile/SimulatorBackend.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cctype>

namespace accelopt::lsp {

// --- configuration ----------------------------------------------------------------

static llvm::Error configError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "accelopt settings: " + msg);
}

static llvm::Error readStringMap(const json &j, const char *field, std::map<std::string, std::string> &out) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return llvm::Error::success();
  if (!it->is_object()) return configError(llvm::Twine("\"") + field + "\" must be an object of strings");
  std::map<std::string, std::string> m;
  for (auto &[k, v] : it->items()) {
    if (!v.is_string()) return configError(llvm::Twine("\"") + field + "." + k + "\" must be a string");
    m[k] = v.get<std::string>();
  }
  out = std::move(m);
  return llvm::Error::success();
}

llvm::Error Config::update(const json &settingsIn) {
  if (settingsIn.is_null()) return llvm::Error::success();
  const json *settings = &settingsIn;
  if (settings->is_object() && settings->contains("accelopt")) settings = &(*settings)["accelopt"];
  if (!settings->is_object()) return configError("settings must be an object");
  Config next = *this;
  auto str = [&](const char *field, std::string &out) -> llvm::Error {
    auto it = settings->find(field);
    if (it == settings->end() || it->is_null()) return llvm::Error::success();
    if (!it->is_string()) return configError(llvm::Twine("\"") + field + "\" must be a string");
    out = it->get<std::string>();
    return llvm::Error::success();
  };
  if (auto e = str("target", next.target)) return e;
  if (auto e = str("memory", next.memory)) return e;
  if (auto e = readStringMap(*settings, "inputs", next.inputs)) return e;
  if (auto e = readStringMap(*settings, "reference", next.references)) return e;
  if (auto e = readStringMap(*settings, "case", next.cases)) return e;
  if (auto e = readStringMap(*settings, "grid", next.grids)) return e;
  if (auto it = settings->find("suiteCases"); it != settings->end() && !it->is_null()) {
    if (!it->is_boolean()) return configError("\"suiteCases\" must be true or false");
    next.suiteCases = it->get<bool>();
  }
  *this = std::move(next);
  return llvm::Error::success();
}

const std::string *Config::lookupFile(const std::map<std::string, std::string> &map, const std::string &uri,
                                      const std::string &path) {
  const std::string *best = nullptr;
  size_t bestLen = 0;
  for (const auto &[key, value] : map) {
    if (key.empty()) continue;
    if (key == uri || key == path) return &value;
    // A path suffix at a component boundary; the longest wins.
    if (path.size() > key.size() && llvm::StringRef(path).endswith(key) && path[path.size() - key.size() - 1] == '/' &&
        key.size() > bestLen) {
      best = &value;
      bestLen = key.size();
    }
  }
  return best;
}

std::string uriToPath(const std::string &uri) {
  llvm::StringRef rest(uri);
  if (!rest.consume_front("file://")) return uri;
  // file://host/path: drop an authority (only "localhost" or empty make sense).
  if (!rest.startswith("/")) {
    size_t slash = rest.find('/');
    rest = slash == llvm::StringRef::npos ? "" : rest.drop_front(slash);
  }
  std::string out;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '%' && i + 2 < rest.size() && llvm::isHexDigit(rest[i + 1]) && llvm::isHexDigit(rest[i + 2])) {
      out.push_back(static_cast<char>(llvm::hexFromNibbles(rest[i + 1], rest[i + 2])));
      i += 2;
    } else {
      out.push_back(rest[i]);
    }
  }
  return out;
}

std::string pathToUri(const std::string &path) {
  std::string out = "file://";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      static const char *hex = "0123456789ABCDEF";
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

// --- input shapes -----------------------------------------------------------------

static std::string realPath(const std::string &p) {
  llvm::SmallString<256> out;
  if (llvm::sys::fs::real_path(p, out)) return p;
  return std::string(out);
}

static std::string resolveAgainst(const std::string &file, const Config &config, const std::string &docPath) {
  if (file.empty() || llvm::sys::path::is_absolute(file)) return file;
  llvm::SmallString<256> base(config.rootPath.empty() ? llvm::sys::path::parent_path(docPath) : config.rootPath);
  llvm::sys::path::append(base, file);
  return std::string(base);
}

InputResolver::FileInputs InputResolver::forFile(const Config &config, const std::string &uri,
                                                 const std::string &path) {
  FileInputs out;
  if (const std::string *text = Config::lookupFile(config.inputs, uri, path)) {
    auto specs = nki::parseInputSpecs(*text);
    if (!specs)
      out.problem = "bad \"inputs\" for this file: " + llvm::toString(specs.takeError());
    else
      out.specs = std::move(*specs);
    return out;
  }
  if (const std::string *name = Config::lookupFile(config.cases, uri, path)) {
    auto c = nki::findCase({}, *name);
    if (!c) {
      out.problem = "\"case\" for this file: " + llvm::toString(c.takeError());
      return out;
    }
    out.specs = c->inputs;
    out.suiteCase = std::move(*c);
    return out;
  }
  if (const std::string *ref = Config::lookupFile(config.references, uri, path)) {
    out.reference = resolveAgainst(*ref, config, path);
    return out;
  }
  if (config.suiteCases && !path.empty() && path.front() == '/') {
    std::lock_guard<std::mutex> guard(Lock);
    if (!SuiteTried) {
      SuiteTried = true;
      auto suite = nki::loadSuite({});
      if (suite) {
        for (auto &c : *suite) c.kernelPath = realPath(c.kernelPath);
        Suite = std::move(*suite);
      } else {
        llvm::consumeError(suite.takeError());
      }
    }
    if (Suite) {
      std::string real = realPath(path);
      for (const auto &c : *Suite)
        if (c.kernelPath == real) {
          out.specs = c.inputs;
          out.suiteCase = c;
          break;
        }
    }
  }
  return out;
}

llvm::Expected<nki::InputSpecs> InputResolver::fromReference(const std::string &reference,
                                                             const std::vector<std::string> &paramNames) {
  std::string key = reference + "|" + llvm::join(paramNames, ",");
  {
    std::lock_guard<std::mutex> guard(Lock);
    if (auto it = ReferenceCache.find(key); it != ReferenceCache.end()) return it->second;
  }
  auto specs = nki::inputsFromReference(reference, paramNames);
  if (!specs) return specs.takeError();
  std::lock_guard<std::mutex> guard(Lock);
  ReferenceCache[key] = *specs;
  return std::move(*specs);
}

void InputResolver::clear() {
  std::lock_guard<std::mutex> guard(Lock);
  ReferenceCache.clear();
  Suite.reset();
  SuiteTried = false;
}

// --- analysis ---------------------------------------------------------------------

Analysis::Analysis(std::string uri, std::string path, int64_t version, std::string text)
    : Uri(std::move(uri)), Path(std::move(path)), Version(version), Text(std::move(text)), Index(Text) {}

static bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

void Analysis::addDiagnostic(uint32_t begin, uint32_t end, int severity, const std::string &message,
                             const std::string &rule) {
  begin = std::min<uint32_t>(begin, Text.size());
  if (end <= begin) {
    // Point diagnostics cover the identifier (or the character) they start at.
    end = begin;
    while (end < Text.size() && isIdentChar(Text[end])) ++end;
    if (end == begin && end < Text.size() && Text[end] != '\n' && Text[end] != '\r') ++end;
  }
  end = std::min<uint32_t>(end, Text.size());
  json d = {
      {"range", rangeJson(Index, begin, end)}, {"severity", severity}, {"source", "accelopt"}, {"message", message}};
  if (!rule.empty()) d["code"] = rule;
  Diagnostics.push_back(std::move(d));
}

std::optional<std::pair<uint32_t, uint32_t>> legacyImportLine(llvm::StringRef text, uint32_t offset) {
  if (offset > text.size()) return std::nullopt;
  size_t begin = text.rfind('\n', offset); // the last newline before offset
  begin = begin == llvm::StringRef::npos ? 0 : begin + 1;
  size_t end = std::min(text.find('\n', offset), text.size());
  llvm::StringRef raw = text.slice(begin, end);
  llvm::StringRef line = raw.trim();
  if (!(line.startswith("import ") || line.startswith("from ")) || !line.contains(std::string(nki::kLegacyPackage)))
    return std::nullopt;
  uint32_t at = uint32_t(begin + (raw.size() - raw.ltrim().size()));
  return std::make_pair(at, uint32_t(at + line.size()));
}

void Analysis::addDialectHints() {
  llvm::StringRef text(Text);
  for (size_t at = 0; at <= text.size();) {
    if (auto line = legacyImportLine(text, uint32_t(at))) {
      addDiagnostic(line->first, line->second, 4,
                    "this file is written in the neuronxcc.nki dialect (NKI 0.1); kernels are now written against "
                    "the nki package (NKI 0.2+, where neuronxcc.nki is a compile error from 0.4): the quick fix "
                    "'Migrate to the nki dialect (0.3)' rewrites the file",
                    "dialect");
      return; // once per file: the quick fix is offered on every such import
    }
    size_t next = text.find('\n', at);
    if (next == llvm::StringRef::npos) break;
    at = next + 1;
  }
}

void Analysis::addFrontEndFailure(const std::string &message) {
  // Lines look like "PATH:LINE:COL: error: MESSAGE" (LINE/COL 1-based, COL in bytes).
  llvm::SmallVector<llvm::StringRef, 4> lines;
  llvm::StringRef(message).split(lines, '\n', -1, false);
  for (llvm::StringRef line : lines) {
    if (line.contains("no @nki.jit kernel in this file")) continue; // not an NKI file: stay quiet
    llvm::StringRef rest = line;
    uint32_t offset = 0;
    bool located = false;
    if (rest.consume_front(Path) && rest.consume_front(":")) {
      unsigned l = 0, c = 0;
      llvm::StringRef lineNo = rest.take_until([](char ch) { return ch == ':'; });
      rest = rest.drop_front(lineNo.size());
      if (!lineNo.getAsInteger(10, l) && rest.consume_front(":")) {
        llvm::StringRef colNo = rest.take_until([](char ch) { return ch == ':'; });
        rest = rest.drop_front(colNo.size());
        if (!colNo.getAsInteger(10, c) && rest.consume_front(":") && l > 0) {
          uint32_t start = Index.offset({l - 1, 0});
          // COL counts bytes from the line start.
          uint32_t lineEnd = Index.offset({l - 1, UINT32_MAX});
          offset = std::min<uint32_t>(start + (c ? c - 1 : 0), lineEnd);
          located = true;
          rest = rest.ltrim();
        }
      }
    }
    if (!located) rest = line;
    int severity = 1;
    if (rest.consume_front("error:"))
      rest = rest.ltrim();
    else if (rest.consume_front("warning:")) {
      rest = rest.ltrim();
      severity = 2;
    }
    std::string rule = "syntax";
    if (!located) rule = "front-end";
    addDiagnostic(offset, offset, severity, rest.str(), rule);
  }
}

void Analysis::build(const Config &config, InputResolver &resolver, const perf::HardwareDesc *hw) {
  addDialectHints();
  InputResolver::FileInputs fileInputs = resolver.forFile(config, Uri, Path);
  if (!fileInputs.problem.empty()) addDiagnostic(0, 0, 2, fileInputs.problem, "accelopt-config");

  std::vector<int64_t> grid;
  if (const std::string *text = Config::lookupFile(config.grids, Uri, Path)) {
    nki::pycore::ParsedGrid g = nki::pycore::parseGrid(*text);
    if (!g.error.empty())
      addDiagnostic(0, 0, 2, "\"grid\": " + g.error, "accelopt-config");
    else
      grid = g.dims;
  }
  if (fileInputs.specs && !grid.empty()) fileInputs.specs->grid = grid; // rewrites re-trace with the inputs
  auto makeFile = [&](const nki::InputSpecs *specs, const std::string &kernelName) -> llvm::Expected<nki::KernelFile> {
    auto source = syntax::SourceBuffer::fromText(Path, Text);
    if (!source) return source.takeError();
    nki::FrontEndOptions opts;
    opts.inputs = specs;
    opts.grid = grid;
    opts.kernelName = kernelName;
    return nki::buildKernelFile(std::move(*source), opts);
  };
  auto keep = [&](std::optional<nki::InputSpecs> specs) -> const nki::InputSpecs * {
    if (!specs) return nullptr;
    Specs.push_back(std::make_unique<nki::InputSpecs>(std::move(*specs)));
    return Specs.back().get();
  };

  const nki::InputSpecs *specs = keep(fileInputs.specs);
  auto file = makeFile(specs, "");
  if (!file) {
    addFrontEndFailure(llvm::toString(file.takeError()));
    return;
  }
  if (!specs && !fileInputs.reference.empty() && !file->kernels.empty()) {
    std::vector<std::string> names;
    for (const auto &p : file->kernels.front().params) names.push_back(p.name);
    auto ref = resolver.fromReference(fileInputs.reference, names);
    if (!ref) {
      addDiagnostic(0, 0, 2,
                    "input shapes from reference " + fileInputs.reference + ": " + llvm::toString(ref.takeError()),
                    "accelopt-config");
    } else {
      specs = keep(std::move(*ref));
      auto withShapes = makeFile(specs, "");
      if (withShapes)
        file = std::move(withShapes);
      else
        llvm::consumeError(withShapes.takeError());
    }
  }
  if (specs) FileInputs = *specs;
  std::optional<perf::RooflinePeak> peak;
  if (fileInputs.suiteCase) peak = perf::peakForCase(*fileInputs.suiteCase);

  Files.push_back(std::move(*file));
  // Kernels with their own "inputs" entry (keyed by kernel name) are rebuilt with them.
  std::vector<const nki::Kernel *> chosen;
  std::vector<const nki::InputSpecs *> chosenSpecs;
  for (const nki::Kernel &k : Files.front().kernels) {
    chosen.push_back(&k);
    chosenSpecs.push_back(specs);
  }
  for (size_t i = 0; i < chosen.size(); ++i) {
    auto it = config.inputs.find(chosen[i]->name);
    if (it == config.inputs.end()) continue;
    auto own = nki::parseInputSpecs(it->second);
    if (!own) {
      addDiagnostic(chosen[i]->def ? chosen[i]->def->range.begin : 0, 0, 2,
                    "bad \"inputs\" for kernel '" + chosen[i]->name + "': " + llvm::toString(own.takeError()),
                    "accelopt-config");
      continue;
    }
    const nki::InputSpecs *ownSpecs = keep(std::move(*own));
    auto rebuilt = makeFile(ownSpecs, chosen[i]->name);
    if (!rebuilt || rebuilt->kernels.empty()) {
      if (!rebuilt) llvm::consumeError(rebuilt.takeError());
      continue;
    }
    Files.push_back(std::move(*rebuilt));
    chosen[i] = &Files.back().kernels.front();
    chosenSpecs[i] = ownSpecs;
  }

  analysis::VerifyOptions &vopts = VerifyOpts;
  if (hw) {
    vopts.sbufBytesPerPartition = static_cast<int64_t>(hw->memory.sbufBytesPerPartition);
    vopts.psumBankBytes = static_cast<int64_t>(hw->memory.psumBankBytes);
    vopts.maxPartitions = static_cast<int>(hw->memory.partitions);
  }
  for (size_t i = 0; i < chosen.size(); ++i) {
    KernelInfo info;
    info.kernel = chosen[i];
    info.inputs = chosenSpecs[i];
    if (chosenSpecs[i] == specs && fileInputs.suiteCase) {
      info.peak = peak;
      info.caseName = fileInputs.suiteCase->name;
    }
    Kernels.push_back(info);
    for (const nki::Diagnostic &d : analysis::verify(*chosen[i], vopts)) {
      int severity = d.severity == nki::Diagnostic::Error ? 1 : d.severity == nki::Diagnostic::Warning ? 2 : 3;
      addDiagnostic(d.offset, d.endOffset, severity, d.message, d.rule);
    }
  }
}

const Analysis::KernelInfo *Analysis::kernelAt(uint32_t offset) const {
  for (const KernelInfo &k : Kernels)
    if (k.kernel->def && k.kernel->def->range.begin <= offset && offset <= k.kernel->def->range.end) return &k;
  return nullptr;
}

const Analysis::KernelInfo *Analysis::kernelNamed(const std::string &name) const {
  for (const KernelInfo &k : Kernels)
    if (k.kernel->name == name) return &k;
  return nullptr;
}

namespace {
thread_local CachedEstimatesOnly *CurrentCacheOnlyScope = nullptr;
} // namespace

CachedEstimatesOnly::CachedEstimatesOnly() : Outer(CurrentCacheOnlyScope) { CurrentCacheOnlyScope = this; }
CachedEstimatesOnly::~CachedEstimatesOnly() { CurrentCacheOnlyScope = Outer; }

const Analysis::Estimate &Analysis::estimate(const KernelInfo &k, const perf::HardwareDesc &hw) const {
  static const Estimate Pending{std::nullopt, "the estimate is not computed yet"};
  CachedEstimatesOnly *cacheOnly = CurrentCacheOnlyScope;
  std::unique_lock<std::mutex> guard(EstimateLock, std::defer_lock);
  // Another thread holds the lock while it computes an estimate: do not wait for it.
  if (cacheOnly && !guard.try_lock()) {
    cacheOnly->Missed = true;
    return Pending;
  }
  if (!cacheOnly) guard.lock();
  auto it = Estimates.find(k.kernel);
  if (it != Estimates.end()) return it->second;
  if (cacheOnly) {
    cacheOnly->Missed = true;
    return Pending;
  }
  Estimate e;
  static const nki::InputSpecs noInputs;
  auto est = profile::SimulatorBackend(hw).estimate(*k.kernel, k.inputs ? *k.inputs : noInputs);
  if (est)
    e.value = std::move(*est);
  else
    e.error = llvm::toString(est.takeError());
  return Estimates.emplace(k.kernel, std::move(e)).first->second;
}

std::shared_ptr<const Analysis::Suggestions> Analysis::suggestions(const KernelInfo &k, memory::Store &store,
                                                                   const memory::PatternQuery &query,
                                                                   size_t perPattern) const {
  std::lock_guard<std::mutex> guard(SuggestionLock);
  std::shared_ptr<const Suggestions> &slot = SuggestionCache[std::make_pair(k.kernel, store.path())];
  // Computed once per store; a failure (e.g. the file was locked) is retried next time.
  if (slot && slot->error.empty()) return slot;
  auto fresh = std::make_shared<Suggestions>();
  auto found = store.suggest(*k.kernel, query, perPattern);
  if (found)
    fresh->list = std::move(*found);
  else
    fresh->error = llvm::toString(found.takeError());
  slot = std::move(fresh);
  return slot;
}

} // namespace accelopt::lsp
