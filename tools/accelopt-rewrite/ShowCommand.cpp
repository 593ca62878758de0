// accelopt-rewrite show: the kernel listing with stable ids and the tensor table.
#include "Command.h"

#include "NKI/Dialect.h"
#include "NKI/Listing.h"

#include "llvm/Support/raw_ostream.h"

namespace accelopt::cli {
namespace {

cl::SubCommand ShowCmd("show", "Print each kernel with loop (L#) and statement (S#) ids and its tensors");
InputOptions Inputs(ShowCmd);
FormatOption Format(ShowCmd);
cl::opt<std::string> File(cl::Positional, cl::desc("<kernel.py>"), cl::sub(ShowCmd), cl::cat(category()));

int runShow() {
  auto file = Inputs.load(File);
  if (!file) return reportError(file.takeError());
  // The dialect the file's imports select (docs/migrate.md turns neuronxcc.nki 0.1 into nki 0.3).
  std::string dialect(nki::dialectName(nki::dialectOfImports(*file->module)));
  if (Format.format == OutputFormat::Json) {
    nlohmann::json out;
    out["file"] = file->source().path().str();
    out["dialect"] = dialect;
    out["kernels"] = nlohmann::json::array();
    for (auto &k : file->kernels) out["kernels"].push_back(nki::kernelToJson(k));
    llvm::outs() << out.dump(2) << "\n";
    return 0;
  }
  llvm::outs() << "dialect: " << dialect << "\n";
  bool first = true;
  for (auto &k : file->kernels) {
    if (!first) llvm::outs() << "\n";
    first = false;
    nki::printListing(llvm::outs(), k);
  }
  return 0;
}

RegisterCommand Registration(ShowCmd, runShow);

} // namespace
} // namespace accelopt::cli
