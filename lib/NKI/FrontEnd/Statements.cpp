// Statements of the traced kernel: IR statements, the names they define and use, assignment
// (into tensors and of trace-time values), accumulation, asserts and returns.
#include "NKI/FrontEnd/KernelBuilder.h"
#include "NKI/PyInt.h"
#include "Syntax/AstWalks.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <functional>
#include <limits>

namespace accelopt::nki::frontend {

Statement &KernelBuilder::newStmt(const Stmt *s, StmtKind kind, int parent) {
  Statement st;
  st.id = int(K.stmts.size());
  st.kind = kind;
  st.parent = parent;
  st.syntax = s;
  st.range = s->range;
  st.foreign = CurForeign;
  bool unsized = false;
  for (const IterationGuard &g : Guards) {
    if (g.bounds)
      st.maskBounds.insert(st.maskBounds.end(), g.bounds->begin(), g.bounds->end());
    else if (g.unlessAll.empty())
      unsized = true;
    if (!g.unlessAll.empty()) {
      unsized |= !st.unlessAll.empty(); // two such else branches: not one MaskBound form
      st.unlessAll = g.unlessAll;
    }
    if (unsized) st.maskBounds.clear(), st.unlessAll.clear();
    st.hasMask = true;
    for (const std::string &n : g.names)
      if (std::find(st.uses.begin(), st.uses.end(), n) == st.uses.end()) st.uses.push_back(n);
  }
  K.stmts.push_back(std::move(st));
  return K.stmts.back();
}

std::optional<KernelBuilder::IterationGuard> KernelBuilder::iterationGuard(const Expr *cond, const Value &value) const {
  IterationGuard g;
  bool readsLoop = false, other = false;
  syntax::forEachExpr(cond, [&](const Expr *x) {
    if (x->kind != ExprKind::Name) return;
    auto it = Env.find(x->name);
    if (it == Env.end()) return; // a builtin or a module name
    const Value &v = it->second;
    if (v.kind == Value::Index && v.idx.aranges.empty() && !v.idx.base.terms.empty()) {
      readsLoop = true;
      if (std::find(g.names.begin(), g.names.end(), x->name) == g.names.end()) g.names.push_back(x->name);
    } else if (v.kind == Value::Tensor || v.kind == Value::Unknown || v.kind == Value::Index) {
      other = true;
    }
  });
  if (!readsLoop || other) return std::nullopt;
  if (value.kind == Value::Path && value.s == "mask" && value.maskBounds &&
      llvm::all_of(*value.maskBounds, [](const MaskBound &m) { return m.axis < 0; }))
    g.bounds = *value.maskBounds;
  return g;
}

void KernelBuilder::block(const std::vector<const Stmt *> &stmts, std::vector<NodeRef> &out, int loop) {
  for (const Stmt *s : stmts) {
    if (Returned) break; // a `return` ended the nested function being inlined
    statement(s, out, loop);
  }
}

bool KernelBuilder::inlineNestedCall(const Stmt *s, std::vector<NodeRef> &out, int loop) {
  const Expr *e = s->value;
  if (!e || e->kind != ExprKind::Call) return false;
  if (std::any_of(s->targets.begin(), s->targets.end(), [](const Expr *t) { return t->kind == ExprKind::Subscript; }))
    return false;
  std::optional<Value> result = inlineCall(s, e, out, loop);
  if (!result) return false;
  for (const Expr *t : s->targets) bind(t, *result);
  return true;
}

void KernelBuilder::inlineCallsInExpressions(const Stmt *s, std::vector<NodeRef> &out, int loop) {
  InlinedCalls.clear();
  // Innermost first and left to right, the order CPython calls them in.
  std::function<void(const Expr *)> visit = [&](const Expr *e) {
    if (!e || e->kind == ExprKind::Lambda) return;
    if (e->base) visit(e->base);
    for (const Expr *x : e->elts) visit(x);
    for (const auto &kw : e->keywords) visit(kw.value);
    if (e->kind != ExprKind::Call || e == s->value) return; // the statement's own call: inlineNestedCall
    if (std::optional<Value> v = inlineCall(s, e, out, loop)) InlinedCalls[e] = std::move(*v);
  };
  visit(s->value);
  for (const Expr *t : s->targets) visit(t);
}

std::optional<Value> KernelBuilder::inlineCall(const Stmt *s, const Expr *e, std::vector<NodeRef> &out, int loop) {
  constexpr int kMaxInlineDepth = 32; // deeper (recursive) calls stay opaque
  if (!e->base) return std::nullopt;
  // `f(...)`, or `utils.f(...)` through a followed module (`import utils`, `from . import utils`).
  const Value *fn = nullptr;
  if (e->base->kind == ExprKind::Name) {
    auto it = Env.find(e->base->name);
    fn = it != Env.end() ? &it->second : nullptr;
  } else if (e->base->kind == ExprKind::Attribute && e->base->base && e->base->base->kind == ExprKind::Name) {
    auto it = Env.find(e->base->base->name);
    if (it != Env.end() && it->second.kind == Value::Object && it->second.attrs &&
        it->second.s.rfind("module ", 0) == 0)
      if (auto attr = it->second.attrs->find(e->base->name); attr != it->second.attrs->end()) fn = &attr->second;
  }
  if (!fn || fn->kind != Value::Path || fn->s.rfind("helper.", 0) != 0) return std::nullopt;
  auto helper = Helpers.find(fn->s.substr(7));
  if (helper == Helpers.end()) return std::nullopt;
  const Stmt &def = *helper->second;
  // A function of another file of the project (`from .utils import load_tile`) is traced like one of this
  // file, with its module's names and imports; what it makes sits at the call (placeForeignNodes).
  const SiblingModule *sib = Imports ? Imports->moduleOf(&def) : nullptr;
  const std::map<std::string, std::string> &defAliases = sib ? sib->aliases : Aliases;
  auto isHelperName = [&](const std::string &name) {
    if (!sib) return Helpers.count(name) != 0;
    const std::map<std::string, Value> &names = siblingEnv(*sib);
    auto it = names.find(name);
    return it != names.end() && it->second.kind == Value::Path && it->second.s.rfind("helper.", 0) == 0;
  };
  // A module-level function (a sub-kernel the kernel calls, `core(t, o)`) sees the module's names, not the caller's.
  const bool moduleLevel = !def.parent;
  if (moduleLevel && (&def == K.def || def.kind != PyStmt::StmtKind::FunctionDef)) return std::nullopt;
  std::vector<pycore::ParamSpec> params = pycore::paramsOf(def);
  if (std::any_of(params.begin(), params.end(), [](const pycore::ParamSpec &p) { return p.variadic; }))
    return std::nullopt;
  // A helper computing trace-time values only (assignments and builtin, math or helper calls) is
  // evaluated where it is called, as module-level ones are; the others are traced here.
  bool scalarOnly = true;
  syntax::forEachStmt(def.body, [&](const Stmt *x) {
    if (x->kind != PyStmt::StmtKind::Assign && x->kind != PyStmt::StmtKind::Return && !isNoOp(x)) scalarOnly = false;
    // A store into a subscript (`out_tile[0, :, :] = q * cos`) writes a tile.
    if (llvm::any_of(x->targets, [](const Expr *t) { return t->kind == ExprKind::Subscript; })) scalarOnly = false;
  });
  for (const Stmt *x : def.body)
    syntax::forEachExpr(x, [&](const Expr *c) {
      if (c->kind != ExprKind::Call) return;
      if (pycore::isMathFunction(canonicalOf(c->base, defAliases))) return;
      if (c->base->kind == ExprKind::Name) {
        if (isHelperName(c->base->name)) return;
        const pycore::BuiltinInfo *bi = pycore::lookupBuiltin(c->base->name);
        if (bi && bi->evaluated && !bi->hostEffect) return;
      }
      scalarOnly = false;
    });
  if (scalarOnly) return std::nullopt;
  if (moduleLevel) {
    // Module-level functions are traced in place only when they do tile work (a kernel decorator, an NKI
    // call, a store into a subscript); the others compute trace-time values and are run where they are
    // called (scalarHelperCall).
    bool tileWork = llvm::any_of(def.decorators, [&](const Expr *d) { return isKernelDecorator(d, defAliases); });
    syntax::forEachStmt(def.body, [&](const Stmt *y) {
      tileWork |= llvm::any_of(y->targets, [](const Expr *t) { return t->kind == ExprKind::Subscript; });
    });
    for (const Stmt *x : def.body)
      syntax::forEachExpr(x, [&](const Expr *c) {
        tileWork |= c->kind == ExprKind::Call && c->base && lookupOp(canonicalOf(c->base, defAliases)) != nullptr;
      });
    if (!tileWork) return std::nullopt;
  }
  if (InlineCalls >= kMaxInlineCalls || InlineDepth >= kMaxInlineDepth) {
    if (InlineCalls <= kMaxInlineCalls) // one warning; later calls of nested functions all stay opaque
      diag(Diagnostic::Warning, e->range,
           llvm::formatv("calls of functions defined in the kernel nest deeper than {0} or number more than {1} "
                         "(recursion?): this call and later ones are not analysed",
                         kMaxInlineDepth, kMaxInlineCalls)
               .str(),
           Rule::TraceTime);
    InlineCalls = kMaxInlineCalls + 1;
    return std::nullopt;
  }
  ++InlineCalls;

  // The call is a statement of its own (it evaluates the arguments); the body's statements follow it.
  Statement &st = newStmt(s, StmtKind::Python, loop);
  int id = st.id;
  out.push_back({false, id});
  Cur = &K.stmts[id];
  CurLoop = loop;
  collectNames(s, K.stmts[id]);
  std::vector<Value> args, keywordArgs;
  for (auto *a : e->elts) args.push_back(eval(a));
  for (auto &kw : e->keywords) keywordArgs.push_back(eval(kw.value));
  Cur = nullptr;
  std::vector<std::string_view> keywords;
  for (const auto &kw : e->keywords) keywords.push_back(kw.name);
  pycore::Binding b = pycore::bindArguments(params, args.size(), keywords);
  // CPython raises a TypeError when the kernel is traced.
  std::string mismatch =
      !b.missing.empty() ? "missing argument '" + std::string(params[b.missing[0]].name) + "' in call to " + def.name
      : !b.repeated.empty()
          ? def.name + "() got multiple values for argument '" + std::string(params[b.repeated[0]].name) + "'"
      : !b.unknownKeywords.empty()
          ? def.name + "() got an unexpected keyword argument '" + e->keywords[b.unknownKeywords[0]].name + "'"
      : !b.extraPositional.empty() ? llvm::formatv("{0}() takes {1} positional arguments but {2} were given", def.name,
                                                   params.size(), args.size())
                                         .str()
                                   : "";
  if (!mismatch.empty()) {
    diag(Diagnostic::Error, e->range, mismatch, Rule::CallArgs);
    return Value::unknown(text(e));
  }
  // The nested function reads the enclosing names as they are when it is called (a closure); the names it
  // binds are its own.
  std::set<std::string> locals;
  for (const auto &p : params) locals.insert(std::string(p.name));
  std::function<void(const Expr *)> bound = [&](const Expr *t) {
    if (t->kind == ExprKind::Name) locals.insert(t->name);
    if (t->kind == ExprKind::Tuple || t->kind == ExprKind::List)
      for (const Expr *x : t->elts) bound(x);
  };
  syntax::forEachStmt(def.body, [&](const Stmt *x) {
    for (const Expr *t : x->targets) bound(t);
    if (x->kind == PyStmt::StmtKind::FunctionDef) locals.insert(x->name);
  });
  std::map<std::string, Value> callerEnv = Env;
  if (moduleLevel) Env = sib ? siblingEnv(*sib) : ModuleEnv;
  // Another file's function runs with its module's imports; what it reports is said at the outermost call
  // in the kernel's file, naming its own place (diag), and what it makes carries the call (CurForeign).
  std::optional<ModuleScope> callerScope;
  if (sib) {
    callerScope.emplace(*this);
    ForeignCall fc;
    fc.function = def.name;
    fc.origin = sib->module->source().location(def.range.begin);
    fc.source = &sib->module->source();
    if (CurForeign >= 0) {
      fc.callee = K.foreignCalls[size_t(CurForeign)].callee;
      fc.statement = K.foreignCalls[size_t(CurForeign)].statement;
    } else {
      fc.callee = e->base->range;
      fc.statement = s->range;
    }
    CurForeign = int(K.foreignCalls.size());
    K.foreignCalls.push_back(std::move(fc));
    Aliases = sib->aliases;
    CurModule = sib->module.get();
    if (!InSibling) SiblingCall = e->range;
    InSibling = sib;
    SiblingDef = &def;
  }
  for (size_t p = 0; p < params.size(); ++p) {
    int at = b.argOf[p];
    Env[std::string(params[p].name)] = at == pycore::Binding::Unbound ? eval(def.params[p].defaultValue)
                                       : size_t(at) < args.size()     ? args[size_t(at)]
                                                                      : keywordArgs[size_t(at) - args.size()];
  }
  std::optional<Value> outerResult = std::move(InlineResult);
  InlineResult.reset();
  ++InlineDepth;
  std::map<const Expr *, Value> pending = std::move(InlinedCalls); // the caller's statement's, kept
  InlinedCalls.clear();
  block(def.body, out, loop);
  InlinedCalls = std::move(pending);
  --InlineDepth;
  Value result = InlineResult.value_or(Value::none());
  InlineResult = std::move(outerResult);
  Returned = false;
  // Enclosing names the body changed in place (a list it appended to) keep their new values.
  if (!moduleLevel)
    for (auto &[name, v] : Env)
      if (!locals.count(name) && callerEnv.count(name)) callerEnv[name] = v;
  Env = std::move(callerEnv);
  callerScope.reset();
  return result;
}

void KernelBuilder::placeForeignNodes() {
  if (K.foreignCalls.empty()) return;
  auto calleeOf = [&](int f) { return K.foreignCalls[size_t(f)].callee; };
  for (Statement &st : K.stmts) {
    if (st.foreign < 0) continue;
    ByteRange at = calleeOf(st.foreign);
    st.range = at;
    for (Access &a : st.reads) a.range = at;
    for (Access &a : st.writes) a.range = at;
  }
  for (Loop &l : K.loops)
    if (l.foreign >= 0) l.range = l.headerRange = l.iterRange = l.bodyRange = calleeOf(l.foreign);
  for (Tensor &t : K.tensors)
    if (t.definedBy >= 0 && K.stmts[size_t(t.definedBy)].foreign >= 0)
      t.range = calleeOf(K.stmts[size_t(t.definedBy)].foreign);
}

bool KernelBuilder::isNoOp(const Stmt *s) {
  return s->kind == PyStmt::StmtKind::Pass ||
         (s->kind == PyStmt::StmtKind::Expr && s->value && s->value->kind == ExprKind::Str && !s->value->isFString);
}

void KernelBuilder::statement(const Stmt *s, std::vector<NodeRef> &out, int loop) {
  using SK = PyStmt::StmtKind;
  if (isNoOp(s)) return; // docstrings and traced ' end loop ' markers (an f-string runs its interpolations)
  if (s->kind == SK::Import || s->kind == SK::ImportFrom) {
    recordImport(s, Aliases);
    return;
  }
  if (s->kind == SK::FunctionDef) {
    Helpers[s->name] = s;
    Env[s->name] = Value::path("helper." + s->name);
    return;
  }
  if (s->kind == SK::Expr || s->kind == SK::Assign || s->kind == SK::AugAssign || s->kind == SK::Return)
    inlineCallsInExpressions(s, out, loop);
  if ((s->kind == SK::Expr || s->kind == SK::Assign) && inlineNestedCall(s, out, loop)) return;
  if (s->kind == SK::For) {
    forLoop(s, out, loop);
    return;
  }
  if (s->kind == SK::If) {
    Value cond = eval(s->value);
    if (auto n = cond.number()) {
      // Trace-time condition: only the taken branch exists in the traced kernel.
      block(*n != 0 ? s->body : s->orelse, out, loop);
      return;
    }
    if (std::optional<IterationGuard> guard = iterationGuard(s->value, cond)) {
      // Known in each iteration (`if j + 1 < n:`, as migrate writes a loop-only mask): both branches are
      // analysed, each statement masked by its branch's condition (the else branch's is not sized).
      // `i == k` holds where `i <= k` and `i >= k` do (two loop-only bounds); `!=` is the else branch's.
      std::optional<std::vector<MaskBound>> equal;
      const Expr *c = s->value;
      if (c->kind == ExprKind::Compare && c->ops.size() == 1 && c->elts.size() == 2 &&
          (c->ops[0] == "==" || c->ops[0] == "!=")) {
        Value l = eval(c->elts[0]), r = eval(c->elts[1]);
        auto le = maskBound(l, "<=", r), ge = maskBound(l, ">=", r);
        if (le && ge && le->axis < 0 && ge->axis < 0) equal = std::vector<MaskBound>{*le, *ge};
      }
      bool notEqual = equal && c->ops[0] == "!=";
      if (equal && !notEqual) guard->bounds = equal;
      Guards.push_back(*guard);
      block(s->body, out, loop);
      // The else branch: `base >= 0`, i.e. `-base - 1 < 0`, for one loop-only bound; where not all of
      // them hold for a conjunction (`if a < n and b < m:`); else not sized.
      std::optional<std::vector<MaskBound>> &bounds = Guards.back().bounds;
      if (notEqual) {
        bounds = equal;
      } else if (bounds && bounds->size() == 1) {
        (*bounds)[0].base.scale(-1);
        (*bounds)[0].base.constant -= 1;
      } else if (bounds && bounds->size() > 1) {
        Guards.back().unlessAll = *bounds;
        bounds.reset();
      } else {
        bounds.reset();
      }
      block(s->orelse, out, loop);
      Guards.pop_back();
      return;
    }
  }
  StmtKind kind = StmtKind::Python;
  switch (s->kind) {
  case SK::Assign:
  case SK::AnnAssign: kind = StmtKind::Assign; break;
  case SK::AugAssign: kind = StmtKind::Assign; break;
  case SK::Assert: kind = StmtKind::Assert; break;
  case SK::Return: kind = StmtKind::Return; break;
  default: break;
  }
  Statement &st = newStmt(s, kind, loop);
  int id = st.id;
  out.push_back({false, id});
  Cur = &K.stmts[id];
  CurLoop = loop;
  collectNames(s, K.stmts[id]);
  switch (s->kind) {
  case SK::Assign: assign(s); break;
  case SK::AugAssign: augAssign(s); break;
  case SK::Expr: exprStatement(s); break;
  case SK::Assert: assertion(s); break;
  case SK::Return: ret(s); break;
  case SK::If:
    diag(Diagnostic::Warning, s->headerRange, "condition is not known at trace time; the branches are not analysed",
         Rule::TraceTime);
    break;
  case SK::While: diag(Diagnostic::Warning, s->headerRange, "while loops are not analysed", Rule::TraceTime); break;
  default: break;
  }
  Cur = nullptr;
}

void KernelBuilder::collectNames(const Stmt *s, Statement &st) {
  std::function<void(const Expr *, bool)> walk = [&](const Expr *e, bool binding) {
    if (!e) return;
    if (e->kind == ExprKind::Name) {
      auto &list = binding ? st.defines : st.uses;
      if (std::find(list.begin(), list.end(), e->name) == list.end()) list.push_back(e->name);
      return;
    }
    if (binding && (e->kind == ExprKind::Tuple || e->kind == ExprKind::List)) {
      for (auto *x : e->elts) walk(x, true);
      return;
    }
    if (binding) { // t[idx] = ... / a.b = ... read t and the index
      walk(e, false);
      return;
    }
    walk(e->base, false);
    for (auto *x : e->elts) walk(x, false);
    for (auto &kw : e->keywords) walk(kw.value, false);
  };
  for (auto *t : s->targets) walk(t, s->kind == PyStmt::StmtKind::Assign || s->kind == PyStmt::StmtKind::AnnAssign);
  if (s->kind == PyStmt::StmtKind::AugAssign)
    for (auto *t : s->targets)
      if (t->kind == ExprKind::Name) st.defines.push_back(t->name);
  walk(s->value, false);
  walk(s->msg, false);
  // `tiles.append(t)` (lists of tiles replace block dimensions in the nki dialect) changes the list in
  // place: the statement redefines its receiver, so no op moves the list's creation across it.
  const Expr *v = s->kind == PyStmt::StmtKind::Expr ? s->value : nullptr;
  if (v && v->kind == ExprKind::Call && v->base && v->base->kind == ExprKind::Attribute && v->base->base &&
      v->base->base->kind == ExprKind::Name && pycore::isListMutator(v->base->name) &&
      std::find(st.defines.begin(), st.defines.end(), v->base->base->name) == st.defines.end())
    st.defines.push_back(v->base->base->name);
}

void KernelBuilder::bind(const Expr *target, const Value &v) {
  if (!target) return;
  if (target->kind == ExprKind::Name) {
    Env[target->name] = v;
    return;
  }
  if (target->kind == ExprKind::Tuple || target->kind == ExprKind::List) {
    for (size_t i = 0; i < target->elts.size(); ++i) {
      if (v.kind == Value::Seq && i < v.elts.size())
        bind(target->elts[i], v.elts[i]);
      else if (v.kind == Value::Unknown && !v.s.empty())
        bind(target->elts[i], symbolicInt(v.s + "[" + std::to_string(i) + "]"));
      else
        bind(target->elts[i], Value::unknown(text(target->elts[i])));
    }
    return;
  }
}

void KernelBuilder::assign(const Stmt *s) {
  if (!s->value) return;
  // Subscript targets write into an existing tensor.
  const Expr *target = s->targets.empty() ? nullptr : s->targets.back();
  bool writesTensor = target && target->kind == ExprKind::Subscript;
  // `tiles[i] = t` into a list the kernel made (`[None] * n`): an element of the list, not a tensor write.
  auto listTarget = writesTensor && target->base->kind == ExprKind::Name && target->elts.size() == 1
                        ? Env.find(target->base->name)
                        : Env.end();
  if (listTarget != Env.end() && (listTarget->second.kind != Value::Seq || !listTarget->second.isList))
    listTarget = Env.end();
  Value v = eval(s->value, /*resultBuffer=*/std::nullopt, writesTensor && listTarget == Env.end() ? target : nullptr);
  if (listTarget != Env.end()) {
    Value index = eval(target->elts[0]);
    Value &list = Env[target->base->name];
    if (v.kind == Value::Tensor && Cur->definesTensor == v.tensor && K.tensors[size_t(v.tensor)].name.empty())
      K.tensors[size_t(v.tensor)].name = target->base->name;
    if (storeAsBlock(list, index, v)) return;
    if (index.isKnownInt()) {
      int64_t k = *index.i.value, n = int64_t(list.elts.size());
      if (k < 0) k += n;
      if (k >= 0 && k < n) list.elts[size_t(k)] = v;
    }
    return;
  }
  if (writesTensor) {
    Value dst = eval(target->base);
    if (dst.kind == Value::Tensor) {
      Access a = access(dst, target);
      a.isWrite = true;
      if (Cur->op && Cur->op->kind == OpKind::LoopReduce) {
        // dst = op(x, dst): the destination is read and accumulated into.
        a.isAccumulate = true;
        Cur->reads.push_back(a);
        Cur->reads.back().isWrite = false;
      }
      Cur->writes.push_back(a);
      if (Cur->kind == StmtKind::Assign) Cur->kind = StmtKind::Op;
      // Writing a fresh result into a tensor: the tile is the destination itself.
      if (Cur->definesTensor >= 0 && K.tensors[Cur->definesTensor].isTile) {
        discardTile(Cur->definesTensor);
        Cur->definesTensor = -1;
      }
    } else {
      diag(Diagnostic::Warning, target->range,
           "assignment into '" + text(target->base) + "', which is not a known tensor", Rule::TraceTime);
    }
    return;
  }
  if (v.kind == Value::Tensor && Cur->definesTensor >= 0) {
    Tensor &t = K.tensors[Cur->definesTensor];
    if (t.name.empty() && target && target->kind == ExprKind::Name) t.name = target->name;
  }
  // A list made here (`[]`, `[None] * n`): where it lives decides whether its tiles are blocks.
  if (v.kind == Value::Seq && v.isList && s->value->kind != ExprKind::Name) v.listScope = CurLoop;
  if (v.kind == Value::Seq && v.blockTensor >= 0 && v.blockTensor == Cur->definesTensor && target &&
      target->kind == ExprKind::Name && K.tensors[size_t(v.blockTensor)].name.empty())
    K.tensors[size_t(v.blockTensor)].name = target->name;
  for (const Expr *t : s->targets) bind(t, v);
}

void KernelBuilder::discardTile(int id) {
  if (id == int(K.tensors.size()) - 1)
    K.tensors.pop_back();
  else
    K.tensors[id].name = "<discarded>";
}

void KernelBuilder::augAssign(const Stmt *s) {
  const Expr *target = s->targets.empty() ? nullptr : s->targets[0];
  if (!target) return;
  Value base = eval(target->kind == ExprKind::Subscript ? target->base : target);
  if (base.kind == Value::Tensor) {
    Value rhs = eval(s->value);
    (void)rhs;
    Access a = target->kind == ExprKind::Subscript ? access(base, target) : wholeAccess(base, target);
    Access r = a;
    a.isWrite = true;
    a.isAccumulate = s->op == "+" || s->op == "*" || s->op == "-";
    Cur->reads.push_back(r);
    Cur->writes.push_back(a);
    Cur->kind = StmtKind::Accumulate;
    if (Cur->definesTensor >= 0 && K.tensors[Cur->definesTensor].isTile) {
      discardTile(Cur->definesTensor);
      Cur->definesTensor = -1;
    }
    return;
  }
  // Trace-time integer update (`offset += 128`).
  Value rhs = eval(s->value);
  Value updated = binary(s->op, base, rhs, s->value->range);
  bind(target, updated);
}

void KernelBuilder::exprStatement(const Stmt *s) {
  Value v = eval(s->value);
  (void)v;
  if (Cur->op && Cur->op->kind == OpKind::Store)
    Cur->kind = StmtKind::Store;
  else if (Cur->op)
    Cur->kind = StmtKind::Op;
}

void KernelBuilder::assertion(const Stmt *s) {
  Value v = eval(s->value);
  if (auto n = v.number(); n && *n == 0) {
    std::string msg = s->msg ? eval(s->msg).s : "";
    diag(Diagnostic::Error, s->range,
         "assertion failed at trace time" + (msg.empty() ? std::string() : ": " + msg) + " (check the input shapes)",
         Rule::Assert);
  }
}

void KernelBuilder::ret(const Stmt *s) {
  Value v = s->value ? eval(s->value) : Value::none();
  if (InlineDepth > 0) { // the result of the nested function being inlined, not the kernel's output
    InlineResult = v;
    Returned = true;
    return;
  }
  auto mark = [&](const Value &x) {
    if (x.kind == Value::Tensor) K.tensors[x.tensor].isOutput = true;
  };
  mark(v);
  if (v.kind == Value::Seq)
    for (auto &e : v.elts) mark(e);
}

} // namespace accelopt::nki::frontend
