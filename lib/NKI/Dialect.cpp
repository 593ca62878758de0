#include "NKI/Dialect.h"
#include "NKI/PyCore.h"
#include "Syntax/AstWalks.h"
#include "Syntax/PyAST.h"

#include <algorithm>
#include <map>

namespace accelopt::nki {

namespace {

using D = DialectParam;

// Current-dialect signatures (Neuron docs, nki.isa.* pages of NKI 0.3+; docs/NKI.md §2): the
// destination first, then the 0.1 parameters that remain. Parameters whose names match the
// op-table row bind that row's parameter; shape and dtype of memset come from dst.
constexpr D ncMatmul[] = {{"dst", true},         {"stationary", true}, {"moving", true}, {"is_stationary_onezero"},
                          {"is_moving_onezero"}, {"is_transpose"},     {"accumulate"},   {"tile_position"},
                          {"tile_size"},         {"perf_mode"},        {"name"}};
constexpr D ncTranspose[] = {{"dst", true}, {"data", true}, {"engine"}, {"name"}};
constexpr D tensorCopy[] = {{"dst", true}, {"src", true}, {"engine"}, {"name"}};
constexpr D activation[] = {{"dst", true}, {"op", true},   {"data", true}, {"bias"}, {"scale"},
                            {"reduce_op"}, {"reduce_res"}, {"reduce_cmd"}, {"name"}};
constexpr D tensorTensor[] = {{"dst", true}, {"data1", true}, {"data2", true}, {"op", true}, {"engine"}, {"name"}};
constexpr D tensorScalar[] = {{"dst", true}, {"data", true}, {"op0", true}, {"operand0", true}, {"reverse0"},
                              {"op1"},       {"operand1"},   {"reverse1"},  {"engine"},         {"name"}};
constexpr D scalarTensorTensor[] = {{"dst", true},      {"data", true}, {"op0", true},
                                    {"operand0", true}, {"op1", true},  {"operand1", true},
                                    {"reverse0"},       {"reverse1"},   {"name"}};
constexpr D selectReduce[] = {{"dst", true},      {"predicate", true}, {"on_true", true},
                              {"on_false", true}, {"reduce_res"},      {"reduce_cmd"},
                              {"reduce_op"},      {"reverse_pred"},    {"name"}};
constexpr D tensorScalarReduce[] = {{"dst", true},       {"data", true},        {"op0", true}, {"operand0", true},
                                    {"reduce_op", true}, {"reduce_res", true},  {"reverse0"},  {"reduce_cmd"},
                                    {"reduce_init"},     {"reduce_res_negate"}, {"name"}};
constexpr D tensorReduce[] = {{"dst", true}, {"op", true}, {"data", true}, {"axis", true},
                              {"negate"},    {"keepdims"}, {"name"}};
constexpr D scan[] = {{"dst", true}, {"data0", true}, {"data1", true}, {"initial", true}, {"op0", true},
                      {"op1", true}, {"reverse0"},    {"reverse1"},    {"name"}};
constexpr D memset[] = {{"dst", true}, {"value", true}, {"engine"}, {"name"}};
constexpr D reciprocal[] = {{"dst", true}, {"data", true}, {"name"}};
constexpr D iota[] = {{"dst", true}, {"pattern", true}, {"offset"}, {"channel_multiplier"}, {"name"}};
constexpr D affineSelect[] = {
    {"dst", true},          {"pattern", true},        {"offset", true}, {"channel_multiplier", true},
    {"on_true_tile", true}, {"on_false_value", true}, {"cmp_op"},       {"name"}};
constexpr D dmaCopy[] = {{"dst", true}, {"src", true}, {"oob_mode"}, {"dge_mode"}, {"name"}};
constexpr D dmaCompute[] = {{"dst", true}, {"srcs", true}, {"reduce_op", true}, {"name"}};

constexpr DialectApi currentApis[] = {
    {"nisa.nc_matmul", ncMatmul},
    {"nisa.nc_transpose", ncTranspose},
    {"nisa.tensor_copy", tensorCopy},
    {"nisa.activation", activation},
    {"nisa.tensor_tensor", tensorTensor},
    {"nisa.tensor_scalar", tensorScalar},
    {"nisa.tensor_scalar_reduce", tensorScalarReduce},
    {"nisa.scalar_tensor_tensor", scalarTensorTensor},
    {"nisa.select_reduce", selectReduce},
    {"nisa.tensor_reduce", tensorReduce},
    {"nisa.tensor_tensor_scan", scan},
    {"nisa.memset", memset},
    {"nisa.reciprocal", reciprocal},
    {"nisa.iota", iota},
    {"nisa.affine_select", affineSelect},
    {"nisa.dma_copy", dmaCopy},
    {"nisa.dma_compute", dmaCompute},
};

// What the current dialect removed (NKI 0.2.0 migration guide, 0.3.0 update guide).
constexpr RemovedApi removedApis[] = {
    {"nl.arange", false, "index with slices (t[a:b]) or an access pattern (t.ap(pattern=...))"},
    {"nl.mgrid", false, "index with slices (t[a:b]) or an access pattern (t.ap(pattern=...))"},
    {"nl.par_dim", false, "block dimensions are gone: use a Python list of tiles or fold them into free dims"},
    {"mask", true, "bound the slices (min(...)) instead of masking"},
    {"dst_rmw_op", true, "nisa.dma_compute(dst, srcs=[dst, src], reduce_op=nl.add)"},
};

bool isNkiModule(llvm::StringRef name) {
  llvm::StringRef package(kCurrentPackage.data(), kCurrentPackage.size());
  return name == package || (name.startswith(package) && name.drop_front(package.size()).startswith("."));
}
bool isLegacyModule(llvm::StringRef name) { return name == "neuronxcc" || name.startswith("neuronxcc."); }

} // namespace

LoopKind resolvedLoopKind(Dialect d, LoopKind spelled) {
  if (spelled != LoopKind::PyRange) return spelled;
  return d == Dialect::Nki ? LoopKind::Static : LoopKind::Sequential;
}

std::string_view dialectName(Dialect d) { return d == Dialect::Nki ? "nki 0.3" : "neuronxcc.nki 0.1"; }

template <typename Pred> static const syntax::Stmt *firstImport(const syntax::Module &m, Pred pred) {
  for (const syntax::Stmt *s : m.body()) {
    if (s->kind == syntax::StmtKind::ImportFrom && pred(llvm::StringRef(s->name))) return s;
    if (s->kind == syntax::StmtKind::Import)
      for (const auto &[name, alias] : s->imports)
        if (pred(llvm::StringRef(name))) return s;
  }
  return nullptr;
}

Dialect dialectOfImports(const syntax::Module &m) {
  // The package each imported name comes from: `import nki.language as nl` binds nl to the current one,
  // `from neuronxcc.nki.language import par_dim` binds par_dim to the legacy one.
  std::map<std::string, bool, std::less<>> legacyName;
  for (const syntax::Stmt *s : m.body()) {
    if (s->kind == syntax::StmtKind::ImportFrom) {
      bool nki = isNkiModule(s->name), legacy = isLegacyModule(s->name);
      if (nki || legacy)
        for (const auto &[name, alias] : s->imports) legacyName[alias.empty() ? name : alias] = legacy;
    } else if (s->kind == syntax::StmtKind::Import) {
      for (const auto &[name, alias] : s->imports) {
        bool nki = isNkiModule(name), legacy = isLegacyModule(name);
        if (nki || legacy) legacyName[alias.empty() ? name.substr(0, name.find('.')) : alias] = legacy;
      }
    }
  }
  // The kernel's own uses decide: a current-dialect kernel that also imports a utility from neuronxcc.nki
  // (or the other way round) is written in the package most of its uses name.
  size_t uses[2] = {0, 0};
  for (const syntax::Stmt *s : m.body()) {
    if (s->kind == syntax::StmtKind::Import || s->kind == syntax::StmtKind::ImportFrom) continue;
    syntax::forEachExpr(s, [&](const syntax::Expr *x) {
      if (x->kind != syntax::ExprKind::Name) return;
      if (auto it = legacyName.find(x->name); it != legacyName.end()) ++uses[it->second ? 1 : 0];
    });
  }
  if (uses[0] != uses[1]) return uses[0] > uses[1] ? Dialect::Nki : Dialect::Neuronxcc;
  return firstImport(m, isNkiModule) ? Dialect::Nki : Dialect::Neuronxcc;
}

int DialectApi::paramIndex(std::string_view n) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == n) return int(i);
  return -1;
}

const DialectApi *currentDialectApi(std::string_view canonicalName) {
  for (const DialectApi &api : currentApis)
    if (api.name == canonicalName) return &api;
  return nullptr;
}

const char *unmodelledApiReason(std::string_view n) {
  // Neuron docs (Trn2, Trn3): nki.language.alloc_tiles returns an NkiTileGrid, alloc_blocks an NkiBlockGrid:
  // one allocation navigated as tiles (blocks of tiles) with clamped boundary extents, which neither the
  // kernel IR, the interpreter nor the model has.
  if (n == "nl.alloc_tiles" || n == "nl.alloc_blocks")
    return "allocates a grid of tiles (NkiTileGrid / NkiBlockGrid), which accelopt does not model; allocate with "
           "nl.ndarray and address tiles with slices";
  return nullptr;
}

const RemovedApi *removedInCurrentDialect(std::string_view n, bool isKeyword) {
  for (const RemovedApi &r : removedApis)
    if (r.name == n && r.isKeyword == isKeyword) return &r;
  return nullptr;
}

int DialectBinding::arg(std::string_view dialectParam) const {
  int i = api ? api->paramIndex(dialectParam) : -1;
  return i >= 0 ? dialectArgOf[size_t(i)] : pycore::Binding::Unbound;
}

DialectBinding bindCurrentDialectCall(const DialectApi &api, size_t positional,
                                      std::span<const std::string_view> keywords) {
  std::vector<pycore::ParamSpec> params;
  for (const DialectParam &p : api.params) params.push_back({p.name, p.required});
  pycore::Binding b = pycore::bindArguments(params, positional, keywords);
  DialectBinding out;
  out.api = &api;
  out.dialectArgOf = b.argOf;
  out.extraPositional = b.extraPositional;
  out.unknownKeywords = b.unknownKeywords;
  for (size_t i : b.missing) out.missing.push_back(api.params[i].name);
  for (size_t i : b.repeated) out.repeated.push_back(api.params[i].name);
  if (const OpInfo *op = api.op()) {
    out.argOf.assign(op->params.size(), pycore::Binding::Unbound);
    for (size_t i = 0; i < op->params.size(); ++i)
      if (int at = api.paramIndex(op->params[i].name); at >= 0) out.argOf[i] = b.argOf[size_t(at)];
  }
  return out;
}

} // namespace accelopt::nki
