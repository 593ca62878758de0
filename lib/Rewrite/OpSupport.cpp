#include "Rewrite/OpSupport.h"

#include "NKI/Listing.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cctype>

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
  std::vector<std::string> fields; // the fields this op may carry
  for (size_t i = 0; i < spec.fields.size(); ++i) {
    const FieldSpec &f = spec.fields[i];
    if (f.alternative) continue; // decided with the field before it
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
            (K.loops.empty() ? " (it has no loops)" : " (loops are L0..L" + std::to_string(K.loops.size() - 1) + ")");
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

// --- refusal texts ---------------------------------------------------------------

std::string unknownTripReason(const Kernel &k, int loop) {
  return "the trip count of " + loopLabel(k, loop) + " is unknown; give input shapes (--inputs or --case)";
}

std::vector<int> loopsBetween(const Kernel &k, int outer, int s) {
  std::vector<int> out;
  for (int l = k.stmts[s].parent; l != -1; l = k.loops[l].parent) {
    out.insert(out.begin(), l);
    if (l == outer) break;
  }
  return out;
}

llvm::Expected<int64_t> blockCount(const Kernel &k, llvm::ArrayRef<int> blockLoops, int outOf,
                                   const std::set<std::string> &boundInside) {
  auto reason = [](std::string why) { return llvm::createStringError(llvm::inconvertibleErrorCode(), why); };
  int64_t blocks = 1;
  for (int c : blockLoops) {
    const Loop &bl = k.loops[c];
    if (!bl.tripCount.isKnown()) return reason(unknownTripReason(k, c));
    if (!singleStopArg(bl) || k.source->slice(bl.headerRange).contains('\n'))
      return reason(
          llvm::formatv("{0} is not a one-line loop over <kind>(N) (its counter indexes the buffer)", loopLabel(k, c))
              .str());
    bool headerUsesInside = false;
    forEachExpr(bl.syntax->value, [&](const syntax::Expr *e) {
      if (e->kind == syntax::ExprKind::Name && boundInside.count(e->name)) headerUsesInside = true;
    });
    if (headerUsesInside)
      return reason(
          llvm::formatv("the bounds of {0} use a name {1} binds", loopLabel(k, c), loopLabel(k, outOf)).str());
    blocks *= *bl.tripCount.value;
  }
  return blocks;
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
    if ((a.length == 0) != (b.length == 0)) return a.length == 0; // insertions first
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

OpResult applied(llvm::StringRef op, std::string ids, const Kernel &k, const EditList &edits, std::string description,
                 uint32_t anchor) {
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

std::optional<std::string> ivReadAfterLoopReason(const Kernel &k, int loop) {
  const Loop &l = k.loops[loop];
  for (const Statement &s : k.stmts)
    if (s.range.begin >= l.range.end && llvm::is_contained(s.uses, l.iv))
      return llvm::formatv("S{0} at {1} reads the induction variable '{2}' after the loop", s.id,
                           where(k, s.range.begin), l.iv)
          .str();
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

std::optional<Conflict> writeBetween(const Kernel &k, int earlier, int later, const Access &read) {
  std::vector<int> writers;
  int outermost = k.stmts[later].parent;
  while (outermost >= 0 && k.loops[outermost].parent >= 0) outermost = k.loops[outermost].parent;
  if (outermost >= 0) {
    writers = stmtsIn(k, outermost);
  } else {
    const std::vector<NodeRef> &block = k.siblingsOf({false, later});
    auto from = llvm::find(block, NodeRef{false, earlier}), to = llvm::find(block, NodeRef{false, later});
    for (auto it = from; it != block.end() && it <= to; ++it) {
      if (!it->isLoop)
        writers.push_back(it->index);
      else
        llvm::append_range(writers, stmtsIn(k, it->index));
    }
  }
  int region = storageOf(k, read.tensor);
  for (int w : writers)
    for (const Access &a : k.stmts[w].writes)
      if (storageOf(k, a.tensor) == region && mayOverlapDir(k, a, read, {})) return Conflict{w, later, &a, &read};
  return std::nullopt;
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
            if (a.range.begin == r.begin && a.range.end == r.end && storageOf(k, a.tensor) == tensor) u.access = &a;
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
  if (s.kind != nki::StmtKind::Alloc || !s.syntax || !s.syntax->value ||
      s.syntax->value->kind != syntax::ExprKind::Call)
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
  if (T.definedBy < 0 || k.stmts[T.definedBy].kind != nki::StmtKind::Alloc)
    return "'" + T.name + "' is not created by an allocation (nl.ndarray, nl.zeros, ...)";
  for (const Tensor &o : k.tensors)
    if (o.aliasOf == t) return "'" + o.name + "' is a view of '" + T.name + "'";
  for (const Statement &s : k.stmts)
    if (s.id != T.definedBy && std::find(s.defines.begin(), s.defines.end(), T.name) != s.defines.end() &&
        s.kind != nki::StmtKind::Accumulate)
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
