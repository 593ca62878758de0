// The KernelBuilder's set-up: module imports and constants, kernel parameters bound to the
// input specs, names resolved to canonical NKI paths, diagnostics, and which decorators mark kernels.
#include "NKI/FrontEnd/KernelBuilder.h"
#include "NKI/PyCore.h"
#include "NKI/PyInt.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <functional>
#include <limits>

namespace accelopt::nki::frontend {

Kernel KernelBuilder::build(const Stmt *def) {
  K.name = def->name;
  K.def = def;
  K.source = &M.source();
  K.shapesKnown = Inputs != nullptr;
  KernelDialect = dialectOfImports(M);
  K.dialect = KernelDialect;
  bindModuleConstants();
  ModuleEnv = Env;
  bindParams(def);
  block(def->body, K.body, -1);
  placeForeignNodes();
  if (KernelDialect == Dialect::Nki) checkPsumBanks();
  return std::move(K);
}

void KernelBuilder::diag(Diagnostic::Severity sev, ByteRange r, std::string msg, Rule rule) {
  if (BuildingSiblingEnv) return; // CPython runs a module's constants once at import: `run` reports their errors
  if (InSibling) {
    K.diagnostics.push_back({sev, SiblingCall.begin, SiblingCall.end,
                             inSiblingFunction(*InSibling, *SiblingDef, r.begin, msg), ruleId(rule)});
    return;
  }
  K.diagnostics.push_back({sev, r.begin, r.end, std::move(msg), ruleId(rule)});
}

void KernelBuilder::bindSiblingImports(const syntax::Module &m) {
  const auto *bindings = Imports ? Imports->bindingsOf(m) : nullptr;
  if (!bindings) return;
  for (const auto &[local, target] : *bindings) {
    Aliases.erase(local);
    Env[local] = siblingValue(target);
  }
}

Value KernelBuilder::siblingValue(const ImportTarget &t) {
  const std::map<std::string, Value> &env = siblingEnv(*t.module);
  if (t.attr.empty()) {
    Value obj;
    obj.kind = Value::Object;
    obj.s = "module " + t.module->name;
    obj.attrs = std::make_shared<std::map<std::string, Value>>(env);
    return obj;
  }
  auto it = env.find(t.attr);
  return it != env.end() ? it->second : Value::unknown(t.attr);
}

const std::map<std::string, Value> &KernelBuilder::siblingEnv(const SiblingModule &sib) {
  if (auto it = SiblingEnvs.find(&sib); it != SiblingEnvs.end()) return it->second;
  SiblingEnvs[&sib]; // empty while it is built: an import cycle sees no names
  std::map<std::string, Value> savedEnv = std::move(Env);
  std::map<std::string, std::string> savedAliases = std::move(Aliases);
  const syntax::Module *savedModule = CurModule;
  bool savedBuilding = BuildingSiblingEnv;
  Env.clear();
  Aliases = sib.aliases;
  CurModule = sib.module.get();
  BuildingSiblingEnv = true;
  bindSiblingImports(*sib.module);
  for (const Stmt *s : sib.module->body()) {
    if (s->kind == PyStmt::StmtKind::FunctionDef) {
      std::string key = sib.name + "." + s->name;
      Helpers[key] = s;
      Env[s->name] = Value::path("helper." + key);
    }
    if (s->kind != PyStmt::StmtKind::Assign || !pycore::isModuleConstant(s->value)) continue;
    Value v = eval(s->value);
    for (const Expr *t : s->targets) bind(t, v);
  }
  SiblingEnvs[&sib] = std::move(Env);
  Env = std::move(savedEnv);
  Aliases = std::move(savedAliases);
  CurModule = savedModule;
  BuildingSiblingEnv = savedBuilding;
  return SiblingEnvs[&sib];
}

std::string KernelBuilder::canonical(const Expr *e) const { return canonicalOf(e, Aliases); }

void KernelBuilder::bindModuleConstants() {
  bindSiblingImports(M);
  for (const Stmt *s : M.body()) {
    if (s->kind == PyStmt::StmtKind::FunctionDef) Helpers[s->name] = s, Env[s->name] = Value::path("helper." + s->name);
    if (std::string_view cls = pycore::classNameOf(*s); !cls.empty())
      Classes[std::string(cls)] = s, Env[std::string(cls)] = Value::path("class." + std::string(cls));
    auto isClass = [&](std::string_view name) { return Classes.count(std::string(name)) != 0; };
    if (s->kind != PyStmt::StmtKind::Assign || !pycore::isModuleConstant(s->value, isClass)) continue;
    Value v = eval(s->value);
    for (const Expr *t : s->targets) bind(t, v);
  }
}

void KernelBuilder::bindParams(const Stmt *def) {
  for (const auto &p : def->params) {
    KernelParam kp;
    kp.name = p.name;
    const InputSpec *spec = nullptr;
    if (Inputs)
      for (const auto &s : *Inputs)
        if (s.name == p.name) spec = &s;
    if (Inputs && !spec && !p.defaultValue && !p.isVarArgs)
      diag(Diagnostic::Error, p.range,
           "no shape for kernel argument '" + p.name + "' in the inputs (" + formatInputSpecs(*Inputs) + ")",
           Rule::Inputs);
    if (spec && !spec->literal.empty()) {
      // A tuple, None, dtype, string or configuration object: evaluated in the module's scope.
      auto isClass = [&](std::string_view name) { return Classes.count(std::string(name)) != 0; };
      pycore::ParsedLiteral lit = pycore::parseLiteral(spec->literal, isClass);
      if (!lit.error.empty()) {
        diag(Diagnostic::Error, p.range, "input '" + p.name + "': " + lit.error, Rule::Inputs);
        Env[p.name] = Value::unknown(p.name);
      } else {
        EvaluatingLiteral = true;
        Env[p.name] = eval(lit.value);
        EvaluatingLiteral = false;
        Literals.push_back(std::move(lit.module));
      }
    } else if (spec && spec->isScalar) {
      kp.scalar = spec->scalar;
      Env[p.name] = spec->isInt ? Value::integer(int64_t(spec->scalar)) : Value::floating(spec->scalar);
    } else if (spec || !p.defaultValue) {
      Tensor t;
      t.id = int(K.tensors.size());
      t.name = p.name;
      t.buffer = Buffer::SharedHBM;
      t.parDim = -1;
      t.isArgument = true;
      t.range = p.range;
      if (spec) {
        t.dtype = spec->dtype;
        for (int64_t d : spec->shape) t.shape.push_back(SymInt::known(d));
      } else {
        t.dtypeKnown = false;
      }
      kp.tensor = t.id;
      K.tensors.push_back(t);
      Env[p.name] = Value::tensorRef(kp.tensor);
      if (!spec) {
        UnknownShape.insert(kp.tensor);
        K.tensors[kp.tensor].shapeKnown = false;
      }
    } else {
      Env[p.name] = eval(p.defaultValue);
    }
    K.params.push_back(kp);
  }
  if (Inputs)
    for (const auto &s : *Inputs) {
      bool found = false;
      for (const auto &p : def->params) found |= p.name == s.name;
      if (!found)
        diag(Diagnostic::Warning, def->headerRange,
             "input '" + s.name + "' is not a parameter of kernel '" + def->name + "'", Rule::Inputs);
    }
}

void KernelBuilder::recordImport(const Stmt *s, std::map<std::string, std::string> &aliases) {
  for (auto &[local, path] : pycore::importBindings(*s)) aliases[local] = path;
}

void KernelBuilder::recordModuleImports(const syntax::Module &m, std::map<std::string, std::string> &aliases) {
  for (const Stmt *s : m.body())
    if (s->kind == PyStmt::StmtKind::Import || s->kind == PyStmt::StmtKind::ImportFrom) recordImport(s, aliases);
}

std::string KernelBuilder::canonicalOf(const Expr *e, const std::map<std::string, std::string> &aliases) {
  std::string dotted = e ? e->dottedName() : "";
  if (dotted.empty()) return "";
  auto dot = dotted.find('.');
  auto it = aliases.find(dotted.substr(0, dot));
  if (it == aliases.end()) return "";
  return pycore::canonicalPath(it->second + (dot == std::string::npos ? "" : dotted.substr(dot)));
}

bool isKernelDecorator(const Expr *d, const std::map<std::string, std::string> &aliases) {
  const Expr *callee = d->kind == ExprKind::Call ? d->base : d;
  std::string canon = KernelBuilder::canonicalOf(callee, aliases);
  if (canon.empty()) canon = callee ? callee->dottedName() : "";
  return canon == "nki.jit" || canon == "nki.baremetal" || canon == "nki.trace" || canon == "nki.benchmark" ||
         canon == "nki.simulate_kernel" || canon == "nki.compiler.skip_middle_end_transformations";
}

} // namespace accelopt::nki::frontend
