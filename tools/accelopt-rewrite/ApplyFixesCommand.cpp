// accelopt-rewrite apply-fixes FIXES.yaml|DIR...: applies clang-apply-replacements YAML to Python
// sources byte-exactly. clang-apply-replacements itself runs clang-format's C++ cleanup around every
// fix, which changes Python (`(8, )` becomes `(8 )`). Per source file: identical replacements from
// several fix files count once, overlapping ones are a conflict and leave that file untouched, and
// the file is rewritten atomically only if it still holds the text the fixes were made for.
#include "Command.h"

#include "Rewrite/Rewrite.h"
#include "Syntax/PyAST.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace accelopt::cli {
namespace {

cl::SubCommand ApplyFixesCmd("apply-fixes", "Apply clang-apply-replacements YAML (from --export-fixes) to Python "
                                            "sources byte-exactly (exit 0 applied, 1 conflicts, 2 bad input)");
cl::list<std::string> Paths(cl::Positional, cl::desc("<FIXES.yaml | DIR>..."), cl::sub(ApplyFixesCmd),
                            cl::cat(category()));

int usage(const std::string &msg) {
  llvm::errs() << "accelopt-rewrite apply-fixes: " << msg << "\n";
  return 2;
}

/// The YAML files named, and every *.yaml below the directories named (as clang-apply-replacements).
llvm::Expected<std::vector<std::string>> yamlFiles() {
  std::vector<std::string> out;
  for (const std::string &p : Paths) {
    if (!llvm::sys::fs::is_directory(p)) {
      if (!llvm::sys::fs::exists(p))
        return llvm::createStringError(std::make_error_code(std::errc::no_such_file_or_directory),
                                       p + ": error: No such file or directory");
      out.push_back(p);
      continue;
    }
    std::error_code ec;
    std::vector<std::string> found;
    for (llvm::sys::fs::recursive_directory_iterator it(p, ec), end; it != end && !ec; it.increment(ec))
      if (llvm::sys::path::extension(it->path()) == ".yaml" && llvm::sys::fs::is_regular_file(it->path()))
        found.push_back(it->path());
    if (ec) return llvm::createStringError(ec, p + ": error: " + ec.message());
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

const char *breaksSyntax(const std::string &path, const std::string &before, const std::string &after) {
  auto parsedBefore = syntax::SourceBuffer::fromText(path, before);
  auto parsedAfter = syntax::SourceBuffer::fromText(path, after);
  if (!parsedBefore || !parsedAfter) {
    llvm::consumeError(parsedBefore.takeError());
    llvm::consumeError(parsedAfter.takeError());
    return nullptr; // not text accelopt reads: nothing to compare
  }
  bool cleanBefore = syntax::Module::parse(std::move(*parsedBefore))->errors().empty();
  bool cleanAfter = syntax::Module::parse(std::move(*parsedAfter))->errors().empty();
  return cleanBefore && !cleanAfter ? "the result is not valid Python" : nullptr;
}

int runApplyFixes() {
  if (Paths.empty()) return usage("error: give fix files (FIXES.yaml) or directories holding them");
  auto files = yamlFiles();
  if (!files) return usage(llvm::toString(files.takeError()));
  auto sources = rewrite::readFixes(*files);
  if (!sources) return usage(llvm::toString(sources.takeError()));

  int changed = 0, replacements = 0, failed = 0;
  for (rewrite::FixFileEdits &source : *sources) {
    clang::tooling::Replacements edits;
    std::string conflict;
    for (const rewrite::FixFileEdits::Edit &e : source.edits) {
      bool duplicate = std::any_of(edits.begin(), edits.end(),
                                   [&](const clang::tooling::Replacement &r) { return r == e.replacement; });
      if (duplicate) continue;
      if (llvm::Error err = edits.add(e.replacement)) {
        llvm::consumeError(std::move(err));
        conflict = llvm::formatv("the fix of {0} at offset {1} ({2}) overlaps another fix", e.diagnostic,
                                 e.replacement.getOffset(), e.yamlFile)
                       .str();
        break;
      }
    }
    if (!conflict.empty()) {
      llvm::errs() << source.path << ": error: conflicting fixes: " << conflict << "; file not changed\n";
      ++failed;
      continue;
    }
    auto buf = llvm::MemoryBuffer::getFile(source.path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (!buf) {
      llvm::errs() << source.path << ": error: cannot read: " << buf.getError().message() << "\n";
      ++failed;
      continue;
    }
    std::string original = (*buf)->getBuffer().str();
    auto text = clang::tooling::applyAllReplacements(original, edits);
    if (!text) {
      llvm::errs() << source.path << ": error: the fixes do not fit the file (was it edited since they were made?): "
                   << llvm::toString(text.takeError()) << "\n";
      ++failed;
      continue;
    }
    if (*text == original) continue;
    // A replacement records an offset, not the text it replaces: fixes applied to a file that changed
    // since they were made (or applied twice) splice text into the wrong place. Python that parsed
    // before and not after is refused.
    if (const char *why = breaksSyntax(source.path, original, *text)) {
      llvm::errs() << source.path << ": error: the fixes do not fit the file (" << why
                   << "); was it edited since they were made, or were they applied already? file not changed\n";
      ++failed;
      continue;
    }
    if (llvm::Error err = syntax::rewriteFileInPlace(source.path, original, *text)) {
      llvm::errs() << llvm::toString(std::move(err)) << "\n";
      ++failed;
      continue;
    }
    ++changed;
    replacements += int(edits.size());
  }
  llvm::errs() << "apply-fixes: " << changed << (changed == 1 ? " file" : " files") << " changed, " << replacements
               << (replacements == 1 ? " replacement" : " replacements") << " applied, " << failed
               << (failed == 1 ? " file" : " files") << " with conflicts or errors\n";
  return failed ? 1 : 0;
}

RegisterCommand Registration(ApplyFixesCmd, runApplyFixes);

} // namespace
} // namespace accelopt::cli
