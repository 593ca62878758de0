#include "Rewrite/OpSupport.h"

#include "Analysis/Dependence.h"
#include "NKI/Listing.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <numeric>

namespace accelopt::rewrite {

using namespace nki;

// --- results -----------------------------------------------------------------

OpResult badInput(llvm::StringRef op, const std::string &message) {
  OpResult r;
  r.status = Status::BadInput;
  r.error = op.empty() ? message : op.str() + ": " + message;
  return r;
}

OpResult refuse(llvm::StringRef op, std::string ids, uint32_t offset, std::string reason, std::vector<Note> notes) {
  OpResult r;
  r.status = Status::Refused;
  r.refusal = {op.str(), std::move(ids), std::move(reason), offset, std::move(notes)};
  r.anchor = offset;
  return r;
}

Params::Params(const Kernel &k, const nlohmann::json &j, const OpSpec &spec) : K(k), J(j), Spec(spec) {
  if (!j.is_object()) {
    Error = "an op is a JSON object";
    return;
  }
  std::vector<std::string> fields;  // the fields this op may carry
  for (size_t i = 0; i < spec.fields.size(); ++i) {
    const FieldSpec &f = spec.fields[i];
    if (f.alternative) continue;  // decided with the field before it
    if (i + 1 == spec.fields.size() || !spec.fields[i + 1].alternative) {
      fields.push_back(f.name);
      continue;
    }
    const FieldSpec &g = spec.fields[i + 1];
    bool hasF = j.contains(f.name), hasG = j.contains(g.name);
    if (hasF == hasG) {
      Error = llvm::formatv("give exactly one of '{0}' ({1}) and '{2}' ({3})", f.name, fieldKindNoun(f.kind), g.name,
                            fieldKindNoun(g.kind))
                  .str();
      return;
    }
    fields.push_back(hasF ? f.name : g.name);
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "op") continue;
    if (std::find(fields.begin(), fields.end(), it.key()) == fields.end()) {
      std::string known;
      for (auto &f : fields) known += (known.empty() ? "'" : ", '") + f + "'";
      Error = "unknown field '" + it.key() + "' (expected " + known + ")";
      return;
    }
  }
}

const nlohmann::json *Params::get(const char *field, std::initializer_list<FieldKind> kinds) {
  if (!Error.empty()) return nullptr;
  const FieldSpec *declared = Spec.field(field);
  if (!declared || std::find(kinds.begin(), kinds.end(), declared->kind) == kinds.end()) {
    // A mismatch between an op's code and its declaration, not the user's input.
    Error = std::string("internal error: the op reads field '") + field + "', which it does not declare as such";
    return nullptr;
  }
  auto it = J.find(field);
  if (it == J.end()) {
    Error = std::string("missing field '") + field + "'";
    return nullptr;
  }
  return &*it;
}

std::optional<int> Params::loop(const char *field) {
  const nlohmann::json *v = get(field, {FieldKind::Loop});
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    Error = std::string("field '") + field + "' must be a loop id like \"L3\"";
    return std::nullopt;
  }
  std::string ref = v->get<std::string>();
  auto n = K.resolve(ref);
  if (!n || !n->isLoop) {
    Error = "'" + ref + "' (field '" + field + "') is not a loop of kernel '" + K.name + "'" +
            (K.loops.empty() ? " (it has no loops)"
                             : " (loops are L0..L" + std::to_string(K.loops.size() - 1) + ")");
    return std::nullopt;
  }
  return n->index;
}

std::optional<int> Params::stmt(const char *field) {
  const nlohmann::json *v = get(field, {FieldKind::Stmt});
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    Error = std::string("field '") + field + "' must be a statement id like \"S12\"";
    return std::nullopt;
  }
  std::string ref = v->get<std::string>();
  auto n = K.resolve(ref);
  if (!n || n->isLoop) {
    Error = "'" + ref + "' (field '" + field + "') is not a statement of kernel '" + K.name + "'" +
            (K.stmts.empty() ? "" : " (statements are S0..S" + std::to_string(K.stmts.size() - 1) + ")");
    return std::nullopt;
  }
  return n->index;
}

std::optional<int64_t> Params::integer(const char *field) {
  const nlohmann::json *v = get(field, {FieldKind::Integer});
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) {
    Error = std::string("field '") + field + "' must be an integer";
    return std::nullopt;
  }
  return v->get<int64_t>();
}

std::optional<std::string> Params::string(const char *field) {
  const nlohmann::json *v = get(field, {FieldKind::Node, FieldKind::Tensor, FieldKind::Code, FieldKind::Choice});
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    Error = std::string("field '") + field + "' must be a string";
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::optional<std::string> Params::choice(const char *field) {
  std::optional<std::string> value = string(field);
  if (!value) return std::nullopt;
  const std::vector<const char *> &choices = Spec.field(field)->choices;
  if (std::find(choices.begin(), choices.end(), *value) == choices.end()) {
    std::string known;
    for (const char *c : choices) known += (known.empty() ? "" : ", ") + std::string(c);
    Error = std::string(field) + " '" + *value + "' is not one of " + known;
    return std::nullopt;
  }
  return value;
}

// --- text layout -------------------------------------------------------------

uint32_t lineBegin(llvm::StringRef text, uint32_t offset) {
  offset = std::min<uint32_t>(offset, text.size());
  while (offset > 0 && text[offset - 1] != '\n') --offset;
  return offset;
}

uint32_t nextLineBegin(llvm::StringRef text, uint32_t offset) {
  size_t nl = text.find('\n', offset);
  return nl == llvm::StringRef::npos ? text.size() : nl + 1;
}

std::string indentAt(llvm::StringRef text, uint32_t offset) {
  uint32_t b = lineBegin(text, offset), e = b;
  while (e < text.size() && (text[e] == ' ' || text[e] == '\t')) ++e;
  return text.slice(b, e).str();
}

bool startsLine(llvm::StringRef text, uint32_t offset) {
  for (uint32_t i = lineBegin(text, offset); i < offset; ++i)
    if (text[i] != ' ' && text[i] != '\t') return false;
  return true;
}

bool endsLine(llvm::StringRef text, uint32_t offset) {
  for (uint32_t i = offset; i < text.size() && text[i] != '\n'; ++i) {
    if (text[i] == '#') return true;
    if (text[i] != ' ' && text[i] != '\t' && text[i] != '\r') return false;
  }
  return true;
}

std::string bodyIndentUnit(const Kernel &k, const Loop &loop) {
  llvm::StringRef text = k.source->text();
  if (!loop.syntax || loop.syntax->body.empty()) return "";
  uint32_t first = loop.syntax->body.front()->range.begin;
  if (!startsLine(text, first)) return "";
  std::string header = indentAt(text, loop.range.begin), body = indentAt(text, first);
  if (body.size() <= header.size() || body.compare(0, header.size(), header) != 0) return "";
  return body.substr(header.size());
}

std::vector<uint32_t> nonBlankLineStarts(llvm::StringRef text, uint32_t begin, uint32_t end) {
  std::vector<uint32_t> out;
  for (uint32_t ls = lineBegin(text, begin); ls < end && ls < text.size(); ls = nextLineBegin(text, ls)) {
    uint32_t i = ls;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
    if (i < text.size() && text[i] != '\n') out.push_back(ls);
  }
  return out;
}

// --- syntax walks ------------------------------------------------------------

void forEachExpr(const syntax::Expr *e, const std::function<void(const syntax::Expr *)> &fn) {
  if (!e) return;
  fn(e);
  forEachExpr(e->base, fn);
  for (const syntax::Expr *x : e->elts) forEachExpr(x, fn);
  for (const auto &kw : e->keywords) forEachExpr(kw.value, fn);
}

void forEachExpr(const syntax::Stmt *s, const std::function<void(const syntax::Expr *)> &fn) {
  if (!s) return;
  for (const syntax::Expr *d : s->decorators) forEachExpr(d, fn);
  for (const auto &p : s->params) forEachExpr(p.defaultValue, fn);
  for (const syntax::Expr *t : s->targets) forEachExpr(t, fn);
  forEachExpr(s->value, fn);
  forEachExpr(s->msg, fn);
  for (const syntax::Stmt *b : s->body) forEachExpr(b, fn);
  for (const syntax::Stmt *b : s->orelse) forEachExpr(b, fn);
}

std::vector<const syntax::Expr *> namesIn(const syntax::Stmt *s, llvm::StringRef name) {
  std::vector<const syntax::Expr *> out;
  forEachExpr(s, [&](const syntax::Expr *e) {
    if (e->kind == syntax::ExprKind::Name && e->name == name) out.push_back(e);
  });
  return out;
}

std::vector<const syntax::Expr *> namesInBody(const Loop &loop, llvm::StringRef name) {
  std::vector<const syntax::Expr *> out;
  for (const syntax::Stmt *b : loop.syntax->body)
    for (const syntax::Expr *e : namesIn(b, name)) out.push_back(e);
  return out;
}

bool hasMultilineString(const syntax::Stmt *s, llvm::StringRef text) {
  bool found = false;
  forEachExpr(s, [&](const syntax::Expr *e) {
    if (e->kind == syntax::ExprKind::Str && text.slice(e->range.begin, e->range.end).contains('\n')) found = true;
  });
  return found;
}

bool bodyHasMultilineString(const Loop &loop, llvm::StringRef text) {
  for (const syntax::Stmt *b : loop.syntax->body)
    if (hasMultilineString(b, text)) return true;
  return false;
}

std::set<std::string> identifiersIn(llvm::StringRef text) {
  std::set<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = text[i];
    if (std::isalpha(c) || c == '_') {
      size_t j = i;
      while (j < text.size() && (std::isalnum((unsigned char)text[j]) || text[j] == '_')) ++j;
      out.insert(text.slice(i, j).str());
      i = j;
    } else if (std::isdigit(c)) {
      while (i < text.size() && (std::isalnum((unsigned char)text[i]) || text[i] == '_')) ++i;
    } else {
      ++i;
    }
  }
  return out;
}

std::string freshName(const std::set<std::string> &taken, const std::string &base) {
  if (!taken.count(base)) return base;
  for (int i = 2;; ++i) {
    std::string n = base + std::to_string(i);
    if (!taken.count(n)) return n;
  }
}

// --- kernel structure ---------------------------------------------------------

static void collect(const Kernel &k, const std::vector<NodeRef> &nodes, std::vector<int> *stmts,
                    std::vector<int> *loops) {
  for (NodeRef n : nodes) {
    if (n.isLoop) {
      if (loops) loops->push_back(n.index);
      collect(k, k.loops[n.index].body, stmts, loops);
    } else if (stmts) {
      stmts->push_back(n.index);
    }
  }
}

std::vector<int> stmtsIn(const Kernel &k, int loop) {
  std::vector<int> out;
  collect(k, k.loops[loop].body, &out, nullptr);
  return out;
}

std::vector<int> loopsIn(const Kernel &k, int loop) {
  std::vector<int> out;
  collect(k, k.loops[loop].body, nullptr, &out);
  return out;
}

std::string loopLabel(const Kernel &k, int loop) {
  const Loop &l = k.loops[loop];
  return llvm::formatv("L{0} ({1}, trip {2})", loop, l.iv, l.tripCount.str()).str();
}

std::string unknownTripReason(const Kernel &k, int loop) {
  return "the trip count of " + loopLabel(k, loop) + " is unknown; give input shapes (--inputs or --case)";
}

bool directlyFollows(const Kernel &k, NodeRef first, NodeRef second) {
  const auto &sib = k.siblingsOf(first);
  auto pos = std::find(sib.begin(), sib.end(), first);
  return pos != sib.end() && pos + 1 != sib.end() && *(pos + 1) == second;
}

std::vector<std::pair<NodeRef, NodeRef>> adjacentNodes(const Kernel &k) {
  std::vector<std::pair<NodeRef, NodeRef>> out;
  auto scan = [&](const std::vector<NodeRef> &nodes) {
    for (size_t i = 0; i + 1 < nodes.size(); ++i) out.push_back({nodes[i], nodes[i + 1]});
  };
  scan(k.body);
  for (const Loop &l : k.loops) scan(l.body);
  return out;
}

std::string tensorName(const Kernel &k, int tensor) {
  if (tensor < 0 || tensor >= int(k.tensors.size())) return "<tensor>";
  const Tensor &t = k.tensors[tensor];
  return t.name.empty() ? "<tile>" : t.name;
}

std::string where(const Kernel &k, uint32_t offset) { return k.source->location(offset); }

bool privateTo(const Kernel &k, int tensor, int loop) {
  int t = analysis::storageOf(k, tensor);
  int scope = k.tensors[t].scope;
  if (scope < 0 || k.tensors[t].isArgument) return false;
  return scope == loop || k.encloses(loop, NodeRef{true, scope});
}

bool isAccumulation(const Statement &s, const Access &a) {
  if (a.isAccumulate) return true;
  if (a.isWrite) return false;
  for (const Access &w : s.writes)
    if (w.isAccumulate && w.tensor == a.tensor && w.range.begin == a.range.begin && w.range.end == a.range.end)
      return true;
  return false;
}

const syntax::Expr *iterCall(const Loop &l) {
  if (!l.syntax || !l.syntax->value || l.syntax->value->kind != syntax::ExprKind::Call) return nullptr;
  return l.syntax->value;
}

const syntax::Expr *singleStopArg(const Loop &l) {
  const syntax::Expr *call = iterCall(l);
  if (!call || call->elts.size() != 1 || !call->keywords.empty()) return nullptr;
  if (call->elts[0]->kind == syntax::ExprKind::Starred) return nullptr;
  return call->elts[0];
}

/// A Python name the loop body reads before (re)binding it: a value carried
/// from one iteration to the next ("acc = nl.add(acc, t)", "offset += 128").
const std::vector<std::string> &boundNames(const Statement &s) {
  static const std::vector<std::string> none;
  return s.kind == StmtKind::Accumulate ? none : s.defines;
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

// --- dependence with directions ---------------------------------------------

namespace {

constexpr int64_t Inf = std::numeric_limits<int64_t>::max() / 4;

/// constant + sum of g * x with x in [a, b] (a may be -Inf, b may be +Inf): can it be zero?
struct Form {
  int64_t constant = 0, lo = 0, hi = 0, gcd = 0;
  bool loInf = false, hiInf = false;
  void add(int64_t g, int64_t a, int64_t b) {
    if (g == 0) return;
    gcd = std::gcd(gcd, g < 0 ? -g : g);
    bool aInf = a <= -Inf, bInf = b >= Inf;
    if (g > 0) {
      if (aInf) loInf = true; else lo += g * a;
      if (bInf) hiInf = true; else hi += g * b;
    } else {
      if (bInf) loInf = true; else lo += g * b;
      if (aInf) hiInf = true; else hi += g * a;
    }
  }
  bool mayBeZero() const {
    if (gcd == 0) return constant == 0;
    if (constant % gcd != 0) return false;
    return (loInf || lo + constant <= 0) && (hiInf || hi + constant >= 0);
  }
};

int64_t lastIter(const Kernel &k, int loop) {
  auto t = analysis::tripCount(k, loop);
  return t ? std::max<int64_t>(0, *t - 1) : Inf;
}

} // namespace

bool mayOverlapDir(const Kernel &k, const Access &a, const Access &b, const std::vector<DirConstraint> &dirs,
                   std::pair<int, int> aliasB) {
  if (analysis::storageOf(k, a.tensor) != analysis::storageOf(k, b.tensor)) return false;
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
    if (da.full || db.full) continue;  // the whole dimension always overlaps
    if (!da.base.known || !db.base.known) continue;
    Form f;
    f.constant = da.base.constant - db.base.constant;
    std::vector<std::pair<int, int64_t>> tb;
    for (auto [l, c] : db.base.terms) tb.push_back({l == aliasB.first ? aliasB.second : l, c});
    auto coeffB = [&](int l) {
      int64_t s = 0;
      for (auto &[x, c] : tb)
        if (x == l) s += c;
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
        f.add(-cb, 0, hi);
        continue;
      }
      // ca*n_a - cb*n_b with n_a = n_b + delta: (ca - cb)*n_b + ca*delta.
      f.add(ca - cb, 0, hi);
      if (*d == Dir::Pos) f.add(ca, 1, hi);
      else if (*d == Dir::Neg) f.add(ca, hi >= Inf ? -Inf : -hi, -1);
    }
    for (auto &t : da.aranges) f.add(t.coeff, 0, t.extent > 0 ? t.extent - 1 : Inf);
    for (auto &t : db.aranges) f.add(-t.coeff, 0, t.extent > 0 ? t.extent - 1 : Inf);
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

static std::string accessKind(const Access &a) {
  return a.isAccumulate ? "accumulation into" : a.isWrite ? "write of" : "read of";
}

std::string describeConflict(const Kernel &k, const Conflict &c) {
  return llvm::formatv("{0} '{1}' (S{2}) at {3} and {4} '{5}' (S{6}) at {7}", accessKind(*c.a),
                       tensorName(k, c.a->tensor), c.stmtA, where(k, c.a->range.begin), accessKind(*c.b),
                       tensorName(k, c.b->tensor), c.stmtB, where(k, c.b->range.begin))
      .str();
}

std::vector<Note> conflictNotes(const Kernel &k, const Conflict &c) {
  std::vector<Note> notes;
  notes.push_back({c.a->range.begin, c.a->range.end,
                   llvm::formatv("{0} '{1}' in S{2}", accessKind(*c.a), tensorName(k, c.a->tensor), c.stmtA).str()});
  if (c.b != c.a || c.stmtB != c.stmtA)
    notes.push_back({c.b->range.begin, c.b->range.end,
                     llvm::formatv("{0} '{1}' in S{2}", accessKind(*c.b), tensorName(k, c.b->tensor), c.stmtB).str()});
  return notes;
}

// --- edits --------------------------------------------------------------------

llvm::Expected<clang::tooling::Replacements> EditList::build(llvm::StringRef path) const {
  std::vector<Edit> sorted = Edits;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Edit &a, const Edit &b) {
    if (a.offset != b.offset) return a.offset < b.offset;
    if ((a.length == 0) != (b.length == 0)) return a.length == 0;  // insertions first
    return a.seq < b.seq;
  });
  // Merge everything starting at one offset into one replacement.
  std::vector<Edit> merged;
  for (const Edit &e : sorted) {
    if (!merged.empty() && merged.back().offset == e.offset && merged.back().length == 0) {
      merged.back().text += e.text;
      merged.back().length = e.length;
      continue;
    }
    if (!merged.empty() && merged.back().offset + merged.back().length > e.offset)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "overlapping edits at offset %u", e.offset);
    merged.push_back(e);
  }
  clang::tooling::Replacements out;
  for (const Edit &e : merged)
    if (auto err = out.add(clang::tooling::Replacement(path, e.offset, e.length, e.text))) return err;
  return out;
}

OpResult applied(llvm::StringRef op, std::string ids, const Kernel &k, const EditList &edits,
                 std::string description, uint32_t anchor) {
  auto reps = edits.build(k.source->path());
  if (!reps) {
    std::string msg = llvm::toString(reps.takeError());
    return refuse(op, ids, anchor, "internal error: " + msg);
  }
  OpResult r;
  r.refusal.op = op.str();
  r.refusal.ids = std::move(ids);
  r.status = Status::Applied;
  r.edits = std::move(*reps);
  r.description = std::move(description);
  r.anchor = anchor;
  return r;
}

// --- hoist and sink ----------------------------------------------------------------

OpResult StmtMoveOp::apply(const Kernel &k, const nlohmann::json &j) const {
  Params p(k, j, spec());
  auto stmt = p.stmt("stmt");
  auto loop = p.loop(LoopField);
  if (!p.ok()) return p.error();
  std::string ids = llvm::formatv("S{0} L{1}", *stmt, *loop).str();
  uint32_t anchor = k.stmts[*stmt].range.begin;
  if (auto why = placementRefusal(k, *stmt, *loop)) return refuse(name(), ids, anchor, std::move(*why));
  if (auto r = checkMovable(k, *stmt, *loop, name(), ids, anchor)) return std::move(*r);
  return applyMove(k, *stmt, *loop, ids, anchor);
}

void moveStmtLines(EditList &edits, llvm::StringRef text, const Statement &s, uint32_t to,
                   llvm::function_ref<std::string(llvm::StringRef line)> reindent) {
  uint32_t cutBegin = lineBegin(text, s.range.begin), cutEnd = nextLineBegin(text, s.range.end);
  std::string moved;
  for (uint32_t ls = cutBegin; ls < cutEnd; ls = nextLineBegin(text, ls))
    moved += reindent(text.slice(ls, nextLineBegin(text, ls)));
  if (moved.empty() || moved.back() != '\n') moved += "\n";
  edits.remove(cutBegin, cutEnd);
  edits.insert(to, moved);
}

// --- counted loops ----------------------------------------------------------------

OpResult LoopFactorOp::apply(const Kernel &k, const nlohmann::json &j) const {
  Params p(k, j, spec());
  auto loop = p.loop("loop");
  auto factor = p.integer("factor");
  if (!p.ok()) return p.error();
  const Loop &l = k.loops[*loop];
  std::string ids = "L" + std::to_string(*loop);
  uint32_t anchor = l.iterRange.begin;
  int64_t f = *factor;
  if (f < 2) return badInput(name(), "factor must be at least 2 (got " + std::to_string(f) + ")");
  if (CopyLimit && f > *CopyLimit)
    return badInput(name(), "factor " + std::to_string(f) + " is more than " + std::to_string(*CopyLimit) + " copies");
  if (!l.tripCount.isKnown()) return refuse(name(), ids, anchor, unknownTripReason(k, *loop));
  return applyFactor(k, *loop, f, *l.tripCount.value, ids, anchor);
}

CountedLoop countedLoop(const Kernel &k, int loop, llvm::StringRef op) {
  const Loop &l = k.loops[loop];
  CountedLoop c;
  c.call = iterCall(l);
  c.stop = singleStopArg(l);
  if (!c.call || !c.stop)
    c.refusal = op.str() + " handles loops of the form 'for i in <kind>(N)' (one argument)";
  else if (l.syntax->targets.size() != 1 || l.syntax->targets[0]->kind != syntax::ExprKind::Name)
    c.refusal = "the loop target is not a single name";
  else if (!l.syntax->orelse.empty())
    c.refusal = "the loop has an else clause";
  else if ((c.bodyUnit = bodyIndentUnit(k, l)).empty())
    c.refusal = "the loop body is on the header line";
  return c;
}

std::vector<nlohmann::json> divisorInstances(const Kernel &k, llvm::StringRef op, int64_t maxFactor, bool belowTrip) {
  std::vector<nlohmann::json> out;
  for (const Loop &l : k.loops) {
    if (!l.tripCount.isKnown()) continue;
    int64_t trip = *l.tripCount.value;
    for (int64_t f = 2; (belowTrip ? f < trip : f <= trip) && f <= maxFactor; ++f)
      if (trip % f == 0) out.push_back({{"op", op.str()}, {"loop", "L" + std::to_string(l.id)}, {"factor", f}});
  }
  return out;
}

std::optional<std::string> ivRebindingReason(const Kernel &k, int loop) {
  const Loop &l = k.loops[loop];
  for (int s : stmtsIn(k, loop))
    for (auto &d : k.stmts[s].defines)
      if (d == l.iv) return "S" + std::to_string(s) + " rebinds the induction variable '" + l.iv + "'";
  for (int inner : loopsIn(k, loop))
    if (k.loops[inner].iv == l.iv)
      return "inner loop L" + std::to_string(inner) + " reuses the induction variable '" + l.iv + "'";
  return std::nullopt;
}

void divideHeader(EditList &edits, const Kernel &k, const Loop &l, const syntax::Expr *stop, const std::string &outer,
                  int64_t f) {
  edits.replace(l.syntax->targets[0]->range, outer);
  std::string stopText = k.source->slice(stop->range).str();
  // Operands that bind tighter than `//` need no parentheses.
  bool tight = stop->kind == syntax::ExprKind::Name || stop->kind == syntax::ExprKind::Attribute ||
               stop->kind == syntax::ExprKind::Call || stop->kind == syntax::ExprKind::Subscript ||
               (stop->kind == syntax::ExprKind::BinOp && (stop->name == "//" || stop->name == "*"));
  std::string newStop = stop->kind == syntax::ExprKind::Int ? std::to_string(stop->intValue / f)
                        : tight                             ? stopText + " // " + std::to_string(f)
                                                            : "(" + stopText + ") // " + std::to_string(f);
  edits.replace(stop->range, newStop);
}

// --- buffers --------------------------------------------------------------------

std::string tensorRef(const Kernel &k, const Tensor &t) {
  std::string err;
  return resolveTensor(k, t.name, err) == t.id ? t.name : "S" + std::to_string(t.definedBy);
}

std::vector<const Tensor *> onChipBuffers(const Kernel &k) {
  std::vector<const Tensor *> out;
  for (const Tensor &t : k.tensors)
    if (!t.isArgument && t.definedBy >= 0 && (t.buffer == Buffer::SBUF || t.buffer == Buffer::PSUM)) out.push_back(&t);
  return out;
}

uint32_t tensorAnchor(const Kernel &k, const Tensor &t) {
  return t.definedBy >= 0 ? k.stmts[t.definedBy].range.begin : t.range.begin;
}

int resolveTensor(const Kernel &k, const std::string &ref, std::string &error) {
  if (ref.size() > 1 && ref[0] == 'S' && std::all_of(ref.begin() + 1, ref.end(), ::isdigit)) {
    auto n = k.resolve(ref);
    if (!n || n->isLoop) {
      error = "'" + ref + "' is not a statement of kernel '" + k.name + "'";
      return -1;
    }
    int t = k.stmts[n->index].definesTensor;
    if (t < 0) error = "S" + std::to_string(n->index) + " creates no tensor";
    return t;
  }
  int found = -1;
  for (const Tensor &t : k.tensors) {
    if (t.isArgument || t.name != ref) continue;
    if (found >= 0) {
      error = "several tensors are named '" + ref + "'; name it by the statement creating it (S<n>)";
      return -1;
    }
    found = t.id;
  }
  if (found < 0) error = "'" + ref + "' is not a tensor created in kernel '" + k.name + "'";
  return found;
}

std::vector<TensorUse> tensorUses(const Kernel &k, int tensor) {
  const Tensor &T = k.tensors[tensor];
  std::vector<TensorUse> out;
  if (T.name.empty()) return out;
  auto scan = [&](int stmtId, const syntax::Expr *root, const Statement *st) {
    std::set<const syntax::Expr *> bases;
    std::vector<std::pair<const syntax::Expr *, const syntax::Expr *>> found;
    forEachExpr(root, [&](const syntax::Expr *e) {
      if (e->kind == syntax::ExprKind::Subscript && e->base && e->base->kind == syntax::ExprKind::Name &&
          e->base->name == T.name) {
        bases.insert(e->base);
        found.push_back({e->base, e});
      }
    });
    forEachExpr(root, [&](const syntax::Expr *e) {
      if (e->kind == syntax::ExprKind::Name && e->name == T.name && !bases.count(e)) found.push_back({e, nullptr});
    });
    for (auto &[n, sub] : found) {
      TensorUse u{stmtId, n, sub, nullptr};
      if (st) {
        ByteRange r = sub ? sub->range : n->range;
        for (const auto *list : {&st->reads, &st->writes})
          for (const Access &a : *list)
            if (a.range.begin == r.begin && a.range.end == r.end && analysis::storageOf(k, a.tensor) == tensor)
              u.access = &a;
      }
      out.push_back(u);
    }
  };
  for (const Statement &s : k.stmts) {
    if (!s.syntax) continue;
    if (s.id == T.definedBy) {
      // The creating statement: only its value (not the bound target) counts.
      scan(s.id, s.syntax->value, &s);
      continue;
    }
    for (const syntax::Expr *t : s.syntax->targets) scan(s.id, t, &s);
    scan(s.id, s.syntax->value, &s);
    scan(s.id, s.syntax->msg, &s);
    for (const syntax::Stmt *b : s.syntax->body) {
      // Nested blocks (if/while bodies) are uses without IR accesses.
      std::vector<const syntax::Expr *> names = namesIn(b, T.name);
      for (auto *n : names) out.push_back({s.id, n, nullptr, nullptr});
    }
    for (const syntax::Stmt *b : s.syntax->orelse)
      for (auto *n : namesIn(b, T.name)) out.push_back({s.id, n, nullptr, nullptr});
  }
  for (const Loop &l : k.loops)
    if (l.syntax) scan(-1, l.syntax->value, nullptr);
  std::sort(out.begin(), out.end(),
            [](const TensorUse &a, const TensorUse &b) { return a.name->range.begin < b.name->range.begin; });
  return out;
}

const syntax::Expr *allocShapeTuple(const Statement &s) {
  if (s.kind != StmtKind::Alloc || !s.syntax || !s.syntax->value || s.syntax->value->kind != syntax::ExprKind::Call)
    return nullptr;
  const syntax::Expr *call = s.syntax->value;
  const syntax::Expr *shape = call->keyword("shape");
  if (!shape && !call->elts.empty()) shape = call->elts[0];
  if (!shape || shape->kind != syntax::ExprKind::Tuple) return nullptr;
  return shape;
}

std::string movedLines(llvm::StringRef text, const Statement &s, const std::string &indent,
                       std::vector<std::tuple<uint32_t, uint32_t, std::string>> inner) {
  uint32_t b = lineBegin(text, s.range.begin), e = nextLineBegin(text, s.range.end);
  std::sort(inner.begin(), inner.end());
  std::string body;
  uint32_t pos = b;
  for (auto &[from, to, with] : inner) {
    body += text.slice(pos, from).str() + with;
    pos = to;
  }
  body += text.slice(pos, e).str();
  std::string own = indentAt(text, s.range.begin), out;
  llvm::StringRef rest(body);
  while (!rest.empty()) {
    auto [line, tail] = rest.split('\n');
    bool hadNewline = rest.size() > line.size();
    if (line.startswith(own)) line = line.drop_front(own.size());
    if (!line.trim().empty()) out += indent + line.str();
    if (hadNewline) out += "\n";
    rest = tail;
  }
  if (out.empty() || out.back() != '\n') out += "\n";
  return out;
}

std::optional<std::string> bufferReshapeRefusal(const Kernel &k, int t) {
  const Tensor &T = k.tensors[t];
  if (T.buffer != Buffer::SBUF && T.buffer != Buffer::PSUM) return "'" + T.name + "' is not an SBUF or PSUM buffer";
  if (T.isArgument || T.isOutput) return "'" + T.name + "' is a kernel argument or output";
  if (T.definedBy < 0 || k.stmts[T.definedBy].kind != StmtKind::Alloc)
    return "'" + T.name + "' is not created by an allocation (nl.ndarray, nl.zeros, ...)";
  for (const Tensor &o : k.tensors)
    if (o.aliasOf == t) return "'" + o.name + "' is a view of '" + T.name + "'";
  for (const Statement &s : k.stmts)
    if (s.id != T.definedBy && std::find(s.defines.begin(), s.defines.end(), T.name) != s.defines.end() &&
        s.kind != StmtKind::Accumulate)
      return llvm::formatv("'{0}' is also bound by S{1} at {2}", T.name, s.id, where(k, s.range.begin)).str();
  const Statement &A = k.stmts[T.definedBy];
  const syntax::Expr *shape = allocShapeTuple(A);
  if (!shape || shape->elts.size() != T.shape.size() || shape->elts.empty())
    return "the shape of '" + T.name + "' is not a tuple literal in S" + std::to_string(A.id);
  llvm::StringRef text = k.source->text();
  if (!startsLine(text, A.range.begin) || !endsLine(text, A.range.end) || hasMultilineString(A.syntax, text))
    return "S" + std::to_string(A.id) + " shares its lines with other code";
  return std::nullopt;
}

} // namespace accelopt::rewrite
