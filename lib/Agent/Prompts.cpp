#include "Agent/Prompts.h"

#include "Agent/EmbeddedPrompts.h"
#include "NKI/Listing.h"
#include "Rewrite/Rewrite.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace accelopt::agent {

static llvm::Error renderError(const llvm::Twine &msg) {
  return llvm::make_error<llvm::StringError>(msg.str(), llvm::inconvertibleErrorCode());
}

/// The tag spanning [begin, end) is the only non-blank text on its line and a
/// newline follows it.
static bool standaloneTag(llvm::StringRef tmpl, size_t begin, size_t end) {
  if (end >= tmpl.size() || tmpl[end] != '\n') return false;
  size_t lineStart = tmpl.rfind('\n', begin);
  lineStart = lineStart == llvm::StringRef::npos ? 0 : lineStart + 1;
  return tmpl.slice(lineStart, begin).trim().empty();
}

static llvm::Error renderInto(llvm::StringRef tmpl, const PromptVars &vars, std::string &out) {
  size_t pos = 0;
  while (pos < tmpl.size()) {
    size_t open = tmpl.find("{{", pos);
    if (open == llvm::StringRef::npos) {
      out += tmpl.substr(pos).str();
      break;
    }
    out += tmpl.slice(pos, open).str();
    size_t close = tmpl.find("}}", open + 2);
    if (close == llvm::StringRef::npos)
      return renderError("template: '{{' at offset " + llvm::Twine(open) + " is never closed");
    llvm::StringRef tag = tmpl.slice(open + 2, close).trim();
    pos = close + 2;
    if (tag.empty()) return renderError("template: empty placeholder at offset " + llvm::Twine(open));
    char sigil = tag.front();
    if (sigil == '/') return renderError("template: '{{" + tag + "}}' closes a section that is not open");
    bool section = sigil == '#' || sigil == '^';
    llvm::StringRef name = section ? tag.drop_front().trim() : tag;
    auto it = vars.find(name.str());
    if (it == vars.end()) return renderError("template: unknown placeholder '" + name + "'");
    if (!section) {
      out += it->second;
      continue;
    }
    std::string closing = ("{{/" + name + "}}").str();
    size_t end = tmpl.find(closing, pos);
    if (end == llvm::StringRef::npos) return renderError("template: section '" + name + "' is never closed");
    // A section tag alone on its line takes its line with it, so that an
    // omitted section leaves no blank lines behind.
    size_t innerBegin = pos;
    if (standaloneTag(tmpl, open, pos)) {
      out.erase(out.find_last_not_of(" \t") == std::string::npos ? 0 : out.find_last_not_of(" \t") + 1);
      innerBegin = pos + 1;
    }
    size_t innerEnd = end;
    pos = end + closing.size();
    if (standaloneTag(tmpl, end, pos)) {
      innerEnd = tmpl.rfind('\n', end) + 1;
      pos += 1;
    }
    llvm::StringRef inner = tmpl.slice(innerBegin, std::max(innerBegin, innerEnd));
    bool empty = llvm::StringRef(it->second).trim().empty();
    if ((sigil == '#') != empty)
      if (auto err = renderInto(inner, vars, out)) return err;
  }
  return llvm::Error::success();
}

llvm::Expected<std::string> renderTemplate(llvm::StringRef tmpl, const PromptVars &vars) {
  std::string out;
  if (auto err = renderInto(tmpl, vars, out)) return err;
  return out;
}

std::vector<ChatMessage> splitMessages(llvm::StringRef rendered) {
  std::vector<ChatMessage> out;
  std::string role = "user", text;
  auto flush = [&] {
    llvm::StringRef t = llvm::StringRef(text).trim();
    if (!t.empty()) out.push_back({role, t.str()});
    text.clear();
  };
  llvm::SmallVector<llvm::StringRef, 0> lines;
  rendered.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    llvm::StringRef l = line.rtrim();
    if (l == "[system]" || l == "[user]" || l == "[assistant]") {
      flush();
      role = l.drop_front().drop_back().str();
      continue;
    }
    text += line.str();
    text += '\n';
  }
  flush();
  return out;
}

std::string listingText(const nki::Kernel &kernel) {
  std::string s;
  llvm::raw_string_ostream os(s);
  nki::printListing(os, kernel);
  return os.str();
}

std::string opText(const nlohmann::json &op) {
  if (!op.is_object() || !op.contains("op")) return op.dump();
  // The op name first, then the ids, then the parameters: the order people write them in.
  static const char *const order[] = {"op",   "loop",   "outer", "inner", "first",  "second",
                                      "stmt", "out_of", "into",  "at",    "factor", "kind"};
  std::string s = "{";
  auto add = [&](const std::string &key, const nlohmann::json &value) {
    if (s.size() > 1) s += ",";
    s += nlohmann::json(key).dump() + ":" + value.dump();
  };
  for (const char *key : order)
    if (auto it = op.find(key); it != op.end()) add(key, *it);
  for (auto it = op.begin(); it != op.end(); ++it)
    if (std::find(std::begin(order), std::end(order), it.key()) == std::end(order)) add(it.key(), it.value());
  return s + "}";
}

std::string opsText(const nlohmann::json &ops) {
  if (!ops.is_array()) return opText(ops);
  if (ops.empty()) return "[]";
  std::string s = "[";
  for (size_t i = 0; i < ops.size(); ++i) s += (i ? ",\n " : "") + opText(ops[i]);
  return s + "]";
}

std::string renderMenu(const std::vector<MenuEntry> &menu) {
  if (menu.empty()) return "(no rewrite is legal on this kernel as it stands)";
  std::string s;
  for (const MenuEntry &e : menu) {
    s += "- " + opText(e.op);
    if (!e.description.empty()) s += "  " + e.description;
    s += "\n";
  }
  s.pop_back();
  return s;
}

std::string renderExperiences(const std::vector<Experience> &experiences) {
  std::string s;
  unsigned i = 1;
  for (const Experience &e : experiences) {
    if (!s.empty()) s += "\n";
    std::string outcome = e.speedup >= 1.0 ? llvm::formatv("{0:F2}x speedup", e.speedup).str()
                                           : llvm::formatv("slowdown to {0:F2}x; avoid", e.speedup).str();
    s += llvm::formatv("{0}. ({1}) {2}\n", i++, outcome, llvm::StringRef(e.summary).trim()).str();
    if (!e.ops.is_null() && !(e.ops.is_array() && e.ops.empty())) {
      std::string ops = opsText(e.ops);
      for (size_t p = ops.find('\n'); p != std::string::npos; p = ops.find('\n', p + 1)) ops.insert(p + 1, "        ");
      s += "   ops: " + ops + "\n";
    }
  }
  if (!s.empty()) s.pop_back();
  return s;
}

std::string renderProfile(const nlohmann::json &profile) {
  if (profile.is_null()) return "{}";
  return profile.dump(2);
}

static std::string formatSpeedup(double speedup) { return llvm::formatv("{0:F2}", speedup).str(); }

PromptLibrary PromptLibrary::builtin() {
  PromptLibrary lib;
  for (const embedded::PromptFile &f : embedded::promptFiles()) lib.Templates[f.name] = f.text;
  return lib;
}

llvm::Expected<PromptLibrary> PromptLibrary::withOverrides(llvm::StringRef dir) {
  PromptLibrary lib = builtin();
  if (!llvm::sys::fs::is_directory(dir)) return renderError("prompt_dir '" + dir + "' is not a directory");
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec)) {
    llvm::StringRef path = it->path();
    if (llvm::sys::path::extension(path) != ".txt") continue;
    auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
    if (!buf) return renderError("cannot read prompt template '" + path + "': " + buf.getError().message());
    lib.Templates[llvm::sys::path::stem(path).str()] = (*buf)->getBuffer().str();
  }
  if (ec) return renderError("cannot list prompt_dir '" + dir + "': " + ec.message());
  return lib;
}

llvm::Expected<std::string> PromptLibrary::get(llvm::StringRef name) const {
  auto it = Templates.find(name.str());
  if (it == Templates.end()) return renderError("no prompt template named '" + name + "'");
  return it->second;
}

llvm::Expected<std::vector<ChatMessage>> PromptLibrary::render(llvm::StringRef name, const PromptVars &vars) const {
  auto tmpl = get(name);
  if (!tmpl) return tmpl.takeError();
  auto text = renderTemplate(*tmpl, vars);
  if (!text) return renderError("prompt '" + name + "': " + llvm::toString(text.takeError()));
  return splitMessages(*text);
}

static PromptVars kernelVars(const KernelContext &ctx) {
  std::string backend = "unknown backend";
  if (ctx.profile.is_object() && ctx.profile.contains("backend") && ctx.profile["backend"].is_string())
    backend = ctx.profile["backend"].get<std::string>();
  return {{"listing", llvm::StringRef(ctx.listing).rtrim().str()},
          {"profile", renderProfile(ctx.profile)},
          {"backend", backend},
          {"problem", llvm::StringRef(ctx.problem).rtrim().str()},
          {"menu", renderMenu(ctx.menu)},
          {"experiences", renderExperiences(ctx.experiences)}};
}

llvm::Expected<std::vector<ChatMessage>> PromptLibrary::planner(const KernelContext &ctx, unsigned n) const {
  PromptVars vars = kernelVars(ctx);
  vars["n"] = std::to_string(n);
  return render("planner", vars);
}

llvm::Expected<std::vector<ChatMessage>> PromptLibrary::executor(const KernelContext &ctx, llvm::StringRef plan) const {
  PromptVars vars = kernelVars(ctx);
  vars["plan"] = plan.trim().str();
  vars["op_list"] = llvm::StringRef(rewrite::renderOpCatalogue("text")).rtrim().str();
  return render("executor", vars);
}

llvm::Expected<std::vector<ChatMessage>> PromptLibrary::executorRetry(const std::vector<std::string> &refusals) const {
  std::string list;
  for (size_t i = 0; i < refusals.size(); ++i)
    list += llvm::formatv("{0}. {1}\n", i + 1, llvm::StringRef(refusals[i]).trim()).str();
  if (!list.empty()) list.pop_back();
  return render("executor_retry", {{"refusals", list}});
}

llvm::Expected<std::vector<ChatMessage>> PromptLibrary::summarizer(llvm::StringRef beforeListing,
                                                                   llvm::StringRef afterListing,
                                                                   const nlohmann::json &ops, double speedup) const {
  bool faster = speedup >= 1.0;
  std::string outcome = faster ? formatSpeedup(speedup) + "x speedup"
                               : "slower: " + formatSpeedup(speedup) + "x the speed of the version before";
  return render("summarizer", {{"before_listing", beforeListing.rtrim().str()},
                               {"after_listing", afterListing.rtrim().str()},
                               {"ops", opsText(ops)},
                               {"speedup", formatSpeedup(speedup)},
                               {"outcome", outcome},
                               {"faster", faster ? "yes" : ""}});
}

void printMessages(llvm::raw_ostream &os, llvm::StringRef title, const std::vector<ChatMessage> &messages) {
  for (const ChatMessage &m : messages) os << "=== " << title << ": " << m.role << " ===\n" << m.content << "\n";
}

llvm::Error dryRunPrompts(llvm::raw_ostream &os, const PromptLibrary &prompts, const KernelContext &ctx,
                          unsigned numPlans, llvm::StringRef examplePlan, llvm::StringRef exampleFastListing,
                          const nlohmann::json &exampleOps, double exampleSpeedup) {
  auto planner = prompts.planner(ctx, numPlans);
  if (!planner) return planner.takeError();
  printMessages(os, "planner", *planner);
  auto executor = prompts.executor(ctx, examplePlan);
  if (!executor) return executor.takeError();
  printMessages(os, "executor", *executor);
  auto retry = prompts.executorRetry({"<refusal reason from the validator>"});
  if (!retry) return retry.takeError();
  printMessages(os, "executor retry", *retry);
  auto summarizer = prompts.summarizer(ctx.listing, exampleFastListing, exampleOps, exampleSpeedup);
  if (!summarizer) return summarizer.takeError();
  printMessages(os, "summarizer", *summarizer);
  return llvm::Error::success();
}

} // namespace accelopt::agent
