// Loops: nl.affine_range / sequential_range / static_range and range headers become IR loops with
// trip counts; the induction variable is an affine symbol.
#include "NKI/FrontEnd/KernelBuilder.h"
#include "NKI/PyInt.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <functional>
#include <limits>

namespace accelopt::nki::frontend {

void KernelBuilder::forLoop(const Stmt *s, std::vector<NodeRef> &out, int parent) {
  const Expr *iter = s->value;
  Loop loop;
  loop.id = int(K.loops.size());
  loop.parent = parent;
  loop.depth = parent < 0 ? 0 : K.loops[parent].depth + 1;
  loop.syntax = s;
  loop.range = s->range;
  loop.headerRange = s->headerRange;
  loop.bodyRange = s->bodyRange;
  loop.iterRange = iter ? iter->range : ByteRange{};
  const Expr *target = s->targets.empty() ? nullptr : s->targets[0];
  loop.iv = target && target->kind == ExprKind::Name ? target->name : (target ? text(target) : "_");
  bool isRange = false;
  if (iter && iter->kind == ExprKind::Call) {
    std::string callee = canonical(iter->base);
    if (callee.empty() && iter->base && iter->base->kind == ExprKind::Name && iter->base->name == "range") {
      loop.kind = LoopKind::PyRange;
      isRange = true;
    } else if (isLoopIterator(callee)) {
      loop.kind = callee == "nl.affine_range"       ? LoopKind::Affine
                  : callee == "nl.sequential_range" ? LoopKind::Sequential
                                                    : LoopKind::Static;
      isRange = true;
    }
    if (isRange) {
      std::vector<Value> args;
      for (auto *a : iter->elts) args.push_back(eval(a));
      // A bound the enclosing loops make the same on every iteration (range(t0, min(t0 + 2, n)) inside a
      // loop of one iteration) is that number.
      auto asSym = [&](const Value &v) { return extentOf(v); };
      if (args.size() == 1) {
        loop.start = SymInt::known(0), loop.stop = asSym(args[0]), loop.step = SymInt::known(1);
      } else if (args.size() >= 2) {
        loop.start = asSym(args[0]), loop.stop = asSym(args[1]);
        loop.step = args.size() > 2 ? asSym(args[2]) : SymInt::known(1);
      } else {
        isRange = false;
      }
    }
  }
  loop.runsAs = resolvedLoopKind(KernelDialect, loop.kind);
  loop.foreign = CurForeign;
  if (!isRange) {
    // `for x in some_list:` and other Python iteration: opaque statement.
    Statement &st = newStmt(s, StmtKind::Python, parent);
    out.push_back({false, st.id});
    diag(Diagnostic::Warning, s->headerRange,
         "loop over '" + text(iter) + "' is not an NKI or range loop; its body is not analysed", Rule::TraceTime);
    return;
  }
  if (loop.start.isKnown() && loop.stop.isKnown() && loop.step.isKnown() && *loop.step.value != 0) {
    // 128-bit: stop - start of a range spanning int64 does not fit 64 bits.
    __int128 a = *loop.start.value, b = *loop.stop.value, st = *loop.step.value;
    __int128 n = st > 0 ? (b - a + st - 1) / st : (a - b - st - 1) / -st;
    if (n > std::numeric_limits<int64_t>::max()) {
      diag(Diagnostic::Error, s->headerRange, "loop trip count does not fit in 64 bits", Rule::TraceInt);
      n = 0;
    }
    loop.tripCount = SymInt::known(std::max<int64_t>(0, int64_t(n)));
  } else if (loop.start.isKnown() && *loop.start.value == 0 && loop.step.isKnown() && *loop.step.value == 1) {
    loop.tripCount = loop.stop;
  } else {
    loop.tripCount = SymInt::symbolic("len(" + text(iter) + ")");
  }
  int id = loop.id;
  K.loops.push_back(loop);
  out.push_back({true, id});
  // The induction variable as an affine symbol: start + step * n.
  IndexVal iv;
  if (K.loops[id].start.isKnown() && K.loops[id].step.isKnown()) {
    iv.base.constant = *K.loops[id].start.value;
    iv.base.terms.push_back({id, *K.loops[id].step.value});
  } else {
    iv.base = Affine::unknown();
    iv.base.terms.push_back({id, 1});
  }
  Value ivVal = Value::index(iv);
  ivVal.s = K.loops[id].iv;
  if (target && target->kind == ExprKind::Name) Env[target->name] = ivVal;
  std::vector<NodeRef> body;
  block(s->body, body, id);
  K.loops[id].body = std::move(body);
}

} // namespace accelopt::nki::frontend
