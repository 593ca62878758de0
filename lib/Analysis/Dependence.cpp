#include "Analysis/Dependence.h"

#include <limits>
#include <numeric>

namespace accelopt::analysis {

using namespace nki;

std::optional<int64_t> tripCount(const Kernel &k, int loop) {
  const Loop *l = k.loopById(loop);
  if (!l || !l->tripCount.isKnown()) return std::nullopt;
  return *l->tripCount.value;
}

int storageOf(const Kernel &k, int tensor) {
  const Tensor &t = k.tensors[tensor];
  return t.aliasOf >= 0 ? t.aliasOf : tensor;
}

std::vector<int> commonLoops(const Kernel &k, int sa, int sb) {
  std::vector<int> na = k.loopNest(k.stmts[sa].parent), nb = k.loopNest(k.stmts[sb].parent);
  std::vector<int> common;
  for (size_t i = 0; i < na.size() && i < nb.size() && na[i] == nb[i]; ++i) common.push_back(na[i]);
  return common;
}

namespace {

constexpr int64_t Inf = std::numeric_limits<int64_t>::max() / 4;

/// sum(g_j * x_j) + c with x_j in [lo_j, hi_j]: can it be zero?
struct LinearForm {
  int64_t constant = 0;
  int64_t minSum = 0, maxSum = 0;
  int64_t gcd = 0;
  bool unbounded = false;

  void addTerm(int64_t g, int64_t lo, int64_t hi) {
    if (g == 0) return;
    gcd = std::gcd(gcd, g < 0 ? -g : g);
    if (lo <= -Inf || hi >= Inf) { unbounded = true; return; }
    int64_t a = g * lo, b = g * hi;
    minSum += std::min(a, b);
    maxSum += std::max(a, b);
  }
  bool mayBeZero() const {
    if (gcd != 0 && constant % gcd != 0) return false;
    if (gcd == 0) return constant == 0;
    if (unbounded) return true;
    return minSum + constant <= 0 && 0 <= maxSum + constant;
  }
};

int64_t hiOf(const Kernel &k, int loop) {
  auto t = tripCount(k, loop);
  return t ? std::max<int64_t>(0, *t - 1) : Inf;
}

bool contains(const std::vector<int> &v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

/// One dimension; `dSign` restricts the carrier difference to d >= 1 (+1) or d <= -1 (-1).
bool dimMayOverlap(const Kernel &k, const IndexDim &da, const IndexDim &db, const InstancePair &pair,
                   int dSign) {
  if (!da.base.known || !db.base.known) return true;
  LinearForm f;
  f.constant = da.base.constant - db.base.constant;
  // Loop terms: equal loops contribute (ca - cb) * n; the carrier c*(n1 - n2) = c*d
  // when coefficients agree; everything else varies independently.
  std::vector<int> loopsSeen;
  for (auto &[l, c] : da.base.terms) loopsSeen.push_back(l);
  for (auto &[l, c] : db.base.terms)
    if (!contains(loopsSeen, l)) loopsSeen.push_back(l);
  for (int l : loopsSeen) {
    int64_t ca = da.base.coeff(l), cb = db.base.coeff(l);
    int64_t hi = hiOf(k, l);
    if (contains(pair.sameIteration, l)) {
      f.addTerm(ca - cb, 0, hi);
    } else if (l == pair.carrier && ca == cb) {
      if (hi == 0) return false;  // a single iteration cannot differ from itself
      if (dSign > 0) f.addTerm(ca, 1, hi);
      else if (dSign < 0) f.addTerm(ca, hi >= Inf ? -Inf : -hi, -1);
      else f.addTerm(ca, hi >= Inf ? -Inf : -hi, hi);
    } else {
      f.addTerm(ca, 0, hi);
      f.addTerm(-cb, 0, hi);
    }
  }
  for (auto &t : da.aranges) f.addTerm(t.coeff, 0, t.extent > 0 ? t.extent - 1 : Inf);
  for (auto &t : db.aranges) f.addTerm(-t.coeff, 0, t.extent > 0 ? t.extent - 1 : Inf);
  return f.mayBeZero();
}

} // namespace

bool mayOverlap(const Kernel &k, const Access &a, int sa, const Access &b, int sb,
                const InstancePair &pair) {
  if (storageOf(k, a.tensor) != storageOf(k, b.tensor)) return false;
  if (a.tensor != b.tensor || !a.exact || !b.exact || a.dims.size() != b.dims.size()) return true;
  auto allDims = [&](int sign) {
    for (size_t d = 0; d < a.dims.size(); ++d)
      if (!dimMayOverlap(k, a.dims[d], b.dims[d], pair, sign)) return false;
    return true;
  };
  if (pair.carrier < 0) return allDims(0);
  // The carrier difference must be the same in every dimension: test each sign.
  if (pair.carrierSign != 0) return allDims(pair.carrierSign);
  return allDims(+1) || allDims(-1);
}

} // namespace accelopt::analysis
