// accelopt-rewrite apply: apply a candidate (one op or a list) atomically.
// Exit 0 applied, 1 refused, 2 bad input.
#include "Command.h"

#include "Rewrite/Rewrite.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace accelopt::cli {
namespace {

cl::SubCommand ApplyCmd("apply", "Apply rewrite ops to a kernel (exit 0 applied, 1 refused, 2 bad input)");
InputOptions Inputs(ApplyCmd);
cl::opt<std::string> File(cl::Positional, cl::desc("<kernel.py>"), cl::sub(ApplyCmd), cl::cat(category()));
cl::opt<std::string> OpText("op", cl::desc("One op as JSON, e.g. '{\"op\":\"split\",\"loop\":\"L3\",\"factor\":4}'"),
                            cl::value_desc("JSON"), cl::sub(ApplyCmd), cl::cat(category()));
cl::opt<std::string> OpsFile("ops", cl::desc("A JSON file with one op or an array of ops (a candidate)"),
                             cl::value_desc("FILE.json"), cl::sub(ApplyCmd), cl::cat(category()));
cl::opt<std::string> Output("o", cl::desc("Write the rewritten kernel to this file (atomically)"),
                            cl::value_desc("OUT"), cl::sub(ApplyCmd), cl::cat(category()));
cl::opt<bool> InPlace("in-place", cl::desc("Rewrite the kernel file in place (atomically)"), cl::sub(ApplyCmd),
                      cl::cat(category()));
cl::opt<bool> Diff("diff", cl::desc("Print a unified diff instead of the rewritten kernel"), cl::sub(ApplyCmd),
                   cl::cat(category()));
cl::opt<std::string> ExportFixes("export-fixes", cl::desc("Write the edits as clang-apply-replacements YAML"),
                                 cl::value_desc("FIXES.yaml"), cl::sub(ApplyCmd), cl::cat(category()));
cl::opt<bool> Quiet("quiet", cl::desc("Do not print the applied ops' descriptions to stderr"), cl::sub(ApplyCmd),
                    cl::cat(category()));

int usage(const std::string &msg) {
  llvm::errs() << "accelopt-rewrite apply: error: " << msg << "\n";
  return 2;
}

int runApply() {
  if (OpText.empty() == OpsFile.empty()) return usage("give exactly one of --op JSON and --ops FILE.json");
  if (int(!Output.empty()) + int(InPlace) + int(Diff) + int(!ExportFixes.empty()) > 1)
    return usage("-o, --in-place, --diff and --export-fixes exclude each other");
  std::string opsText = OpText;
  if (!OpsFile.empty()) {
    auto buf = llvm::MemoryBuffer::getFile(OpsFile);
    if (!buf) return usage(OpsFile + ": " + buf.getError().message());
    opsText = (*buf)->getBuffer().str();
  }
  auto ops = rewrite::parseOps(opsText);
  if (!ops) return reportError(ops.takeError());

  auto file = Inputs.load(File);
  if (!file) return reportError(file.takeError());
  const syntax::SourceBuffer &src = file->source();
  if (InPlace && src.path().empty()) return usage("--in-place needs a kernel file");

  rewrite::CandidateOptions opts;
  opts.inputs = Inputs.resolvedInputs ? &*Inputs.resolvedInputs : nullptr;
  opts.kernelName = Inputs.kernel;
  rewrite::CandidateResult res = rewrite::applyCandidate(src, *ops, opts);
  if (res.status != rewrite::Status::Applied) {
    llvm::errs() << res.message;
    return res.status == rewrite::Status::Refused ? 1 : 2;
  }
  if (!Quiet)
    for (size_t i = 0; i < res.descriptions.size(); ++i)
      llvm::errs() << src.path() << ": applied op " << i + 1 << ": " << res.descriptions[i] << "\n";

  if (Diff) {
    llvm::outs() << rewrite::unifiedDiff(src.text(), res.text, src.path(), src.path());
    return 0;
  }
  if (InPlace || !Output.empty()) {
    llvm::Error err = InPlace ? syntax::rewriteFileInPlace(src.path(), src.text(), res.text)
                              : syntax::writeFileAtomically(Output, res.text);
    if (err) {
      llvm::errs() << "accelopt-rewrite: " << llvm::toString(std::move(err)) << "\n";
      return 2;
    }
    return 0;
  }
  if (!ExportFixes.empty()) {
    llvm::SmallString<256> abs(src.path());
    if (auto ec = llvm::sys::fs::make_absolute(abs)) return usage(ec.message());
    llvm::sys::path::remove_dots(abs, /*remove_dot_dot=*/true);
    std::string diagName = ops->size() == 1 ? "accelopt-" + (*ops)[0]["op"].get<std::string>() : "accelopt-candidate";
    std::string message;
    for (auto &d : res.descriptions) message += (message.empty() ? "" : "; ") + d;
    uint32_t offset = res.edits.empty() ? 0 : res.edits.begin()->getOffset();
    if (auto err = rewrite::exportFixes(ExportFixes, abs, diagName, message, offset, res.edits)) {
      llvm::errs() << "accelopt-rewrite: " << llvm::toString(std::move(err)) << "\n";
      return 2;
    }
    return 0;
  }
  llvm::outs() << res.text;
  return 0;
}

RegisterCommand Registration(ApplyCmd, runApply);

} // namespace
} // namespace accelopt::cli
