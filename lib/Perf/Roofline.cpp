#include "Perf/Roofline.h"

#include "Perf/EmbeddedData.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <charconv>
#include <cmath>

namespace accelopt::perf {

namespace {

using NameLookup = llvm::function_ref<std::optional<ExprValue>(llvm::StringRef)>;

/// Recursive descent over the grammar
///   sum     := product (('+' | '-') product)*
///   product := unary (('*' | '/' | '//') unary)*
///   unary   := ('+' | '-') unary | power
///   power   := atom ('**' unary)?
///   atom    := number | name | '(' sum ')'
/// which gives ** its Python precedence: -2**2 == -4, 2**-1 == 0.5.
class ExpressionEvaluator {
public:
  /// `syntaxOnly`: report grammar errors only, not arithmetic ones (the names
  /// are placeholders then, so 1/(N-1) must not fail).
  ExpressionEvaluator(llvm::StringRef text, NameLookup lookup, bool syntaxOnly)
      : Text(text), Lookup(lookup), SyntaxOnly(syntaxOnly) {}

  llvm::Expected<ExprValue> evaluate() {
    ExprValue v = sum();
    skipSpace();
    if (Error.empty() && Pos != Text.size()) fail("unexpected '" + Text.substr(Pos, 1).str() + "'");
    if (!Error.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "expression '%s': %s", Text.str().c_str(),
                                     Error.c_str());
    return v;
  }

private:
  // Deep enough for any formula, shallow enough for any stack.
  static constexpr unsigned kMaxDepth = 200;

  ExprValue sum() {
    ExprValue v = product();
    while (Error.empty()) {
      if (accept("+"))
        v = arithmetic('+', v, product());
      else if (accept("-"))
        v = arithmetic('-', v, product());
      else
        break;
    }
    return v;
  }

  ExprValue product() {
    ExprValue v = unary();
    while (Error.empty()) {
      if (accept("//"))
        v = floorDivide(v, unary());
      else if (accept("*"))
        v = arithmetic('*', v, unary());
      else if (accept("/"))
        v = divide(v, unary());
      else
        break;
    }
    return v;
  }

  ExprValue unary() {
    if (++Depth > kMaxDepth) {
      fail("nested too deeply");
      return {};
    }
    ExprValue v;
    if (accept("-"))
      v = arithmetic('-', ExprValue::ofInteger(0), unary());
    else if (accept("+"))
      v = unary();
    else
      v = power();
    --Depth;
    return v;
  }

  ExprValue power() {
    ExprValue base = atom();
    if (Error.empty() && accept("**")) return raise(base, unary());
    return base;
  }

  ExprValue atom() {
    skipSpace();
    if (Pos >= Text.size()) {
      fail("unexpected end, expected a number, a name or '('");
      return {};
    }
    char c = Text[Pos];
    if (c == '(') {
      ++Pos;
      ExprValue v = sum();
      if (Error.empty() && !accept(")")) fail("missing ')'");
      return v;
    }
    if (llvm::isDigit(c) || c == '.') return number();
    if (llvm::isAlpha(c) || c == '_') {
      size_t start = Pos;
      while (Pos < Text.size() && (llvm::isAlnum(Text[Pos]) || Text[Pos] == '_')) ++Pos;
      llvm::StringRef name = Text.slice(start, Pos);
      if (std::optional<ExprValue> v = Lookup(name)) return *v;
      fail("unknown name '" + name.str() + "'");
      return {};
    }
    fail("unexpected '" + std::string(1, c) + "'");
    return {};
  }

  ExprValue number() {
    size_t start = Pos;
    bool real = false;
    while (Pos < Text.size() && (llvm::isDigit(Text[Pos]) || Text[Pos] == '.')) {
      real |= Text[Pos] == '.';
      ++Pos;
    }
    if (Pos < Text.size() && (Text[Pos] == 'e' || Text[Pos] == 'E')) {
      size_t mark = Pos++;
      if (Pos < Text.size() && (Text[Pos] == '+' || Text[Pos] == '-')) ++Pos;
      if (Pos < Text.size() && llvm::isDigit(Text[Pos])) {
        real = true;
        while (Pos < Text.size() && llvm::isDigit(Text[Pos])) ++Pos;
      } else {
        Pos = mark; // not an exponent; the 'e' is left for the caller to reject
      }
    }
    llvm::StringRef literal = Text.slice(start, Pos);
    const char *first = literal.data(), *last = literal.data() + literal.size();
    if (real) {
      double v = 0;
      auto [end, ec] = std::from_chars(first, last, v);
      if (ec != std::errc() || end != last) fail("bad number '" + literal.str() + "'");
      return ExprValue::ofReal(v);
    }
    int64_t v = 0;
    auto [end, ec] = std::from_chars(first, last, v);
    if (ec != std::errc() || end != last) fail("bad integer '" + literal.str() + "'");
    return ExprValue::ofInteger(v);
  }

  ExprValue arithmetic(char op, ExprValue a, ExprValue b) {
    if (!Error.empty()) return {};
    if (a.isInteger && b.isInteger) {
      int64_t r = 0;
      bool overflow = op == '+'   ? __builtin_add_overflow(a.integer, b.integer, &r)
                      : op == '-' ? __builtin_sub_overflow(a.integer, b.integer, &r)
                                  : __builtin_mul_overflow(a.integer, b.integer, &r);
      if (overflow) arithmeticFail("integer overflow");
      return ExprValue::ofInteger(r);
    }
    double x = a.asDouble(), y = b.asDouble();
    return ExprValue::ofReal(op == '+' ? x + y : op == '-' ? x - y : x * y);
  }

  ExprValue divide(ExprValue a, ExprValue b) {
    if (!Error.empty()) return {};
    if (b.asDouble() == 0) {
      arithmeticFail("division by zero");
      return {};
    }
    return ExprValue::ofReal(a.asDouble() / b.asDouble());
  }

  ExprValue floorDivide(ExprValue a, ExprValue b) {
    if (!Error.empty()) return {};
    if (b.asDouble() == 0) {
      arithmeticFail("division by zero");
      return {};
    }
    if (a.isInteger && b.isInteger) {
      if (a.integer == INT64_MIN && b.integer == -1) {
        arithmeticFail("integer overflow");
        return {};
      }
      int64_t q = a.integer / b.integer;
      if ((a.integer % b.integer != 0) && ((a.integer < 0) != (b.integer < 0))) --q; // floor
      return ExprValue::ofInteger(q);
    }
    return ExprValue::ofReal(std::floor(a.asDouble() / b.asDouble()));
  }

  ExprValue raise(ExprValue base, ExprValue exponent) {
    if (!Error.empty()) return {};
    if (base.isInteger && exponent.isInteger && exponent.integer >= 0) {
      int64_t result = 1, factor = base.integer;
      for (int64_t e = exponent.integer; e > 0; e >>= 1) {
        if ((e & 1) && __builtin_mul_overflow(result, factor, &result)) {
          arithmeticFail("integer overflow");
          return {};
        }
        if (e > 1 && __builtin_mul_overflow(factor, factor, &factor)) {
          arithmeticFail("integer overflow");
          return {};
        }
      }
      return ExprValue::ofInteger(result);
    }
    double r = std::pow(base.asDouble(), exponent.asDouble());
    if (!std::isfinite(r)) arithmeticFail("power out of range");
    return ExprValue::ofReal(r);
  }

  void skipSpace() {
    while (Pos < Text.size() && llvm::isSpace(Text[Pos])) ++Pos;
  }
  bool accept(llvm::StringRef token) {
    skipSpace();
    if (!Text.substr(Pos).startswith(token)) return false;
    Pos += token.size();
    return true;
  }
  void fail(const std::string &what) {
    if (Error.empty()) Error = what + " at offset " + std::to_string(Pos);
  }
  void arithmeticFail(const std::string &what) {
    if (!SyntaxOnly) fail(what);
  }

  llvm::StringRef Text;
  NameLookup Lookup;
  size_t Pos = 0;
  bool SyntaxOnly;
  unsigned Depth = 0;
  std::string Error;
};

llvm::Error rooflineError(llvm::StringRef origin, const std::string &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s", origin.str().c_str(), what.c_str());
}

} // namespace

llvm::Expected<ExprValue> evaluateExpression(llvm::StringRef text, const ExprVariables &variables) {
  auto lookup = [&](llvm::StringRef name) -> std::optional<ExprValue> {
    auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
  return ExpressionEvaluator(text, lookup, /*syntaxOnly=*/false).evaluate();
}

llvm::Expected<ExprVariables> variablesFromJSON(const nlohmann::json &values) {
  if (!values.is_object()) return llvm::createStringError(llvm::inconvertibleErrorCode(), "values: expected an object");
  ExprVariables vars;
  for (const auto &[name, value] : values.items()) {
    if (value.is_number_integer())
      vars[name] = ExprValue::ofInteger(value.get<int64_t>());
    else if (value.is_number())
      vars[name] = ExprValue::ofReal(value.get<double>());
    else
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "values: '%s' is not a number", name.c_str());
  }
  return vars;
}

std::string_view rooflineBoundName(RooflineBound bound) {
  switch (bound) {
  case RooflineBound::Vec: return "vec";
  case RooflineBound::MM: return "mm";
  case RooflineBound::Memory: return "memory";
  }
  return "?";
}

llvm::Expected<Roofline> Roofline::builtin() {
  return parse(embedded::rooflineFile(), "nkibench/roofline.json (built in)");
}

llvm::Expected<Roofline> Roofline::load(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) return rooflineError(path, "cannot read: " + buffer.getError().message());
  return parse((*buffer)->getBuffer(), path);
}

llvm::Expected<Roofline> Roofline::parse(llvm::StringRef jsonText, llvm::StringRef origin) {
  auto doc = nlohmann::json::parse(jsonText.begin(), jsonText.end(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return rooflineError(origin, "not a JSON object");

  // Constants are expressions too ("410 * 1024**3"), without variables.
  auto constants = doc.find("constants");
  if (constants == doc.end() || !constants->is_object()) return rooflineError(origin, "missing \"constants\"");
  Roofline roofline;
  auto constant = [&](const char *key, double &out) -> llvm::Error {
    auto it = constants->find(key);
    if (it == constants->end() || !it->is_object() || !(*it)["expr"].is_string())
      return rooflineError(origin, std::string("constants.") + key + ": missing \"expr\"");
    auto v = evaluateExpression((*it)["expr"].get<std::string>(), {});
    if (!v) return rooflineError(origin, std::string("constants.") + key + ": " + llvm::toString(v.takeError()));
    out = v->asDouble();
    if (!(out > 0)) return rooflineError(origin, std::string("constants.") + key + ": not positive");
    return llvm::Error::success();
  };
  if (auto err = constant("peak_bandwidth", roofline.PeakBandwidth)) return err;
  if (auto err = constant("peak_vec_flops", roofline.PeakVecFlops)) return err;
  if (auto err = constant("peak_matmul_flops", roofline.PeakMatmulFlops)) return err;

  auto problems = doc.find("problems");
  if (problems == doc.end() || !problems->is_object()) return rooflineError(origin, "missing \"problems\"");
  // Syntax check: any name is a placeholder until a case gives values.
  auto anyName = [](llvm::StringRef) -> std::optional<ExprValue> { return ExprValue::ofInteger(1); };
  for (const auto &[name, entry] : problems->items()) {
    Formulas f;
    for (auto [key, out] : {std::pair{"vec_flops", &f.vecFlops}, std::pair{"mm_flops", &f.mmFlops},
                            std::pair{"total_bytes", &f.totalBytes}}) {
      std::string where = "problems." + name + "." + key;
      if (!entry.is_object() || !entry.contains(key) || !entry[key].is_string())
        return rooflineError(origin, where + ": missing formula");
      *out = entry[key].get<std::string>();
      if (auto checked = ExpressionEvaluator(*out, anyName, /*syntaxOnly=*/true).evaluate(); !checked)
        return rooflineError(origin, where + ": " + llvm::toString(checked.takeError()));
    }
    roofline.FormulasByProblem.emplace(name, std::move(f));
  }
  return roofline;
}

std::vector<std::string> Roofline::problems() const {
  std::vector<std::string> names;
  for (const auto &entry : FormulasByProblem) names.push_back(entry.first);
  return names;
}

llvm::Expected<RooflinePeak> Roofline::peak(llvm::StringRef problem, const ExprVariables &values) const {
  auto it = FormulasByProblem.find(problem.str());
  if (it == FormulasByProblem.end())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "no roofline formulas for problem '%s'; known: %s",
                                   problem.str().c_str(), llvm::join(problems(), ", ").c_str());
  RooflinePeak p;
  for (auto [formula, out] : {std::pair{&it->second.vecFlops, &p.vecFlops}, std::pair{&it->second.mmFlops, &p.mmFlops},
                              std::pair{&it->second.totalBytes, &p.totalBytes}}) {
    auto v = evaluateExpression(*formula, values);
    if (!v)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s", problem.str().c_str(),
                                     llvm::toString(v.takeError()).c_str());
    *out = v->asDouble();
  }
  p.vecMs = p.vecFlops / PeakVecFlops * 1e3;
  p.mmMs = p.mmFlops / PeakMatmulFlops * 1e3;
  p.memoryMs = p.totalBytes / PeakBandwidth * 1e3;
  // Ties go to the earlier key, as Python's max over {vec, mm, memory} does.
  p.peakMs = p.vecMs;
  p.bound = RooflineBound::Vec;
  if (p.mmMs > p.peakMs) {
    p.peakMs = p.mmMs;
    p.bound = RooflineBound::MM;
  }
  if (p.memoryMs > p.peakMs) {
    p.peakMs = p.memoryMs;
    p.bound = RooflineBound::Memory;
  }
  return p;
}

} // namespace accelopt::perf
