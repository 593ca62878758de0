#include "NKI/InputSources.h"
#include "NKI/PyCore.h"
#include "Syntax/Errors.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include <signal.h>

#ifndef ACCELOPT_SOURCE_DIR
#define ACCELOPT_SOURCE_DIR "."
#endif

namespace accelopt::nki {

std::string pythonForReferences() {
  if (const char *p = std::getenv("ACCELOPT_PYTHON"); p && *p) return p;
  return "/usr/bin/python3";
}

// A non-array kernel input as the Python literal the kernel's module evaluates (InputSpec::literal):
// defined ahead of every reference script (ReferenceProbe, ReferenceRunner).
static const char *LiteralFunction = R"PY(
def accelopt_literal(x):
    import dataclasses
    if x is None or isinstance(x, (bool, str)):
        return repr(x)
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        return repr(float(x))
    if isinstance(x, tuple):
        return "(" + "".join(accelopt_literal(e) + ", " for e in x) + ")"
    if isinstance(x, list):
        return "[" + ", ".join(accelopt_literal(e) for e in x) + "]"
    if isinstance(x, np.dtype) or (isinstance(x, type) and issubclass(x, np.generic)):
        return "np." + np.dtype(x).name
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return type(x).__name__ + "(" + ", ".join(
            f.name + "=" + accelopt_literal(getattr(x, f.name)) for f in dataclasses.fields(x)) + ")"
    raise TypeError("a kernel input of type %s is not supported (arrays, numbers, None, strings, tuples, "
                    "lists, dtypes and dataclasses are)" % type(x).__name__)
)PY";

// Imports the reference by path, draws its inputs with a fixed seed and prints
// one JSON object per kernel argument. Nothing from the reference is trusted
// beyond shapes, dtypes and scalar values.
static const char *ReferenceProbe = R"PY(
import importlib.util, json, sys
import numpy as np
spec = importlib.util.spec_from_file_location("accelopt_reference", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
np.random.seed(0)
inputs = mod.get_inputs()
if hasattr(mod, "transform_to_nki_inputs"):
    inputs = mod.transform_to_nki_inputs(inputs)
out = []
for x in inputs:
    if isinstance(x, np.ndarray):
        out.append({"dtype": str(x.dtype), "shape": list(x.shape)})
    elif isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool):
        is_int = isinstance(x, (int, np.integer))
        out.append({"scalar": int(x) if is_int else float(x)})
    else:
        out.append({"literal": accelopt_literal(x)})
grid = getattr(mod, "grid", None)  # the launch grid: a tuple, an int, or a function returning one
if callable(grid):
    grid = grid()
if isinstance(grid, (int, np.integer)):
    grid = [grid]
grid = [int(g) for g in grid] if isinstance(grid, (tuple, list)) else []
print(json.dumps({"inputs": out, "grid": grid}))
)PY";

// Writes the reference's inputs (after transform_to_nki_inputs) and forward()'s
// outputs for one seed as .npy files and prints a JSON index of them.
static const char *ReferenceRunner = R"PY(
import importlib.util, json, os, sys
import numpy as np
spec = importlib.util.spec_from_file_location("accelopt_reference", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
seed, out_dir = int(sys.argv[2]), sys.argv[3]
np.random.seed(seed)
inputs = mod.get_inputs()
ref = mod.forward(*inputs)
nki_inputs = mod.transform_to_nki_inputs(inputs) if hasattr(mod, "transform_to_nki_inputs") else inputs
index = {"inputs": [], "scalars": [], "literals": [], "outputs": []}
for i, x in enumerate(nki_inputs):
    if isinstance(x, np.ndarray):
        path = os.path.join(out_dir, "input%d.npy" % i)
        np.save(path, np.ascontiguousarray(x))
        index["inputs"].append(path); index["scalars"].append(None); index["literals"].append("")
    elif isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool):
        index["inputs"].append(""); index["scalars"].append(float(x)); index["literals"].append("")
    else:
        index["inputs"].append(""); index["scalars"].append(None); index["literals"].append(accelopt_literal(x))
refs = ref if isinstance(ref, tuple) else (ref,)
for i, r in enumerate(refs):
    path = os.path.join(out_dir, "reference%d.npy" % i)
    np.save(path, np.ascontiguousarray(np.asarray(r, dtype=np.float32)))
    index["outputs"].append(path)
print(json.dumps(index))
)PY";

// Polled rather than ExecuteAndWait's SIGALRM, which is process-wide and
// whole seconds only.
int runWithTimeout(llvm::StringRef program, llvm::ArrayRef<llvm::StringRef> args,
                   llvm::ArrayRef<llvm::Optional<llvm::StringRef>> redirects, double seconds, std::string &execError,
                   bool &timedOut) {
  timedOut = false;
  bool failed = false;
  llvm::sys::ProcessInfo child = llvm::sys::ExecuteNoWait(program, args, llvm::None, redirects, 0, &execError, &failed);
  if (failed || child.Pid <= 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  auto pause = std::chrono::milliseconds(2);
  for (;;) {
    llvm::sys::ProcessInfo done =
        llvm::sys::Wait(child, /*SecondsToWait=*/0, /*WaitUntilTerminates=*/false, &execError);
    if (done.Pid != 0) return done.ReturnCode;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(child.Pid, SIGKILL);
      llvm::sys::Wait(child, 0, /*WaitUntilTerminates=*/true);
      timedOut = true;
      return -2;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

/// Runs a Python script with arguments; returns its stdout, or an error naming `what`.
static llvm::Expected<std::string> runPython(const char *script, llvm::ArrayRef<std::string> scriptArgs,
                                             llvm::StringRef what, double timeoutSeconds) {
  if (!(timeoutSeconds > 0)) timeoutSeconds = DefaultReferenceTimeoutSeconds;
  std::string python = pythonForReferences();
  if (!llvm::sys::fs::can_execute(python))
    return stringError("error: --reference needs a Python with numpy; '" + python +
                       "' is not executable (set ACCELOPT_PYTHON, or give shapes with --inputs)");
  llvm::SmallString<128> outPath, errPath;
  llvm::sys::fs::createTemporaryFile("accelopt-py", "out", outPath);
  llvm::sys::fs::createTemporaryFile("accelopt-py", "err", errPath);
  std::string code = std::string(LiteralFunction) + script;
  llvm::SmallVector<llvm::StringRef, 8> args = {python, "-c", code};
  for (auto &a : scriptArgs) args.push_back(a);
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::None, llvm::StringRef(outPath), llvm::StringRef(errPath)};
  std::string execError;
  bool timedOut = false;
  int rc = runWithTimeout(python, args, redirects, timeoutSeconds, execError, timedOut);
  auto out = llvm::MemoryBuffer::getFile(outPath);
  auto err = llvm::MemoryBuffer::getFile(errPath);
  llvm::sys::fs::remove(outPath);
  llvm::sys::fs::remove(errPath);
  if (timedOut) {
    auto seconds = [](double s) {
      std::ostringstream os;
      os << s; // 3, 0.5, 300
      return os.str();
    };
    return stringError(what + ": error: the reference did not finish within " + seconds(timeoutSeconds) +
                       " s and was stopped (--timeout sets the limit; default " +
                       seconds(DefaultReferenceTimeoutSeconds) + " s)");
  }
  if (rc != 0) {
    std::string detail = err ? (*err)->getBuffer().trim().str() : execError;
    if (detail.find("No module named 'numpy'") != std::string::npos)
      return stringError("error: '" + python + "' has no numpy; install python3-numpy or set ACCELOPT_PYTHON");
    // The last line of the traceback names the problem.
    llvm::StringRef last = llvm::StringRef(detail).rsplit('\n').second;
    if (last.empty()) last = detail;
    return stringError(what + ": error: running the reference failed: " + last);
  }
  return out ? (*out)->getBuffer().str() : std::string();
}

llvm::Expected<InputSpecs> inputsFromReference(llvm::StringRef referencePath,
                                               const std::vector<std::string> &paramNames, double timeoutSeconds) {
  if (!llvm::sys::fs::exists(referencePath)) return stringError(referencePath + ": error: reference file not found");
  auto out = runPython(ReferenceProbe, {referencePath.str()}, referencePath, timeoutSeconds);
  if (!out) return out.takeError();
  nlohmann::json items;
  std::vector<int64_t> grid;
  try {
    nlohmann::json probe = nlohmann::json::parse(*out);
    items = probe.at("inputs");
    for (const auto &g : probe.at("grid")) grid.push_back(g.get<int64_t>());
  } catch (const std::exception &e) {
    return stringError(referencePath + ": error: unexpected output from the reference probe");
  }
  for (int64_t g : grid)
    if (g <= 0 || g > pycore::kMaxGridInstances)
      return stringError(referencePath + ": error: the reference's launch grid " + pycore::gridText(grid) +
                         " needs positive extents of at most " + std::to_string(pycore::kMaxGridInstances) +
                         " instances");
  // Fewer inputs than parameters: the kernel's defaults apply to the rest (kernel(a) of `def kernel(a,
  // scale=None)`); a parameter left without either is the front end's `inputs` error.
  if (items.size() > paramNames.size())
    return stringError(llvm::formatv("{0}: error: the reference gives {1} kernel inputs but the kernel has {2} "
                                     "parameters",
                                     referencePath, items.size(), paramNames.size())
                           .str());
  InputSpecs specs;
  for (size_t i = 0; i < items.size(); ++i) {
    InputSpec s;
    s.name = paramNames[i];
    if (items[i].contains("literal")) {
      s.literal = items[i]["literal"].get<std::string>();
    } else if (items[i].contains("scalar")) {
      s.isScalar = true;
      s.scalar = items[i]["scalar"].get<double>();
      s.isInt = items[i]["scalar"].is_number_integer(); // a Python int stays an int
    } else {
      auto dt = parseDType(items[i]["dtype"].get<std::string>());
      if (!dt)
        return stringError(referencePath + ": error: unsupported dtype '" + items[i]["dtype"].get<std::string>() +
                           "' for input '" + s.name + "'");
      s.dtype = *dt;
      for (auto &d : items[i]["shape"]) s.shape.push_back(d.get<int64_t>());
    }
    specs.push_back(std::move(s));
  }
  specs.grid = std::move(grid);
  return specs;
}

llvm::Expected<ReferenceData> runReference(llvm::StringRef referencePath, uint64_t seed, llvm::StringRef dir,
                                           double timeoutSeconds) {
  if (!llvm::sys::fs::exists(referencePath)) return stringError(referencePath + ": error: reference file not found");
  auto out =
      runPython(ReferenceRunner, {referencePath.str(), std::to_string(seed), dir.str()}, referencePath, timeoutSeconds);
  if (!out) return out.takeError();
  ReferenceData data;
  try {
    auto j = nlohmann::json::parse(*out);
    for (auto &p : j["inputs"]) data.inputFiles.push_back(p.get<std::string>());
    for (auto &v : j["scalars"])
      data.scalars.push_back(v.is_null() ? std::nullopt : std::optional<double>(v.get<double>()));
    for (auto &p : j["outputs"]) data.outputFiles.push_back(p.get<std::string>());
    for (auto &l : j["literals"]) data.literals.push_back(l.get<std::string>());
    data.literals.resize(data.inputFiles.size());
  } catch (const std::exception &) {
    return stringError(referencePath + ": error: unexpected output from the reference runner");
  }
  return data;
}

static std::string defaultManifest() {
  if (const char *p = std::getenv("ACCELOPT_MANIFEST"); p && *p) return p;
  return std::string(ACCELOPT_SOURCE_DIR) + "/nkibench/manifest.json";
}

llvm::Expected<std::vector<SuiteCase>> loadSuite(const SuiteLocation &where) {
  std::string manifest = where.manifestPath.empty() ? defaultManifest() : where.manifestPath;
  auto buf = llvm::MemoryBuffer::getFile(manifest);
  if (!buf) return stringError(manifest + ": error: cannot read suite manifest: " + buf.getError().message());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse((*buf)->getBuffer().str());
  } catch (const std::exception &e) { return stringError(manifest + ": error: invalid JSON: " + e.what()); }
  llvm::SmallString<256> manifestDir(manifest);
  llvm::sys::path::remove_filename(manifestDir);
  if (manifestDir.empty()) manifestDir = ".";
  std::string nkibench = where.nkibenchRoot;
  if (nkibench.empty())
    if (const char *p = std::getenv("ACCELOPT_NKIBENCH"); p && *p) nkibench = p;
  if (nkibench.empty()) {
    // nkibench_default_root is relative to the repository root (the manifest's parent dir).
    llvm::SmallString<256> root(manifestDir);
    llvm::sys::path::append(root, "..", j.value("nkibench_default_root", "nkibench/upstream"));
    llvm::sys::path::remove_dots(root, /*remove_dot_dot=*/true);
    nkibench = root.str().str();
  }
  std::vector<SuiteCase> cases;
  try {
    for (auto &c : j.at("cases")) {
      SuiteCase sc;
      sc.name = c.at("name").get<std::string>();
      sc.problem = c.value("problem", "");
      std::string root = c.value("root", "local") == "nkibench" ? nkibench : manifestDir.str().str();
      auto resolve = [&](const std::string &rel) {
        if (rel.empty()) return std::string();
        llvm::SmallString<256> p(root);
        llvm::sys::path::append(p, rel);
        llvm::sys::path::remove_dots(p, true);
        return p.str().str();
      };
      sc.kernelPath = resolve(c.value("kernel", ""));
      sc.referencePath = resolve(c.value("reference", ""));
      auto specs = parseInputSpecs(c.value("inputs", ""));
      if (!specs)
        return stringError(manifest + ": error: case '" + sc.name + "': " + llvm::toString(specs.takeError()));
      sc.inputs = std::move(*specs);
      if (c.contains("init"))
        for (auto &s : sc.inputs)
          if (c["init"].contains(s.name)) s.init = c["init"][s.name].get<std::string>();
      if (c.contains("values"))
        for (auto &[k, v] : c["values"].items()) sc.values.push_back({k, v.get<double>()});
      sc.pair = c.value("pair", "");
      sc.variant = c.value("variant", "");
      cases.push_back(std::move(sc));
    }
  } catch (const std::exception &e) { return stringError(manifest + ": error: malformed manifest: " + e.what()); }
  return cases;
}

llvm::Expected<SuiteCase> findCase(const SuiteLocation &where, llvm::StringRef name) {
  auto cases = loadSuite(where);
  if (!cases) return cases.takeError();
  std::string known;
  for (auto &c : *cases) {
    if (c.name == name) return c;
    known += (known.empty() ? "" : ", ") + c.name;
  }
  return stringError("error: no case '" + name + "' in the suite manifest (cases: " + known + ")");
}

} // namespace accelopt::nki
