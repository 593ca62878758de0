// The op catalogue rendered from the ops' declarations (OpSpec): the listing
// of `legal --list-ops`, which is also the executor prompt's op list, the table
// of rewrites/README.md, and JSON.
#include "Rewrite/Rewrite.h"

namespace accelopt::rewrite {

const FieldSpec *OpSpec::field(llvm::StringRef name) const {
  for (const FieldSpec &f : fields)
    if (name == f.name) return &f;
  return nullptr;
}

llvm::StringRef fieldKindNoun(FieldKind kind) {
  switch (kind) {
  case FieldKind::Loop: return "a loop id";
  case FieldKind::Stmt: return "a statement id";
  case FieldKind::Node: return "a statement or loop id";
  case FieldKind::Tensor: return "a tensor name or the id of the statement allocating it";
  case FieldKind::Integer: return "an integer";
  case FieldKind::Choice: return "one of the listed strings";
  case FieldKind::Code: return "NKI code";
  }
  return "";
}

namespace {

llvm::StringRef kindName(FieldKind kind) {
  switch (kind) {
  case FieldKind::Loop: return "loop";
  case FieldKind::Stmt: return "statement";
  case FieldKind::Node: return "node";
  case FieldKind::Tensor: return "tensor";
  case FieldKind::Integer: return "integer";
  case FieldKind::Choice: return "choice";
  case FieldKind::Code: return "code";
  }
  return "";
}

std::string inQuotes(llvm::StringRef s) { return "\"" + s.str() + "\""; }

/// `"loop":"L<n>"`.
std::string member(const FieldSpec &f) { return inQuotes(f.name) + ":" + fieldPlaceholder(f); }

/// "loop: the loop to split; factor: ..."
std::string fieldDocs(const OpSpec &spec) {
  std::string out;
  for (const FieldSpec &f : spec.fields) out += (out.empty() ? "" : "; ") + std::string(f.name) + ": " + f.doc;
  return out;
}

std::string escapeTableCell(llvm::StringRef s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

} // namespace

std::string fieldPlaceholder(const FieldSpec &field) {
  switch (field.kind) {
  case FieldKind::Loop: return inQuotes("L<n>");
  case FieldKind::Stmt: return inQuotes("S<n>");
  case FieldKind::Node: return inQuotes("S<n>|L<n>");
  case FieldKind::Tensor: return inQuotes("<tensor>");
  case FieldKind::Integer: return "<int>";
  case FieldKind::Choice: {
    std::string choices;
    for (const char *c : field.choices) choices += (choices.empty() ? "" : "|") + std::string(c);
    return inQuotes(choices);
  }
  case FieldKind::Code: return inQuotes("<code>");
  }
  return "";
}

std::string opTemplate(const OpSpec &spec) {
  std::string out = "{\"op\":" + inQuotes(spec.name);
  for (const FieldSpec &f : spec.fields)
    if (!f.alternative) out += "," + member(f);
  return out + "}";
}

/// `(or "loop":"L<n>" instead of "stmt")`, each JSON piece wrapped in `code`.
static std::string noteOfAlternatives(const OpSpec &spec, llvm::StringRef code) {
  std::string out;
  for (size_t i = 1; i < spec.fields.size(); ++i)
    if (spec.fields[i].alternative)
      out += (out.empty() ? "(or " : "; or ") + code.str() + member(spec.fields[i]) + code.str() + " instead of " +
             code.str() + inQuotes(spec.fields[i - 1].name) + code.str();
  return out.empty() ? out : out + ")";
}

std::string alternativesNote(const OpSpec &spec) { return noteOfAlternatives(spec, ""); }

std::string renderOpCatalogue(llvm::StringRef format) {
  std::string out;
  if (format == "json") {
    nlohmann::json ops = nlohmann::json::array();
    for (const Op *op : allOps()) {
      const OpSpec &spec = op->spec();
      nlohmann::json fields = nlohmann::json::array();
      for (size_t i = 0; i < spec.fields.size(); ++i) {
        const FieldSpec &f = spec.fields[i];
        nlohmann::json field = {{"name", f.name}, {"kind", kindName(f.kind).str()}, {"doc", f.doc}};
        if (!f.choices.empty()) field["choices"] = f.choices;
        if (f.alternative) field["instead_of"] = spec.fields[i - 1].name;
        fields.push_back(std::move(field));
      }
      ops.push_back({{"op", spec.name}, {"summary", spec.summary}, {"json", opTemplate(spec)}, {"fields", fields}});
    }
    return ops.dump(2) + "\n";
  }
  if (format == "markdown") {
    out = "| op | JSON | what it does | fields | doc |\n|---|---|---|---|---|\n";
    for (const Op *op : allOps()) {
      const OpSpec &spec = op->spec();
      std::string json = "`" + opTemplate(spec) + "`";
      if (std::string note = noteOfAlternatives(spec, "`"); !note.empty()) json += " " + note;
      std::string fields;
      for (const FieldSpec &f : spec.fields)
        fields += (fields.empty() ? "`" : "; `") + std::string(f.name) + "`: " + f.doc;
      out += "| " + std::string(spec.name) + " | " + escapeTableCell(json) + " | " + escapeTableCell(spec.summary) +
             " | " + escapeTableCell(fields) + " | [" + spec.name + ".md](" + spec.name + ".md) |\n";
    }
    return out;
  }
  for (const Op *op : allOps()) {
    const OpSpec &spec = op->spec();
    out += "- " + opTemplate(spec);
    if (std::string note = alternativesNote(spec); !note.empty()) out += " " + note;
    out += "\n  " + std::string(spec.summary) + "\n  " + fieldDocs(spec) + "\n";
  }
  return out;
}

} // namespace accelopt::rewrite
