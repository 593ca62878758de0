#include "Command.h"
#include "Syntax/Errors.h"

#include "NKI/PyCore.h"

#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

namespace accelopt::cli {

cl::OptionCategory &category() {
  static cl::OptionCategory cat("accelopt options");
  return cat;
}

std::vector<Command> &commands() {
  static std::vector<Command> list;
  return list;
}

InputOptions::InputOptions(cl::SubCommand &sub)
    : kernel("kernel", cl::desc("Select one @nki.jit function by name (default: every kernel)"), cl::value_desc("NAME"),
             cl::sub(sub), cl::cat(category())),
      inputs("inputs", cl::desc("Input shapes: 'a=f32[32,128],b=bf16[40,128],eps=0.001'"), cl::value_desc("SPEC"),
             cl::sub(sub), cl::cat(category())),
      reference("reference", cl::desc("NKIBench-style numpy reference giving the inputs (runs Python)"),
                cl::value_desc("REF.py"), cl::sub(sub), cl::cat(category())),
      caseName("case", cl::desc("A case of the suite manifest (kernel file and inputs)"), cl::value_desc("NAME"),
               cl::sub(sub), cl::cat(category())),
      manifest("manifest", cl::desc("Suite manifest (default: nkibench/manifest.json)"), cl::value_desc("FILE"),
               cl::sub(sub), cl::cat(category()), cl::Hidden),
      nkibench("nkibench", cl::desc("NKIBench checkout (default: the vendored nkibench/upstream)"),
               cl::value_desc("DIR"), cl::sub(sub), cl::cat(category()), cl::Hidden),
      grid("grid",
           cl::desc("Launch grid the kernel runs in, as kernel[G0, G1](...) (default: the reference's `grid`, else "
                    "the file's own launch, else one instance)"),
           cl::value_desc("G0[,G1...]"), cl::sub(sub), cl::cat(category())) {}

FormatOption::FormatOption(cl::SubCommand &sub)
    : format("format", cl::desc("Output format"),
             cl::values(clEnumValN(OutputFormat::Text, "text", "human-readable (default)"),
                        clEnumValN(OutputFormat::Json, "json", "JSON")),
             cl::init(OutputFormat::Text), cl::sub(sub), cl::cat(category())) {}

ListOption::ListOption(cl::SubCommand &sub, const char *name, const char *what)
    : format(llvm::StringRef(name), cl::desc(what), cl::value_desc("text|markdown|json"), cl::ValueOptional,
             cl::sub(sub), cl::cat(category())) {}

int ListOption::print(const std::function<std::string(llvm::StringRef)> &render) const {
  std::string f = format.empty() ? "text" : format.getValue();
  if (f != "text" && f != "markdown" && f != "json") {
    llvm::errs() << "accelopt-rewrite: error: --" << format.ArgStr << " takes text, markdown or json, not '" << f
                 << "'\n";
    return 2;
  }
  llvm::outs() << render(f);
  return 0;
}

llvm::Expected<nki::KernelFile> InputOptions::load(llvm::StringRef file) const {
  int sources = !inputs.empty() + !reference.empty() + !caseName.empty();
  if (sources > 1) return stringError("error: give input shapes with only one of --inputs, --reference, --case");
  std::string path = file.str();
  std::optional<nki::InputSpecs> specs;
  resolvedReference.clear();
  if (!caseName.empty()) {
    auto c = nki::findCase(suite(), caseName);
    if (!c) return c.takeError();
    if (path.empty()) path = c->kernelPath;
    specs = c->inputs;
    resolvedReference = c->referencePath;
  }
  if (path.empty()) return stringError("error: no kernel file given");
  if (!inputs.empty()) {
    auto parsed = nki::parseInputSpecs(inputs);
    if (!parsed) return parsed.takeError();
    specs = std::move(*parsed);
  }
  nki::FrontEndOptions opts;
  opts.kernelName = kernel;
  if (!reference.empty()) {
    // Parameter names come from the kernel itself.
    auto shapeless = nki::loadKernelFile(path, opts);
    if (!shapeless) return shapeless.takeError();
    if (kernel.empty()) nki::keepEntryKernels(*shapeless);
    std::vector<std::string> names;
    for (auto &p : shapeless->kernels.front().params) names.push_back(p.name);
    auto ref = nki::inputsFromReference(reference, names, referenceTimeoutSeconds);
    if (!ref) return ref.takeError();
    specs = std::move(*ref);
    resolvedReference = reference;
  }
  if (!grid.empty()) {
    nki::pycore::ParsedGrid g = nki::pycore::parseGrid(grid);
    if (!g.error.empty()) return stringError("error: --grid: " + g.error);
    opts.grid = g.dims;
    if (specs) specs->grid = g.dims;
  }
  resolvedInputs = specs;
  opts.inputs = resolvedInputs ? &*resolvedInputs : nullptr;
  auto loaded = nki::loadKernelFile(path, opts);
  // The shapes are the entry kernel's, not those of the kernels it calls.
  if (loaded && opts.inputs && kernel.empty()) nki::keepEntryKernels(*loaded);
  return loaded;
}

int reportError(llvm::Error err) {
  llvm::handleAllErrors(std::move(err), [](const llvm::ErrorInfoBase &e) {
    std::string msg = e.message();
    llvm::errs() << "accelopt-rewrite: " << msg;
    if (msg.empty() || msg.back() != '\n') llvm::errs() << "\n";
  });
  return 2;
}

} // namespace accelopt::cli
