// --export-fixes: clang-apply-replacements YAML. The only translation unit that
// includes the (slow) YAML traits of clang Tooling.
#include "Rewrite/Rewrite.h"

#include "clang/Tooling/Core/Diagnostic.h"
#include "clang/Tooling/DiagnosticsYaml.h"
#include "clang/Tooling/ReplacementsYaml.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/YAMLTraits.h"

#include <map>

namespace accelopt::rewrite {

llvm::Error exportFixes(llvm::StringRef yamlPath, llvm::StringRef mainSourceFile,
                        llvm::ArrayRef<FixDiagnostic> diagnostics) {
  clang::tooling::TranslationUnitDiagnostics tu;
  tu.MainSourceFile = mainSourceFile.str();
  for (const FixDiagnostic &d : diagnostics) {
    clang::tooling::DiagnosticMessage msg(d.message);
    msg.FilePath = d.absPath;
    msg.FileOffset = d.offset;
    // Replacements carry the path they were made with; the YAML needs the absolute one.
    clang::tooling::Replacements fixed;
    for (const auto &r : d.edits)
      if (auto err =
              fixed.add(clang::tooling::Replacement(d.absPath, r.getOffset(), r.getLength(), r.getReplacementText())))
        return err;
    if (!fixed.empty()) msg.Fix.insert({d.absPath, std::move(fixed)});
    tu.Diagnostics.emplace_back(d.name, msg, llvm::SmallVector<clang::tooling::DiagnosticMessage, 1>{},
                                clang::tooling::Diagnostic::Warning, "");
  }
  // clang-apply-replacements reads this file too, but it runs clang-format's C++ cleanup around every
  // fix, which edits Python: a tuple `(8, )` next to a fix becomes `(8 )`.
  std::string out = "# accelopt fixes for Python sources. Apply them with `accelopt-rewrite apply-fixes FILE|DIR`:\n"
                    "# clang-apply-replacements also runs clang-format's C++ cleanup, which changes Python code\n"
                    "# (a tuple `(8, )` next to a fix becomes `(8 )`).\n";
  {
    llvm::raw_string_ostream os(out);
    llvm::yaml::Output yaml(os);
    yaml << tu;
  }
  return syntax::writeFileAtomically(yamlPath, out);
}

llvm::Expected<std::vector<FixFileEdits>> readFixes(llvm::ArrayRef<std::string> yamlFiles) {
  // Per source file, every replacement with the YAML file it came from, in file order.
  std::map<std::string, FixFileEdits> byFile;
  for (const std::string &yamlPath : yamlFiles) {
    auto buf = llvm::MemoryBuffer::getFile(yamlPath);
    if (!buf)
      return llvm::createStringError(buf.getError(), yamlPath + ": error: cannot read: " + buf.getError().message());
    clang::tooling::TranslationUnitDiagnostics tu;
    llvm::yaml::Input yaml((*buf)->getBuffer());
    yaml >> tu;
    if (yaml.error())
      return llvm::createStringError(yaml.error(), yamlPath + ": error: not clang-apply-replacements YAML (" +
                                                       yaml.error().message() + ")");
    for (const clang::tooling::Diagnostic &d : tu.Diagnostics)
      for (const auto &fix : d.Message.Fix)
        for (const clang::tooling::Replacement &r : fix.getValue()) {
          FixFileEdits &f = byFile[r.getFilePath().str()];
          f.path = r.getFilePath().str();
          f.edits.push_back({r, yamlPath, d.DiagnosticName});
        }
  }
  std::vector<FixFileEdits> out;
  for (auto &[path, f] : byFile) out.push_back(std::move(f));
  return out;
}

llvm::Error exportFixes(llvm::StringRef yamlPath, llvm::StringRef absPath, llvm::StringRef diagnosticName,
                        llvm::StringRef message, uint32_t offset, const clang::tooling::Replacements &edits) {
  FixDiagnostic d{diagnosticName.str(), message.str(), absPath.str(), offset, edits};
  return exportFixes(yamlPath, absPath, llvm::ArrayRef<FixDiagnostic>(d));
}

} // namespace accelopt::rewrite
