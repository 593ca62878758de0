#include "Profile/NeuronBackend.h"

#include "Interp/Npy.h"
#include "NKI/InputSources.h"
#include "NKI/Types.h"
#include "Profile/NumericCheck.h"
#include "Syntax/SourceBuffer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <sstream>

namespace accelopt::profile {

namespace {

// The harness source, generated from NeuronHarness.py by CMakeLists.txt.
#include "NeuronHarness.inc"

// NeuronHarness.py's exit statuses.
constexpr int HarnessMissingSdk = 3, HarnessMissingNumpy = 4;

constexpr const char *SdkSetupDocs = "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/setup/index.html";
constexpr const char *ProfilerDir = "/opt/aws/neuron/bin"; // where aws-neuronx-tools installs neuron-profile

llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "error: neuron backend: " + msg);
}

std::string seconds(double s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

std::string readText(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

/// The last non-empty line of a process's stderr: a Python traceback names its
/// problem there.
std::string lastLine(llvm::StringRef text) {
  text = text.rtrim();
  return text.rsplit('\n').second.empty() ? text.trim().str() : text.rsplit('\n').second.trim().str();
}

/// A program by name on PATH (or in `extraDir`), or by path.
std::optional<std::string> findProgram(llvm::StringRef program, llvm::StringRef extraDir = "") {
  if (program.contains('/')) {
    if (llvm::sys::fs::can_execute(program)) return program.str();
    return std::nullopt;
  }
  if (auto found = llvm::sys::findProgramByName(program)) return *found;
  if (!extraDir.empty())
    if (auto found = llvm::sys::findProgramByName(program, {extraDir})) return *found;
  return std::nullopt;
}

/// A subprocess of a measurement: its status, output files and what went wrong.
struct Subprocess {
  int status = 0;
  bool timedOut = false;
  std::string execError;
  std::string out, err;
};

Subprocess runLogged(llvm::StringRef program, llvm::ArrayRef<llvm::StringRef> args, llvm::StringRef outPath,
                     llvm::StringRef errPath, double timeoutSeconds) {
  Subprocess p;
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), outPath, errPath};
  p.status = nki::runWithTimeout(program, args, redirects, timeoutSeconds, p.execError, p.timedOut);
  p.out = readText(outPath);
  p.err = readText(errPath);
  return p;
}

/// The work directory of one measurement: removed afterwards unless kept.
class WorkDir {
public:
  static llvm::Expected<WorkDir> create(llvm::StringRef keepDir, llvm::StringRef kernelName) {
    WorkDir w;
    if (keepDir.empty()) {
      llvm::SmallString<256> path;
      if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("accelopt-neuron", path))
        return error("cannot create a temporary directory: " + ec.message());
      w.Path = path.str().str();
      w.Remove = true;
      return w;
    }
    if (std::error_code ec = llvm::sys::fs::create_directories(keepDir))
      return error("cannot create '" + keepDir + "': " + ec.message());
    llvm::SmallString<256> model(keepDir);
    llvm::sys::path::append(model, kernelName + "-%%%%%%");
    for (int attempt = 0; attempt < 100; ++attempt) {
      llvm::SmallString<256> path;
      llvm::sys::fs::createUniquePath(model, path, /*MakeAbsolute=*/true);
      std::error_code ec = llvm::sys::fs::create_directory(path, /*IgnoreExisting=*/false);
      if (!ec) {
        w.Path = path.str().str();
        return w;
      }
      if (ec != std::errc::file_exists) return error("cannot create '" + path + "': " + ec.message());
    }
    return error("cannot create a work directory under '" + keepDir + "'");
  }
  WorkDir() = default;
  WorkDir(WorkDir &&o) noexcept : Path(std::move(o.Path)), Remove(o.Remove) { o.Remove = false; }
  WorkDir &operator=(WorkDir &&) = delete;
  ~WorkDir() {
    if (Remove) llvm::sys::fs::remove_directories(Path);
  }
  std::string file(llvm::StringRef name) const {
    llvm::SmallString<256> p(Path);
    llvm::sys::path::append(p, name);
    return p.str().str();
  }
  const std::string &path() const { return Path; }
  bool kept() const { return !Remove; }

private:
  std::string Path;
  bool Remove = false;
};

/// What a failed subprocess's error adds: where its full log is, when kept.
std::string logNote(const WorkDir &dir, llvm::StringRef log) {
  return dir.kept() ? " (log: " + dir.file(log) + ")" : std::string(" (--neuron-keep DIR keeps the logs)");
}

} // namespace

NeuronOptions NeuronOptions::fromEnvironment() {
  NeuronOptions o;
  const char *python = std::getenv("ACCELOPT_NEURON_PYTHON");
  o.python = python && *python ? python : "python3";
  return o;
}

llvm::Expected<perf::Profile> parseNeuronSummary(llvm::StringRef text, llvm::StringRef source,
                                                 std::vector<std::string> *unreported) {
  // neuron-profile may log lines before the JSON document.
  size_t start = text.find('{');
  if (start == llvm::StringRef::npos)
    return error(source + ": malformed summary JSON from neuron-profile: no JSON object in its output");
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(text.drop_front(start).str(), nullptr, false);
  if (doc.is_discarded()) return error(source + ": malformed summary JSON from neuron-profile: not valid JSON");
  if (!doc.is_object() || doc.empty() || !doc.begin()->is_object())
    return error(source + ": malformed summary JSON from neuron-profile: expected {\"<name>\": {fields}}");
  // One entry per profiled NEFF; the kernel's is the first (as AccelOpt reads it).
  const nlohmann::ordered_json &fields = *doc.begin();
  auto total = fields.find("total_time");
  if (total == fields.end() || !total->is_number())
    return error(source + ": malformed summary JSON from neuron-profile: no numeric \"total_time\"");
  perf::Profile p;
  p.latency = total->get<double>() * 1e3; // seconds -> ms
  for (const perf::Profile::Field &f : perf::Profile::fields()) {
    auto it = fields.find(std::string(f.name));
    if (it == fields.end()) {
      if (unreported) unreported->emplace_back(f.name);
      continue;
    }
    if (!it->is_number())
      return error(source + ": malformed summary JSON from neuron-profile: \"" + std::string(f.name) +
                   "\" is not a number");
    p.*(f.member) = it->get<double>();
  }
  return p;
}

llvm::Expected<std::pair<std::string, std::string>> NeuronBackend::findTools(bool probeImport) const {
  std::vector<std::string> missing;
  std::optional<std::string> python = findProgram(Options.python);
  std::optional<std::string> profiler = findProgram("neuron-profile", ProfilerDir);
  if (!python)
    missing.push_back("the Neuron SDK's Python '" + Options.python +
                      "' is not found (point --neuron-python or ACCELOPT_NEURON_PYTHON at the Neuron venv's python)");
  if (python && probeImport) {
    llvm::SmallString<128> out, err;
    llvm::sys::fs::createTemporaryFile("accelopt-neuron-probe", "out", out);
    llvm::sys::fs::createTemporaryFile("accelopt-neuron-probe", "err", err);
    Subprocess p = runLogged(
        *python, {*python, "-c", "try:\n from neuronxcc import nki\nexcept ImportError:\n import nki\nnki.baremetal"},
        out, err, Options.timeoutSeconds);
    llvm::sys::fs::remove(out);
    llvm::sys::fs::remove(err);
    if (p.status != 0 && !p.timedOut)
      missing.push_back("'" + *python +
                        "' cannot import neuronxcc.nki (nor nki) with baremetal: install the compiler "
                        "into that Python's environment (python -m pip install neuronx-cc "
                        "--extra-index-url=https://pip.repos.neuron.amazonaws.com)");
  }
  if (!profiler)
    missing.push_back(std::string("'neuron-profile' is on neither PATH nor ") + ProfilerDir +
                      " (install the Neuron tools: sudo apt-get install aws-neuronx-tools, from the Neuron apt "
                      "repository)");
  if (!missing.empty()) {
    std::string text = "the Neuron SDK is missing: ";
    for (size_t i = 0; i < missing.size(); ++i) text += (i ? "; " : "") + missing[i];
    return error(text + "; see " + SdkSetupDocs);
  }
  return std::make_pair(*python, *profiler);
}

llvm::Error NeuronBackend::checkSdk() const {
  auto tools = findTools(/*probeImport=*/true);
  return tools ? llvm::Error::success() : tools.takeError();
}

NeuronBackend::NeuronBackend(perf::HardwareDesc hw, NeuronOptions options)
    : Hw(std::move(hw)), Options(std::move(options)), Label("neuron-" + Hw.name) {}

llvm::Expected<NeuronMeasurement> NeuronBackend::measure(const nki::Kernel &kernel,
                                                         const nki::InputSpecs &inputs) const {
  if (inputs.empty() && !kernel.params.empty())
    return error("kernel '" + kernel.name +
                 "' needs input shapes to run on the device (--inputs, --reference or --case)");
  auto args = interp::makeRandomInputs(inputs, accelOptSeed(0));
  if (!args) return args.takeError();
  return measure(kernel, *args);
}

llvm::Expected<perf::KernelEstimate> NeuronBackend::estimate(const nki::Kernel &kernel,
                                                             const nki::InputSpecs &inputs) const {
  auto m = measure(kernel, inputs);
  if (!m) return m.takeError();
  perf::KernelEstimate e;
  e.profile = std::move(m->profile);
  return e;
}

llvm::Expected<NeuronMeasurement> NeuronBackend::measure(const nki::Kernel &kernel,
                                                         const std::vector<interp::KernelArg> &args) const {
  const NeuronOptions &o = Options;
  if (o.runs == 0) return error("--neuron-runs 0 measures nothing; give at least 1 run");
  if (!kernel.source) return error("kernel '" + kernel.name + "' has no source text");

  // The SDK's import is probed once, so that a missing SDK is reported with
  // everything else that is missing; the harness reports it too.
  auto tools = findTools(/*probeImport=*/!SdkFound.load());
  if (!tools) return tools.takeError();
  SdkFound = true;
  const std::string python = tools->first, profiler = tools->second;

  auto dir = WorkDir::create(o.keepDir, kernel.name);
  if (!dir) return dir.takeError();
  const std::string kernelFile = dir->file("kernel.py"), harness = dir->file("harness.py"), job = dir->file("job.json"),
                    neff = dir->file("kernel.neff");
  if (auto err = syntax::writeFileAtomically(kernelFile, kernel.source->text())) return std::move(err);
  if (auto err = syntax::writeFileAtomically(harness, NeuronHarnessSource)) return std::move(err);

  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  for (size_t i = 0; i < args.size(); ++i) {
    const interp::KernelArg &a = args[i];
    nlohmann::ordered_json item = {{"name", a.name}};
    if (a.array) {
      std::string npy = dir->file("input" + std::to_string(i) + ".npy");
      if (auto err = interp::writeNpy(npy, *a.array, interp::NpyElementType::ArrayDType)) return std::move(err);
      item["npy"] = npy;
      item["dtype"] = std::string(nki::dtypeName(a.array->dtype()));
    } else if (!a.literal.empty()) {
      item["literal"] = a.literal; // a tuple, None, dtype, string or object: the kernel's module evaluates it
    } else {
      item["scalar"] = a.scalar;
      item["int"] = a.isInt;
    }
    inputs.push_back(std::move(item));
  }
  nlohmann::ordered_json jobJson = {{"kernel_file", kernelFile},
                                    {"kernel_name", kernel.name},
                                    {"inputs", inputs},
                                    {"grid", kernel.grid},
                                    {"dir", dir->path()},
                                    {"neff", neff},
                                    {"warmup", o.warmup},
                                    {"runs", o.runs},
                                    {"compile_options", o.compileOptions}};
  if (auto err = syntax::writeFileAtomically(job, jobJson.dump(1) + "\n")) return std::move(err);

  // One kernel on the device at a time: concurrent runs would share it and
  // disturb each other's timing.
  std::lock_guard<std::mutex> deviceGuard(DeviceLock);
  Subprocess h =
      runLogged(python, {python, harness, job}, dir->file("harness.out"), dir->file("harness.err"), o.timeoutSeconds);
  if (h.timedOut)
    return error("the harness of '" + kernel.name + "' did not finish within " + seconds(o.timeoutSeconds) +
                 " s and was stopped (--timeout sets the limit)");
  if (h.status == -1) return error("cannot run '" + python + "': " + h.execError);
  if (h.status == HarnessMissingSdk)
    return error("the Neuron SDK is missing: '" + python +
                 "' cannot import neuronxcc.nki (nor nki): install the "
                 "compiler into that Python's environment (python -m pip install neuronx-cc "
                 "--extra-index-url=https://pip.repos.neuron.amazonaws.com) or point --neuron-python / "
                 "ACCELOPT_NEURON_PYTHON at the Neuron venv's python; see " +
                 SdkSetupDocs);
  if (h.status == HarnessMissingNumpy)
    return error("'" + python + "' cannot import numpy: install it into the Neuron SDK's environment");
  if (h.status != 0)
    return error(llvm::formatv("running '{0}' on the device failed ({1}): {2}{3}", kernel.name,
                               h.status == -2 ? std::string("crashed") : "exit status " + std::to_string(h.status),
                               lastLine(h.err.empty() ? h.execError : h.err), logNote(*dir, "harness.err"))
                     .str());

  const std::string resultPath = dir->file("result.json");
  nlohmann::json result = nlohmann::json::parse(readText(resultPath), nullptr, false);
  if (result.is_discarded() || !result.is_object() || !result["traces"].is_array() || !result["outputs"].is_array())
    return error("the harness wrote no valid " + resultPath);

  NeuronMeasurement m;
  m.sdk = result.value("sdk", "");
  m.platform = result.value("platform", "");
  if (m.platform.empty()) m.platform = Hw.name;
  const auto &traces = result["traces"];
  if (traces.size() != o.runs)
    return error(llvm::formatv("the harness saved {0} traces for {1} timed runs", traces.size(), o.runs).str());
  std::vector<perf::Profile> profiles;
  for (size_t i = 0; i < traces.size(); ++i) {
    if (!traces[i].is_string()) return error("the harness wrote no valid " + resultPath);
    const std::string ntff = traces[i].get<std::string>();
    const std::string out = dir->file("summary" + std::to_string(i) + ".json"),
                      err = dir->file("summary" + std::to_string(i) + ".err");
    Subprocess v = runLogged(profiler, {profiler, "view", "--output-format", "summary-json", "-n", neff, "-s", ntff},
                             out, err, o.timeoutSeconds);
    if (v.timedOut)
      return error("'neuron-profile view' did not finish within " + seconds(o.timeoutSeconds) +
                   " s and was stopped (--timeout sets the limit)");
    if (v.status == -1) return error("cannot run '" + profiler + "': " + v.execError);
    if (v.status != 0)
      return error(llvm::formatv("'neuron-profile view' failed on {0} ({1}): {2}{3}", llvm::sys::path::filename(ntff),
                                 v.status == -2 ? std::string("crashed") : "exit status " + std::to_string(v.status),
                                 lastLine(v.err.empty() ? v.execError : v.err),
                                 logNote(*dir, "summary" + std::to_string(i) + ".err"))
                       .str());
    std::vector<std::string> unreported;
    auto p = parseNeuronSummary(v.out, "neuron-profile view of " + llvm::sys::path::filename(ntff).str(), &unreported);
    if (!p) return p.takeError();
    if (i == 0) m.unreported = std::move(unreported);
    m.latenciesMs.push_back(p->latency);
    profiles.push_back(std::move(*p));
  }

  // The median run's summary stands for the kernel (the lower median for an even count).
  std::vector<size_t> order(profiles.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return m.latenciesMs[a] < m.latenciesMs[b]; });
  size_t median = order[(order.size() - 1) / 2];
  m.minMs = m.latenciesMs[order.front()];
  m.maxMs = m.latenciesMs[order.back()];
  m.medianMs = m.latenciesMs[median];
  m.profile = std::move(profiles[median]);
  m.profile.backend = "neuron-" + m.platform;

  for (const auto &path : result["outputs"]) {
    if (!path.is_string()) return error("the harness wrote no valid " + resultPath);
    auto array = interp::readNpy(path.get<std::string>());
    if (!array) return array.takeError();
    m.outputs.push_back(std::move(*array));
  }
  return m;
}

llvm::Expected<std::unique_ptr<Backend>> createNeuronBackend(llvm::StringRef target) {
  auto hw = perf::loadTarget(target);
  if (!hw) return hw.takeError();
  return std::make_unique<NeuronBackend>(std::move(*hw), NeuronOptions::fromEnvironment());
}

} // namespace accelopt::profile
