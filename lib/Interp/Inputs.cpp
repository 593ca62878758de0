// Seeded random kernel arguments from input specs and their `init` expressions.
#include "Interp/DTypeRounding.h"
#include "Interp/Interpreter.h"
#include "Interp/Random.h"

#include "llvm/ADT/StringRef.h"

#include <cmath>

namespace accelopt::interp {

namespace {

llvm::Error initError(const nki::InputSpec &s, const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "error: input '" + s.name + "': init '" + s.init + "': " + msg);
}

/// Fills `out` from one init expression (nested: abs(normal(0,1))).
llvm::Error fillFrom(llvm::StringRef expr, std::span<float> out, Random &rng, const nki::InputSpec &spec,
                     const std::vector<int64_t> &shape) {
  expr = expr.trim();
  if (expr == "identity") {
    if (shape.size() < 2 || shape[shape.size() - 1] != shape[shape.size() - 2])
      return initError(spec, "identity needs equal last two dimensions");
    int64_t n = shape.back();
    for (size_t i = 0; i < out.size(); ++i) out[i] = (int64_t(i) / n) % n == int64_t(i) % n ? 1.0f : 0.0f;
    return llvm::Error::success();
  }
  size_t open = expr.find('(');
  if (open == llvm::StringRef::npos || !expr.endswith(")")) return initError(spec, "expected name(args)");
  llvm::StringRef fn = expr.take_front(open).trim();
  llvm::StringRef inner = expr.slice(open + 1, expr.size() - 1);
  if (fn == "abs" || fn == "exp") {
    if (auto err = fillFrom(inner, out, rng, spec, shape)) return err;
    for (float &x : out) x = fn == "abs" ? std::fabs(x) : std::exp(x);
    return llvm::Error::success();
  }
  llvm::SmallVector<llvm::StringRef, 2> parts;
  inner.split(parts, ',');
  std::vector<double> args;
  for (auto p : parts) {
    double v;
    if (p.trim().getAsDouble(v)) return initError(spec, "bad number '" + p.trim() + "'");
    args.push_back(v);
  }
  if (fn == "normal" && args.size() == 2)
    rng.fillNormal(out, float(args[0]), float(args[1]));
  else if (fn == "uniform" && args.size() == 2)
    rng.fillUniform(out, float(args[0]), float(args[1]));
  else if (fn == "randint" && args.size() == 2) {
    if (auto err = rng.fillIntegers(out, int64_t(args[0]), int64_t(args[1]))) return err;
  } else if (fn == "const" && args.size() == 1) {
    for (float &x : out) x = float(args[0]);
  } else {
    return initError(spec, "unknown distribution (normal, uniform, randint, abs, exp, const, identity)");
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::vector<KernelArg>> cloneArgs(const std::vector<KernelArg> &args) {
  std::vector<KernelArg> out;
  out.reserve(args.size());
  for (const KernelArg &a : args) {
    KernelArg c;
    c.name = a.name;
    c.scalar = a.scalar;
    c.isInt = a.isInt;
    c.literal = a.literal;
    if (a.array) {
      auto copy = a.array->clone();
      if (!copy) return copy.takeError();
      c.array = std::move(*copy);
    }
    out.push_back(std::move(c));
  }
  return out;
}

llvm::Expected<std::vector<KernelArg>> makeRandomInputs(const nki::InputSpecs &specs, uint64_t seed) {
  Random rng(seed);
  std::vector<KernelArg> args;
  for (const auto &s : specs) {
    KernelArg a;
    a.name = s.name;
    if (!s.literal.empty()) {
      a.literal = s.literal;
      args.push_back(std::move(a));
      continue;
    }
    if (s.isScalar) {
      a.scalar = s.scalar;
      a.isInt = s.isInt;
      args.push_back(std::move(a));
      continue;
    }
    auto arr = NDArray::allocate(s.shape, s.dtype);
    if (!arr) return arr.takeError();
    if (auto err = fillFrom(s.init.empty() ? "normal(0,1)" : s.init, arr->values(), rng, s, s.shape)) return err;
    roundToDType(arr->values(), s.dtype);
    a.array = std::move(*arr);
    args.push_back(std::move(a));
  }
  return args;
}

} // namespace accelopt::interp
