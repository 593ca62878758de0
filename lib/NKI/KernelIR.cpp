// Queries of the kernel IR: affine arithmetic, names of kinds, tensor sizes, and navigation of
// the loop and statement tree.
#include "NKI/KernelIR.h"
#include "NKI/PyInt.h"
#include "NKI/Types.h"

#include <algorithm>

namespace accelopt::nki {

// A coefficient past 64 bits makes the form unknown (analyses then assume the worst), never wrapped.
void Affine::add(const Affine &o, int64_t s) {
  if (!o.known) known = false;
  bool wrapped = false;
  constant = pyint::saturatingAdd(constant, pyint::saturatingMul(s, o.constant, &wrapped), &wrapped);
  for (const auto &term : o.terms) {
    int loop = term.first;
    int64_t c = pyint::saturatingMul(s, term.second, &wrapped);
    auto it = std::find_if(terms.begin(), terms.end(), [loop](auto &t) { return t.first == loop; });
    if (it != terms.end())
      it->second = pyint::saturatingAdd(it->second, c, &wrapped);
    else
      terms.push_back({loop, c});
  }
  if (wrapped) known = false;
  terms.erase(std::remove_if(terms.begin(), terms.end(), [](auto &t) { return t.second == 0; }), terms.end());
  std::sort(terms.begin(), terms.end());
}

void Affine::scale(int64_t s) {
  bool wrapped = false;
  constant = pyint::saturatingMul(constant, s, &wrapped);
  for (auto &t : terms) t.second = pyint::saturatingMul(t.second, s, &wrapped);
  if (wrapped) known = false;
  if (s == 0) terms.clear();
}

std::string_view loopKindName(LoopKind k) {
  switch (k) {
  case LoopKind::Affine: return "affine_range";
  case LoopKind::Sequential: return "sequential_range";
  case LoopKind::Static: return "static_range";
  case LoopKind::PyRange: return "range";
  }
  return "?";
}

std::string_view stmtKindName(StmtKind k) {
  switch (k) {
  case StmtKind::Alloc: return "alloc";
  case StmtKind::Op: return "op";
  case StmtKind::Accumulate: return "accumulate";
  case StmtKind::Store: return "store";
  case StmtKind::Assign: return "assign";
  case StmtKind::Assert: return "assert";
  case StmtKind::Return: return "return";
  case StmtKind::Python: return "python";
  }
  return "?";
}

std::optional<int64_t> Tensor::bytesPerPartition() const {
  if (isHBM(buffer)) return std::nullopt;
  int64_t elems = 1;
  for (size_t d = parDim + 1; d < shape.size(); ++d) {
    if (!shape[d].isKnown()) return std::nullopt;
    elems = pyint::saturatingMul(elems, *shape[d].value);
  }
  return pyint::saturatingMul(elems, dtypeBytes(dtype)); // past 64 bits is past any capacity, not wrapped
}

std::optional<int64_t> Tensor::totalBytesPerPartition() const {
  auto tile = bytesPerPartition();
  if (!tile) return std::nullopt;
  int64_t blocks = 1;
  for (int d = 0; d < blockDims(); ++d) {
    if (!shape[d].isKnown()) return std::nullopt;
    blocks = pyint::saturatingMul(blocks, *shape[d].value);
  }
  return pyint::saturatingMul(*tile, blocks);
}

std::string Tensor::shapeString() const {
  std::string out = "[";
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d) out += ", ";
    if (int(d) == parDim && parDim > 0)
      out += "par_dim(" + shape[d].str() + ")";
    else
      out += shape[d].str();
  }
  return out + "]";
}

int64_t Kernel::gridSize() const {
  int64_t n = 1;
  for (int64_t d : grid) n = pyint::saturatingMul(n, d);
  return n;
}

std::optional<NodeRef> Kernel::resolve(std::string_view ref) const {
  auto parseId = [&](char prefix) -> std::optional<int> {
    if (ref.size() < 2 || ref[0] != prefix) return std::nullopt;
    // Ids are printed without leading zeros: `L00` or `S04` is a typo, not L0 or S4.
    if (ref.size() > 2 && ref[1] == '0') return std::nullopt;
    int v = 0;
    for (char c : ref.substr(1)) {
      if (c < '0' || c > '9') return std::nullopt;
      // Past every id the kernel has: stop before `L4294967296` wraps around to L0.
      if (v > (1 << 24)) return std::nullopt;
      v = v * 10 + (c - '0');
    }
    return v;
  };
  if (auto l = parseId('L'); l && *l < int(loops.size())) return NodeRef{true, *l};
  if (auto s = parseId('S'); s && *s < int(stmts.size())) return NodeRef{false, *s};
  std::optional<NodeRef> found;
  for (const auto &loop : loops)
    if (loop.iv == ref) {
      if (found) return std::nullopt; // ambiguous
      found = NodeRef{true, loop.id};
    }
  return found;
}

std::vector<int> Kernel::loopNest(int loop) const {
  std::vector<int> nest;
  for (int l = loop; l >= 0; l = loops[l].parent) nest.push_back(l);
  std::reverse(nest.begin(), nest.end());
  return nest;
}

int Kernel::parentOf(NodeRef node) const { return node.isLoop ? loops[node.index].parent : stmts[node.index].parent; }

const std::vector<NodeRef> &Kernel::siblingsOf(NodeRef node) const {
  int p = parentOf(node);
  return p < 0 ? body : loops[p].body;
}

ByteRange Kernel::rangeOf(NodeRef node) const {
  return node.isLoop ? loops[node.index].range : stmts[node.index].range;
}

bool Kernel::encloses(int outer, NodeRef node) const {
  for (int p = parentOf(node); p >= 0; p = loops[p].parent)
    if (p == outer) return true;
  return false;
}

const ForeignCall *Kernel::foreignOf(NodeRef node) const {
  int f = -1;
  if (node.isLoop && node.index >= 0 && node.index < int(loops.size())) f = loops[size_t(node.index)].foreign;
  if (!node.isLoop && node.index >= 0 && node.index < int(stmts.size())) f = stmts[size_t(node.index)].foreign;
  return f >= 0 && f < int(foreignCalls.size()) ? &foreignCalls[size_t(f)] : nullptr;
}

} // namespace accelopt::nki
