#include "Analysis/Dependence.h"

#include "NKI/KernelQueries.h"
#include "NKI/PyInt.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <limits>
#include <numeric>
#include <set>

namespace accelopt::analysis {

using namespace nki;

std::optional<int64_t> tripCount(const Kernel &k, int loop) {
  const Loop *l = k.loopById(loop);
  if (!l || !l->tripCount.isKnown()) return std::nullopt;
  return *l->tripCount.value;
}

namespace {

constexpr int64_t Inf = std::numeric_limits<int64_t>::max() / 4;

/// constant + sum of g * x with x in [a, b] (a may be -Inf, b may be +Inf): can it be zero? A bound past
/// 64 bits (a fuzzed 10**15-iteration loop times a 10**13 stride) marks the form `saturated`: too large to
/// decide, so it may be zero.
struct Form {
  int64_t constant = 0, lo = 0, hi = 0, gcd = 0;
  bool loInf = false, hiInf = false, saturated = false;
  int64_t mul(int64_t a, int64_t b) { return pyint::saturatingMul(a, b, &saturated); }
  int64_t plus(int64_t a, int64_t b) { return pyint::saturatingAdd(a, b, &saturated); }
  int64_t minus(int64_t a, int64_t b) { return plus(a, mul(b, -1)); }
  void add(int64_t g, int64_t a, int64_t b) {
    if (g == 0) return;
    if (g == std::numeric_limits<int64_t>::min()) saturated = true; // |g| has no int64
    if (saturated) return;
    record(g, a, b);
    gcd = std::gcd(gcd, g < 0 ? -g : g);
    bool aInf = a <= -Inf, bInf = b >= Inf;
    if (g > 0) {
      if (aInf)
        loInf = true;
      else
        lo = plus(lo, mul(g, a));
      if (bInf)
        hiInf = true;
      else
        hi = plus(hi, mul(g, b));
    } else {
      if (bInf)
        loInf = true;
      else
        lo = plus(lo, mul(g, b));
      if (aInf)
        hiInf = true;
      else
        hi = plus(hi, mul(g, a));
    }
  }
  bool mayBeZero() const {
    if (saturated) return true;
    if (gcd == 0) return constant == 0;
    if (constant % gcd != 0) return false;
    if (!((loInf || lo + constant <= 0) && (hiInf || hi + constant >= 0))) return false;
    return loInf || hiInf || integerZero();
  }

private:
  struct Term {
    int64_t g, a, b;
  };
  std::vector<Term> terms;

  /// The interval and gcd tests above are necessary, not sufficient: `i2 * F + i1` with i1 in [0, F) takes
  /// each value once, yet (i1 - i1') + F * (i2 - i2') spans zero. With every variable bounded, search the
  /// integer points, largest coefficient first, pruning by the range and gcd of the terms left; past a
  /// budget of steps the answer stays "may be zero". Each g * x fits in 64 bits (add() saw no
  /// saturation); their sums are kept in 128.
  bool integerZero() const {
    using Wide = __int128;
    std::vector<Term> t = terms;
    std::sort(t.begin(), t.end(), [](const Term &x, const Term &y) { return std::abs(x.g) > std::abs(y.g); });
    size_t n = t.size();
    std::vector<Wide> restLo(n + 1, 0), restHi(n + 1, 0);
    std::vector<int64_t> restGcd(n + 1, 0);
    for (size_t i = n; i-- > 0;) {
      restLo[i] = restLo[i + 1] + std::min(Wide(t[i].g) * t[i].a, Wide(t[i].g) * t[i].b);
      restHi[i] = restHi[i + 1] + std::max(Wide(t[i].g) * t[i].a, Wide(t[i].g) * t[i].b);
      restGcd[i] = std::gcd(restGcd[i + 1], std::abs(t[i].g));
    }
    int64_t budget = 100000;
    std::function<bool(size_t, Wide)> search = [&](size_t i, Wide sum) {
      if (--budget < 0) return true;
      if (i == n) return sum == 0;
      if (sum + restLo[i] > 0 || sum + restHi[i] < 0) return false;
      if (restGcd[i] != 0 && sum % restGcd[i] != 0) return false;
      for (int64_t x = t[i].a; x <= t[i].b; ++x)
        if (search(i + 1, sum + Wide(t[i].g) * x)) return true;
      return false;
    };
    return search(0, constant);
  }

public:
  void record(int64_t g, int64_t a, int64_t b) {
    if (g != 0) terms.push_back({g, a, b});
  }
};

int64_t lastIter(const Kernel &k, int loop) {
  auto t = tripCount(k, loop);
  return t ? std::max<int64_t>(0, *t - 1) : Inf;
}

} // namespace

bool mayOverlapDir(const Kernel &k, const Access &a, const Access &b, const std::vector<DirConstraint> &dirs,
                   std::pair<int, int> aliasB) {
  if (storageOf(k, a.tensor) != storageOf(k, b.tensor)) return false;
  if (a.tensor != b.tensor || !a.exact || !b.exact || a.dims.size() != b.dims.size()) return true;
  auto dirOf = [&](int loop) -> std::optional<Dir> {
    for (auto &d : dirs)
      if (d.loop == loop) return d.dir;
    return std::nullopt;
  };
  // A direction that needs two different iterations of a one-iteration loop is impossible.
  for (auto &d : dirs)
    if ((d.dir == Dir::Pos || d.dir == Dir::Neg) && lastIter(k, d.loop) == 0) return false;
  for (size_t dim = 0; dim < a.dims.size(); ++dim) {
    const IndexDim &da = a.dims[dim], &db = b.dims[dim];
    if (da.full || db.full) continue; // the whole dimension always overlaps
    if (!da.base.known || !db.base.known) continue;
    Form f;
    f.constant = f.minus(da.base.constant, db.base.constant);
    std::vector<std::pair<int, int64_t>> tb;
    for (auto [l, c] : db.base.terms) tb.push_back({l == aliasB.first ? aliasB.second : l, c});
    auto coeffB = [&](int l) {
      int64_t s = 0;
      for (auto &[x, c] : tb)
        if (x == l) s = f.plus(s, c);
      return s;
    };
    std::vector<int> seen;
    for (auto &[l, c] : da.base.terms) seen.push_back(l);
    for (auto &[l, c] : tb)
      if (std::find(seen.begin(), seen.end(), l) == seen.end()) seen.push_back(l);
    for (int l : seen) {
      int64_t ca = da.base.coeff(l), cb = coeffB(l), hi = lastIter(k, l);
      auto d = dirOf(l);
      if (!d || *d == Dir::Any) {
        f.add(ca, 0, hi);
        f.add(f.mul(cb, -1), 0, hi);
        continue;
      }
      // ca*n_a - cb*n_b with n_a = n_b + delta: (ca - cb)*n_b + ca*delta.
      f.add(f.minus(ca, cb), 0, hi);
      if (*d == Dir::Pos)
        f.add(ca, 1, hi);
      else if (*d == Dir::Neg)
        f.add(ca, hi >= Inf ? -Inf : -hi, -1);
    }
    for (auto &t : da.aranges) f.add(t.coeff, 0, t.extent > 0 ? t.extent - 1 : Inf);
    for (auto &t : db.aranges) f.add(f.mul(t.coeff, -1), 0, t.extent > 0 ? t.extent - 1 : Inf);
    if (!f.mayBeZero()) return false;
  }
  return true;
}

std::vector<DirConstraint> laterIterationDirs(const Kernel &k, int loop) {
  std::vector<DirConstraint> dirs;
  for (int o : k.loopNest(k.loops[loop].parent)) dirs.push_back({o, Dir::Eq});
  dirs.push_back({loop, Dir::Pos});
  return dirs;
}

bool mayOverlap(const Kernel &k, const Access &a, int, const Access &b, int, const InstancePair &pair) {
  std::vector<DirConstraint> dirs;
  for (int l : pair.sameIteration) dirs.push_back({l, Dir::Eq});
  if (pair.carrier < 0) return mayOverlapDir(k, a, b, dirs);
  // Either sign: the carrier's difference has one sign in every dimension, so test each.
  for (Dir d : {Dir::Pos, Dir::Neg}) {
    if (pair.carrierSign != 0 && (pair.carrierSign > 0) != (d == Dir::Pos)) continue;
    dirs.push_back({pair.carrier, d});
    if (mayOverlapDir(k, a, b, dirs)) return true;
    dirs.pop_back();
  }
  return false;
}

std::optional<Conflict> firstConflict(const Kernel &k, int s1, int s2, int privateA, int privateB,
                                      const std::vector<DirConstraint> &dirs, std::pair<int, int> aliasB) {
  const Statement &x = k.stmts[s1], &y = k.stmts[s2];
  auto check = [&](const Access &a, const Access &b) -> std::optional<Conflict> {
    if (privateTo(k, a.tensor, privateA) || privateTo(k, b.tensor, privateB)) return std::nullopt;
    if (isAccumulation(x, a) && isAccumulation(y, b)) return std::nullopt;
    if (mayOverlapDir(k, a, b, dirs, aliasB)) return Conflict{s1, s2, &a, &b};
    return std::nullopt;
  };
  std::optional<Conflict> c;
  for (const Access &w : x.writes) {
    for (const Access &r : y.reads)
      if (!c) c = check(w, r);
    for (const Access &w2 : y.writes)
      if (!c) c = check(w, w2);
  }
  for (const Access &r : x.reads)
    for (const Access &w2 : y.writes)
      if (!c) c = check(r, w2);
  return c;
}

std::optional<Conflict> firstWriteConflict(const Kernel &k, const std::vector<int> &stmts, int loop,
                                           llvm::function_ref<bool(const Access &, const Access &)> overlap) {
  for (int s1 : stmts)
    for (const Access &w : k.stmts[s1].writes)
      for (int s2 : stmts)
        for (const auto *list : {&k.stmts[s2].writes, &k.stmts[s2].reads})
          for (const Access &a : *list) {
            if (privateTo(k, w.tensor, loop) || privateTo(k, a.tensor, loop)) continue;
            if (isAccumulation(k.stmts[s1], w) && isAccumulation(k.stmts[s2], a)) continue;
            if (overlap(w, a)) return Conflict{s1, s2, &w, &a};
          }
  return std::nullopt;
}

std::optional<std::pair<int, std::string>> carriedName(const Kernel &k, int loop) {
  std::vector<int> stmts = stmtsIn(k, loop);
  std::set<std::string> defined;
  for (int s : stmts)
    for (auto &d : boundNames(k.stmts[s])) defined.insert(d);
  std::set<std::string> boundSoFar;
  for (int s : stmts) {
    for (auto &u : k.stmts[s].uses)
      if (defined.count(u) && !boundSoFar.count(u)) return std::make_pair(s, u);
    for (auto &d : boundNames(k.stmts[s])) boundSoFar.insert(d);
  }
  return std::nullopt;
}

} // namespace accelopt::analysis
