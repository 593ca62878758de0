// Calls: builtins, NKI intrinsics, host code, NKI op calls bound to the op table with their
// reads, writes, result tiles and allocations, and tensor methods.
#include "NKI/DTypeLimits.h"
#include "NKI/FrontEnd/KernelBuilder.h"
#include "NKI/Platform.h"
#include "NKI/PyCore.h"
#include "NKI/PyInt.h"
#include "NKI/ShapeRules.h"
#include "Syntax/AstWalks.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace accelopt::nki::frontend {

std::optional<std::string> KernelBuilder::hostCodeCall(const Value &fn, const Expr *e) const {
  static const std::set<std::string, std::less<>> traceRoots = {
      "nl", "nisa", "nki", "nt", "np", "math", "builtins", "dtype", "helper", "class", "neuronxcc"};
  // numpy functions that read or write host files.
  static const std::set<std::string, std::less<>> numpyHostIo = {
      "np.load",       "np.save",     "np.savez",  "np.savez_compressed", "np.savetxt",   "np.loadtxt",
      "np.genfromtxt", "np.fromfile", "np.memmap", "np.fromregex",        "np.DataSource"};
  auto ranOnHost = [](llvm::StringRef what) {
    what.consume_front("builtins.");
    return "call to '" + what.str() +
           "' runs host code when the kernel is traced; accelopt neither runs nor analyses it";
  };
  // A name bound by an import of a module not found next to the file: said as such.
  if (const auto *unresolved = Imports ? Imports->unresolvedOf(currentModule()) : nullptr) {
    std::string dotted = e->base->dottedName();
    if (auto it = unresolved->find(dotted.substr(0, dotted.find('.'))); it != unresolved->end())
      return it->second + "; the call of '" + dotted + "' is not analysed";
  }
  if (fn.kind == Value::Path && (fn.s == pycore::kReduce || !pycore::operatorSymbol(fn.s).empty())) return std::nullopt;
  if (fn.kind == Value::Path) {
    std::string_view root = std::string_view(fn.s).substr(0, fn.s.find('.'));
    if (!traceRoots.count(root) || numpyHostIo.count(fn.s) || fn.s.rfind("np.lib.", 0) == 0 ||
        fn.s.rfind("np.ctypeslib", 0) == 0)
      return ranOnHost(fn.s);
    const pycore::BuiltinInfo *builtin = root == "builtins" ? pycore::lookupBuiltin(fn.s.substr(9)) : nullptr;
    if (builtin && builtin->hostEffect) return ranOnHost(fn.s);
    return std::nullopt;
  }
  if (fn.kind == Value::Unknown && e->base->kind == ExprKind::Name && !Env.count(e->base->name) &&
      !Aliases.count(e->base->name)) {
    const pycore::BuiltinInfo *builtin = pycore::lookupBuiltin(e->base->name);
    if (!builtin || builtin->hostEffect) return ranOnHost(e->base->name);
  }
  return std::nullopt;
}

Value KernelBuilder::call(const Expr *e, std::optional<Buffer> resultBuffer, const Expr *dest) {
  if (auto inlined = InlinedCalls.find(e); inlined != InlinedCalls.end()) return inlined->second;
  // `tiles.append(t)` / `tiles.extend([...])` on a list the kernel built: the list holds what each
  // traced append added (a loop body is traced once, so a list filled in a loop holds one instance
  // of its element), which lets `tiles[k]` name the tile later.
  if (e->base && e->base->kind == ExprKind::Attribute && e->base->base && e->base->base->kind == ExprKind::Name &&
      (e->base->name == "append" || e->base->name == "extend") && e->elts.size() == 1 && e->keywords.empty()) {
    auto list = Env.find(e->base->base->name);
    if (list != Env.end() && list->second.kind == Value::Seq && list->second.isList) {
      Value item = eval(e->elts[0]);
      std::function<void(Value &)> mark = [&](Value &v) {
        v.throughList = v.kind == Value::Tensor;
        for (Value &x : v.elts) mark(x);
      };
      mark(item);
      if (e->base->name == "append" && appendAsBlock(Env[e->base->base->name], item)) return Value::none();
      std::vector<Value> &elts = Env[e->base->base->name].elts;
      if (e->base->name == "append")
        elts.push_back(std::move(item));
      else if (item.kind == Value::Seq)
        elts.insert(elts.end(), item.elts.begin(), item.elts.end());
      return Value::none();
    }
  }
  Value fn = eval(e->base);
  if (fn.kind == Value::Method) return methodCall(fn, e);
  if (auto why = hostCodeCall(fn, e)) diag(Diagnostic::Warning, e->base->range, std::move(*why), Rule::HostCode);
  std::string name = fn.kind == Value::Path ? fn.s : "";
  reportRemovedApi(name, e);
  if (name.rfind("builtins.", 0) == 0) return builtinCall(name.substr(9), e);
  if (const pycore::IntrinsicInfo *intrinsic = pycore::lookupIntrinsic(name)) return callIntrinsic(*intrinsic, e);
  if (name == "np.dtype" || name.rfind("dtype.", 0) == 0) {
    Value arg = e->elts.empty() ? Value::unknown() : eval(e->elts[0]);
    Value v = Value::path("np.dtype");
    v.s = "dtype." + (arg.kind == Value::Path ? arg.s : std::string("?"));
    return v;
  }
  if (fn.kind == Value::Path && fn.s.rfind("dtype.", 0) == 0 && fn.s.find(".type") != std::string::npos)
    return e->elts.empty() ? Value::unknown() : eval(e->elts[0]);
  if (name.size() > 5 && name.substr(name.size() - 5) == ".type")
    return e->elts.empty() ? Value::unknown() : eval(e->elts[0]); // np.dtype(np.float32).type(1e-5)
  if (name.rfind("np.", 0) == 0 && pycore::dtypeOfPath(name))     // np.float32(x): a host scalar
    return e->elts.empty() ? Value::unknown() : eval(e->elts[0]);
  if (std::string_view info = dtypeInfoKind(name); !info.empty()) {
    // nl.finfo(dt) / np.iinfo(dt): an object with the dtype's limits (min, max, eps, tiny, bits).
    const Expr *dtE = !e->elts.empty() ? e->elts[0] : e->keyword("dtype");
    Value arg = dtE ? eval(dtE) : Value::unknown();
    std::optional<DType> dt = dtypeValue(arg);
    if (!dt) return Value::unknown(text(e));
    std::vector<DTypeLimit> limits = dtypeLimits(*dt, info == "iinfo");
    if (limits.empty()) {
      diag(Diagnostic::Error, e->range,
           std::string(name) + " takes a " + (info == "iinfo" ? "integer" : "floating-point") + " dtype, not " +
               std::string(dtypeName(*dt)),
           Rule::CallArgs);
      return Value::unknown(text(e));
    }
    Value obj;
    obj.kind = Value::Object;
    obj.s = std::string(info);
    obj.attrs = std::make_shared<std::map<std::string, Value>>();
    for (const DTypeLimit &l : limits)
      (*obj.attrs)[std::string(l.name)] = l.isInt ? Value::integer(int64_t(l.value)) : Value::floating(l.value);
    (*obj.attrs)["dtype"] = arg;
    return obj;
  }
  if (name.rfind("np.", 0) == 0) {
    std::vector<Value> args;
    for (auto *a : e->elts) args.push_back(eval(a));
    for (auto &kw : e->keywords) eval(kw.value);
    if (pycore::isNumpyScalarFunction(name) && e->keywords.empty()) {
      std::vector<pycore::PyValue> py;
      for (const Value &a : args) py.push_back(toPy(a));
      pycore::BuiltinResult r = pycore::callNumpyScalar(name, py);
      if (r.ok() && r.value.kind != pycore::PyValue::Kind::Unknown) return fromPy(r.value, args, e);
      if (!r.ok()) diag(Diagnostic::Error, e->range, r.error, Rule::Unsupported);
    } else if (!lookupOp(name) && !hostCodeCall(fn, e) && name != "np.identity" && name != "np.eye") {
      // np.identity / np.eye: host constants the interpreter builds (nl.shared_constant's argument).
      diag(Diagnostic::Error, e->range, pycore::hostNumpyMessage(name), Rule::Unsupported);
    }
    return Value::unknown(text(e));
  }
  if (std::string_view op = pycore::operatorSymbol(name); !op.empty() || name == pycore::kReduce) {
    std::vector<Value> args;
    for (auto *a : e->elts) args.push_back(eval(a));
    for (auto &kw : e->keywords) eval(kw.value);
    if (!op.empty())
      return args.size() == 2 && e->keywords.empty() ? binary(std::string(op), args[0], args[1], e->range, text(e))
                                                     : Value::unknown(text(e));
    // functools.reduce(operator.X, sequence[, initial]).
    std::string_view fold = args.empty() || args[0].kind != Value::Path ? "" : pycore::operatorSymbol(args[0].s);
    if (fold.empty() || args.size() < 2 || args.size() > 3 || args[1].kind != Value::Seq || !e->keywords.empty())
      return Value::unknown(text(e));
    std::vector<Value> items = args[1].elts;
    if (args.size() == 3) items.insert(items.begin(), args[2]);
    if (items.empty()) return Value::unknown(text(e)); // CPython's TypeError: `run` reports it
    Value acc = items[0];
    for (size_t k = 1; k < items.size(); ++k) acc = binary(std::string(fold), acc, items[k], e->range, text(e));
    return acc;
  }
  if (pycore::isMathFunction(name)) {
    std::vector<Value> args;
    for (auto *a : e->elts) args.push_back(eval(a));
    for (auto &kw : e->keywords) eval(kw.value);
    std::vector<pycore::PyValue> py;
    for (const Value &a : args) py.push_back(toPy(a));
    pycore::BuiltinResult r = pycore::callMath(name, py);
    // An error (math.sqrt(-1)) is `run`'s to report: the branch may not be taken.
    if (r.ok() && r.value.kind != pycore::PyValue::Kind::Unknown) return fromPy(r.value, args, e);
    return pycore::mathReturnsInt(name) ? symbolicInt(text(e)) : Value::unknown(text(e));
  }
  if (name.rfind("class.", 0) == 0)
    if (auto it = Classes.find(name.substr(6)); it != Classes.end()) return construct(*it->second, e);
  if (name.rfind("helper.", 0) == 0) {
    std::vector<Value> args, keywordArgs;
    for (auto *a : e->elts) {
      args.push_back(eval(a));
      if (args.back().kind == Value::Tensor) readOperand(args.back(), a);
    }
    for (auto &kw : e->keywords) keywordArgs.push_back(eval(kw.value));
    if (auto it = Helpers.find(name.substr(7)); it != Helpers.end()) {
      if (auto v = scalarHelperCall(*it->second, e, args, keywordArgs)) return *v;
      if (const SiblingModule *sib = Imports ? Imports->moduleOf(it->second) : nullptr; sib && LastHelperTileWork)
        diag(Diagnostic::Warning, e->range,
             "function '" + it->second->name + "' of " + sib->module->source().path().str() +
                 " works on tiles and is traced where a statement calls it, not in a loop header or a condition; "
                 "this call's effects are not analysed (not checked, not in the profile)",
             Rule::TraceTime);
      else if (it->second->parent && InlineCalls < kMaxInlineCalls)
        diag(Diagnostic::Warning, e->range,
             "function '" + it->second->name +
                 "' defined in the kernel is traced where a statement calls it, not in a loop header or a "
                 "condition; this call's effects are not analysed",
             Rule::TraceTime);
    }
    return Value::unknown(text(e));
  }
  if (std::string_view buffer = allocatorBuffer(name); !buffer.empty()) {
    for (auto *a : e->elts) eval(a);
    for (auto &kw : e->keywords) eval(kw.value);
    return Value::path(std::string(buffer));
  }
  if (KernelDialect == Dialect::Nki)
    if (const DialectApi *api = currentDialectApi(name)) return dialectCall(*api, e);
  const OpInfo *op = lookupOp(name);
  if (op) reportRemovedKeywords(e);
  if (const char *why = op ? nullptr : unmodelledApiReason(name)) {
    diag(Diagnostic::Error, e->base->range, "'" + name + "' " + why, Rule::Unsupported);
    for (auto *a : e->elts) eval(a);
    for (auto &kw : e->keywords) eval(kw.value);
    return Value::unknown(text(e));
  }
  if (!op) {
    bool nkiName = name.rfind("nl.", 0) == 0 || name.rfind("nisa.", 0) == 0 || name.rfind("nki.", 0) == 0;
    if (nkiName && !isLoopIterator(name))
      diag(Diagnostic::Warning, e->base->range, "unknown NKI API '" + name + "'; its effects are not analysed",
           Rule::UnknownApi);
    for (auto *a : e->elts) eval(a);
    for (auto &kw : e->keywords) eval(kw.value);
    return Value::unknown(text(e));
  }
  return opCall(op, e, resultBuffer, dest);
}

std::optional<Value> KernelBuilder::scalarHelperCall(const Stmt &def, const Expr *e, const std::vector<Value> &args,
                                                     const std::vector<Value> &keywordArgs) {
  constexpr int kMaxHelperDepth = 32; // deeper (recursive) helpers stay opaque
  // Fan-out recursion within the depth limit (f(n-1) + f(n-1)) is 2^32 calls: past this many evaluated
  // calls per kernel the rest stay opaque, so tracing ends in well under a second (run's --timeout
  // only starts with the interpreter).
  constexpr int kMaxHelperCalls = 10000;
  LastHelperTileWork = false;
  if (HelperDepth >= kMaxHelperDepth || HelperCalls >= kMaxHelperCalls) return std::nullopt;
  std::function<bool(const Value &)> holdsTensor = [&](const Value &v) {
    return v.kind == Value::Tensor || v.kind == Value::Method || std::any_of(v.elts.begin(), v.elts.end(), holdsTensor);
  };
  if (std::any_of(args.begin(), args.end(), holdsTensor) ||
      std::any_of(keywordArgs.begin(), keywordArgs.end(), holdsTensor)) {
    LastHelperTileWork = true;
    return std::nullopt;
  }
  // A function of a followed module runs with that module's names and imports; what it reports is said
  // at the call in the kernel's file, naming its own place.
  const SiblingModule *sib = Imports ? Imports->moduleOf(&def) : nullptr;
  const std::map<std::string, Value> *moduleNames = sib ? &siblingEnv(*sib) : &ModuleEnv;
  ModuleScope scope(*this);
  if (sib) {
    Aliases = sib->aliases;
    CurModule = sib->module.get();
    if (!InSibling) SiblingCall = e->range;
    InSibling = sib;
    SiblingDef = &def;
  }
  auto isHelperName = [&](const std::string &name) {
    if (!def.parent || sib) {
      auto it = moduleNames->find(name);
      if (it != moduleNames->end()) return it->second.kind == Value::Path && it->second.s.rfind("helper.", 0) == 0;
    }
    return Helpers.count(name) != 0;
  };
  // The body: assignments to names, `for` over known sequences, `if` on known conditions and returns;
  // every call in it is a builtin, math or such a helper. CPython runs it at trace time; so does this.
  using SK = PyStmt::StmtKind;
  bool pure = !def.body.empty();
  auto namesOnly = [](const Expr *t) {
    return t->kind == ExprKind::Name ||
           ((t->kind == ExprKind::Tuple || t->kind == ExprKind::List) &&
            std::all_of(t->elts.begin(), t->elts.end(), [](const Expr *x) { return x->kind == ExprKind::Name; }));
  };
  syntax::forEachStmt(def.body, [&](const Stmt *s) {
    if (isNoOp(s)) return;
    if (s->kind != SK::Assign && s->kind != SK::AugAssign && s->kind != SK::Return && s->kind != SK::If &&
        s->kind != SK::For && s->kind != SK::Break && s->kind != SK::Continue)
      pure = false;
    for (const Expr *t : s->targets)
      if (!namesOnly(t)) pure = false;
    auto checkExpr = [&](const Expr *x) {
      if (x->kind == ExprKind::Lambda) pure = false;
      if (x->kind != ExprKind::Call) return;
      std::string callee = canonical(x->base);
      if (pycore::isMathFunction(callee) || callee == pycore::kReduce || !pycore::operatorSymbol(callee).empty() ||
          pycore::isNumpyScalarFunction(callee))
        return;
      // The launch grid's integers (a helper splitting rows between programs: nl.program_id(0),
      // nl.num_programs()) and the NeuronCore version are trace-time values of this instance.
      if (const pycore::IntrinsicInfo *in = pycore::lookupIntrinsic(callee);
          in && (in->id == pycore::Intrinsic::ProgramId || in->id == pycore::Intrinsic::NumPrograms ||
                 in->id == pycore::Intrinsic::ProgramNdim || in->id == pycore::Intrinsic::NcVersion))
        return;
      if (lookupOp(callee)) LastHelperTileWork = true;
      if (x->base->kind == ExprKind::Name) {
        if (isHelperName(x->base->name)) return;
        const pycore::BuiltinInfo *b = pycore::lookupBuiltin(x->base->name);
        if (b && b->evaluated && !b->hostEffect) return;
      }
      pure = false;
    };
    for (const Expr *t : s->targets) syntax::forEachExpr(t, checkExpr);
    syntax::forEachExpr(s->value, checkExpr);
  });
  if (!pure) return std::nullopt;
  std::vector<pycore::ParamSpec> params = pycore::paramsOf(def);
  if (std::any_of(params.begin(), params.end(), [](const pycore::ParamSpec &p) { return p.variadic; }))
    return std::nullopt;
  std::vector<std::string_view> keywords;
  for (const auto &kw : e->keywords) keywords.push_back(kw.name);
  pycore::Binding b = pycore::bindArguments(params, args.size(), keywords);
  if (!b.missing.empty() || !b.extraPositional.empty() || !b.unknownKeywords.empty() || !b.repeated.empty())
    return std::nullopt; // CPython raises a TypeError: `run` reports it

  // A module-level helper sees the module's names; one defined in the kernel also the kernel's.
  std::map<std::string, Value> callerEnv = Env;
  if (!def.parent || sib) Env = *moduleNames;
  for (size_t p = 0; p < params.size(); ++p) {
    int at = b.argOf[p];
    Env[std::string(params[p].name)] = at == pycore::Binding::Unbound ? eval(def.params[p].defaultValue)
                                       : size_t(at) < args.size()     ? args[size_t(at)]
                                                                      : keywordArgs[size_t(at) - args.size()];
  }
  ++HelperDepth;
  ++HelperCalls;
  Value result = Value::none();
  // Statements executed in this call: a loop over a long range stays opaque past the budget.
  constexpr int kMaxHelperSteps = 100000;
  int steps = 0;
  enum class Flow { Next, Break, Continue, Return, Opaque };
  std::function<Flow(const std::vector<const Stmt *> &)> run = [&](const std::vector<const Stmt *> &body) {
    for (const Stmt *s : body) {
      if (isNoOp(s)) continue;
      if (++steps > kMaxHelperSteps) return Flow::Opaque;
      switch (s->kind) {
      case SK::Return: result = s->value ? eval(s->value) : Value::none(); return Flow::Return;
      case SK::Break: return Flow::Break;
      case SK::Continue: return Flow::Continue;
      case SK::AugAssign: {
        Value updated = binary(s->op, eval(s->targets[0]), eval(s->value), s->value->range);
        if (updated.kind == Value::Unknown) return Flow::Opaque;
        bind(s->targets[0], updated);
        break;
      }
      case SK::If: {
        std::optional<double> cond = eval(s->value).number();
        if (!cond) return Flow::Opaque;
        Flow f = run(*cond != 0 ? s->body : s->orelse);
        if (f != Flow::Next) return f;
        break;
      }
      case SK::For: {
        std::vector<Value> items;
        const Expr *it = s->value;
        if (it->kind == ExprKind::Call && it->base->kind == ExprKind::Name && it->base->name == "range" &&
            !Env.count("range") && it->keywords.empty() && !it->elts.empty() && it->elts.size() <= 3) {
          std::vector<int64_t> bounds;
          for (const Expr *a : it->elts) {
            Value v = eval(a);
            if (!v.isKnownInt()) return Flow::Opaque;
            bounds.push_back(*v.i.value);
          }
          int64_t start = bounds.size() > 1 ? bounds[0] : 0, stop = bounds.size() > 1 ? bounds[1] : bounds[0];
          int64_t step = bounds.size() > 2 ? bounds[2] : 1;
          if (step == 0) return Flow::Opaque; // CPython's ValueError: `run` reports it
          for (int64_t x = start; step > 0 ? x < stop : x > stop; x += step) {
            if (items.size() > size_t(kMaxHelperSteps)) return Flow::Opaque;
            items.push_back(Value::integer(x));
          }
        } else if (Value iter = eval(it); iter.kind == Value::Seq) {
          items = iter.elts;
        } else {
          return Flow::Opaque;
        }
        bool broke = false;
        for (const Value &item : items) {
          bind(s->targets[0], item);
          Flow f = run(s->body);
          if (f == Flow::Break) {
            broke = true;
            break;
          }
          if (f == Flow::Return || f == Flow::Opaque) return f;
        }
        if (!broke) {
          Flow f = run(s->orelse);
          if (f != Flow::Next) return f;
        }
        break;
      }
      default: {
        Value v = eval(s->value);
        for (const Expr *t : s->targets) bind(t, v);
      }
      }
    }
    return Flow::Next;
  };
  Flow flow = run(def.body);
  if (flow == Flow::Opaque || flow == Flow::Break || flow == Flow::Continue) result = Value::unknown(text(e));
  --HelperDepth;
  Env = std::move(callerEnv);
  if (result.kind == Value::Unknown) return std::nullopt;
  if (result.kind == Value::Int && !result.isKnownInt()) return symbolicInt(text(e)); // named as the caller wrote it
  return result;
}

Value KernelBuilder::construct(const Stmt &cls, const Expr *e) {
  pycore::ClassLayout layout = pycore::classLayout(cls);
  std::vector<Value> args, keywordArgs;
  for (auto *a : e->elts) args.push_back(eval(a));
  for (auto &kw : e->keywords) keywordArgs.push_back(eval(kw.value));
  if (!layout.error.empty()) {
    diag(Diagnostic::Warning, e->range, layout.error + "; the object is not analysed", Rule::TraceTime);
    return Value::unknown(text(e));
  }
  // A call CPython rejects: `run` reports it.
  std::vector<std::string_view> keywords;
  for (const auto &kw : e->keywords) keywords.push_back(kw.name);
  pycore::Binding b = pycore::bindArguments(layout.fields, args.size(), keywords);
  if (!b.missing.empty() || !b.extraPositional.empty() || !b.unknownKeywords.empty() || !b.repeated.empty())
    return Value::unknown(text(e));
  Value obj;
  obj.kind = Value::Object;
  obj.s = std::string(pycore::classNameOf(cls));
  obj.attrs = std::make_shared<std::map<std::string, Value>>();
  // Class attributes are evaluated in the module's scope.
  std::map<std::string, Value> callerEnv = Env;
  Env = ModuleEnv.empty() ? Env : ModuleEnv;
  for (const Stmt *s : layout.attributes) {
    Value v = eval(s->value);
    for (const Expr *t : s->targets)
      if (t->kind == ExprKind::Name) (*obj.attrs)[t->name] = v;
  }
  for (size_t f = 0; f < layout.fields.size(); ++f) {
    int at = b.argOf[f];
    (*obj.attrs)[std::string(layout.fields[f].name)] = at == pycore::Binding::Unbound ? eval(layout.defaults[f])
                                                       : size_t(at) < args.size()
                                                           ? args[size_t(at)]
                                                           : keywordArgs[size_t(at) - args.size()];
  }
  Env = std::move(callerEnv);
  return obj;
}

pycore::PyValue KernelBuilder::toPy(const Value &v) const {
  using P = pycore::PyValue;
  switch (v.kind) {
  case Value::None: return P::none();
  case Value::Bool: return v.isKnownInt() ? P::boolean(*v.i.value != 0) : P::unknown();
  case Value::Int: return v.isKnownInt() ? P::integer(*v.i.value) : P::unknown();
  case Value::Float: return v.fKnown ? P::floating(v.f) : P::unknown();
  case Value::Str: return P::str(v.s);
  case Value::Seq: {
    if (v.s == "par_dim") break; // nl.par_dim(n) is a marked dimension, not a tuple
    std::vector<P> elts;
    for (const Value &x : v.elts) elts.push_back(toPy(x));
    return P::seq(std::move(elts), v.isList);
  }
  case Value::Unknown: return P::unknown();
  case Value::Index: // an integer that differs between iterations (`h * step`, `min(w + h * step, n)`)
    if (v.idx.aranges.empty()) return P::unknown();
    break;
  default: break;
  }
  P p;
  p.kind = P::Kind::Opaque;
  p.s = v.text();
  if (v.kind == Value::Tensor) {
    auto shape = tileShapeOf(v);
    if (!shape.empty() && shape[0] > 0 && !UnknownShape.count(v.tensor)) p.length = shape[0];
    p.truth = true;
  }
  return p;
}

Value KernelBuilder::fromPy(const pycore::PyValue &p, const std::vector<Value> &args, const Expr *e) const {
  using K = pycore::PyValue::Kind;
  switch (p.kind) {
  case K::None: return Value::none();
  case K::Bool: return Value::boolean(p.i != 0);
  case K::Int: return Value::integer(p.i);
  case K::Float: return Value::floating(p.f);
  case K::Str: return Value::str(p.s);
  case K::Seq: {
    std::vector<Value> out;
    for (const auto &x : p.elts) out.push_back(fromPy(x, args, e));
    return Value::seq(std::move(out), p.isList);
  }
  case K::Ref: {
    const Value &a = args[size_t(p.arg)];
    return p.elt < 0 ? a : a.elts[size_t(p.elt)];
  }
  case K::Range:
  case K::Unknown:
  case K::Opaque: break; // a range outside a loop header stays opaque
  }
  return Value::unknown(text(e));
}

Value KernelBuilder::builtinCall(const std::string &fn, const Expr *e) {
  std::vector<Value> args;
  for (auto *a : e->elts) args.push_back(eval(a));
  if (fn == "min" && e->keywords.empty())
    if (std::optional<Value> m = minOfAffines(args)) {
      m->s = text(e);
      return *m;
    }
  std::vector<pycore::PyValue> py;
  for (const Value &a : args) py.push_back(toPy(a));
  pycore::BuiltinResult r = pycore::callBuiltin(fn, py);
  const pycore::BuiltinInfo *info = pycore::lookupBuiltin(fn);
  if (!r.ok() || r.value.kind == pycore::PyValue::Kind::Unknown)
    // Not known at trace time (or an error `run` reports): an integer stays a symbolic integer.
    return info && info->unknownIsInt ? Value::integer(SymInt::symbolic(text(e))) : Value::unknown(text(e));
  return fromPy(r.value, args, e);
}

Value KernelBuilder::callIntrinsic(const pycore::IntrinsicInfo &intrinsic, const Expr *e) {
  using pycore::Intrinsic;
  pycore::IntrinsicArguments bound = pycore::intrinsicArguments(intrinsic, *e);
  if (!bound.error.empty()) {
    for (const auto &kw : e->keywords) eval(kw.value);
    diag(Diagnostic::Error, e->range, bound.error, Rule::CallArgs);
    return Value::unknown(text(e));
  }
  std::vector<Value> args;
  for (auto *a : bound.args) args.push_back(eval(a));
  std::vector<pycore::PyValue> py;
  for (const Value &a : args) py.push_back(toPy(a));
  switch (intrinsic.id) {
  case Intrinsic::Arange: {
    pycore::ArangeBounds r = pycore::arangeBounds(py);
    if (!r.error.empty()) diag(Diagnostic::Error, e->range, r.error, Rule::CallArgs);
    IndexVal x;
    x.rank = 1;
    if (r.start && r.extent) {
      if (args.size() >= 2) x.base = Affine::constantOf(*r.start);
      x.aranges.push_back({0, *r.extent, 1});
    } else {
      x.base = Affine::unknown();
      x.aranges.push_back({0, 0, 1});
    }
    Value v = Value::index(x);
    v.s = text(e);
    return v;
  }
  case Intrinsic::ParDim: {
    Value v = args.empty() ? Value::unknown() : args[0];
    v.s = "par_dim";
    Value marked = Value::seq({v});
    marked.s = "par_dim";
    return marked;
  }
  case Intrinsic::NcVersion:
    if (!args.empty()) diag(Diagnostic::Error, e->range, std::string(intrinsic.usage), Rule::CallArgs);
    return Value::path(ncVersionOf(K));
  case Intrinsic::ProgramId:
  case Intrinsic::NumPrograms:
  case Intrinsic::ProgramNdim: {
    // The instance of the launch grid being traced (program ids are constants of this instance's IR);
    // without a grid, one instance, said once per kernel.
    ReadGrid = true;
    std::optional<int64_t> axis;
    if (intrinsic.id == Intrinsic::ProgramNdim) {
      if (!args.empty()) diag(Diagnostic::Error, e->range, std::string(intrinsic.usage), Rule::CallArgs);
    } else {
      pycore::AxisArg a = pycore::launchAxis(intrinsic.name, py, intrinsic.id == Intrinsic::NumPrograms);
      if (!a.error.empty()) diag(Diagnostic::Error, e->range, a.error, Rule::CallArgs);
      if (a.axis)
        if (std::string bad = Grid.axisError(intrinsic.name, *a.axis); !bad.empty())
          diag(Diagnostic::Error, e->range, bad, Rule::CallArgs);
      axis = a.axis;
    }
    if (!ReportedSpmd && Grid.dims.empty()) {
      ReportedSpmd = true;
      diag(Diagnostic::Warning, e->range, std::string(pycore::kOneInstanceNote), Rule::TraceTime);
    }
    if (intrinsic.id == Intrinsic::ProgramNdim) return Value::integer(Grid.ndim());
    if (!axis) return Value::integer(SymInt::symbolic(text(e)));
    return Value::integer(intrinsic.id == Intrinsic::ProgramId ? Grid.programId(*axis) : Grid.numPrograms(*axis));
  }
  case Intrinsic::Ds: {
    // nl.ds(start, size): the slice start:start+size; the start may be affine in loop variables.
    std::vector<pycore::PyValue> bounds = py; // an affine start is an integer not known at trace time
    for (size_t k = 0; k < bounds.size(); ++k)
      if (args[k].kind == Value::Index) bounds[k] = pycore::PyValue::unknown();
    pycore::ArangeBounds r = pycore::dsBounds(bounds);
    if (!r.error.empty()) diag(Diagnostic::Error, e->range, r.error, Rule::CallArgs);
    Value v;
    v.kind = Value::SliceV;
    v.s = text(e);
    IndexVal start;
    start.base = Affine::unknown();
    if (args.size() == 2) {
      if (auto x = args[0].asIndex(); x && x->aranges.empty()) start = *x;
      v.i = args[1].kind == Value::Int || args[1].kind == Value::Index ? extentOf(args[1])
                                                                       : SymInt::symbolic(text(e->elts[1]));
    }
    v.idx = start;
    return v;
  }
  case Intrinsic::Mgrid: break;
  }
  diag(Diagnostic::Error, e->range, std::string(intrinsic.usage), Rule::CallArgs);
  return Value::unknown(text(e));
}

std::vector<const Expr *> KernelBuilder::bindArgs(const OpInfo *op, const Expr *e) {
  std::vector<pycore::ParamSpec> params;
  for (const auto &p : op->params) params.push_back({p.name, p.required});
  std::vector<std::string_view> keywords;
  for (const auto &kw : e->keywords) keywords.push_back(kw.name);
  pycore::Binding b = pycore::bindArguments(params, e->elts.size(), keywords);
  for (size_t i : b.extraPositional)
    diag(Diagnostic::Warning, e->elts[i]->range, llvm::formatv("too many arguments to {0}", op->name).str(),
         Rule::CallArgs);
  for (size_t i : b.repeated)
    diag(Diagnostic::Error, e->range,
         llvm::formatv("{0}() got multiple values for argument '{1}'", op->name, op->params[i].name).str(),
         Rule::CallArgs);
  for (size_t k : b.unknownKeywords) {
    const auto &kw = e->keywords[k];
    if (kw.name != "name" && kw.name != "lazy_initialization")
      diag(Diagnostic::Warning, kw.range, "unknown keyword '" + kw.name + "' for " + std::string(op->name),
           Rule::CallArgs);
  }
  std::vector<const Expr *> bound(op->params.size(), nullptr);
  for (size_t i = 0; i < bound.size(); ++i) {
    int at = b.argOf[i];
    if (at != pycore::Binding::Unbound)
      bound[i] = size_t(at) < e->elts.size() ? e->elts[size_t(at)] : e->keywords[size_t(at) - e->elts.size()].value;
  }
  return bound;
}

Value KernelBuilder::newTile(const OpInfo *op, std::vector<int64_t> shape, Buffer buffer, DType dtype,
                             ByteRange range) {
  Tensor t;
  t.id = int(K.tensors.size());
  t.buffer = buffer;
  t.dtype = dtype;
  t.isTile = true;
  t.parDim = isHBM(buffer) ? -1 : 0;
  t.definedBy = Cur ? Cur->id : -1;
  t.scope = CurLoop;
  t.range = range;
  t.producer = op;
  for (int64_t d : shape) t.shape.push_back(d > 0 ? SymInt::known(d) : SymInt::symbolic("?"));
  K.tensors.push_back(t);
  // Arguments are evaluated before their call, so the last tile a statement creates is its result
  // (`a = nl.mean(nl.square(t), axis=1)` defines the mean, not the square).
  if (Cur) Cur->definesTensor = t.id;
  return Value::tensorRef(t.id);
}

std::optional<DType> KernelBuilder::dtypeValue(const Value &v) const {
  if (v.kind != Value::Path) return std::nullopt;
  std::string s = v.s;
  if (s.rfind("dtype.", 0) == 0) s = s.substr(6);
  return parseDType(s);
}

Value KernelBuilder::opCall(const OpInfo *op, const Expr *e, std::optional<Buffer> resultBuffer, const Expr *dest,
                            const std::vector<const Expr *> *preBound) {
  if (Cur && !Cur->op) {
    Cur->op = op;
    Cur->callee = std::string(op->name);
  }
  auto bound = preBound ? *preBound : bindArgs(op, e);
  std::vector<Value> vals(bound.size());
  for (size_t i = 0; i < bound.size(); ++i) {
    if (!bound[i]) continue;
    const ParamInfo &p = op->params[i];
    vals[i] = eval(bound[i]);
    if (p.role == Role::Flag && Cur) {
      auto n = vals[i].number();
      bool set = n ? *n != 0 : vals[i].kind == Value::Str && flagStringSet(vals[i].s);
      if (set) Cur->setFlags.push_back(std::string(p.name));
    }
    if (p.role == Role::Tile || p.role == Role::Operand) readOperand(vals[i], bound[i], p.name);
    if (p.role == Role::Engine && Cur && vals[i].kind == Value::Path)
      if (const NamedConstant *c = lookupConstant(vals[i].s); c && c->kind == NamedConstant::EngineKind) {
        auto named = Engine(c->value);
        if (named != Engine::Unknown && !op->runsOn(named))
          diag(Diagnostic::Error, bound[i]->range,
               llvm::formatv("{0} does not run on the {1} engine", op->name, engineName(named)).str(), Rule::CallArgs);
        else
          Cur->engine = named;
      }
    if (p.role == Role::Mask && Cur && vals[i].kind != Value::None) {
      // Every sized conjunct once (a store and the op in its value often repeat one mask); one mask
      // the model cannot size leaves the statement's tiles at their full size.
      bool sized = vals[i].kind == Value::Path && vals[i].s == "mask" && vals[i].maskBounds;
      if ((!Cur->hasMask || (Cur->maskBounds.empty() && !Cur->unlessAll.empty())) && sized)
        Cur->maskBounds = *vals[i].maskBounds;
      else if (Cur->hasMask && sized && !Cur->maskBounds.empty()) {
        for (const MaskBound &m : *vals[i].maskBounds)
          if (llvm::none_of(Cur->maskBounds, [&](const MaskBound &x) {
                return x.axis == m.axis && x.extent == m.extent && x.coeff == m.coeff &&
                       x.base.constant == m.base.constant && x.base.terms == m.base.terms;
              }))
            Cur->maskBounds.push_back(m);
      } else {
        Cur->maskBounds.clear(), Cur->unlessAll.clear();
      }
      Cur->hasMask = true;
    }
    if (p.role == Role::Dest && Cur && vals[i].kind == Value::Tensor) {
      Access a = wholeAccess(vals[i], bound[i]);
      a.isWrite = true;
      a.param = std::string(p.name);
      Cur->writes.push_back(a);
    }
    // activation / tensor_scalar_reduce(..., reduce_res=t): the instruction also writes the row reduction into t.
    if (p.name == "reduce_res" && Cur && vals[i].kind == Value::Tensor) {
      Access r = wholeAccess(vals[i], bound[i]);
      r.isWrite = true;
      r.param = "reduce_res";
      Cur->writes.push_back(r);
    }
  }
  for (size_t i = 0; i < bound.size() && !preBound; ++i)
    if (op->params[i].required && !bound[i])
      diag(Diagnostic::Error, e->range,
           std::string(op->name) + " is missing its required argument '" + std::string(op->params[i].name) + "'",
           Rule::CallArgs);
  auto paramVal = [&](std::string_view n) -> const Value * {
    int i = op->paramIndex(n);
    return i >= 0 && bound[i] ? &vals[i] : nullptr;
  };
  if (op->kind == OpKind::AffineSelect) {
    // The GpSimd engine evaluates one affine comparison of the indices with 0, and selects a scalar.
    int at = op->paramIndex("pred");
    if (const Expr *pe = at >= 0 ? bound[size_t(at)] : nullptr) {
      const Value &pv = vals[size_t(at)];
      bool combined = pe->kind == ExprKind::BinOp && (pe->name == "&" || pe->name == "|");
      if (combined || pe->kind == ExprKind::BoolOp)
        diag(Diagnostic::Error, pe->range,
             std::string(op->name) + "'s pred combines several comparisons; it takes one affine comparison of "
                                     "nl.arange indices (use nl.where for more)",
             Rule::CallArgs);
      else if (pv.kind != Value::Unknown && !(pv.kind == Value::Path && pv.s == "mask"))
        diag(Diagnostic::Error, pe->range,
             std::string(op->name) + "'s pred must be an affine comparison of nl.arange indices (i_p >= i_f), not '" +
                 text(pe) + "'",
             Rule::CallArgs);
    }
    int fa = op->paramIndex("on_false_value");
    if (const Expr *fe = fa >= 0 ? bound[size_t(fa)] : nullptr; fe && vals[size_t(fa)].kind == Value::Tensor)
      diag(Diagnostic::Error, fe->range, std::string(op->name) + "'s on_false_value must be a scalar, not a tile",
           Rule::CallArgs);
  }
  auto firstTile = [&]() -> const Value * {
    for (size_t i = 0; i < bound.size(); ++i)
      if (bound[i] && op->params[i].role == Role::Tile) return &vals[i];
    return nullptr;
  };
  // The tile (not a scalar) given for an operand slot: the row's default result dtype comes from these.
  auto slotTileDType = [&](Slot s) -> std::optional<DType> {
    for (size_t i = 0; i < bound.size(); ++i)
      if (bound[i] && op->params[i].slot == s && vals[i].kind == Value::Tensor) return dtypeOf(vals[i]);
    return std::nullopt;
  };
  DType dtype = DType::Float32;
  if (const Value *t = firstTile()) dtype = dtypeOf(*t);
  if (auto d = defaultResultDType(*op, slotTileDType(Slot::Data), slotTileDType(Slot::Data2))) dtype = *d;
  if (const Value *d = paramVal("dtype"))
    if (auto dt = dtypeValue(*d)) dtype = *dt;
  Buffer buffer = resultBuffer.value_or(op->result);
  if (const Value *b = paramVal("buffer"))
    if (b->kind == Value::Path)
      if (const NamedConstant *c = lookupConstant(b->s); c && c->kind == NamedConstant::BufferKind)
        buffer = Buffer(c->value);

  switch (op->kind) {
  case OpKind::Alloc: {
    bool dtypeKnown = paramVal("dtype") && dtypeValue(*paramVal("dtype"));
    Value shape = paramVal("shape") ? *paramVal("shape") : Value();
    if (const ParamInfo *like = op->slot(Slot::Like); like && paramVal(like->name)) {
      // nl.zeros_like(a): a's tile shape, and a's dtype unless dtype= names one.
      const Value &a = *paramVal(like->name);
      if (a.kind != Value::Tensor && a.kind != Value::Unknown)
        diag(Diagnostic::Error, e->range,
             std::string(op->name) + " takes the shape of a tensor; '" + std::string(like->name) + "' is " +
                 text(bound[size_t(op->slotIndex(Slot::Like))]),
             Rule::CallArgs);
      if (a.kind == Value::Tensor) {
        shape = Value::seq({});
        const Tensor &source = K.tensors[a.tensor];
        if (!a.view && source.blockDims() == 0)
          for (const SymInt &x : source.shape) shape.elts.push_back(Value::integer(x));
        else
          for (int64_t x : tileShapeOf(a)) shape.elts.push_back(x > 0 ? Value::integer(x) : Value());
        if (!dtypeKnown) dtype = dtypeOf(a), dtypeKnown = source.dtypeKnown;
      }
    }
    return allocation(op, e, shape, dtype, buffer, dtypeKnown, bound);
  }
  case OpKind::Store:
  case OpKind::DmaCopy: return Value::none();
  default: break;
  }
  std::vector<int64_t> shape;
  switch (op->shape) {
  case ShapeRule::SameAsInput:
    if (const Value *t = firstTile())
      shape = tileShapeOf(*t);
    else if (const Value *ix = paramVal("expr"); ix && ix->kind == Value::Index) // nisa.iota
      shape = ix->idx.shape();
    break;
  case ShapeRule::MatmulResult: {
    const Value *a = bound[0] ? &vals[0] : nullptr;
    const Value *b = bound.size() > 1 && bound[1] ? &vals[1] : nullptr;
    auto sa = a ? tileShapeOf(*a) : std::vector<int64_t>{};
    auto sb = b ? tileShapeOf(*b) : std::vector<int64_t>{};
    if (op->name == "nl.matmul") {
      const Value *tx = paramVal("transpose_x");
      bool transposes = matmulTransposesStationary(*op, tx && tx->number() && *tx->number() != 0);
      // x @ y is [rows of x, columns of y]; x given K x M (transpose_x) has its rows along the free axis.
      shape = {sa.size() >= 2 ? (transposes ? sa[0] : sa[1]) : 0, sb.size() >= 2 ? sb.back() : 0};
    } else if (const Value *mode = paramVal(kPerfModeParam);
               mode && mode->kind == Value::Str && flagStringSet(mode->s)) {
      // Double row: [K, 2, M] x [K, 2, N] -> [M, N] (NKI/Platform.h).
      auto packedFree = [](const std::vector<int64_t> &s) {
        int64_t n = 1;
        for (size_t i = 1; i < s.size(); ++i) n *= s[i];
        return s.size() >= 2 ? n / kDoubleRowPacking : 0;
      };
      shape = {packedFree(sa), packedFree(sb)};
    } else {
      shape = {sa.size() >= 2 ? sa.back() : (sa.empty() ? 0 : 1), sb.size() >= 2 ? sb.back() : 0};
    }
    dtype = DType::Float32;
    break;
  }
  case ShapeRule::TransposePF:
    if (const Value *t = firstTile()) {
      auto s = tileShapeOf(*t);
      if (s.size() >= 2) shape = {s.back(), s[0]};
    }
    break;
  case ShapeRule::ReduceFree:
    if (const Value *t = firstTile()) {
      auto s = tileShapeOf(*t);
      std::vector<int64_t> axes;
      if (const Value *axis = paramVal("axis")) {
        if (axis->kind == Value::Seq)
          axes = intList(*axis);
        else if (axis->isKnownInt())
          axes = {*axis->i.value};
      }
      const Value *keep = paramVal("keepdims");
      bool keepdims = keep && keep->kind == Value::Bool && keep->i.value.value_or(0) != 0;
      if (!s.empty()) shape = reduceFreeAxes(s, axes, keepdims).shape;
    }
    break;
  case ShapeRule::FromShapeArg:
  case ShapeRule::BroadcastTo:
    if (const Value *s = paramVal("shape")) shape = intList(*s);
    break;
  case ShapeRule::FixedFree:
    if (const Value *t = firstTile()) {
      auto s = tileShapeOf(*t);
      if (!s.empty()) shape = {s[0], op->resultFree};
    }
    break;
  default: break;
  }
  (void)dest;
  return newTile(op, shape, buffer, dtype, e->range);
}

std::vector<int64_t> KernelBuilder::intList(const Value &v) const {
  std::vector<int64_t> out;
  if (v.kind != Value::Seq) return out;
  for (auto &x : v.elts) {
    if (x.kind == Value::Seq && x.s == "par_dim" && !x.elts.empty())
      out.push_back(x.elts[0].i.value.value_or(0));
    else
      out.push_back(x.isKnownInt() ? *x.i.value : 0);
  }
  return out;
}

Value KernelBuilder::allocation(const OpInfo *op, const Expr *e, const Value &shapeVal, DType dtype, Buffer buffer,
                                bool dtypeGiven, const std::vector<const Expr *> &bound) {
  Tensor t;
  t.id = int(K.tensors.size());
  t.buffer = buffer;
  t.dtype = dtype;
  t.definedBy = Cur ? Cur->id : -1;
  t.scope = CurLoop;
  t.range = e->range;
  t.parDim = isHBM(buffer) ? -1 : 0;
  bool unknownRank = false;
  if (op->name == "nl.shared_constant") {
    // np.identity(n) / np.eye(N, M): the constants the interpreter builds, with their arguments bound
    // positionally or by keyword as numpy names them.
    const Expr *c = bound.empty() ? nullptr : bound[0];
    int64_t rows = 0, cols = 0;
    if (c && c->kind == ExprKind::Call) {
      std::string callee = pycore::canonicalPath(c->base->dottedName());
      auto intArgument = [&](size_t position, std::string_view keyword) -> int64_t {
        const Expr *a = position < c->elts.size() ? c->elts[position] : c->keyword(keyword);
        if (!a) return 0;
        Value v = eval(a);
        return v.isKnownInt() ? *v.i.value : 0;
      };
      if (callee == "np.identity") rows = cols = intArgument(0, "n");
      if (callee == "np.eye") {
        rows = intArgument(0, "N");
        cols = c->elts.size() > 1 || c->keyword("M") ? intArgument(1, "M") : rows;
      }
    }
    if (rows > 0 && cols > 0)
      t.shape = {SymInt::known(rows), SymInt::known(cols)};
    else
      t.shape = {SymInt::symbolic("?")};
    t.parDim = -1;
    t.buffer = Buffer::SharedHBM;
  } else if (shapeVal.kind == Value::Seq) {
    int parDim = -1;
    for (size_t d = 0; d < shapeVal.elts.size(); ++d) {
      const Value &x = shapeVal.elts[d];
      if (x.kind == Value::Seq && x.s == "par_dim") {
        parDim = int(d);
        const Value &inner = x.elts.empty() ? Value() : x.elts[0];
        t.shape.push_back(extentOf(inner));
      } else {
        t.shape.push_back(extentOf(x));
      }
      // `min(E, n - i * E)`: extent E, each iteration keeping its first `n - i * E` indices.
      const Value &v = x.kind == Value::Seq && x.s == "par_dim" ? (x.elts.empty() ? Value() : x.elts[0]) : x;
      if (t.shape.back().value || v.kind != Value::Index || !v.idx.minOf || !v.idx.aranges.empty()) continue;
      PartialExtent partial;
      partial.dim = d;
      std::optional<int64_t> least;
      bool affine = true;
      for (const Affine &term : *v.idx.minOf) {
        if (!term.known)
          affine = false;
        else if (term.isConstant())
          least = std::min(least.value_or(term.constant), term.constant);
        else
          partial.varying.push_back(term);
      }
      if (!affine || !least || *least <= 0 || partial.varying.empty()) continue;
      partial.extent = *least;
      t.shape.back() = SymInt::known(*least);
      PartialExtents[t.id].push_back(std::move(partial));
    }
    if (!isHBM(buffer)) t.parDim = parDim >= 0 ? parDim : 0;
  } else {
    // Neither the rank nor the extents are known (`nl.ndarray(a.shape, ...)` without input shapes): the
    // tensor is indexed like an argument of unknown shape, never as rank 1. With input shapes given,
    // a shape the front end still cannot compute is worth a warning.
    t.shape = {SymInt::symbolic(shapeVal.text())};
    unknownRank = true;
    if (Inputs || shapeVal.kind != Value::Unknown)
      diag(Diagnostic::Warning, e->range, "shape of this tensor is not known at trace time", Rule::TraceTime);
  }
  if (!dtypeGiven) t.dtypeKnown = false;
  K.tensors.push_back(t);
  if (unknownRank) UnknownShape.insert(t.id);
  if (Cur) {
    Cur->kind = StmtKind::Alloc;
    Cur->definesTensor = t.id;
  }
  return Value::tensorRef(t.id);
}

Value KernelBuilder::dtypeView(const Value &m, DType to, const Expr *e) {
  Tensor t = K.tensors[size_t(m.tensor)];
  std::string what =
      text(e->base && e->base->base ? e->base->base : e->base) + ".view(" + std::string(dtypeName(to)) + ")";
  if (m.view) {
    diag(Diagnostic::Error, e->range, what + ": a dtype view of a slice is not supported; view the whole tensor",
         Rule::Unsupported);
    return Value::unknown(text(e));
  }
  int64_t from = dtypeBytes(t.dtype), into = dtypeBytes(to);
  // The free dimension scales by the size ratio; the partition dimension (and the bytes) stay.
  if (from != into && t.dtypeKnown && !t.shape.empty()) {
    SymInt &last = t.shape.back();
    bool partitionOnly = t.parDim >= 0 && size_t(t.parDim) + 1 == t.shape.size();
    if (partitionOnly || (last.isKnown() && (*last.value * from) % into != 0)) {
      diag(Diagnostic::Error, e->range,
           what + ": the last dimension holds " +
               (partitionOnly ? std::string("the partitions")
                              : std::to_string(*last.value * from) + " bytes (" + last.str() + " x " +
                                    std::string(dtypeName(t.dtype)) + ")") +
               ", which is not a whole number of " + std::string(dtypeName(to)) + " elements (" + std::to_string(into) +
               " bytes)",
           Rule::CallArgs);
      return Value::unknown(text(e));
    }
    last = last.isKnown()
               ? SymInt::known(*last.value * from / into)
               : SymInt::symbolic("(" + last.str() + ")*" + std::to_string(from) + "//" + std::to_string(into));
  }
  t.id = int(K.tensors.size());
  t.aliasOf = K.tensors[size_t(m.tensor)].aliasOf >= 0 ? K.tensors[size_t(m.tensor)].aliasOf : m.tensor;
  t.isArgument = false;
  t.isOutput = false;
  t.dtype = to;
  t.dtypeKnown = true;
  t.range = e->range;
  t.name = K.tensors[size_t(m.tensor)].name + ".view";
  K.tensors.push_back(t);
  if (UnknownShape.count(m.tensor)) UnknownShape.insert(t.id);
  return Value::tensorRef(t.id);
}

Value KernelBuilder::methodCall(const Value &m, const Expr *e) {
  if (m.s == "ap") return accessPattern(m, e);
  std::vector<Value> args;
  for (auto *a : e->elts) args.push_back(eval(a));
  // reshape(shape=...) / broadcast_to(shape=...): the keyword form of the one shape argument.
  if (const Expr *kw = args.empty() ? e->keyword("shape") : nullptr) args.push_back(eval(kw));
  const Tensor &src = K.tensors[m.tensor];
  // t.view(dtype): the same bytes read as another dtype (both dialects: nki.tensor.view, NkiTensor.view).
  if (const Expr *kw = args.empty() && m.s == "view" ? e->keyword("dtype") : nullptr) args.push_back(eval(kw));
  if (m.s == "view" && args.size() == 1 && dtypeValue(args[0])) return dtypeView(m, *dtypeValue(args[0]), e);
  Value shapeArg = args.size() == 1 && args[0].kind == Value::Seq ? args[0] : Value::seq(args);
  if (m.s == "reshape" || m.s == "view") {
    // A free view of an HBM tensor with another shape.
    Tensor t = src;
    t.id = int(K.tensors.size());
    t.aliasOf = src.aliasOf >= 0 ? src.aliasOf : src.id;
    t.isArgument = false;
    t.shape.clear();
    for (auto &x : shapeArg.elts) t.shape.push_back(x.kind == Value::Int ? x.i : SymInt::symbolic(x.text()));
    t.range = e->range;
    t.name = src.name + ".reshape";
    K.tensors.push_back(t);
    UnknownShape.erase(t.id);
    return Value::tensorRef(t.id);
  }
  if (m.s == "broadcast_to") {
    const OpInfo *op = lookupOp("tile.broadcast_to");
    Value srcVal = m;
    srcVal.kind = Value::Tensor;
    readOperand(srcVal, e->base);
    if (Cur && !Cur->op) {
      Cur->op = op;
      Cur->callee = std::string(op->name);
    }
    return newTile(op, intList(shapeArg), Buffer::SBUF, src.dtype, e->range);
  }
  return Value::unknown(text(e));
}

} // namespace accelopt::nki::frontend
