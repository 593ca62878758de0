// --export-fixes: clang-apply-replacements YAML. The only translation unit that
// includes the (slow) YAML traits of clang Tooling.
#include "Rewrite/Rewrite.h"

#include "clang/Tooling/Core/Diagnostic.h"
#include "clang/Tooling/DiagnosticsYaml.h"
#include "clang/Tooling/ReplacementsYaml.h"

#include "llvm/Support/YAMLTraits.h"

namespace accelopt::rewrite {

llvm::Error exportFixes(llvm::StringRef yamlPath, llvm::StringRef absPath, llvm::StringRef diagnosticName,
                        llvm::StringRef message, uint32_t offset, const clang::tooling::Replacements &edits) {
  clang::tooling::TranslationUnitDiagnostics tu;
  tu.MainSourceFile = absPath.str();
  clang::tooling::DiagnosticMessage msg(message);
  msg.FilePath = absPath.str();
  msg.FileOffset = offset;
  // Replacements carry the path they were made with; the YAML needs the absolute one.
  clang::tooling::Replacements fixed;
  for (const auto &r : edits)
    if (auto err = fixed.add(clang::tooling::Replacement(absPath, r.getOffset(), r.getLength(), r.getReplacementText())))
      return err;
  if (!fixed.empty()) msg.Fix.insert({absPath, std::move(fixed)});
  tu.Diagnostics.emplace_back(diagnosticName, msg, llvm::SmallVector<clang::tooling::DiagnosticMessage, 1>{},
                              clang::tooling::Diagnostic::Warning, "");
  std::string out;
  {
    llvm::raw_string_ostream os(out);
    llvm::yaml::Output yaml(os);
    yaml << tu;
  }
  return syntax::writeFileAtomically(yamlPath, out);
}

} // namespace accelopt::rewrite
