// set_engine: compute a statement's elementwise function on another engine, with the instruction
// the op table declares for that function on that engine (VectorE nisa.reciprocal <-> ScalarE
// nisa.activation(op=nl.reciprocal)). Refused where the table has no such instruction.
#include "Rewrite/ElementwiseChain.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::rewrite {

using namespace nki;
using syntax::Expr;

namespace {

const Engine movableEngines[] = {Engine::Vector, Engine::Scalar, Engine::GpSimd};

std::vector<const char *> engineChoices() {
  std::vector<const char *> out;
  for (Engine e : movableEngines) out.push_back(engineName(e).data());
  return out;
}

/// The op table's instruction computing `f` on `engine`: a row fixing the function (nisa.* before
/// nl.*), else an activation row taking the function as op=. Null when the table has none.
const OpInfo *instructionFor(ActFunc f, Engine engine) {
  const OpInfo *best = nullptr;
  int bestRank = 4;
  for (const OpInfo &row : nki::allOps()) {
    if (row.engine != engine || !row.slot(Slot::Data) || row.kind == OpKind::Alloc) continue;
    bool fixed = row.numerics.act == f && row.numerics.scale == 1.0f;
    bool takesFunction =
        row.kind == OpKind::Activation && row.slot(Slot::Func) && !row.numerics.act && functionRowName(f);
    if (!fixed && !takesFunction) continue;
    int rank = (llvm::StringRef(row.name.data(), row.name.size()).startswith("nisa.") ? 0 : 2) + (fixed ? 0 : 1);
    if (rank < bestRank) best = &row, bestRank = rank;
  }
  return best;
}

std::string functionName(ActFunc f) {
  if (auto row = functionRowName(f)) return std::string(row->substr(row->find('.') + 1));
  return "function " + std::to_string(int(f));
}

class SetEngine final : public Op {
public:
  SetEngine()
      : Op({"set_engine",
            "compute an elementwise statement on another engine, with the instruction the op table declares there",
            {{"stmt", FieldKind::Stmt, "the statement to move"},
             {"engine", FieldKind::Choice, "the engine to run it on", engineChoices()}}}) {}

  OpResult apply(const Kernel &k, const nlohmann::json &j) const override {
    Params p(k, j, spec());
    auto stmt = p.stmt("stmt");
    auto engineText = p.choice("engine");
    if (!p.ok()) return p.error();
    const Statement &s = k.stmts[*stmt];
    std::string ids = "S" + std::to_string(*stmt);
    Refuser no(name(), ids, s.range.begin);
    Engine target = Engine::Unknown;
    for (Engine e : movableEngines)
      if (engineName(e) == *engineText) target = e;

    auto call = CallView::of(s);
    if (!call) return no(ids + " is not a single NKI op call");
    ModuleSpelling names(k);
    auto f = unaryFunction(k, *call, names);
    if (!f) return no(ids + " (" + s.callee + ") does not compute a single elementwise function of one tile");
    if (f->scale != 1.0 || f->bias)
      return no(ids + " scales or biases its input; set_engine moves a plain function only");
    if (call->op->engine == target) return no(ids + " already runs on the " + *engineText + " engine");
    const OpInfo *row = instructionFor(f->func, target);
    if (!row)
      return no(
          llvm::formatv("the op table has no {0} engine instruction computing {1}", *engineText, functionName(f->func))
              .str());
    for (const std::string &given : call->givenParams())
      if (given != "op" && given != call->op->slot(Slot::Data)->name && given != "scale" && !row->param(given))
        return no(llvm::formatv("{0} passes {1}=, which {2} does not take", ids, given, std::string(row->name)).str());

    std::string text = names.spell(row->name) + "(";
    bool first = true;
    auto add = [&](std::string_view param, const std::string &value) {
      text += (first ? "" : ", ") + std::string(param) + "=" + value;
      first = false;
    };
    for (const ParamInfo &param : row->params) {
      if (param.slot == Slot::Func)
        add(param.name, names.spell(*functionRowName(f->func)));
      else if (param.slot == Slot::Data)
        add(param.name, exprText(k, f->data));
      else if (param.name == "mask" || param.name == "dtype") {
        if (const Expr *e = call->arg(param.name)) add(param.name, exprText(k, e));
      }
    }
    text += ")";
    EditList edits;
    edits.replace(call->call->range, text);
    return applied(name(), ids, k, edits,
                   llvm::formatv("set_engine {0} ({1} {2} -> {3} {4})", ids, std::string(engineName(call->op->engine)),
                                 s.callee, *engineText, std::string(row->name))
                       .str(),
                   s.range.begin);
  }

  std::vector<nlohmann::json> instances(const Kernel &k) const override {
    std::vector<nlohmann::json> out;
    ModuleSpelling names(k);
    for (const Statement &s : k.stmts) {
      auto call = CallView::of(s);
      if (!call) continue;
      auto f = unaryFunction(k, *call, names);
      if (!f) continue;
      for (Engine e : movableEngines)
        if (e != s.op->engine && instructionFor(f->func, e))
          out.push_back({{"op", "set_engine"}, {"stmt", "S" + std::to_string(s.id)}, {"engine", engineName(e)}});
    }
    return out;
  }
};

} // namespace

const Op &setEngineOp() {
  static SetEngine op;
  return op;
}

} // namespace accelopt::rewrite
