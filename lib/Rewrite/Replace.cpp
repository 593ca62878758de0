// replace: substitute a statement or a whole loop by given NKI code, re-indented
// to the site. Its legality is that the result parses and verifies (checked by
// the engine); numeric equivalence is checked later by execution.
#include "Rewrite/OpSupport.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;

namespace {

class Replace final : public Op {
public:
  Replace()
      : Op({"replace",
            "replace a statement (stmt) or a loop with its body (loop) by given NKI code, re-indented to the site",
            {{"stmt", FieldKind::Stmt, "the statement to replace (its whole lines)"},
             {"loop", FieldKind::Loop, "or the loop to replace, header and body", {}, /*alternative=*/true},
             {"code", FieldKind::Code, "the new code (one or more lines)"}}}) {}

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    Params p(k, j, spec()); // exactly one of "stmt" and "loop"
    std::optional<int> stmt, loop;
    if (j.is_object() && j.contains("stmt"))
      stmt = p.stmt("stmt");
    else
      loop = p.loop("loop");
    auto code = p.string("code");
    if (!p.ok()) return p.error();
    llvm::StringRef text = k.source->text();
    ByteRange site = stmt ? k.stmts[*stmt].range : k.loops[*loop].range;
    std::string ids = stmt ? "S" + std::to_string(*stmt) : "L" + std::to_string(*loop);
    uint32_t anchor = site.begin;
    Refuser no(name(), ids, anchor);
    if (!startsLine(text, site.begin) || !endsLine(text, site.end))
      return no(ids + " shares its lines with other code");
    if (stmt && k.stmts[*stmt].syntax && k.stmts[*stmt].syntax->kind == syntax::StmtKind::FunctionDef)
      return no(ids + " is a function definition");

    // Split the code into lines; drop blank lines at both ends; find the common indentation.
    std::vector<std::string> lines;
    llvm::StringRef rest(*code);
    while (!rest.empty()) {
      auto [line, tail] = rest.split('\n');
      lines.push_back(line.rtrim("\r").str());
      rest = tail;
    }
    auto blank = [](const std::string &s) { return llvm::StringRef(s).trim().empty(); };
    while (!lines.empty() && blank(lines.back())) lines.pop_back();
    while (!lines.empty() && blank(lines.front())) lines.erase(lines.begin());
    bool anyStatement = false;
    size_t common = std::string::npos;
    bool tabs = false, spaces = false;
    for (const std::string &s : lines) {
      if (blank(s)) continue;
      size_t n = s.find_first_not_of(" \t");
      for (size_t i = 0; i < n; ++i) (s[i] == '\t' ? tabs : spaces) = true;
      if (s[n] != '#') anyStatement = true;
      common = std::min(common, n);
      llvm::StringRef body = llvm::StringRef(s).drop_front(n);
      if (body.startswith("def ") || body.startswith("class ") || body.startswith("@"))
        return no("the code defines a function, class or decorated kernel; replace edits the body of kernel '" +
                  k.name + "' only");
    }
    if (!anyStatement) return no("the code has no statement");
    if (tabs) return no(spaces ? "the code mixes tabs and spaces in its indentation" : "the code indents with tabs");
    if (llvm::StringRef(*code).contains("\"\"\"") || llvm::StringRef(*code).contains("'''"))
      return no("the code has a triple-quoted string (re-indenting could change it)");
    if (indentAt(text, site.begin).find('\t') != std::string::npos) return no("the site is indented with tabs");

    // Names the site binds that code after it reads must still be bound by the code.
    std::set<std::string> codeBinds;
    for (const std::string &s : lines) {
      llvm::StringRef line = llvm::StringRef(s).trim();
      if (line.startswith("for ")) {
        size_t in = line.find(" in ");
        for (auto &n : identifiersIn(line.slice(4, in))) codeBinds.insert(n);
        continue;
      }
      for (size_t i = 0; i < line.size(); ++i) {
        if (line[i] != '=' || (i + 1 < line.size() && line[i + 1] == '=') ||
            (i > 0 && llvm::StringRef("<>!=").contains(line[i - 1])))
          continue;
        for (auto &n : identifiersIn(line.take_front(i))) codeBinds.insert(n);
        break;
      }
    }
    std::vector<int> inSite;
    if (stmt)
      inSite.push_back(*stmt);
    else
      inSite = stmtsIn(k, *loop);
    std::set<std::string> siteBinds;
    for (int s : inSite)
      for (auto &d : boundNames(k.stmts[s])) siteBinds.insert(d);
    for (const Statement &s : k.stmts) {
      if (s.range.begin < site.end) continue;
      for (auto &u : s.uses)
        if (siteBinds.count(u) && !codeBinds.count(u))
          return no(llvm::formatv("S{0} at {1} reads '{2}', which {3} binds and the code does not", s.id,
                                  where(k, s.range.begin), u, ids)
                        .str());
    }

    std::string indent = indentAt(text, site.begin), out;
    for (const std::string &s : lines) out += blank(s) ? "\n" : indent + s.substr(common) + "\n";
    EditList edits;
    edits.replace(lineBegin(text, site.begin), nextLineBegin(text, site.end) - lineBegin(text, site.begin), out);
    size_t n = std::count(out.begin(), out.end(), '\n');
    return applied(name(), ids, k, edits,
                   llvm::formatv("replace {0} by {1} line(s) of code", stmt ? ids : loopLabel(k, *loop), n).str(),
                   anchor);
  }

  std::vector<nlohmann::json> instances(const Kernel &) const override { return {}; }
};

} // namespace

const Op &replaceOp() {
  static Replace op;
  return op;
}

} // namespace accelopt::rewrite
