// Python lists of tiles (the current dialect's replacement for block dimensions): a list made outside a
// loop and filled with one fresh tile per iteration (`append`, or `lst[i] = tile` into `[None] * n`),
// nested lists likewise, become one tensor with a leading block dimension per list level, so `acc[m][i]`
// is the IR of the 0.1 `acc[m, i]`.
#include "NKI/FrontEnd/KernelBuilder.h"

#include <algorithm>

namespace accelopt::nki::frontend {

namespace {
/// Elements a list of block tiles keeps as copies (for `len` and known indices); longer lists keep one.
constexpr int64_t kMaxListCopies = 4096;

/// The loops from the one directly inside `scope` down to `loop` (outermost first); empty when `scope`
/// does not enclose `loop`.
std::vector<int> loopsInside(const Kernel &k, int loop, int scope) {
  std::vector<int> out;
  int l = loop;
  for (; l >= 0 && l != scope; l = k.loops[size_t(l)].parent) out.insert(out.begin(), l);
  if (l != scope) return {};
  return out;
}

/// The tensor a fresh list item names: a whole tile made in `loop`, or an inner list of block tiles
/// made in `loop` (with no block index fixed yet); -1 for anything else.
int freshItemTensor(const Kernel &k, const Value &item, int loop) {
  int t = -1;
  if (item.kind == Value::Tensor && !item.view)
    t = item.tensor;
  else if (item.kind == Value::Seq && item.isList && item.blockTensor >= 0 && item.listScope == loop &&
           item.blockPrefix.empty())
    t = item.blockTensor;
  if (t < 0 || t >= int(k.tensors.size())) return -1;
  const Tensor &tensor = k.tensors[size_t(t)];
  if (tensor.scope != loop || tensor.isArgument || isHBM(tensor.buffer) || tensor.aliasOf >= 0 || !tensor.shapeKnown ||
      tensor.parDim < 0)
    return -1;
  return t;
}
} // namespace

void KernelBuilder::addBlockDim(int tensor, int64_t extent, const Affine &index, int outerLoop, int scope) {
  Tensor &t = K.tensors[size_t(tensor)];
  t.shape.insert(t.shape.begin(), SymInt::known(extent));
  ++t.parDim;
  t.scope = scope;
  IndexDim dim;
  dim.base = index;
  // Every use so far sits in the loops filling the list: in iteration n it names block n.
  for (Statement &s : K.stmts) {
    if (s.parent != outerLoop && !K.encloses(outerLoop, NodeRef{false, s.id})) continue;
    for (auto *list : {&s.reads, &s.writes})
      for (Access &a : *list)
        if (a.tensor == tensor) a.dims.insert(a.dims.begin(), dim);
  }
  for (auto &[name, v] : Env) {
    if (v.kind == Value::Tensor && v.tensor == tensor) {
      Access a = v.view ? *v.view : wholeAccess(v, nullptr);
      if (v.view)
        a.dims.insert(a.dims.begin(), dim);
      else
        a.dims[0] = dim;
      v.view = std::make_shared<Access>(std::move(a));
    } else if (v.kind == Value::Seq && v.blockTensor == tensor) {
      v.blockPrefix.insert(v.blockPrefix.begin(), dim);
    }
  }
}

bool KernelBuilder::appendAsBlock(Value &list, const Value &item) {
  if (!Cur || !list.isList || list.listScope < -1 || !list.elts.empty() || list.blockTensor >= 0 || !Guards.empty())
    return false;
  std::vector<int> loops = loopsInside(K, CurLoop, list.listScope);
  int t = freshItemTensor(K, item, CurLoop);
  if (loops.empty() || t < 0) return false;
  // One append per iteration of each loop between the list and the append: block n1 * trip2 + n2 ...
  Affine index;
  int64_t extent = 1;
  for (auto l = loops.rbegin(); l != loops.rend(); ++l) {
    const SymInt &trip = K.loops[size_t(*l)].tripCount;
    if (!trip.isKnown() || *trip.value < 1 || extent > (int64_t(1) << 40) / *trip.value) return false;
    index.terms.insert(index.terms.begin(), {*l, extent});
    extent *= *trip.value;
  }
  addBlockDim(t, extent, index, loops.front(), list.listScope);
  list.blockTensor = t;
  list.blockPrefix.clear();
  list.elts.assign(size_t(extent <= kMaxListCopies ? extent : 1), item);
  return true;
}

bool KernelBuilder::storeAsBlock(Value &list, const Value &index, const Value &item) {
  if (!Cur || !list.isList || list.listScope < -1 || list.elts.empty() || list.blockTensor >= 0 || !Guards.empty())
    return false;
  std::optional<IndexVal> ix = index.asIndex();
  std::vector<int> loops = loopsInside(K, CurLoop, list.listScope);
  int t = freshItemTensor(K, item, CurLoop);
  if (!ix || !ix->base.known || !ix->aranges.empty() || ix->minOf || loops.empty() || t < 0) return false;
  // The index must name a different element in each iteration of the loops in between (and only them).
  int64_t n = int64_t(list.elts.size());
  int64_t lo = ix->base.constant, hi = ix->base.constant;
  for (auto [l, c] : ix->base.terms) {
    if (std::find(loops.begin(), loops.end(), l) == loops.end()) return false;
    const SymInt &trip = K.loops[size_t(l)].tripCount;
    if (!trip.isKnown()) return false;
    (c > 0 ? hi : lo) += c * (*trip.value - 1);
  }
  if (lo < 0 || hi >= n) return false;
  for (int l : loops)
    if (ix->base.coeff(l) == 0) return false;
  addBlockDim(t, n, ix->base, loops.front(), list.listScope);
  list.blockTensor = t;
  list.blockPrefix.clear();
  Value whole = item;
  whole.throughList = true;
  list.elts.assign(size_t(n <= kMaxListCopies ? n : 1), whole);
  return true;
}

std::optional<Value> KernelBuilder::blockElement(const Value &list, const Value &index) {
  if (list.kind != Value::Seq || list.blockTensor < 0) return std::nullopt;
  const Tensor &t = K.tensors[size_t(list.blockTensor)];
  size_t fixed = list.blockPrefix.size();
  if (fixed >= size_t(t.blockDims())) return std::nullopt;
  std::optional<IndexVal> ix = index.asIndex();
  IndexDim dim;
  if (ix && ix->aranges.empty() && !ix->minOf) {
    dim.base = ix->base;
    if (ix->base.isConstant() && ix->base.constant < 0) dim.base.constant += t.shape[fixed].value.value_or(0);
  } else {
    dim.base = Affine::unknown();
  }
  Value v = Value::tensorRef(list.blockTensor);
  v.throughList = true;
  Access a = wholeAccess(v, nullptr);
  for (size_t d = 0; d < fixed; ++d) a.dims[d] = list.blockPrefix[d];
  a.dims[fixed] = dim;
  a.exact = dim.base.known;
  a.tileShape.clear();
  for (size_t d = fixed + 1; d < t.shape.size(); ++d) a.tileShape.push_back(t.shape[d].value.value_or(0));
  v.view = std::make_shared<Access>(std::move(a));
  return v;
}

Value KernelBuilder::comprehension(const Expr *e) {
  const Expr *target = e->elts[0], *iter = e->elts[1];
  std::vector<Value> items;
  bool known = false;
  std::string callee = iter && iter->kind == ExprKind::Call ? canonical(iter->base) : "";
  if (iter && iter->kind == ExprKind::Call &&
      ((callee.empty() && iter->base->kind == ExprKind::Name && iter->base->name == "range") ||
       isLoopIterator(callee))) {
    std::vector<int64_t> args;
    for (const Expr *a : iter->elts) {
      Value v = eval(a);
      if (v.isKnownInt()) args.push_back(*v.i.value);
    }
    if (!args.empty() && args.size() == iter->elts.size() && args.size() <= 3) {
      int64_t start = args.size() > 1 ? args[0] : 0, stop = args.size() > 1 ? args[1] : args[0];
      int64_t step = args.size() > 2 ? args[2] : 1;
      __int128 count = step > 0   ? (__int128(stop) - start + step - 1) / step
                       : step < 0 ? (__int128(start) - stop - step - 1) / -step
                                  : -1;
      if (count >= 0 && count <= kMaxListCopies) {
        known = true;
        for (int64_t k = 0; k < int64_t(count); ++k) items.push_back(Value::integer(start + k * step));
      }
    }
  } else if (iter) {
    Value it = eval(iter);
    if (it.kind == Value::Seq) items = it.elts, known = true;
  }
  if (!known || !e->base) return Value::unknown(text(e));
  std::optional<Value> saved; // Python 3: the comprehension's variable is its own
  bool named = target && target->kind == ExprKind::Name;
  if (named)
    if (auto found = Env.find(target->name); found != Env.end()) saved = found->second;
  size_t tensorsBefore = K.tensors.size();
  size_t accessesBefore = Cur ? Cur->reads.size() + Cur->writes.size() : 0;
  Value out = Value::seq({}, true);
  for (size_t k = 0; k < items.size(); ++k) {
    bind(target, items[k]);
    Value v = eval(e->base);
    int t = v.kind == Value::Tensor && !v.view              ? v.tensor
            : v.kind == Value::Seq && v.blockPrefix.empty() ? v.blockTensor
                                                            : -1;
    bool fresh = k == 0 && t >= int(tensorsBefore) && t < int(K.tensors.size()) &&
                 (!Cur || Cur->reads.size() + Cur->writes.size() == accessesBefore) &&
                 !isHBM(K.tensors[size_t(t)].buffer) && K.tensors[size_t(t)].parDim >= 0 &&
                 K.tensors[size_t(t)].aliasOf < 0;
    if (fresh) {
      // One allocation per element: a block dimension of the one tensor, as nl.ndarray((n, ...)) is.
      Tensor &tensor = K.tensors[size_t(t)];
      tensor.shape.insert(tensor.shape.begin(), SymInt::known(int64_t(items.size())));
      ++tensor.parDim;
      v.throughList = v.kind == Value::Tensor;
      out.blockTensor = t;
      out.elts.assign(items.size(), v);
      break;
    }
    out.elts.push_back(std::move(v));
  }
  if (named) {
    if (saved)
      Env[target->name] = *saved;
    else
      Env.erase(target->name);
  }
  return out;
}

} // namespace accelopt::nki::frontend
