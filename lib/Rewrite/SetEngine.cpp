// set_engine: compute a statement's elementwise function on another engine, with the instruction
// the op table declares for that function on that engine (VectorE nisa.reciprocal <-> ScalarE
// nisa.activation(op=nl.reciprocal)), or name the engine in the `engine=` argument of an instruction
// the table lets run there (tensor_scalar, tensor_tensor, tensor_copy, memset) where the engine computes
// its ALU operators; a tensor_scalar of (multiply[, add]) goes to ScalarE as activation(copy, scale=, bias=)
// on a NeuronCore whose ScalarE has no ALU operators. Refused where the table has no such instruction.
#include "NKI/Platform.h"
#include "Rewrite/ElementwiseChain.h"

#include "llvm/Support/FormatVariadic.h"

#include <cctype>
#include <variant>

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

/// The NeuronCore generation the kernel targets (2: trn1, 3: trn2), from nisa.get_nc_version().
int ncGeneration(const Kernel &k) {
  std::string v = ncVersionOf(k);
  return v.empty() || !std::isdigit(static_cast<unsigned char>(v.back())) ? 2 : v.back() - '0';
}

/// The statement's ALU operators in order (tensor_scalar op0 then op1; tensor_tensor op), or a refusal text.
std::variant<std::vector<AluOp>, std::string> aluOperators(const CallView &call, const ModuleSpelling &names) {
  std::vector<AluOp> ops;
  for (const char *param : {"op", "op0", "op1"}) {
    const ParamInfo *p = call.op->param(param);
    if (!p || p->role != Role::Func || call.absent(param)) continue;
    auto alu = aluOf(call.arg(param), names);
    if (!alu) return std::string(param) + "= is not an NKI ALU operator the op table knows";
    ops.push_back(*alu);
  }
  return ops;
}

std::string aluNames(const std::vector<AluOp> &ops) {
  std::string out;
  for (AluOp op : ops)
    for (const OpInfo &row : nki::allOps())
      if (row.kind == OpKind::TensorTensor && row.numerics.alu == op && row.name.substr(0, 3) == "nl.") {
        out += (out.empty() ? "" : ", ") + std::string(row.name.substr(3));
        break;
      }
  return out;
}

/// The engine-argument move of an instruction whose row lists several engines: its edits, or a refusal text.
std::variant<std::string, std::string> engineArgumentMove(const Kernel &k, const CallView &call, Engine target,
                                                          const ModuleSpelling &names, EditList &edits) {
  using Result = std::variant<std::string, std::string>;
  auto refusal = [](std::string why) { return Result(std::in_place_index<1>, std::move(why)); };
  const Statement &s = *call.stmt;
  const OpInfo &row = *call.op;
  std::string ids = "S" + std::to_string(s.id);
  if (row.kind != OpKind::TensorScalar && row.kind != OpKind::TensorTensor && row.kind != OpKind::Copy &&
      row.kind != OpKind::Memset)
    return refusal(ids + " (" + s.callee + ") is not an elementwise instruction");
  if (s.engine == target) return refusal(ids + " already runs on the " + std::string(engineName(target)) + " engine");
  if (!row.runsOn(target))
    return refusal(llvm::formatv("the op table has no {0} engine instruction {1}", engineName(target), row.name).str());
  // Integer arithmetic differs between engines (32-bit integer add/multiply is exact only on GpSimd).
  for (const auto *list : {&s.reads, &s.writes})
    for (const Access &a : *list)
      if (!isFloat(k.tensors[a.tensor].dtype))
        return refusal(llvm::formatv("{0} computes on {1} tile {2}; set_engine moves floating-point work only", ids,
                                     dtypeName(k.tensors[a.tensor].dtype), k.tensors[a.tensor].name)
                           .str());
  // GpSimd reads and writes SBUF only (NKI.md §1.8 tensor_tensor).
  if (target == Engine::GpSimd)
    for (const auto *list : {&s.reads, &s.writes})
      for (const Access &a : *list)
        if (k.tensors[a.tensor].buffer == Buffer::PSUM)
          return refusal(llvm::formatv("{0} accesses PSUM tile {1}, which the gpsimd engine cannot reach", ids,
                                       k.tensors[a.tensor].name)
                             .str());
  auto ops = aluOperators(call, names);
  if (auto *why = std::get_if<std::string>(&ops)) return refusal(ids + " " + *why);
  const auto &alu = std::get<std::vector<AluOp>>(ops);
  int generation = ncGeneration(k);
  if (engineComputes(target, alu, generation)) {
    std::string constant = engineConstant(k, names, target);
    if (const syntax::Expr *given = call.arg("engine")) {
      // Keep the argument's own module path (nki.isa.unknown_engine -> nki.isa.scalar_engine,
      // nisa.engine.unknown -> nisa.engine.scalar).
      std::string text = exprText(k, given);
      size_t dot = text.rfind('.');
      bool dotted = given->kind == syntax::ExprKind::Attribute && dot != std::string::npos;
      bool enumForm = llvm::StringRef(text).substr(0, dot).endswith("engine");
      std::string name(engineName(target));
      edits.replace(given->range, !dotted                     ? constant
                                  : enumForm                  ? text.substr(0, dot + 1) + name
                                  : k.dialect == Dialect::Nki ? text.substr(0, dot + 1) + "engine." + name
                                                              : text.substr(0, dot + 1) + name + "_engine");
    } else {
      std::string text = exprText(k, call.call);
      size_t close = text.rfind(')');
      size_t last = text.find_last_not_of(" \t\r\n", close - 1);
      bool comma = last != std::string::npos && text[last] != ',' && text[last] != '(';
      edits.insert(call.call->range.begin + uint32_t(close), (comma ? ", engine=" : "engine=") + constant);
    }
    return Result(std::in_place_index<0>, "engine=" + std::string(engineName(target)));
  }
  // ScalarE computes f(data * scale + bias): a tensor_scalar of (multiply), (multiply, add) or (add) is the
  // activation copy with the operands as scale and bias (a bias is a per-partition tile).
  bool activationForm = target == Engine::Scalar && row.kind == OpKind::TensorScalar &&
                        ((alu.size() == 1 && (alu[0] == AluOp::Multiply || alu[0] == AluOp::Add)) ||
                         (alu.size() == 2 && alu[0] == AluOp::Multiply && alu[1] == AluOp::Add));
  const syntax::Expr *scale = nullptr, *bias = nullptr;
  if (activationForm) {
    (alu[0] == AluOp::Multiply ? scale : bias) = call.arg("operand0");
    if (alu.size() == 2) bias = call.arg("operand1");
    if (bias && constantNumber(bias))
      return refusal(llvm::formatv("{0} adds the constant {1}; ScalarE's activation takes its bias as a per-partition "
                                   "tile",
                                   ids, exprText(k, bias))
                         .str());
  }
  if (!activationForm)
    return refusal(
        llvm::formatv("the {0} engine does not compute {1} on NeuronCore v{2} (the ISA's ALU operator table)",
                      engineName(target), aluNames(alu), generation)
            .str());
  for (const std::string &given : call.givenParams())
    if (given != "data" && given != "op0" && given != "op1" && given != "operand0" && given != "operand1" &&
        given != "reverse0" && given != "reverse1" && given != "dtype" && given != "mask" && given != "engine")
      return refusal(llvm::formatv("{0} passes {1}=, which nisa.activation does not take", ids, given).str());
  CallArgs args = {{"op", names.spell("nl.copy")}, {"data", exprText(k, call.slot(Slot::Data))}};
  if (bias) args.push_back({"bias", exprText(k, bias)});
  if (scale) args.push_back({"scale", exprText(k, scale)});
  for (const char *param : {"mask", "dtype"})
    if (!call.absent(param)) args.push_back({param, exprText(k, call.arg(param))});
  auto text = emitCall(k, names, "nisa.activation", args, call);
  if (!text) return refusal(llvm::toString(text.takeError()));
  edits.replace(call.call->range, *text);
  return Result(std::in_place_index<0>, "nisa.activation(op=nl.copy, scale=, bias=)");
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
    if (call->op->engines) {
      EditList edits;
      auto moved = engineArgumentMove(k, *call, target, names, edits);
      if (moved.index() == 1) return no(std::get<1>(moved));
      std::string from = s.engine == Engine::Unknown ? "compiler's choice" : std::string(engineName(s.engine));
      return applied(name(), ids, k, edits,
                     llvm::formatv("set_engine {0} ({1} {2} -> {3})", ids, from, s.callee, std::get<0>(moved)).str(),
                     s.range.begin);
    }
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

    CallArgs args;
    for (const ParamInfo &param : row->params) {
      if (param.slot == Slot::Func)
        args.push_back({std::string(param.name), names.spell(*functionRowName(f->func))});
      else if (param.slot == Slot::Data)
        args.push_back({std::string(param.name), exprText(k, f->data)});
      else if (param.name == "mask" || param.name == "dtype") {
        if (const Expr *e = call->arg(param.name)) args.push_back({std::string(param.name), exprText(k, e)});
      }
    }
    auto text = emitCall(k, names, row->name, args, *call);
    if (!text) return no(llvm::toString(text.takeError()));
    EditList edits;
    edits.replace(call->call->range, *text);
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
      if (call->op->engines) {
        // Every engine the op table and the ALU operators allow. Where the target description has no
        // cost for the instruction on an engine, the performance model lists that work as unmodelled and
        // the search does not take the lower bound over a fully modelled estimate.
        for (Engine e : movableEngines) {
          EditList scratch;
          if (engineArgumentMove(k, *call, e, names, scratch).index() == 0)
            out.push_back({{"op", "set_engine"}, {"stmt", "S" + std::to_string(s.id)}, {"engine", engineName(e)}});
        }
        continue;
      }
      auto f = unaryFunction(k, *call, names);
      if (!f) continue;
      for (Engine e : movableEngines)
        if (const OpInfo *row = e != s.op->engine ? instructionFor(f->func, e) : nullptr;
            row && canEmitCall(k, row->name, *call))
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
