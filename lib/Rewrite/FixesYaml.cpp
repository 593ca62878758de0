// --export-fixes: clang-apply-replacements YAML. The only translation unit that
// includes the (slow) YAML traits of clang Tooling.
#include "Rewrite/Rewrite.h"

#include "clang/Tooling/Core/Diagnostic.h"
#include "clang/Tooling/DiagnosticsYaml.h"
#include "clang/Tooling/ReplacementsYaml.h"

#include "llvm/Support/YAMLTraits.h"

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
      if (auto err = fixed.add(clang::tooling::Replacement(d.absPath, r.getOffset(), r.getLength(),
                                                           r.getReplacementText())))
        return err;
    if (!fixed.empty()) msg.Fix.insert({d.absPath, std::move(fixed)});
    tu.Diagnostics.emplace_back(d.name, msg, llvm::SmallVector<clang::tooling::DiagnosticMessage, 1>{},
                                clang::tooling::Diagnostic::Warning, "");
  }
  std::string out;
  {
    llvm::raw_string_ostream os(out);
    llvm::yaml::Output yaml(os);
    yaml << tu;
  }
  return syntax::writeFileAtomically(yamlPath, out);
}

llvm::Error exportFixes(llvm::StringRef yamlPath, llvm::StringRef absPath, llvm::StringRef diagnosticName,
                        llvm::StringRef message, uint32_t offset, const clang::tooling::Replacements &edits) {
  FixDiagnostic d{diagnosticName.str(), message.str(), absPath.str(), offset, edits};
  return exportFixes(yamlPath, absPath, llvm::ArrayRef<FixDiagnostic>(d));
}

} // namespace accelopt::rewrite
