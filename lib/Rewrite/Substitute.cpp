// substitute: replace a chain of single-use elementwise statements by one instruction, by a closed
// list of rules (each declared once in the table below). The chain ends at statement "stmt", whose
// call is rewritten; the statements producing its intermediate tiles are removed, and so are their
// allocations when nothing else uses them.
#include "Rewrite/ElementwiseChain.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <variant>

namespace accelopt::rewrite {

using namespace nki;
using syntax::Expr;

namespace {

/// A matched chain: its statements in source order (the last one kept) and the call that replaces the last statement's.
struct Match {
  std::vector<int> chain;
  std::string call;
  std::string what; // "exp -> +1 -> reciprocal => sigmoid"
  /// The statement whose call is rewritten when it is not the chain's last (activation_reduce keeps the
  /// activation and removes the reduction after it); its matcher then checks the move itself.
  int kept = -1;
  /// Lines inserted before the kept statement (the allocation of a tile the kept call now writes).
  std::string linesBeforeKept;
  /// A statement outside the chain that moves up as linesBeforeKept (its old lines are removed).
  int moved = -1;
};

using Matcher = std::variant<Match, std::string> (*)(const Kernel &, const CallView &, const ModuleSpelling &);

struct Rule {
  const char *name;
  const char *doc;
  Matcher match;
};

/// The call of `row` replacing `from`'s, in the kernel's dialect, with dtype and mask copied from `from`
/// (the chain's statements all have the same mask).
llvm::Expected<std::string> emitFrom(const Kernel &k, const ModuleSpelling &names, std::string_view row, CallArgs args,
                                     const CallView &from) {
  if (const Expr *dtype = from.absent("dtype") ? nullptr : from.arg("dtype"))
    args.push_back({"dtype", exprText(k, dtype)});
  if (const Expr *mask = from.absent("mask") ? nullptr : from.arg("mask")) args.push_back({"mask", exprText(k, mask)});
  return emitCall(k, names, row, args, from);
}

std::string functionValue(const ModuleSpelling &names, ActFunc f) { return names.spell(*functionRowName(f)); }

int tileProducer(const Kernel &k, const CallView &consumer, const Expr *operand, std::string &why) {
  return singleUseProducer(k, *consumer.stmt, operand, why);
}

std::string sid(int s) { return "S" + std::to_string(s); }

// exp(s*x) -> 1 + . -> 1/. computes sigmoid(-s*x).
std::variant<Match, std::string> matchSigmoid(const Kernel &k, const CallView &recip, const ModuleSpelling &names) {
  auto r = unaryFunction(k, recip, names);
  if (!r || r->func != ActFunc::Reciprocal || r->scale != 1.0 || r->bias)
    return sid(recip.stmt->id) + " does not compute a plain reciprocal 1/x";
  std::string why;
  int addId = tileProducer(k, recip, r->data, why);
  if (addId < 0) return why;
  CallView add = *CallView::of(k.stmts[addId]);
  if (add.op->kind != OpKind::TensorScalar || aluOf(add.arg("op0"), names) != AluOp::Add ||
      constantNumber(add.arg("operand0")) != 1.0 || !add.absent("op1"))
    return sid(addId) + ", which computes the reciprocal's input, is not a tensor_scalar adding 1";
  int expId = tileProducer(k, add, add.slot(Slot::Data), why);
  if (expId < 0) return why;
  auto e = unaryFunction(k, *CallView::of(k.stmts[expId]), names);
  if (!e || e->func != ActFunc::Exp || !e->scale)
    return sid(expId) + ", which computes the input of the +1, is not exp with a constant scale";
  if (e->bias && !readsZeroFill(k, k.stmts[expId], e->bias, names))
    return sid(expId) + "'s exp has a bias that is not a constant zero";
  std::vector<std::pair<std::string, std::string>> args = {{"op", functionValue(names, ActFunc::Sigmoid)},
                                                           {"data", exprText(k, e->data)}};
  if (-*e->scale != 1.0) args.push_back({"scale", numberText(-*e->scale)});
  Match m;
  m.chain = {expId, addId, recip.stmt->id};
  auto call = emitFrom(k, names, "nisa.activation", std::move(args), recip);
  if (!call) return llvm::toString(call.takeError());
  m.call = *call;
  m.what = "exp -> +1 -> reciprocal => sigmoid";
  return m;
}

// sigmoid(x) * x computes silu(x).
std::variant<Match, std::string> matchSilu(const Kernel &k, const CallView &mul, const ModuleSpelling &names) {
  bool multiply = mul.op->kind == OpKind::TensorTensor &&
                  (mul.op->numerics.alu == AluOp::Multiply ||
                   (mul.op->slot(Slot::Func) && aluOf(mul.slot(Slot::Func), names) == AluOp::Multiply));
  const Expr *a = mul.slot(Slot::Data), *b = mul.slot(Slot::Data2);
  if (!multiply || !a || !b) return sid(mul.stmt->id) + " is not an elementwise multiply of two tiles";
  std::string why;
  for (auto [sig, other] : {std::pair{b, a}, std::pair{a, b}}) {
    int sigId = tileProducer(k, mul, sig, why);
    if (sigId < 0) continue;
    auto s = unaryFunction(k, *CallView::of(k.stmts[sigId]), names);
    if (!s || s->func != ActFunc::Sigmoid || s->scale != 1.0 || s->bias) {
      why = sid(sigId) + " is not a plain sigmoid";
      continue;
    }
    if (exprText(k, s->data) != exprText(k, other)) {
      why = llvm::formatv("{0} takes the sigmoid of `{1}` but multiplies it by `{2}`", sid(mul.stmt->id),
                          exprText(k, s->data), exprText(k, other))
                .str();
      continue;
    }
    Match m;
    m.chain = {sigId, mul.stmt->id};
    auto call = emitFrom(k, names, "nisa.activation",
                         {{"op", functionValue(names, ActFunc::Silu)}, {"data", exprText(k, other)}}, mul);
    if (!call) return llvm::toString(call.takeError());
    m.call = *call;
    m.what = "sigmoid(x) * x => silu";
    return m;
  }
  return why;
}

// f(x * a [+ v]) with a constant scale a and a per-partition bias tile v, computed by a tensor_scalar
// before the activation, is one activation with scale= and bias=.
std::variant<Match, std::string> matchScaleBias(const Kernel &k, const CallView &act, const ModuleSpelling &names) {
  auto f = unaryFunction(k, act, names);
  if (!f || f->scale != 1.0 || f->bias) return sid(act.stmt->id) + " is not an activation without scale and bias";
  std::string why;
  int tsId = tileProducer(k, act, f->data, why);
  if (tsId < 0) return why;
  CallView ts = *CallView::of(k.stmts[tsId]);
  if (ts.op->kind != OpKind::TensorScalar)
    return sid(tsId) + ", which computes the activation's input, is not a tensor_scalar";
  std::optional<std::string> scale, bias;
  for (auto [op, operand, reverse] :
       {std::tuple{"op0", "operand0", "reverse0"}, std::tuple{"op1", "operand1", "reverse1"}}) {
    if (ts.absent(op)) continue;
    std::optional<AluOp> alu = aluOf(ts.arg(op), names);
    const Expr *value = ts.arg(operand);
    if (alu == AluOp::Multiply && !scale && !bias && constantNumber(value))
      scale = numberText(*constantNumber(value));
    else if (alu == AluOp::Add && !bias && !constantNumber(value))
      bias = exprText(k, value);
    else if (alu == AluOp::Add)
      return sid(tsId) + " adds a constant; NKI's activation takes its bias as a (P, 1) tile";
    else
      return sid(tsId) + "'s " + op + " is not a constant scale followed by a bias tile";
    (void)reverse;
  }
  if (!scale && !bias) return sid(tsId) + " has no scale or bias to fold";
  std::vector<std::pair<std::string, std::string>> args = {{"op", functionValue(names, f->func)},
                                                           {"data", exprText(k, ts.slot(Slot::Data))}};
  if (bias) args.push_back({"bias", *bias});
  if (scale) args.push_back({"scale", *scale});
  Match m;
  m.chain = {tsId, act.stmt->id};
  auto call = emitFrom(k, names, "nisa.activation", std::move(args), act);
  if (!call) return llvm::toString(call.takeError());
  m.call = *call;
  m.what = "scale and bias folded into the activation";
  return m;
}

// (x op0 a) op1 b from two one-op tensor_scalar statements is one two-op tensor_scalar.
std::variant<Match, std::string> matchTensorScalarPair(const Kernel &k, const CallView &second,
                                                       const ModuleSpelling &names) {
  auto oneOp = [](const CallView &c) { return c.op->kind == OpKind::TensorScalar && c.absent("op1"); };
  if (!oneOp(second)) return sid(second.stmt->id) + " is not a tensor_scalar with one operator";
  std::string why;
  int firstId = tileProducer(k, second, second.slot(Slot::Data), why);
  if (firstId < 0) return why;
  const CallView first = *CallView::of(k.stmts[firstId]);
  if (!oneOp(first)) return sid(firstId) + ", which computes its input, is not a tensor_scalar with one operator";
  std::vector<std::pair<std::string, std::string>> args = {{"data", exprText(k, first.slot(Slot::Data))}};
  for (auto [from, suffix] : {std::pair{&first, "0"}, std::pair{&second, "1"}})
    for (const char *field : {"op", "operand", "reverse"})
      if (!from->absent(std::string(field) + "0"))
        args.push_back({field + std::string(suffix), exprText(k, from->arg(std::string(field) + "0"))});
  if (!second.absent("engine")) args.push_back({"engine", exprText(k, second.arg("engine"))});
  Match m;
  m.chain = {firstId, second.stmt->id};
  auto call = emitFrom(k, names, "nisa.tensor_scalar", std::move(args), second);
  if (!call) return llvm::toString(call.takeError());
  m.call = *call;
  m.what = "two one-op tensor_scalar => one two-op tensor_scalar";
  return m;
}

/// The free axes a reduction's `axis` argument names, normalised to [1, rank); nullopt when not constant.
std::optional<std::set<int64_t>> reducedAxes(const Expr *axis, size_t rank) {
  if (!axis) return std::nullopt;
  std::vector<const Expr *> items;
  if (axis->kind == syntax::ExprKind::List || axis->kind == syntax::ExprKind::Tuple)
    items.assign(axis->elts.begin(), axis->elts.end());
  else
    items.push_back(axis);
  std::set<int64_t> out;
  for (const Expr *e : items) {
    auto v = constantNumber(e);
    if (!v || *v != std::floor(*v)) return std::nullopt;
    int64_t a = int64_t(*v);
    out.insert(a < 0 ? a + int64_t(rank) : a);
  }
  return out;
}

// f(x * s + b) -> sum of its rows (tensor_reduce(add) / nl.sum over every free axis) is one ScalarE
// instruction that also sums the rows in its accumulator registers and reads them out into the
// reduction's tile: nisa.activation_reduce in the 0.1 dialect (NKI 2.21+), nisa.activation with
// reduce_op=add, reduce_res=, reduce_cmd=reset_reduce in the current one. `stmt` is the reduction;
// the activation's tile stays, so its other readers (elementwise ones only) are unchanged.
std::variant<Match, std::string> matchActivationReduce(const Kernel &k, const CallView &red,
                                                       const ModuleSpelling &names) {
  const Statement &R = *red.stmt;
  std::string rid = sid(R.id);
  if (red.op->kind != OpKind::Reduce) return rid + " is not a free-axis reduction (tensor_reduce, nl.sum)";
  std::optional<AluOp> alu = red.op->numerics.alu;
  if (!alu && red.op->slot(Slot::Func)) alu = aluOf(red.slot(Slot::Func), names);
  if (alu != AluOp::Add || red.op->numerics.mean)
    return rid + " does not sum its rows; the activation's accumulator only adds (NKI.md §1.8)";
  if (!red.absent("negate") && exprText(k, red.arg("negate")) != "False") return rid + " negates its sums";
  const Expr *data = red.slot(Slot::Data);
  const Access *read = readAt(R, data);
  if (!read) return rid + "'s input is not a tile read";
  const size_t rank = read->tileShape.size();
  std::set<int64_t> free;
  for (size_t a = 1; a < rank; ++a) free.insert(int64_t(a));
  auto axes = reducedAxes(red.arg("axis"), rank);
  if (!axes) return rid + "'s axis is not a compile-time constant";
  if (rank < 2 || *axes != free)
    return llvm::formatv("{0} reduces axis {1} of a rank-{2} tile, not every free axis (the accumulator sums them all)",
                         rid, exprText(k, red.arg("axis")), rank)
        .str();
  // The reduction's destination: a tile the kernel allocated (reduce_res writes into it), or the new
  // tile `r = reduce(...)` binds, which is then allocated before the activation.
  const Expr *dest = red.api ? red.arg("dst") : R.syntax->targets.front();
  int resTensor = -1;
  for (const Access &w : R.writes) resTensor = storageOf(k, w.tensor);
  std::string newTile;
  if (!red.api && R.writes.empty() && R.definesTensor >= 0 && dest->kind == syntax::ExprKind::Name) {
    resTensor = storageOf(k, R.definesTensor);
    newTile = dest->name;
    if (read->tileShape.empty() || read->tileShape[0] <= 0)
      return rid + "'s partition count is not known, so its tile cannot be allocated before the activation";
  }
  if (!dest || resTensor < 0) return rid + " writes no tile the model knows";

  // The activation: the last statement before the reduction that writes the tile it reads.
  const int tile = storageOf(k, read->tensor);
  const std::string tileName = "'" + tensorName(k, tile) + "'";
  int actId = -1;
  for (const Statement &s : k.stmts) {
    if (s.range.begin >= R.range.begin) continue;
    bool writes = s.definesTensor >= 0 && storageOf(k, s.definesTensor) == tile;
    for (const Access &w : s.writes) writes |= storageOf(k, w.tensor) == tile;
    if (writes && (actId < 0 || s.range.begin > k.stmts[actId].range.begin)) actId = s.id;
  }
  if (actId < 0) return tileName + " is not written before " + rid;
  const Statement &A = k.stmts[actId];
  auto act = CallView::of(A);
  auto f = act ? unaryFunction(k, *act, names) : std::nullopt;
  if (!act || act->op->kind != OpKind::Activation || !f)
    return llvm::formatv("{0}, which writes {1}, is not a plain ScalarE activation", sid(actId), tileName).str();
  if (A.parent != R.parent) return llvm::formatv("{0} is not in the same block as {1}", sid(actId), rid).str();
  const Access *written = nullptr;
  for (const Access &w : A.writes)
    if (storageOf(k, w.tensor) == tile) written = &w;
  if (written ? !readsWrittenTile(k, *written, *read, data) : A.definesTensor < 0)
    return llvm::formatv("{0} reads {1} as `{2}`, not the tile {3} writes", rid, tileName, exprText(k, data),
                         sid(actId))
        .str();
  if (red.api && !act->api) return sid(actId) + " returns its tile; the nki dialect's activation writes a dst";
  // The activation's tile is otherwise only consumed elementwise.
  for (const Statement &s : k.stmts) {
    if (s.id == A.id || s.id == R.id) continue;
    bool reads = false;
    for (const Access &r : s.reads) reads |= storageOf(k, r.tensor) == tile;
    if (!reads) continue;
    static constexpr OpKind elementwise[] = {OpKind::Activation, OpKind::TensorTensor, OpKind::TensorScalar,
                                             OpKind::Reciprocal, OpKind::Copy,         OpKind::Select,
                                             OpKind::Store,      OpKind::DmaCopy,      OpKind::Dropout};
    if (!s.op || std::find(std::begin(elementwise), std::end(elementwise), s.op->kind) == std::end(elementwise))
      return llvm::formatv("{0} is also read by {1} at {2}, which is not elementwise", tileName, sid(s.id),
                           where(k, s.range.begin))
          .str();
  }
  // The reduction's write moves up to the activation: nothing between them touches its tile or rebinds a
  // name its subscript uses. The tile's own allocation between them (the current dialect's
  // `r = nl.ndarray(...)` just before the reduction) moves up with it.
  int movedAlloc = -1;
  for (const Statement &s : k.stmts) {
    if (s.range.begin <= A.range.begin || s.range.begin >= R.range.begin) continue;
    if (s.kind == StmtKind::Alloc && s.parent == A.parent && s.definesTensor >= 0 &&
        storageOf(k, s.definesTensor) == resTensor && movedAlloc < 0) {
      for (const Statement &b : k.stmts)
        if (b.range.begin > A.range.begin && b.range.begin < s.range.begin)
          for (const std::string &d : b.defines)
            if (std::find(s.uses.begin(), s.uses.end(), d) != s.uses.end())
              return llvm::formatv("{0} at {1} rebinds '{2}', which the allocation {3} uses", sid(b.id),
                                   where(k, b.range.begin), d, sid(s.id))
                  .str();
      movedAlloc = s.id;
      continue;
    }
    for (const std::vector<Access> *list : {&s.reads, &s.writes})
      for (const Access &a : *list)
        if (storageOf(k, a.tensor) == resTensor)
          return llvm::formatv("{0} at {1} uses '{2}', which {3} would write earlier", sid(s.id),
                               where(k, s.range.begin), tensorName(k, resTensor), rid)
              .str();
    if (!newTile.empty() && std::find(s.uses.begin(), s.uses.end(), newTile) != s.uses.end())
      return llvm::formatv("{0} at {1} uses '{2}', which {3} would bind earlier", sid(s.id), where(k, s.range.begin),
                           newTile, rid)
          .str();
    for (const std::string &d : s.defines)
      if (std::find(R.uses.begin(), R.uses.end(), d) != R.uses.end())
        return llvm::formatv("{0} at {1} rebinds '{2}', which {3} uses", sid(s.id), where(k, s.range.begin), d, rid)
            .str();
  }
  for (const Loop &l : k.loops)
    if (l.range.begin > A.range.begin && l.range.begin < R.range.begin &&
        std::find(R.uses.begin(), R.uses.end(), l.iv) != R.uses.end())
      return llvm::formatv("{0} rebinds '{1}', which {2} uses", loopLabel(k, l.id), l.iv, rid).str();

  std::vector<std::pair<std::string, std::string>> args = {{"op", functionValue(names, f->func)},
                                                           {"data", exprText(k, f->data)},
                                                           {"reduce_op", names.spell("nl.add")},
                                                           {"reduce_res", exprText(k, dest)}};
  if (f->bias) args.push_back({"bias", exprText(k, f->bias)});
  if (f->scaleExpr)
    args.push_back({"scale", exprText(k, f->scaleExpr)});
  else if (f->scale && *f->scale != 1.0)
    args.push_back({"scale", numberText(*f->scale)});
  Match m;
  m.chain = {A.id, R.id};
  m.kept = A.id;
  if (movedAlloc >= 0) {
    llvm::StringRef text = k.source->text();
    const Statement &alloc = k.stmts[movedAlloc];
    if (!startsLine(text, alloc.range.begin) || !endsLine(text, alloc.range.end) || !startsLine(text, A.range.begin))
      return sid(movedAlloc) + ", which allocates the reduction's tile, shares its lines";
    m.linesBeforeKept = text.slice(lineBegin(text, alloc.range.begin), nextLineBegin(text, alloc.range.end)).str();
    m.moved = movedAlloc;
  }
  if (!newTile.empty()) {
    llvm::StringRef text = k.source->text();
    if (!startsLine(text, A.range.begin)) return sid(A.id) + " does not start its line";
    m.linesBeforeKept =
        llvm::formatv("{0}{1} = {2}(({3}, 1), dtype={4}, buffer={5})\n", indentAt(text, A.range.begin), newTile,
                      names.spell("nl.ndarray"), read->tileShape[0],
                      names.spell("nl." + std::string(dtypeName(k.tensors[resTensor].dtype))), names.spell("nl.sbuf"))
            .str();
  }
  if (act->api) {
    std::string isa = names.spell("nisa.activation");
    args.push_back({"reduce_cmd", isa.substr(0, isa.rfind('.')) + ".reduce_cmd.reset_reduce"});
  }
  auto call = emitFrom(k, names, act->api ? "nisa.activation" : "nisa.activation_reduce", std::move(args), *act);
  if (!call) return llvm::toString(call.takeError());
  m.call = *call;
  m.what = "row sum folded into the activation's accumulator";
  return m;
}

// The closed list of rules, each declared once: its name (the "rule" field), what it does, its matcher.
const Rule rules[] = {
    {"sigmoid", "exp(s*x) -> +1 -> reciprocal => activation(sigmoid, scale=-s)", matchSigmoid},
    {"silu", "sigmoid(x) * x => activation(silu)", matchSilu},
    {"scale_bias", "tensor_scalar(x * a [+ bias tile]) -> activation f => activation(f, scale=a, bias=)",
     matchScaleBias},
    {"tensor_scalar_pair", "two one-op tensor_scalar => one tensor_scalar(op0=, operand0=, op1=, operand1=)",
     matchTensorScalarPair},
    {"activation_reduce",
     "activation f -> row sum (stmt) => activation(f, reduce_op=add, reduce_res=) (0.1: activation_reduce)",
     matchActivationReduce},
};

std::vector<const char *> ruleNames() {
  std::vector<const char *> out;
  for (const Rule &r : rules) out.push_back(r.name);
  return out;
}

class Substitute final : public Op {
public:
  Substitute()
      : Op({"substitute",
            "replace a chain of single-use elementwise statements ending at stmt by one instruction (rule)",
            {{"stmt", FieldKind::Stmt, "the last statement of the chain (its call is rewritten)"},
             {"rule", FieldKind::Choice, "which rule of the closed list applies (rewrites/substitute.md)",
              ruleNames()}}}) {}

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    Params p(k, j, spec());
    auto stmt = p.stmt("stmt");
    auto ruleName = p.choice("rule");
    if (!p.ok()) return p.error();
    const Statement &s = k.stmts[*stmt];
    std::string ids = sid(*stmt);
    Refuser no(name(), ids, s.range.begin);
    const Rule *rule = nullptr;
    for (const Rule &r : rules)
      if (*ruleName == r.name) rule = &r;
    auto call = CallView::of(s);
    if (!call) return no(ids + " is not a single NKI op call");
    ModuleSpelling names(k);
    auto matched = rule->match(k, *call, names);
    if (auto *why = std::get_if<std::string>(&matched)) return no("rule " + std::string(rule->name) + ": " + *why);
    Match &m = std::get<Match>(matched);
    // A masked chain folds only when every statement masks the same elements (the new call keeps the mask).
    std::optional<std::string> mask;
    for (int c : m.chain) {
      auto view = CallView::of(k.stmts[c]);
      std::string text = view->absent("mask") ? "" : exprText(k, view->arg("mask"));
      if (mask && *mask != text)
        return no(llvm::formatv("S{0} and {1} have different masks", m.chain.front(), sid(c)).str());
      mask = text;
    }
    const bool keepsLast = m.kept < 0;
    if (keepsLast) {
      if (auto why = chainMoveRefusal(k, m.chain)) return no(*why);
      m.kept = m.chain.back();
    }

    EditList edits;
    std::vector<int> removed;
    for (int c : m.chain)
      if (c != m.kept) removed.push_back(c);
    if (m.moved >= 0) removed.push_back(m.moved);
    for (int c : removed)
      if (auto why = removeChainStatement(edits, k, c)) return no(*why);
    // The tiles the removed statements wrote, whose allocations may now be dead (a folded reduction's tile
    // is still written, by the kept call).
    if (keepsLast)
      for (int c : removed)
        for (const Access &w : k.stmts[c].writes) removeDeadAllocation(edits, k, storageOf(k, w.tensor), m.chain);
    edits.replace(CallView::of(k.stmts[m.kept])->call->range, m.call);
    if (!m.linesBeforeKept.empty())
      edits.insert(lineBegin(k.source->text(), k.stmts[m.kept].range.begin), m.linesBeforeKept);
    std::string chainIds;
    for (int c : m.chain) chainIds += (chainIds.empty() ? "" : " ") + sid(c);
    return applied(name(), ids, k, edits, llvm::formatv("substitute {0} ({1}) by one call", chainIds, m.what).str(),
                   s.range.begin);
  }

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    for (const Statement &s : k.stmts) {
      if (!CallView::of(s)) continue;
      const OpKind kind = s.op->kind;
      if (kind != OpKind::Activation && kind != OpKind::TensorScalar && kind != OpKind::TensorTensor &&
          kind != OpKind::Reciprocal && kind != OpKind::Reduce)
        continue;
      for (const Rule &r : rules) out.push_back({{"op", "substitute"}, {"stmt", sid(s.id)}, {"rule", r.name}});
    }
    return out;
  }
};

} // namespace

const Op &substituteOp() {
  static Substitute op;
  return op;
}

} // namespace accelopt::rewrite
