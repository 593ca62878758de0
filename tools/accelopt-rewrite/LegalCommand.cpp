// accelopt-rewrite legal: every single rewrite op that applies to the kernel
// (legal, re-parses and verifies): the planner's menu.
#include "Command.h"

#include "Rewrite/Rewrite.h"

#include "llvm/Support/raw_ostream.h"

namespace accelopt::cli {
namespace {

cl::SubCommand LegalCmd("legal", "List every legal single rewrite op with a one-line description");
InputOptions Inputs(LegalCmd);
FormatOption Format(LegalCmd);
cl::opt<std::string> File(cl::Positional, cl::desc("<kernel.py>"), cl::sub(LegalCmd), cl::cat(category()));
cl::opt<std::string> OnlyOp("only", cl::desc("List only ops of this kind (e.g. split)"), cl::value_desc("OP"),
                            cl::sub(LegalCmd), cl::cat(category()));
cl::opt<bool> Rejected("rejected",
                       cl::desc("List instead the op instances whose own check passes but whose result the engine "
                                "refuses (does not parse, or verifies with a new error): an op's emitter defect"),
                       cl::sub(LegalCmd), cl::cat(category()));
ListOption ListOps(LegalCmd, "list-ops",
                   "Print every rewrite op with its fields, from the ops' declarations (no kernel needed)");

int runLegal() {
  if (ListOps.given()) return ListOps.print(rewrite::renderOpCatalogue);
  auto file = Inputs.load(File);
  if (!file) return reportError(file.takeError());
  if (!OnlyOp.empty() && !rewrite::findOp(OnlyOp)) {
    llvm::errs() << "accelopt-rewrite legal: error: unknown op '" << OnlyOp << "'\n";
    return 2;
  }
  rewrite::CandidateOptions opts;
  opts.inputs = Inputs.resolvedInputs ? &*Inputs.resolvedInputs : nullptr;
  opts.kernelName = Inputs.kernel;
  if (Rejected) {
    auto prepared = rewrite::PreparedKernel::prepare(file->source(), opts);
    if (!prepared) return reportError(prepared.takeError());
    size_t n = 0;
    auto wanted = [](llvm::StringRef kind) { return OnlyOp.empty() || kind == OnlyOp.getValue(); };
    for (const rewrite::RejectedOp &r : rewrite::rejectedOps(*prepared, wanted)) {
      llvm::outs() << rewrite::formatOp(r.op) << "  rejected: " << r.reason << "\n";
      ++n;
    }
    llvm::outs() << "# " << n << " rejected op instance(s) for kernel '" << file->kernels.front().name << "' in "
                 << file->source().path() << "\n";
    return 0;
  }
  auto legal = rewrite::legalOps(file->source(), opts);
  if (!legal) return reportError(legal.takeError());
  std::vector<rewrite::LegalOp> shown;
  for (auto &l : *legal)
    if (OnlyOp.empty() || l.op["op"] == OnlyOp.getValue()) shown.push_back(l);
  if (Format.format == OutputFormat::Json) {
    nlohmann::json out;
    out["file"] = file->source().path().str();
    out["kernel"] = file->kernels.front().name;
    out["count"] = shown.size();
    out["ops"] = nlohmann::json::array();
    for (auto &l : shown) out["ops"].push_back({{"op", l.op}, {"description", l.description}});
    llvm::outs() << out.dump(2) << "\n";
    return 0;
  }
  for (auto &l : shown) llvm::outs() << rewrite::formatOp(l.op) << "  " << l.description << "\n";
  llvm::outs() << "# " << shown.size() << (shown.size() == 1 ? " legal op" : " legal ops") << " for kernel '"
               << file->kernels.front().name << "' in " << file->source().path() << "\n";
  return 0;
}

RegisterCommand Registration(LegalCmd, runLegal);

} // namespace
} // namespace accelopt::cli
