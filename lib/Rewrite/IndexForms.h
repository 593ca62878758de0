// Index and mask expressions read as linear forms (internal to lib/Rewrite): what trim_tail and widen
// share. A form is a constant plus integer multiples of loop induction variables and `nl.arange`
// terms; names the kernel binds once, NKI integer constants and `t.shape[i]` resolve through it.
#pragma once

#include "Rewrite/ElementwiseChain.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace accelopt::rewrite::index_forms {

using namespace nki;
using syntax::Expr;
using syntax::ExprKind;

/// One `nl.arange(E)[...]` placed on a tile axis, written at `site`: the literal call (then `literal` is
/// its extent argument), a name bound to one, or an axis of an `nl.mgrid` (`i_p, i_f = nl.mgrid[0:P, 0:F]`,
/// `ix.p`/`ix.x` of `ix = nl.mgrid[...]`; no `literal`).
struct ArangeUse {
  const Expr *site = nullptr;
  const Expr *literal = nullptr;
  int axis = 0;
  int64_t extent = 0;
  /// Whether `nl.arange(E')[:, None]` / `[None, :]` written at the site keeps its shape (false for an
  /// axis of an mgrid of other than two dims, which is [E, 1, 1]-shaped).
  bool twoDimensional = true;
};

/// A linear form over loop counters (by loop id) and aranges.
struct Linear {
  int64_t constant = 0;
  std::map<int, int64_t> loops;
  std::vector<std::pair<ArangeUse, int64_t>> aranges; // (arange, coefficient)
  bool ok = true;

  bool isConstant() const { return ok && loops.empty() && aranges.empty(); }
  void add(const Linear &o, int64_t s) {
    ok = ok && o.ok;
    constant += s * o.constant;
    for (auto &[l, c] : o.loops) loops[l] += s * c;
    for (auto &[a, c] : o.aranges) aranges.push_back({a, s * c});
  }
};

/// The value interval of each loop counter a mask may use.
using Ranges = std::map<int, std::pair<int64_t, int64_t>>;

/// Reads mask and index expressions of one statement as linear forms: integer literals, the enclosing
/// loops' induction variables, aranges, NKI integer constants, `t.shape[i]` of a tensor of known shape,
/// and names the kernel binds exactly once (`M, N = a.shape`, `TILE = 128`, `i_p = nl.arange(128)[:, None]`).
class Resolver {
public:
  Resolver(const Kernel &k, const ModuleSpelling &names, const Statement &s) : K(k), Names(names), S(s) {
    for (int p = s.parent; p >= 0; p = k.loops[p].parent) Ivs.emplace(k.loops[p].iv, p); // innermost wins
  }

  std::optional<ArangeUse> arange(const Expr *e, int depth = 0) const {
    if (depth > 8 || !e) return std::nullopt;
    if (e->kind == ExprKind::Name) {
      if (Ivs.count(e->name)) return std::nullopt;
      auto bound = binding(e->name);
      if (!bound) return std::nullopt;
      auto a = bound->second >= 0 ? mgridAxis(bound->first, bound->second, depth) : arange(bound->first, depth + 1);
      if (a) a->site = e;
      return a;
    }
    if (e->kind == ExprKind::Attribute && (e->name == "p" || e->name == "x") && e->base &&
        e->base->kind == ExprKind::Name && !Ivs.count(e->base->name)) {
      auto bound = binding(e->base->name);
      if (!bound || bound->second >= 0) return std::nullopt;
      auto a = mgridAxis(bound->first, e->name == "p" ? 0 : 1, depth);
      if (a) a->site = e;
      return a;
    }
    if (e->kind != ExprKind::Subscript || e->elts.size() != 2) return std::nullopt;
    const Expr *c = e->base;
    if (!c || c->kind != ExprKind::Call || !c->base || Names.canonical(c->base) != "nl.arange" || c->elts.size() != 1 ||
        !c->keywords.empty())
      return std::nullopt;
    Linear extent = linear(c->elts[0], depth + 1);
    if (!extent.isConstant() || extent.constant < 1) return std::nullopt;
    auto full = [](const Expr *x) {
      return x->kind == ExprKind::Slice && llvm::all_of(x->elts, [](const Expr *p) { return p == nullptr; });
    };
    int axis = -1;
    if (full(e->elts[0]) && e->elts[1]->kind == ExprKind::None) axis = 0;
    if (e->elts[0]->kind == ExprKind::None && full(e->elts[1])) axis = 1;
    if (axis < 0) return std::nullopt;
    return ArangeUse{e, c->elts[0], axis, extent.constant};
  }

  Linear linear(const Expr *e, int depth = 0) const {
    Linear out;
    if (!e || depth > 8) {
      out.ok = false;
      return out;
    }
    if (auto a = arange(e, depth)) {
      out.aranges.push_back({*a, 1});
      return out;
    }
    switch (e->kind) {
    case ExprKind::Int: out.constant = e->intValue; return out;
    case ExprKind::Name: {
      if (auto it = Ivs.find(e->name); it != Ivs.end()) {
        out.loops[it->second] = 1;
        return out;
      }
      auto bound = binding(e->name);
      if (!bound) break;
      if (bound->second < 0) return linear(bound->first, depth + 1);
      if (auto v = shapeElement(bound->first, bound->second)) {
        out.constant = *v;
        return out;
      }
      break;
    }
    case ExprKind::Attribute:
      if (const NamedConstant *c = lookupConstant(Names.canonical(e)); c && c->kind == NamedConstant::Int) {
        out.constant = c->value;
        return out;
      }
      break;
    case ExprKind::Subscript:
      if (e->elts.size() == 1 && e->elts[0]->kind == ExprKind::Int)
        if (auto v = shapeElement(e->base, e->elts[0]->intValue)) {
          out.constant = *v;
          return out;
        }
      break;
    case ExprKind::UnaryOp:
      if (e->name == "-" || e->name == "+") {
        out.add(linear(e->base, depth + 1), e->name == "-" ? -1 : 1);
        return out;
      }
      break;
    case ExprKind::BinOp: {
      if (e->elts.size() != 2) break;
      Linear a = linear(e->elts[0], depth + 1), b = linear(e->elts[1], depth + 1);
      if (e->name == "+" || e->name == "-") {
        out.add(a, 1);
        out.add(b, e->name == "-" ? -1 : 1);
        return out;
      }
      if (e->name == "*") {
        if (a.isConstant())
          out.add(b, a.constant);
        else if (b.isConstant())
          out.add(a, b.constant);
        else
          out.ok = false;
        return out;
      }
      if ((e->name == "//" || e->name == "%") && a.isConstant() && b.isConstant() && b.constant != 0) {
        int64_t q = a.constant / b.constant;
        if ((a.constant % b.constant != 0) && ((a.constant < 0) != (b.constant < 0))) --q; // Python floors
        out.constant = e->name == "//" ? q : a.constant - q * b.constant;
        return out;
      }
      break;
    }
    default: break;
    }
    out.ok = false;
    return out;
  }

private:
  /// Axis `index` (0: partitions, 1: the first free axis) of `nl.mgrid[0:E0, 0:E1, ...]`.
  std::optional<ArangeUse> mgridAxis(const Expr *grid, int64_t index, int depth) const {
    if (!grid || grid->kind != ExprKind::Subscript || !grid->base || Names.canonical(grid->base) != "nl.mgrid" ||
        grid->elts.size() < 2 || index < 0 || index > 1)
      return std::nullopt;
    const Expr *slice = grid->elts[index];
    if (slice->kind != ExprKind::Slice || slice->elts.size() != 3 || !slice->elts[1]) return std::nullopt;
    for (int part : {0, 2})
      if (const Expr *x = slice->elts[part]) {
        Linear v = linear(x, depth + 1);
        if (!v.isConstant() || v.constant != (part == 0 ? 0 : 1)) return std::nullopt;
      }
    Linear extent = linear(slice->elts[1], depth + 1);
    if (!extent.isConstant() || extent.constant < 1) return std::nullopt;
    return ArangeUse{nullptr, nullptr, int(index), extent.constant, grid->elts.size() == 2};
  }

  const Kernel &K;
  const ModuleSpelling &Names;
  const Statement &S;
  std::map<std::string, int> Ivs;

  /// The value `name` is bound to when exactly one statement of the kernel binds it, before S: the
  /// value expression and -1 (`name = value`), or the unpacked value and the element index
  /// (`a, name = value`).
  std::optional<std::pair<const Expr *, int64_t>> binding(const std::string &name) const {
    const Statement *only = nullptr;
    for (const Statement &b : K.stmts)
      if (llvm::is_contained(b.defines, name)) {
        if (only) return std::nullopt;
        only = &b;
      }
    for (const Loop &l : K.loops)
      if (l.iv == name) return std::nullopt;
    if (!only || !only->syntax || only->syntax->kind != syntax::StmtKind::Assign || !only->syntax->value ||
        only->syntax->targets.size() != 1 || only->range.begin >= S.range.begin ||
        (only->parent >= 0 && !K.encloses(only->parent, {false, S.id})))
      return std::nullopt;
    const Expr *t = only->syntax->targets[0];
    if (t->kind == ExprKind::Name && t->name == name) return std::make_pair(only->syntax->value, int64_t(-1));
    if (t->kind == ExprKind::Tuple)
      for (size_t i = 0; i < t->elts.size(); ++i)
        if (t->elts[i]->kind == ExprKind::Name && t->elts[i]->name == name)
          return std::make_pair(only->syntax->value, int64_t(i));
    return std::nullopt;
  }

  /// `t.shape[index]` for `shape` spelled `t.shape` with t a tensor of known shape.
  std::optional<int64_t> shapeElement(const Expr *shape, int64_t index) const {
    if (!shape || shape->kind != ExprKind::Attribute || shape->name != "shape" || !shape->base ||
        shape->base->kind != ExprKind::Name)
      return std::nullopt;
    for (const Tensor &t : K.tensors)
      if (t.isArgument && t.name == shape->base->name && index >= 0 && size_t(index) < t.shape.size())
        return t.shape[index].value;
    return std::nullopt;
  }
};

/// A conjunct `f >= 0` of a mask, with its source text.
struct Conjunct {
  const Expr *expr = nullptr;
  Linear f;
};

/// Splits a mask into conjuncts (`&` of comparisons, chained comparisons); a part that is not a
/// comparison of linear forms is a conjunct with `f.ok == false`.
inline void conjuncts(const Expr *e, const Resolver &ctx, std::vector<Conjunct> &out) {
  if (e->kind == ExprKind::BinOp && e->name == "&" && e->elts.size() == 2) {
    conjuncts(e->elts[0], ctx, out);
    conjuncts(e->elts[1], ctx, out);
    return;
  }
  Conjunct c{e, {}};
  if (e->kind != ExprKind::Compare || e->elts.size() != 2 || e->ops.size() != 1) {
    c.f.ok = false;
    out.push_back(c);
    return;
  }
  Linear a = ctx.linear(e->elts[0]), b = ctx.linear(e->elts[1]);
  const std::string &op = e->ops[0];
  if (op == ">=" || op == ">") {
    c.f.add(a, 1);
    c.f.add(b, -1);
  } else if (op == "<=" || op == "<") {
    c.f.add(b, 1);
    c.f.add(a, -1);
  } else {
    c.f.ok = false;
  }
  if (op == ">" || op == "<") c.f.constant -= 1;
  out.push_back(c);
}

/// The smallest value of `f` over the ranges, if every counter has one.
inline std::optional<int64_t> minimum(const Linear &f, const Ranges &ranges) {
  if (!f.ok) return std::nullopt;
  int64_t m = f.constant;
  for (auto &[l, c] : f.loops) {
    auto it = ranges.find(l);
    if (it == ranges.end()) return std::nullopt;
    m += std::min(c * it->second.first, c * it->second.second);
  }
  for (auto &[a, c] : f.aranges) m += std::min<int64_t>(0, c * (a.extent - 1));
  return m;
}

/// The arange extent a conjunct keeps in the peeled copy: `f` is `c + coeff * k` (one arange k,
/// every counter fixed) with coeff < 0, which keeps k in [0, E'). std::nullopt when it is not of that form.
inline std::optional<std::pair<ArangeUse, int64_t>> keptPrefix(const Linear &f, const Ranges &ranges) {
  if (!f.ok || f.aranges.size() != 1 || f.aranges[0].second >= 0) return std::nullopt;
  int64_t c = f.constant;
  for (auto &[l, coeff] : f.loops) {
    auto it = ranges.find(l);
    if (coeff == 0) continue;
    if (it == ranges.end() || it->second.first != it->second.second) return std::nullopt;
    c += coeff * it->second.first;
  }
  auto [a, coeff] = f.aranges[0];
  if (c < 0) return std::nullopt; // nothing kept: leave the mask
  int64_t kept = c / -coeff + 1;
  if (kept >= a.extent) return std::nullopt;
  return std::make_pair(a, kept);
}

/// The operand expression of a call for `slot`, if the op has one.
inline const Expr *slotArg(const Statement &s, const Expr *call, Slot slot) {
  if (!s.op) return nullptr;
  const ParamInfo *p = s.op->slot(slot);
  if (!p) return nullptr;
  if (const Expr *kw = call->keyword(p->name)) return kw;
  int index = s.op->paramIndex(p->name);
  return index >= 0 && size_t(index) < call->elts.size() ? call->elts[index] : nullptr;
}

inline bool within(syntax::ByteRange inner, syntax::ByteRange outer) {
  return inner.begin >= outer.begin && inner.end <= outer.end;
}

} // namespace accelopt::rewrite::index_forms
