// --inputs specs: "a=f32[32,128],b=bf16[40,128],eps=0.001" parsed and printed.
#include "NKI/FrontEnd.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

namespace accelopt::nki {

static llvm::Error specError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "error: " + msg);
}

llvm::Expected<InputSpecs> parseInputSpecs(llvm::StringRef text) {
  InputSpecs specs;
  llvm::StringRef rest = text.trim();
  while (!rest.empty()) {
    // Split at the next comma that is not inside brackets/parentheses.
    size_t depth = 0, cut = rest.size();
    char quote = 0; // inside a string literal
    for (size_t i = 0; i < rest.size(); ++i) {
      char c = rest[i];
      if (quote) {
        if (c == quote) quote = 0;
      } else if (c == '\'' || c == '"')
        quote = c;
      else if (c == '[' || c == '(')
        ++depth;
      else if ((c == ']' || c == ')') && depth)
        --depth;
      else if (c == ',' && depth == 0) {
        cut = i;
        break;
      }
    }
    llvm::StringRef item = rest.take_front(cut).trim();
    rest = cut < rest.size() ? rest.drop_front(cut + 1).trim() : llvm::StringRef();
    if (item.empty()) continue;
    auto [name, value] = item.split('=');
    name = name.trim();
    value = value.trim();
    if (name.empty() || value.empty() || !item.contains('='))
      return specError("bad --inputs item '" + item + "': expected name=dtype[d0,d1,...] or name=number");
    InputSpec spec;
    spec.name = name.str();
    // A Python literal: a tuple or list, None/True/False, a string, a dotted name (nl.bfloat16) or a call
    // of a class of the kernel's file (Config(tile=128)); the kernel's module evaluates it.
    llvm::StringRef head = value.take_while([](char c) { return llvm::isAlnum(c) || c == '_'; });
    bool literal = value.startswith("(") || value.startswith("[") || value.startswith("'") || value.startswith("\"") ||
                   value == "None" || value == "True" || value == "False" ||
                   (!head.empty() && !llvm::isDigit(head[0]) && value.size() > head.size() &&
                    (value[head.size()] == '.' || value[head.size()] == '('));
    // Optional "~init" suffix: x=f32[4,4]~uniform(0,1)
    auto [typed, init] = literal ? std::pair(value, llvm::StringRef()) : value.split('~');
    spec.init = init.trim().str();
    typed = typed.trim();
    size_t bracket = typed.find('[');
    if (literal) {
      spec.literal = typed.str();
    } else if (bracket == llvm::StringRef::npos) {
      double v;
      if (typed.getAsDouble(v))
        return specError("bad --inputs item '" + item +
                         "': a scalar must be a number, an array dtype[shape] (e.g. f32[128,512]) or a Python "
                         "literal ((4,128), None, nl.bfloat16, 'gelu')");
      spec.isScalar = true;
      spec.scalar = v;
      int64_t asInt;
      spec.isInt = !typed.getAsInteger(10, asInt);
    } else {
      auto dt = parseDType(typed.take_front(bracket).trim());
      if (!dt)
        return specError("unknown dtype '" + typed.take_front(bracket) + "' in --inputs item '" + item +
                         "' (use float32/bfloat16/float16 or f32/bf16/f16, ...)");
      spec.dtype = *dt;
      llvm::StringRef dims = typed.drop_front(bracket + 1);
      if (!dims.endswith("]")) return specError("missing ']' in --inputs item '" + item + "'");
      dims = dims.drop_back();
      llvm::SmallVector<llvm::StringRef, 6> parts;
      dims.split(parts, ',', -1, false);
      for (auto p : parts) {
        int64_t d;
        if (p.trim().getAsInteger(10, d) || d <= 0)
          return specError("bad dimension '" + p.trim() + "' in --inputs item '" + item +
                           "' (dimensions are positive integers)");
        spec.shape.push_back(d);
      }
    }
    for (auto &s : specs)
      if (s.name == spec.name) return specError("input '" + spec.name + "' given twice in --inputs");
    specs.push_back(std::move(spec));
  }
  return specs;
}

std::string formatInputSpecs(const InputSpecs &specs) {
  std::string out;
  for (const auto &s : specs) {
    if (!out.empty()) out += ",";
    out += s.name + "=";
    if (!s.literal.empty()) {
      out += s.literal;
      continue;
    }
    if (s.isScalar) {
      out += s.isInt ? std::to_string(int64_t(s.scalar)) : llvm::formatv("{0}", s.scalar).str();
      continue;
    }
    out += std::string(dtypeName(s.dtype)) + "[";
    for (size_t i = 0; i < s.shape.size(); ++i) out += (i ? "," : "") + std::to_string(s.shape[i]);
    out += "]";
  }
  return out;
}

} // namespace accelopt::nki
