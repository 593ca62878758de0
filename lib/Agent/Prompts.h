// Prompt templates and their rendering.
//
// Templates live in prompts/*.txt (compiled into the library; a config's
// prompt_dir overrides them file by file). The renderer is deliberately tiny:
//   {{name}}               the value of `name`
//   {{#name}}...{{/name}}  the inner text when `name` is non-empty
//   {{^name}}...{{/name}}  the inner text when `name` is empty
// An unknown name is an error, so a typo never yields a silently empty prompt.
// Lines `[system]`, `[user]`, `[assistant]` split a rendered template into chat
// messages (text before the first marker is a user message).
#pragma once

#include "Agent/ChatClient.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace accelopt::nki {
struct Kernel;
}

namespace accelopt::agent {

using PromptVars = std::map<std::string, std::string>;

llvm::Expected<std::string> renderTemplate(llvm::StringRef tmpl, const PromptVars &vars);
std::vector<ChatMessage> splitMessages(llvm::StringRef rendered);

/// One entry of the legal-rewrite menu: a JSON op and what it would do.
struct MenuEntry {
  nlohmann::json op;       ///< {"op":"split","loop":"L2","factor":2}
  std::string description; ///< "split L2 (i2, trip 4) by 2"
};

/// A lesson from an earlier pair (speedup < 1: a rewrite that hurt).
struct Experience {
  std::string summary;
  nlohmann::json ops = nlohmann::json::array();
  double speedup = 1.0;
};

/// Everything the planner and the executor see about the current kernel.
struct KernelContext {
  std::string listing;    ///< nki::printListing text (ids L#, S#)
  nlohmann::json profile; ///< profile object (latency, hbm_read_bytes, ..., backend)
  std::string problem;    ///< numpy reference source ("" = none)
  std::vector<MenuEntry> menu;
  std::vector<Experience> experiences;
};

/// nki::printListing into a string.
std::string listingText(const nki::Kernel &kernel);
/// An op as compact JSON with "op" first, then ids, then parameters.
std::string opText(const nlohmann::json &op);
/// A list of ops, one per line.
std::string opsText(const nlohmann::json &ops);
/// One line per entry: `- {"op":...}  description`.
std::string renderMenu(const std::vector<MenuEntry> &menu);
/// Numbered lessons with their speedups and ops.
std::string renderExperiences(const std::vector<Experience> &experiences);
/// Pretty JSON of the profile.
std::string renderProfile(const nlohmann::json &profile);

/// The set of templates in use: built-in ones, optionally overridden by files
/// of a directory (`<dir>/<name>.txt`).
class PromptLibrary {
public:
  static PromptLibrary builtin();
  /// Built-in templates, overridden by the files present in `dir`. Fails when
  /// the directory does not exist.
  static llvm::Expected<PromptLibrary> withOverrides(llvm::StringRef dir);

  llvm::Expected<std::string> get(llvm::StringRef name) const;
  /// Renders template `name` and splits it into messages.
  llvm::Expected<std::vector<ChatMessage>> render(llvm::StringRef name, const PromptVars &vars) const;

  // The prompts of the three roles.
  llvm::Expected<std::vector<ChatMessage>> planner(const KernelContext &ctx, unsigned n) const;
  llvm::Expected<std::vector<ChatMessage>> executor(const KernelContext &ctx, llvm::StringRef plan) const;
  /// The follow-up message after refused answers (all reasons so far, numbered).
  llvm::Expected<std::vector<ChatMessage>> executorRetry(const std::vector<std::string> &refusals) const;
  /// `speedup` = latency before / latency after: >= 1 asks why the rewrite
  /// helped, < 1 (a fast -> slow pair) asks why it hurt.
  llvm::Expected<std::vector<ChatMessage>> summarizer(llvm::StringRef beforeListing, llvm::StringRef afterListing,
                                                      const nlohmann::json &ops, double speedup) const;

private:
  std::map<std::string, std::string> Templates;
};

/// The dry run: every prompt of one search step, as the endpoints would see
/// them, in a readable form (`=== planner: system ===` headers). Nothing is sent.
llvm::Error dryRunPrompts(llvm::raw_ostream &os, const PromptLibrary &prompts, const KernelContext &ctx,
                          unsigned numPlans, llvm::StringRef examplePlan, llvm::StringRef exampleFastListing,
                          const nlohmann::json &exampleOps, double exampleSpeedup);

/// Writes messages as `=== <title>: <role> ===\n<content>\n`.
void printMessages(llvm::raw_ostream &os, llvm::StringRef title, const std::vector<ChatMessage> &messages);

} // namespace accelopt::agent
