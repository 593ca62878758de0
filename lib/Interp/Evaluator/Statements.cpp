// Statements of the kernel evaluator: the kernel launch (arguments, module constants, outputs),
// assignment, loops (with affine_range race frames), control flow and time limits.
#include "Interp/Evaluator/KernelEvaluator.h"
#include "NKI/PyCore.h"

#include "Interp/DTypeRounding.h"
#include "Interp/Uninit.h"
#include "NKI/PyInt.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstring>
#include <unordered_map>

namespace accelopt::interp::evaluator {

void KernelEvaluator::bindSiblingImports(const syntax::Module &m, Scope &scope) {
  const auto *bindings = File.imports ? File.imports->bindingsOf(m) : nullptr;
  if (!bindings) return;
  for (const auto &[local, target] : *bindings) {
    std::shared_ptr<Scope> names = siblingScope(*target.module);
    if (target.attr.empty()) {
      Value mod;
      mod.kind = Value::Object;
      mod.s = "module '" + target.module->name + "'";
      mod.attrs = names;
      scope[local] = mod;
    } else if (auto it = names->find(target.attr); it != names->end()) {
      scope[local] = it->second;
    } else {
      scope.erase(local); // CPython's ImportError: a use of the name reports it
    }
  }
}

std::shared_ptr<KernelEvaluator::Scope> KernelEvaluator::siblingScope(const nki::SiblingModule &sib) {
  if (auto it = SiblingScopes.find(&sib); it != SiblingScopes.end()) return it->second;
  auto scope = std::make_shared<Scope>();
  SiblingScopes[&sib] = scope; // an import cycle sees the names bound so far
  Captured.push_back(scope);   // its functions close over it: cleared at the end
  const syntax::Module &m = *sib.module;
  auto closure = std::make_shared<std::vector<std::shared_ptr<Scope>>>(1, scope);
  for (const Stmt *s : m.body()) {
    if (s->kind == PyStmt::StmtKind::Import || s->kind == PyStmt::StmtKind::ImportFrom)
      importInto(s, *scope);
    else if (s->kind == PyStmt::StmtKind::FunctionDef) {
      Value f;
      f.kind = Value::PyFunc;
      f.fn = s;
      f.s = s->name;
      f.closure = closure; // the module's names come before the kernel file's
      (*scope)[f.s] = f;
    }
  }
  bindSiblingImports(m, *scope);
  Scope *savedEnv = Env, *savedGlobals = Globals;
  const syntax::Module *savedModule = CurModule;
  Env = Globals = scope.get();
  CurModule = &m;
  for (const Stmt *s : m.body())
    if (s->kind == PyStmt::StmtKind::Assign && nki::pycore::isModuleConstant(s->value)) {
      try {
        Value v = eval(s->value);
        for (auto *t : s->targets) bind(t, v);
      } catch (const RuntimeError &) {}
    }
  Env = savedEnv;
  Globals = savedGlobals;
  CurModule = savedModule;
  return scope;
}

RunResult KernelEvaluator::run(std::vector<KernelArg> args) {
  Start = std::chrono::steady_clock::now();
  Scope globals;
  for (const Stmt *s : M.body()) {
    if (s->kind == PyStmt::StmtKind::Import || s->kind == PyStmt::StmtKind::ImportFrom)
      importInto(s, globals);
    else if (s->kind == PyStmt::StmtKind::FunctionDef || !nki::pycore::classNameOf(*s).empty()) {
      Value f;
      f.kind = Value::PyFunc;
      f.fn = s;
      f.s = s->kind == PyStmt::StmtKind::FunctionDef ? s->name : std::string(nki::pycore::classNameOf(*s));
      globals[f.s] = f;
    }
  }
  bindSiblingImports(M, globals);
  // Module-level constants (no calls, so nothing with side effects runs) and configuration objects.
  auto isClass = [&](std::string_view name) {
    auto it = globals.find(std::string(name));
    return it != globals.end() && it->second.kind == Value::PyFunc && !nki::pycore::classNameOf(*it->second.fn).empty();
  };
  Globals = &globals;
  for (const Stmt *s : M.body())
    if (s->kind == PyStmt::StmtKind::Assign && nki::pycore::isModuleConstant(s->value, isClass)) {
      Env = &globals;
      try {
        Value v = eval(s->value);
        for (auto *t : s->targets) bind(t, v);
      } catch (const RuntimeError &) {}
    }
  Globals = &globals;
  std::vector<Value> argv;
  const Stmt *def = K.def;
  auto localPtr = std::make_shared<Scope>(); // shared: functions defined in the kernel close over it
  Scope &local = *localPtr;
  Frame = localPtr;
  // Arguments with a name bind by name (as keywords), the others by position.
  std::vector<const KernelArg *> byPosition, byName;
  std::vector<std::string_view> names;
  for (auto &a : args) {
    if (a.name.empty())
      byPosition.push_back(&a);
    else
      byName.push_back(&a), names.push_back(a.name);
  }
  nki::pycore::Binding binding = nki::pycore::bindArguments(nki::pycore::paramsOf(*def), byPosition.size(), names);
  for (size_t p = 0; p < def->params.size(); ++p) {
    const auto &param = def->params[p];
    if (param.isVarArgs) continue;
    int at = binding.argOf[p];
    const KernelArg *arg = at == nki::pycore::Binding::Unbound ? nullptr
                           : size_t(at) < byPosition.size()    ? byPosition[size_t(at)]
                                                               : byName[size_t(at) - byPosition.size()];
    if (!arg) {
      if (param.defaultValue) {
        Env = &globals;
        local[param.name] = eval(param.defaultValue);
        continue;
      }
      fail(param.range, "no value for kernel argument '" + param.name + "'");
    }
    if (!arg->literal.empty()) {
      // A tuple, None, dtype, string or configuration object, evaluated in the module's scope.
      nki::pycore::ParsedLiteral lit = nki::pycore::parseLiteral(arg->literal, isClass);
      if (!lit.error.empty()) fail(param.range, "input '" + param.name + "': " + lit.error);
      Env = &globals;
      local[param.name] = eval(lit.value);
      Literals.push_back(std::move(lit.module));
    } else if (arg->array) {
      auto t = std::make_shared<Tensor>();
      t->data = std::move(*const_cast<KernelArg *>(arg)->array);
      t->buffer = nki::Buffer::SharedHBM;
      t->parDim = -1;
      t->name = param.name;
      local[param.name] = Value::ofTensor(t);
    } else {
      local[param.name] = arg->isInt ? Value::integer(int64_t(arg->scalar)) : Value::number(arg->scalar);
    }
  }
  // Every instance of the launch grid, in row-major order, one after the other (as trn1 runs them on
  // one NeuronCore): each binds the same arguments and shares the shared_hbm tensors it allocates.
  const Scope params = local;
  Value ret = Value::none();
  for (int64_t flat = 0; flat < std::max<int64_t>(K.gridSize(), 1); ++flat) {
    if (flat > 0) {
      localPtr = std::make_shared<Scope>(params);
      Frame = localPtr;
    }
    Grid = K.grid.empty() ? nki::pycore::LaunchGrid() : nki::pycore::LaunchGrid::at(K.grid, flat);
    SharedHbmNext = 0;
    Env = localPtr.get();
    ret = Value::none();
    try {
      execBlock(def->body);
    } catch (ReturnSignal &r) { ret = std::move(r.value); } catch (RuntimeError &err) {
      if (K.gridSize() > 1) err.message = "in grid instance " + Grid.instanceText() + ": " + err.message;
      throw;
    }
  }
  releaseStamps(); // before the outputs are taken
  RunResult result;
  // The run is over: an output tensor that owns its storage hands it over instead of copying it (a full-size
  // output is GiBs of fresh pages). A view's storage belongs to its base, and a tensor returned twice is
  // copied from its first output.
  std::unordered_map<const Tensor *, size_t> taken;
  auto collect = [&](const Value &v) {
    if (v.kind == Value::TensorV) {
      if (auto bad = firstUninit(v.tensor->data.data(), v.tensor->data.numel()))
        Warnings.push_back(File.source().location(def->range.begin) +
                           llvm::formatv(": warning: output '{0}' has never-written elements (first at flat index {1})",
                                         v.tensor->name, *bad)
                               .str());
      if (auto it = taken.find(v.tensor.get()); it != taken.end()) {
        auto copy = result.outputs[it->second].clone();
        if (!copy) fail(def->range, llvm::toString(copy.takeError()));
        result.outputs.push_back(std::move(*copy));
        return;
      }
      if (v.tensor->data.ownsStorage()) {
        taken.emplace(v.tensor.get(), result.outputs.size());
        result.outputs.push_back(std::move(v.tensor->data));
        return;
      }
      auto copy = v.tensor->data.clone();
      if (!copy) fail(def->range, llvm::toString(copy.takeError()));
      result.outputs.push_back(std::move(*copy));
    }
  };
  if (ret.isSeq())
    for (auto &e : *ret.elts) collect(e);
  else
    collect(ret);
  if (ret.kind == Value::None) {
    // A kernel that returns nothing writes its results into argument tensors (the baremetal style,
    // `Z_DRAM` of the matmul samples): those are its outputs, in parameter order.
    // The last grid instance's scope: each instance after the first has its own (`local` is the first's,
    // freed when the second began); all bind the same argument tensors.
    const Scope &last = *localPtr;
    std::string names;
    for (const auto &param : def->params) {
      auto it = last.find(param.name);
      if (it == last.end() || it->second.kind != Value::TensorV || !it->second.tensor->written) continue;
      if (it->second.tensor->buffer != nki::Buffer::SharedHBM) continue;
      collect(it->second);
      names += (names.empty() ? "'" : ", '") + param.name + "'";
    }
    if (!names.empty())
      Warnings.push_back(File.source().location(def->range.begin) +
                         ": note: the kernel returns nothing; its outputs are the arguments it writes: " + names);
  }
  result.warnings = std::move(Warnings);
  Stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  result.stats = Stats;
  return result;
}

void KernelEvaluator::chargeValue(uint64_t count, uint64_t itemBytes, llvm::StringRef what,
                                  const syntax::ByteRange &at) {
  if (llvm::Error err = checkValueBytes(count, itemBytes, what)) fail(at, llvm::toString(std::move(err)));
}

void KernelEvaluator::checkTime(const syntax::ByteRange &r) {
  if (Opts.timeoutSeconds <= 0) return;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  if (elapsed > Opts.timeoutSeconds)
    fail(r, llvm::formatv("timed out after {0:F1} s (--timeout {1})", elapsed, Opts.timeoutSeconds).str());
}

void KernelEvaluator::execBlock(const std::vector<const Stmt *> &stmts) {
  for (const Stmt *s : stmts) exec(s);
}

void KernelEvaluator::exec(const Stmt *s) {
  using SK = PyStmt::StmtKind;
  switch (s->kind) {
  case SK::Expr: {
    // A docstring does nothing; an f-string runs its interpolations when CPython traces the kernel.
    if (s->value && s->value->kind == ExprKind::Str && !s->value->isFString) return;
    eval(s->value);
    return;
  }
  case SK::Assign: {
    const Expr *target = s->targets.back();
    if (target->kind == ExprKind::Subscript) {
      assignInto(target, s->value, /*accumulate=*/nullptr);
      for (size_t t = 0; t + 1 < s->targets.size(); ++t) bind(s->targets[t], eval(s->targets.back()));
      return;
    }
    Value v = eval(s->value);
    for (auto *t : s->targets) bind(t, v);
    return;
  }
  case SK::AnnAssign: return;
  case SK::AugAssign: return augAssign(s);
  case SK::For: return forLoop(s);
  case SK::While: {
    int64_t guard = 0;
    while (truthy(eval(s->value), s->value)) {
      if (++guard > 100000000) fail(s->headerRange, "while loop did not terminate");
      checkTime(s->headerRange);
      try {
        execBlock(s->body);
      } catch (BreakSignal &) { break; } catch (ContinueSignal &) {
      }
    }
    return;
  }
  case SK::If:
    if (truthy(eval(s->value), s->value))
      execBlock(s->body);
    else
      execBlock(s->orelse);
    return;
  case SK::Return: throw ReturnSignal{s->value ? eval(s->value) : Value::none()};
  case SK::Assert: {
    if (!truthy(eval(s->value), s->value)) {
      std::string msg = s->msg ? toText(eval(s->msg)) : "";
      fail(s->range, "assertion failed" + (msg.empty() ? std::string() : ": " + msg));
    }
    return;
  }
  case SK::Pass: return;
  case SK::Break: throw BreakSignal{};
  case SK::Continue: throw ContinueSignal{};
  case SK::FunctionDef: {
    Value f;
    f.kind = Value::PyFunc;
    f.fn = s;
    f.s = s->name;
    // Defined inside a function: it closes over that function's scope (and what that one closes over).
    if (Env != Globals && Frame) {
      f.closure = std::make_shared<std::vector<std::shared_ptr<Scope>>>();
      f.closure->push_back(Frame);
      if (Captured.empty() || Captured.back() != Frame) Captured.push_back(Frame);
      if (Enclosing) f.closure->insert(f.closure->end(), Enclosing->begin(), Enclosing->end());
    }
    (*Env)[s->name] = f;
    return;
  }
  case SK::Import:
  case SK::ImportFrom: importInto(s, *Env); return;
  case SK::Other: fail(s->range, "statement '" + s->name + "' is not supported by the interpreter");
  }
}

void KernelEvaluator::bind(const Expr *target, const Value &v) {
  if (target->kind == ExprKind::Name) {
    if (v.kind == Value::TensorV && (v.tensor->name.empty() || v.tensor->name.rfind("tile", 0) == 0))
      v.tensor->name = target->name; // name tensors after their Python variable for messages
    (*Env)[target->name] = v;
    return;
  }
  if (target->kind == ExprKind::Tuple || target->kind == ExprKind::List) {
    if (!v.isSeq() || v.elts->size() != target->elts.size())
      fail(target->range, llvm::formatv("cannot unpack {0} into {1} names", describe(v), target->elts.size()).str());
    for (size_t i = 0; i < target->elts.size(); ++i) bind(target->elts[i], (*v.elts)[i]);
    return;
  }
  fail(target->range, "cannot assign to '" + text(target) + "'");
}

bool KernelEvaluator::isRangeCall(const Expr *call) {
  // dottedName() returns a new string: keep it alive while the StringRef looks at it.
  std::string name = call->base ? call->base->dottedName() : "";
  llvm::StringRef callee = name;
  return callee == "range" || callee.endswith(".affine_range") || callee.endswith(".sequential_range") ||
         callee.endswith(".static_range");
}

bool KernelEvaluator::hasNoEffect(const std::vector<const Stmt *> &body) {
  for (const Stmt *s : body) {
    if (s->kind == PyStmt::StmtKind::Pass) continue;
    if (s->kind == PyStmt::StmtKind::Expr && s->value && s->value->kind == ExprKind::Str && !s->value->isFString)
      continue;
    // An inner loop over nl.*_range / range of plain names and numbers, itself without effect.
    if (s->kind == PyStmt::StmtKind::For && s->orelse.empty() && s->targets.size() == 1 &&
        s->targets[0]->kind == ExprKind::Name && s->value && s->value->kind == ExprKind::Call &&
        isRangeCall(s->value) &&
        std::all_of(s->value->elts.begin(), s->value->elts.end(),
                    [](const Expr *a) { return a->kind == ExprKind::Int || a->kind == ExprKind::Name; }) &&
        hasNoEffect(s->body))
      continue;
    return false;
  }
  return true;
}

void KernelEvaluator::forLoop(const Stmt *s) {
  Value it = eval(s->value);
  const Expr *target = s->targets[0];
  if (it.kind == Value::RangeV) {
    int64_t start = (*it.elts)[0].i, stop = (*it.elts)[1].i, step = (*it.elts)[2].i;
    if (step == 0) fail(s->value->range, "range step must not be zero");
    if (hasNoEffect(s->body)) {
      // Nothing to run, however many iterations (reliability report D5): only the loop variable
      // keeps its last value, as in Python. 128-bit: stop - start may not fit 64 bits.
      __int128 span = step > 0 ? __int128(stop) - start : __int128(start) - stop;
      __int128 stride = step > 0 ? __int128(step) : -__int128(step);
      __int128 count = span > 0 ? (span + stride - 1) / stride : 0;
      if (count > 0) bind(target, Value::integer(int64_t(__int128(start) + (count - 1) * __int128(step))));
      return;
    }
    bool affine = it.loopKind == nki::LoopKind::Affine && Opts.detectRaces;
    uint32_t instance = affine ? NextInstance++ : 0;
    uint32_t outerSerial = CurrentSerial;
    int64_t n = 0;
    bool past = false; // the next value would pass int64's end: the range is over
    for (int64_t v = start; !past && (step > 0 ? v < stop : v > stop);
         past = __builtin_add_overflow(v, step, &v), ++n) {
      checkTime(s->headerRange);
      if (affine) {
        Frames.push_back({instance, n, outerSerial});
        CurrentSerial = uint32_t(Frames.size() - 1);
      }
      bind(target, Value::integer(v));
      bool stop = false;
      try {
        execBlock(s->body);
      } catch (BreakSignal &) { stop = true; } catch (ContinueSignal &) {
      }
      CurrentSerial = outerSerial;
      if (stop) break;
    }
    if (affine && outerSerial == 0) releaseStamps();
    return;
  }
  if (it.isSeq()) {
    for (const Value &v : *it.elts) {
      bind(target, v);
      bool stop = false;
      try {
        execBlock(s->body);
      } catch (BreakSignal &) { stop = true; } catch (ContinueSignal &) {
      }
      if (stop) break;
    }
    return;
  }
  fail(s->value->range, "cannot iterate over " + describe(it));
}

void KernelEvaluator::augAssign(const Stmt *s) {
  const Expr *target = s->targets[0];
  if (target->kind == ExprKind::Subscript) {
    assignInto(target, s->value, &s->op);
    return;
  }
  Value cur = eval(target);
  if (cur.isTile()) {
    // `acc += nl.matmul(...)`: accumulate into the whole tile in place.
    View dst = cur.kind == Value::ViewV ? *cur.view : wholeView(cur.tensor);
    if (accumulateMatmulInPlace(dst, s->value, s->op)) return;
    LastMask.reset();
    Value rhs = eval(s->value);
    auto mask = std::move(LastMask);
    accumulateInto(dst, rhs, s->op, s->value->range, mask.get());
    return;
  }
  Value rhs = eval(s->value);
  bind(target, binary(s->op, cur, rhs, s->range));
}

} // namespace accelopt::interp::evaluator
