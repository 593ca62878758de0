#include "Rewrite/Migrate.h"

#include "NKI/Dialect.h"
#include "NKI/OpTable.h"
#include "NKI/PyCore.h"
#include "NKI/Types.h"
#include "Syntax/AstWalks.h"
#include "Syntax/TextLayout.h"

#include "llvm/Support/Regex.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace accelopt::rewrite {

namespace {

using syntax::Expr;
using syntax::ExprKind;
using syntax::Stmt;
using syntax::StmtKind;

/// The names the file being migrated binds by its imports (`import neuronxcc.nki.isa as ni`), canonical.
thread_local const std::map<std::string, std::string> *FileAliases = nullptr;

/// Expands the `\x01field\x02field...\x01` markers an emitter left in TEXT: each is replaced by what EXPAND
/// appends to the text so far (which it may also edit, e.g. to fold a term into what precedes it).
std::string expandMarkers(const std::string &text,
                          llvm::function_ref<void(llvm::ArrayRef<llvm::StringRef> fields, std::string &out)> expand) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    size_t open = text.find('\x01', i);
    if (open == std::string::npos) return out + text.substr(i);
    size_t close = text.find('\x01', open + 1);
    llvm::SmallVector<llvm::StringRef, 3> fields;
    llvm::StringRef(text).slice(open + 1, close).split(fields, '\x02');
    out += text.substr(i, open - i);
    expand(fields, out);
    i = close + 1;
  }
  return out;
}

std::string canonicalCallee(const Expr *call) {
  if (call->kind != ExprKind::Call || !call->base) return "";
  std::string dotted = call->base->dottedName();
  if (FileAliases) {
    size_t dot = dotted.find('.');
    if (auto it = FileAliases->find(dotted.substr(0, dot)); it != FileAliases->end())
      dotted = it->second + (dot == std::string::npos ? "" : dotted.substr(dot));
  }
  std::string path = nki::pycore::canonicalPath(dotted);
  // `from neuronxcc.nki.language import par_dim` binds the bare name.
  return path == "par_dim" ? "nl.par_dim" : path;
}

bool isRemovedApiCall(const Expr *e) {
  return e->kind == ExprKind::Call && nki::removedInCurrentDialect(canonicalCallee(e), /*isKeyword=*/false);
}

/// One element of a 0.1 subscript spelled with nl.arange: `lo + nl.arange(n)[None, :]`.
struct ArangeIndex {
  std::string lo;                    // "" for 0
  std::vector<const Expr *> loTerms; // the summands of lo as written
  std::vector<std::string> grid;     // every grid dimension's extent as written (nl.mgrid fields)
  std::string extent;
  size_t dim = 0, rank = 1;
  const Expr *call = nullptr;
};

class Migrator {
public:
  Migrator(const syntax::Module &m, const TileAllocation &allocation, const TensorShape &shapeOf,
           const CallAllocation &callAllocation, const OperandTileShape &operandTile)
      : M(m), Text(m.source().text()), Allocation(allocation), ShapeOf(shapeOf), CallTile(callAllocation),
        OperandTile(operandTile) {}

  Migration run() {
    std::map<std::string, std::string> aliases;
    syntax::forEachStmt(M.body(), [&](const Stmt *s) {
      if (s->kind == StmtKind::Import || s->kind == StmtKind::ImportFrom)
        for (auto &[local, path] : nki::pycore::importBindings(*s)) aliases[local] = path;
    });
    FileAliases = &aliases;
    Migration out = migrate();
    FileAliases = nullptr;
    return out;
  }

  Migration migrate() {
    forEachStmtIn(M.body());
    renameImports();
    findBlockTensors();
    for (auto &[name, b] : Blocks) {
      planPerIterationAllocation(b);
      rewriteBlockShape(b);
    }
    findBlockParameters();
    findNamedAranges();
    planMasks();
    propagateBounds();
    convertSubscripts();
    convertCalls();
    checkMasksUsed();
    checkSplits();
    checkWindows();
    dropNamedMasks();
    dropNamedAffines();
    dropNamedAranges();
    refuseDirectAllocation();
    for (const Expr *e : Exprs)
      if (isRemovedApiCall(e) && !Consumed.count(e)) {
        const nki::RemovedApi *r = nki::removedInCurrentDialect(canonicalCallee(e), false);
        problem(e, canonicalCallee(e) + " is used in a way that has no mechanical equivalent; " +
                       std::string(r->replacement));
      }
    return finish();
  }

private:
  struct Edit {
    uint32_t end;
    std::string text;
  };
  struct BlockTensor {
    std::string name;
    const Stmt *alloc = nullptr;
    const Expr *shape = nullptr;    // as written
    std::vector<const Expr *> dims; // its elements
    size_t partition = 0;
    bool psum = false;
    const Stmt *home = nullptr; // the loop whose body allocates one tile per iteration
    /// The block dimensions are gone: one tile per iteration of `home` (always for PSUM; for SBUF when
    /// every use indexes the blocks by the enclosing loops' variables, so no tile outlives its iteration,
    /// and folding them into free dimensions would multiply the tile's SBUF footprint).
    bool perIteration = false;
    bool parameter = false; // a helper's parameter that every call passes a block tensor of this layout
  };

  const syntax::Module &M;
  llvm::StringRef Text;
  const TileAllocation &Allocation;
  const TensorShape &ShapeOf;
  const CallAllocation &CallTile;
  const OperandTileShape &OperandTile;
  int SpellingDepth = 0; // operandExtents through the definitions of the tiles it reads
  /// Lines inserted in front of a statement (nested ISA calls hoisted), by the statement's line start.
  std::map<uint32_t, std::string> Hoisted;
  std::set<std::string> FreshNames; // names the hoisted tiles took
  std::vector<const Expr *> Exprs;  // every expression, parents first
  std::map<const Expr *, const Stmt *> StmtOf;
  std::map<const Expr *, const Expr *> ParentOf;
  std::map<uint32_t, Edit> Fine;   // expression edits; a larger edit absorbs those it covers
  std::map<uint32_t, Edit> Coarse; // statement edits; the fine edits inside are rendered into them
  std::vector<MigrationProblem> Problems;
  std::set<const Expr *> Consumed; // removed-API calls the edits replace
  /// Tensors with block dimensions, by the function that allocates them and their name (a file may hold
  /// several kernels that reuse names).
  std::map<std::pair<const Stmt *, std::string>, BlockTensor> Blocks;

  static const Stmt *functionOf(const Stmt *s) {
    while (s && s->kind != StmtKind::FunctionDef) s = s->parent;
    return s;
  }
  /// The block tensor a name refers to where expression `e` uses it.
  std::map<std::pair<const Stmt *, std::string>, BlockTensor>::iterator blockNamed(const Expr *e,
                                                                                   const std::string &name) {
    auto at = StmtOf.find(e);
    return Blocks.find({at == StmtOf.end() ? nullptr : functionOf(at->second), name});
  }
  /// `ix = nl.arange(128)[:, None]`, assigned once: its uses become slices and the line goes.
  struct NamedArange {
    ArangeIndex index;
    const Stmt *def;
  };
  /// Every statement that binds a name, by function and name, in source order.
  std::map<std::pair<const Stmt *, std::string>, std::vector<const Stmt *>> Defs;
  static bool within(const Stmt *s, const Stmt *block) {
    for (const Stmt *p = s->parent; p; p = p->parent)
      if (p == block) return true;
    return false;
  }
  /// The binding of `name` a use in statement `use` reads: the last one before it in a block around
  /// it; none when a later binding in a loop around both could reach it on the next iteration.
  const Stmt *reachingDef(const Stmt *use, const std::string &name) const {
    auto it = Defs.find({functionOf(use), name});
    if (it == Defs.end()) return nullptr;
    const Stmt *reaching = nullptr;
    for (const Stmt *d : it->second)
      if (d != use && d->range.begin < use->range.begin && within(use, d->parent)) reaching = d;
    // A binding after the use in a loop around both reaches it on the next iteration unless the
    // reaching one is in that loop too (bound again before the use on every iteration).
    for (const Stmt *d : it->second) {
      if (d != use && d->range.begin < use->range.begin) continue;
      for (const Stmt *loop = use->parent; loop; loop = loop->parent)
        if (loop->kind == StmtKind::For && (d == loop || within(d, loop)) &&
            !(reaching && (reaching == loop || within(reaching, loop))))
          return nullptr;
    }
    return reaching;
  }
  const Stmt *reachingDef(const Expr *use, const std::string &name) const {
    auto at = StmtOf.find(use);
    return at == StmtOf.end() ? nullptr : reachingDef(at->second, name);
  }
  /// By the statement that binds them and name (`ix`; `g.p` for a field of an nl.mgrid object `g`).
  std::map<std::pair<const Stmt *, std::string>, NamedArange> NamedAranges;
  /// A name, or a field of a named nl.mgrid object (`g.p`), bound to an arange where it is used.
  const NamedArange *namedArange(const Expr *name) const {
    std::string key, base;
    if (name->kind == ExprKind::Name)
      key = base = name->name;
    else if (name->kind == ExprKind::Attribute && name->base && name->base->kind == ExprKind::Name)
      base = name->base->name, key = base + "." + name->name;
    else
      return nullptr;
    const Stmt *def = reachingDef(name, base);
    auto it = def ? NamedAranges.find({def, key}) : NamedAranges.end();
    return it == NamedAranges.end() ? nullptr : &it->second;
  }
  /// `index = 3 * g.y + g.z`: an integer combination of aranges read through the name, by binding.
  std::map<std::pair<const Stmt *, std::string>, const Stmt *> NamedAffines;
  const Stmt *namedAffine(const Expr *name) const {
    if (name->kind != ExprKind::Name) return nullptr;
    const Stmt *def = reachingDef(name, name->name);
    auto it = def ? NamedAffines.find({def, name->name}) : NamedAffines.end();
    return it == NamedAffines.end() ? nullptr : it->second;
  }
  /// `g = nl.mgrid[0:128, 0:n]` whose fields `g.p`, `g.x` index: by binding and name.
  std::set<std::pair<const Stmt *, std::string>> MgridObjects;
  /// A name the statement binds (`t` of `t = ...`, of `a, t = ...`, of `for t in ...`).
  bool isTarget(const Expr *e) const {
    const Expr *top = e;
    if (const Expr *p = ParentOf.at(e); p && p->kind == ExprKind::Tuple) top = p;
    if (ParentOf.at(top)) return false;
    const Stmt *s = StmtOf.at(e);
    return std::find(s->targets.begin(), s->targets.end(), top) != s->targets.end();
  }
  /// The uses of `name` that read the binding `def`.
  std::vector<const Expr *> usesOf(const Stmt *def, const std::string &name) const {
    std::vector<const Expr *> out;
    for (const Expr *e : Exprs)
      if (e->kind == ExprKind::Name && e->name == name && functionOf(StmtOf.at(e)) == functionOf(def) && !isTarget(e) &&
          reachingDef(e, name) == def)
        out.push_back(e);
    return out;
  }
  std::set<const Expr *> ConvertedNames; // Name uses of NamedAranges turned into slices
  std::set<const Expr *> ApTargets;      // assignment targets that became `t.ap(...)`
  /// One conjunct of a `mask=` that keeps a prefix of grid dimension `dim`: index t kept when t < bound.
  struct MaskBoundText {
    size_t dim = 0;
    std::string extent; // the arange's extent as written
    std::string bound;  // rendered: `M - m * TILE_P`
    bool used = false;
    const Stmt *scope = nullptr; // of a partial tile's bound: the block whose statements may use it
  };
  std::map<const Stmt *, std::vector<MaskBoundText>> Masks; // statements whose call's mask= is converted
  std::set<const Expr *> MaskArgs;                          // those mask= values
  std::map<const Stmt *, std::string> Guards;     // `if <loop condition>:` and the new indentation, before a statement
  std::map<std::string, const Stmt *> NamedMasks; // `inside = (...) & (...)`, assigned once

  void problem(const Expr *e, std::string msg) { Problems.push_back({e->range.begin, std::move(msg)}); }

  void collect(const Expr *e, const Stmt *s, const Expr *parent) {
    if (!e) return;
    Exprs.push_back(e);
    StmtOf[e] = s;
    ParentOf[e] = parent;
    collect(e->base, s, e);
    for (const Expr *x : e->elts) collect(x, s, e);
    for (const auto &kw : e->keywords) collect(kw.value, s, e);
  }
  void forEachStmtIn(const std::vector<const Stmt *> &body) {
    for (const Stmt *s : body) {
      for (const Expr *t : s->targets) collect(t, s, nullptr);
      collect(s->value, s, nullptr);
      collect(s->msg, s, nullptr);
      for (const Expr *d : s->decorators) collect(d, s, nullptr);
      forEachStmtIn(s->body);
      forEachStmtIn(s->orelse);
    }
  }

  std::string render(uint32_t b, uint32_t e) const {
    std::string out;
    uint32_t at = b;
    for (auto it = Fine.lower_bound(b); it != Fine.end() && it->first < e && it->second.end <= e; ++it) {
      out += Text.slice(at, it->first).str() + it->second.text;
      at = it->second.end;
    }
    return out + Text.slice(at, e).str();
  }
  std::string render(const Expr *e) const { return render(e->range.begin, e->range.end); }

  void addFine(uint32_t b, uint32_t e, std::string text) {
    // An insertion at b (a whole tile's bounds after its name) stays in front of a later edit from b.
    if (auto it = Fine.find(b); e > b && it != Fine.end() && it->second.end == b) {
      text = it->second.text + text;
      Fine.erase(it);
    }
    for (auto it = Fine.lower_bound(b); it != Fine.end() && it->first < e && it->second.end <= e;)
      it = it->first == b && it->second.end == b && e == b ? std::next(it) : Fine.erase(it);
    if (auto it = Fine.find(b); it != Fine.end() && it->second.end == b && e == b) {
      it->second.text += text; // two insertions at one place
      return;
    }
    Fine[b] = {e, std::move(text)};
  }

  // ---------------------------------------------------------------- imports

  void renameImports() {
    std::string legacy(nki::kLegacyPackage);
    syntax::forEachStmt(M.body(), [&](const Stmt *s) {
      if (s->kind != StmtKind::Import && s->kind != StmtKind::ImportFrom) return;
      llvm::StringRef text = M.text(s->range);
      // `from neuronxcc import nki [as x]` becomes `import nki [as x]`.
      static const llvm::Regex fromParent(
          "^from[ \t]+neuronxcc[ \t]+import[ \t]+nki([ \t]+as[ \t]+([A-Za-z_][A-Za-z0-9_]*))?[ "
          "\t]*$");
      llvm::SmallVector<llvm::StringRef, 3> groups;
      if (fromParent.match(text, &groups)) {
        std::string alias = groups.size() > 2 && !groups[2].empty() && groups[2].str() != nki::kCurrentPackage
                                ? " as " + groups[2].str()
                                : "";
        addFine(s->range.begin, s->range.end, "import " + std::string(nki::kCurrentPackage) + alias);
        return;
      }
      for (size_t at = text.find(legacy); at != llvm::StringRef::npos; at = text.find(legacy, at + 1)) {
        size_t end = at + legacy.size();
        if (end < text.size() && (llvm::isAlnum(text[end]) || text[end] == '_')) continue;
        // `import neuronxcc.nki as nki` becomes `import nki`.
        llvm::StringRef rest = text.substr(end);
        if (llvm::StringRef alias = rest.ltrim(); rest.size() > alias.size() && alias.consume_front("as")) {
          llvm::StringRef name = alias.ltrim();
          if (name.size() < alias.size() && name.startswith(nki::kCurrentPackage) &&
              (name.size() == nki::kCurrentPackage.size() || !llvm::isAlnum(name[nki::kCurrentPackage.size()])))
            end = text.size() - name.size() + nki::kCurrentPackage.size();
        }
        addFine(s->range.begin + uint32_t(at), s->range.begin + uint32_t(end), std::string(nki::kCurrentPackage));
      }
    });
    // `neuronxcc.nki.isa.iota` spelled out in the code.
    for (const Expr *e : Exprs)
      if (e->kind == ExprKind::Attribute && e->name == "nki" && e->base && e->base->kind == ExprKind::Name &&
          e->base->name == "neuronxcc")
        addFine(e->range.begin, e->range.end, std::string(nki::kCurrentPackage));
  }

  // --------------------------------------------------------- block dimensions

  const Expr *shapeArg(const Expr *call) const {
    if (const Expr *s = call->keyword("shape")) return s;
    return call->elts.empty() ? nullptr : call->elts.front();
  }

  /// The elements of a shape written as a tuple or a list, or a concatenation of them (`[2] + [nl.par_dim(p), f]`).
  static bool shapeElements(const Expr *e, std::vector<const Expr *> &out) {
    if (e->kind == ExprKind::Tuple || e->kind == ExprKind::List) {
      out.insert(out.end(), e->elts.begin(), e->elts.end());
      return true;
    }
    return e->kind == ExprKind::BinOp && e->name == "+" && e->elts.size() == 2 && shapeElements(e->elts[0], out) &&
           shapeElements(e->elts[1], out);
  }

  void findBlockTensors() {
    std::map<std::pair<const Stmt *, std::string>, int> assignments;
    syntax::forEachStmt(M.body(), [&](const Stmt *s) {
      for (const Expr *t : s->targets)
        if (t->kind == ExprKind::Name) ++assignments[{functionOf(s), t->name}];
    });
    syntax::forEachStmt(M.body(), [&](const Stmt *s) {
      if (s->kind != StmtKind::Assign || s->targets.size() != 1 || !s->value || s->value->kind != ExprKind::Call)
        return;
      const Expr *shape = shapeArg(s->value);
      std::vector<const Expr *> dims;
      if (!shape || !shapeElements(shape, dims)) return;
      for (size_t i = 0; i < dims.size(); ++i) {
        const Expr *d = dims[i];
        if (d->kind != ExprKind::Call || canonicalCallee(d) != "nl.par_dim" || d->elts.size() != 1) continue;
        Consumed.insert(d);
        const Expr *target = s->targets.front();
        if (i == 0) {
          addFine(d->range.begin, d->range.end, render(d->elts.front()));
          return;
        }
        if (target->kind != ExprKind::Name || assignments[{functionOf(s), target->name}] != 1) {
          problem(d, "a tensor with block dimensions must be assigned once to a name to be migrated");
          return;
        }
        const Expr *buffer = s->value->keyword("buffer");
        BlockTensor b{target->name, s, shape, dims, i, buffer && M.text(buffer).contains("psum")};
        Blocks[{functionOf(s), b.name}] = b;
        return;
      }
    });
  }

  /// A block tensor passed whole to a function the file defines (`core(q_tile, output_tile)`) is a block
  /// tensor of that function under its parameter's name, so the helper's subscripts are reordered alike;
  /// every call must pass a tensor of one layout there.
  void findBlockParameters() {
    std::map<std::string, const Stmt *> functions;
    syntax::forEachStmt(M.body(), [&](const Stmt *s) {
      if (s->kind == StmtKind::FunctionDef) functions[s->name] = s;
    });
    // By function and parameter: what each call passes (a block tensor, or nullopt), and where.
    std::map<std::pair<const Stmt *, std::string>, std::vector<std::pair<const Expr *, std::optional<BlockTensor>>>>
        passed;
    for (const Expr *e : Exprs) {
      if (e->kind != ExprKind::Call || !e->base || e->base->kind != ExprKind::Name) continue;
      auto fn = functions.find(e->base->name);
      if (fn == functions.end()) continue;
      const Stmt *def = fn->second;
      auto pass = [&](const std::string &param, const Expr *arg) {
        std::optional<BlockTensor> b;
        if (arg->kind == ExprKind::Name)
          if (auto it = blockNamed(arg, arg->name); it != Blocks.end() && !it->second.perIteration) b = it->second;
        passed[{def, param}].push_back({arg, b});
      };
      size_t positional = 0;
      for (const Expr *a : e->elts)
        if (positional < def->params.size() && !def->params[positional].isVarArgs)
          pass(def->params[positional++].name, a);
      for (const auto &kw : e->keywords)
        if (!kw.name.empty()) pass(kw.name, kw.value);
    }
    for (auto &[key, uses] : passed) {
      const std::optional<BlockTensor> &first = uses.front().second;
      bool any = false, same = true;
      for (const auto &[arg, b] : uses) {
        any |= b.has_value();
        same &= b.has_value() == first.has_value() &&
                (!b || (b->partition == first->partition && b->dims.size() == first->dims.size()));
      }
      if (!any || Blocks.count(key)) continue;
      if (!same) {
        problem(uses.front().first, "parameter '" + key.second + "' of " + key.first->name +
                                        " receives tensors of different layouts, some with block dimensions");
        continue;
      }
      BlockTensor alias = *first;
      alias.name = key.second, alias.parameter = true, alias.home = nullptr;
      Blocks[key] = alias;
    }
  }

  /// The allocation's shape: the partition dimension first, then the block dimensions as free
  /// dimensions (SBUF, folded) or without them (one tile per iteration).
  void rewriteBlockShape(const BlockTensor &b) {
    const Expr *d = b.dims[b.partition];
    std::vector<std::string> dims = {render(d->elts.front())};
    for (size_t j = 0; j < b.dims.size(); ++j)
      if (j != b.partition && (!b.perIteration || j > b.partition)) dims.push_back(render(b.dims[j]));
    // A concatenation of lists (`[2] + [nl.par_dim(p), f]`) becomes one tuple.
    if (b.shape->kind == ExprKind::Tuple || b.shape->kind == ExprKind::List)
      addFine(b.dims.front()->range.begin, b.dims.back()->range.end, llvm::join(dims, ", "));
    else
      addFine(b.shape->range.begin, b.shape->range.end, "(" + llvm::join(dims, ", ") + ")");
  }

  std::vector<const Stmt *> enclosingLoops(const Stmt *s) const {
    std::vector<const Stmt *> out;
    for (const Stmt *p = s->parent; p && p->kind != StmtKind::FunctionDef; p = p->parent)
      if (p->kind == StmtKind::For) out.insert(out.begin(), p);
    return out;
  }

  /// A PSUM tensor with block dimensions indexed by loop variables becomes one tile allocated in the
  /// loop those variables enumerate: NKI 0.3 starts every PSUM tensor on its own bank, and the
  /// blocks would not fit.
  void planPerIterationAllocation(BlockTensor &b) {
    std::vector<const Stmt *> common;
    std::optional<std::vector<std::string>> blockNames;
    bool first = true;
    for (const Expr *e : Exprs) {
      if (e->kind != ExprKind::Name || e->name != b.name || StmtOf.at(e) == b.alloc ||
          functionOf(StmtOf.at(e)) != functionOf(b.alloc))
        continue;
      const Expr *parent = ParentOf.at(e);
      const char *why = "it is used without a subscript";
      if (parent && parent->kind == ExprKind::Subscript && parent->base == e && parent->elts.size() > b.partition) {
        std::vector<std::string> names;
        for (size_t i = 0; i < b.partition; ++i)
          names.push_back(parent->elts[i]->kind == ExprKind::Name ? parent->elts[i]->name : "");
        why = nullptr;
        if (std::count(names.begin(), names.end(), ""))
          why = "a block index is not a loop variable";
        else if (blockNames && *blockNames != names)
          why = "its uses index different blocks";
        blockNames = names;
      }
      if (why) {
        if (b.psum)
          problem(e, "PSUM tensor '" + b.name + "' with block dimensions cannot get one tile per iteration: " + why);
        return;
      }
      std::vector<const Stmt *> loops = enclosingLoops(StmtOf.at(e));
      if (first) common = loops;
      size_t n = 0;
      while (n < common.size() && n < loops.size() && common[n] == loops[n]) ++n;
      common.resize(n);
      first = false;
    }
    if (!blockNames) return;
    std::set<std::string> want(blockNames->begin(), blockNames->end()), have;
    for (const Stmt *loop : common) {
      if (loop->targets.size() == 1 && loop->targets.front()->kind == ExprKind::Name)
        have.insert(loop->targets.front()->name);
      if (have == want && want.size() == blockNames->size()) {
        b.home = loop;
        break;
      }
    }
    if (!b.home || !ownsLines(b.alloc) || b.alloc->parent == nullptr ||
        b.alloc->parent->kind != StmtKind::FunctionDef || b.home->body.empty()) {
      if (b.psum)
        problem(b.shape, "PSUM tensor '" + b.name +
                             "' with block dimensions: no loop nest enumerates exactly its blocks, so it cannot get "
                             "one tile per iteration");
      b.home = nullptr;
      return;
    }
    b.perIteration = true;
  }

  /// The statement is alone on its line(s), so that deleting the lines deletes only it.
  bool ownsLines(const Stmt *s) const {
    size_t eol = Text.find('\n', s->range.end);
    llvm::StringRef after = Text.slice(s->range.end, eol == llvm::StringRef::npos ? Text.size() : eol).trim(" \t\r");
    return Text.slice(lineStartOf(s->range.begin), s->range.begin).trim(" \t").empty() &&
           (after.empty() || after.startswith("#"));
  }

  uint32_t lineStartOf(uint32_t offset) const {
    size_t nl = Text.rfind('\n', offset == 0 ? 0 : offset - 1);
    return nl == llvm::StringRef::npos || offset == 0 ? 0 : uint32_t(nl + 1);
  }

  void moveAllocations() {
    // In source order, each ahead of its loop body's first statement and the comment lines above it.
    std::vector<const BlockTensor *> moved;
    for (auto &[name, b] : Blocks)
      if (b.home) moved.push_back(&b);
    llvm::sort(moved, [](const BlockTensor *x, const BlockTensor *y) {
      return x->alloc->range.begin < y->alloc->range.begin;
    });
    for (const BlockTensor *blockTensor : moved) {
      const BlockTensor &b = *blockTensor;
      const std::string &name = b.name;
      uint32_t begin = lineStartOf(b.alloc->range.begin);
      size_t eol = Text.find('\n', b.alloc->range.end);
      uint32_t end = eol == llvm::StringRef::npos ? uint32_t(Text.size()) : uint32_t(eol + 1);
      const Stmt *firstInLoop = b.home->body.front();
      uint32_t at = lineStartOf(firstInLoop->range.begin);
      size_t headerEnd = Text.find('\n', b.home->range.begin);
      while (at > 0 && headerEnd != llvm::StringRef::npos && at > headerEnd + 1) {
        uint32_t previous = lineStartOf(at - 1);
        if (!Text.slice(previous, at).trim().startswith("#")) break;
        at = previous;
      }
      std::string line = Text.slice(lineStartOf(firstInLoop->range.begin), firstInLoop->range.begin).str() + name +
                         " = " + render(b.alloc->value) + "\n";
      Coarse[begin] = {end, ""};
      if (auto it = Coarse.find(at); it != Coarse.end())
        it->second.text += line;
      else
        Coarse[at] = {at, line};
    }
  }

  // --------------------------------------------------------------- subscripts

  std::optional<ArangeIndex> arangeIndex(const Expr *e) {
    if (e->kind == ExprKind::Name || e->kind == ExprKind::Attribute)
      if (const NamedArange *n = namedArange(e)) return n->index;
    if (e->kind == ExprKind::BinOp && e->name == "+" && e->elts.size() == 2)
      for (int side = 0; side < 2; ++side) {
        const Expr *other = e->elts[size_t(1 - side)];
        if (mentionsArange(other)) continue;
        if (auto a = arangeIndex(e->elts[size_t(side)])) {
          a->lo = a->lo.empty() ? render(other) : render(other) + " + " + a->lo;
          a->loTerms.push_back(other);
          return a;
        }
      }
    const Expr *call = e->kind == ExprKind::Subscript ? e->base : e;
    if (!call || call->kind != ExprKind::Call || canonicalCallee(call) != "nl.arange" || call->elts.empty() ||
        call->elts.size() > 2 || !call->keywords.empty())
      return std::nullopt;
    ArangeIndex a;
    a.extent = render(call->elts.back());
    a.call = call;
    if (call->elts.size() == 2) {
      // nl.arange(lo, hi): hi - lo indices from lo.
      const Expr *lo = call->elts.front();
      if (!(lo->kind == ExprKind::Int && lo->intValue == 0))
        a.extent = parenthesized(render(call->elts.back())) + " - " + parenthesized(render(lo)), a.lo = render(lo),
        a.loTerms.push_back(lo);
    }
    if (e->kind == ExprKind::Subscript) {
      a.rank = e->elts.size();
      size_t slices = 0;
      for (size_t i = 0; i < e->elts.size(); ++i) {
        const Expr *x = e->elts[i];
        bool fullSlice = x->kind == ExprKind::Slice &&
                         std::all_of(x->elts.begin(), x->elts.end(), [](const Expr *y) { return y == nullptr; });
        if (fullSlice)
          a.dim = i, ++slices;
        else if (x->kind != ExprKind::None)
          return std::nullopt;
      }
      if (slices != 1) return std::nullopt;
    }
    return a;
  }

  void findNamedAranges() {
    std::map<std::string, int> assignments;
    syntax::forEachStmt(M.body(), [&](const Stmt *s) {
      for (const Expr *t : s->targets) {
        assignments[t->kind == ExprKind::Name ? t->name : ""] += 1;
        if (t->kind == ExprKind::Name) Defs[{functionOf(s), t->name}].push_back(s);
        if (t->kind == ExprKind::Tuple)
          for (const Expr *x : t->elts)
            if (x->kind == ExprKind::Name) assignments[x->name] += 1, Defs[{functionOf(s), x->name}].push_back(s);
      }
    });
    syntax::forEachStmt(M.body(), [&](const Stmt *s) {
      if (s->kind != StmtKind::Assign || s->targets.size() != 1 || !s->value) return;
      const Expr *t = s->targets.front();
      if (t->kind == ExprKind::Name)
        if (auto a = arangeIndex(s->value)) NamedAranges[{s, t->name}] = {*a, s};
      if (t->kind == ExprKind::Name && assignments[t->name] == 1) {
        if (isMaskExpr(s->value) && mentionsArange(s->value)) NamedMasks[t->name] = s;
      }
      const Expr *g = s->value;
      // `g = nl.mgrid[0:128, 0:512]`: its field `g.p`, `g.x`, ... is an arange on grid dimension 0, 1, ...
      if (t->kind == ExprKind::Name && g->kind == ExprKind::Subscript && g->base &&
          nki::pycore::canonicalPath(g->base->dottedName()) == "nl.mgrid" && g->elts.size() <= 4 &&
          llvm::all_of(g->elts, [](const Expr *x) { return isZeroBasedSlice(x); })) {
        for (size_t k = 0; k < g->elts.size(); ++k) {
          ArangeIndex a;
          a.extent = render(g->elts[k]->elts[1]);
          a.dim = k, a.rank = g->elts.size();
          a.call = g;
          for (const Expr *x : g->elts) a.grid.push_back(render(x->elts[1]));
          static constexpr const char *fields[] = {"p", "x", "y", "z"};
          NamedAranges[{s, t->name + "." + fields[k]}] = {a, s};
        }
        MgridObjects.insert({s, t->name});
        return;
      }
      if (t->kind == ExprKind::Name && !NamedAranges.count({s, t->name}) && mentionsArange(s->value) &&
          affineIndex(s->value))
        NamedAffines[{s, t->name}] = s;
      // `ip, jf = nl.mgrid[0:128, 0:512]`: field k is an arange on grid dimension k.
      if (t->kind != ExprKind::Tuple || g->kind != ExprKind::Subscript || !g->base ||
          nki::pycore::canonicalPath(g->base->dottedName()) != "nl.mgrid" || g->elts.size() != t->elts.size())
        return;
      for (size_t k = 0; k < g->elts.size(); ++k) {
        const Expr *x = g->elts[k], *name = t->elts[k];
        if (name->kind != ExprKind::Name || !isZeroBasedSlice(x)) return;
      }
      for (size_t k = 0; k < g->elts.size(); ++k) {
        ArangeIndex a;
        a.extent = render(g->elts[k]->elts[1]);
        a.dim = k, a.rank = g->elts.size();
        a.call = g;
        for (const Expr *x : g->elts) a.grid.push_back(render(x->elts[1]));
        NamedAranges[{s, t->elts[k]->name}] = {a, s};
      }
    });
  }

  /// `0:n` or `:n`.
  static bool isZeroBasedSlice(const Expr *x) {
    return x->kind == ExprKind::Slice && x->elts[1] && !x->elts[2] &&
           (!x->elts[0] || (x->elts[0]->kind == ExprKind::Int && x->elts[0]->intValue == 0));
  }

  /// A comparison or a conjunction (&) of comparisons: a mask held in a name (`inside = (...) & (...)`).
  static bool isMaskExpr(const Expr *e) {
    if (e->kind == ExprKind::BinOp && e->name == "&" && e->elts.size() == 2)
      return isMaskExpr(e->elts[0]) && isMaskExpr(e->elts[1]);
    return e->kind == ExprKind::Compare;
  }

  bool definesNamedArange(const Stmt *s) const {
    return std::any_of(NamedAranges.begin(), NamedAranges.end(), [&](const auto &n) { return n.second.def == s; });
  }

  /// The definitions of masks held in names whose every use was a converted mask=.
  void dropNamedMasks() {
    for (auto &[name, def] : NamedMasks) {
      bool asMask = false, allConverted = true;
      for (const Expr *e : Exprs)
        if (e->kind == ExprKind::Name && e->name == name && StmtOf.at(e) != def) {
          asMask |= MaskArgs.count(e) > 0;
          allConverted &= MaskArgs.count(e) && Masks.count(StmtOf.at(e));
        }
      if (!asMask) continue; // not a mask= anywhere: the arange checks report it
      if (!allConverted || !ownsLines(def)) {
        problem(def->value, "the mask '" + name +
                                "' is used other than as a mask= the migration bounds; it has no "
                                "nki dialect equivalent");
        continue;
      }
      syntax::forEachExpr(def->value, [&](const Expr *x) { Consumed.insert(x), ConvertedNames.insert(x); });
      uint32_t begin = lineStartOf(def->range.begin);
      size_t eol = Text.find('\n', def->range.end);
      Coarse[begin] = {eol == llvm::StringRef::npos ? uint32_t(Text.size()) : uint32_t(eol + 1), ""};
    }
  }

  /// The definitions of named aranges whose every use became a slice (or another named arange).
  void dropNamedAranges() {
    std::set<const Expr *> reported;
    for (auto &[key, n] : NamedAranges) {
      // A field `g.p` of an nl.mgrid object: every use of `g` must have been converted.
      const std::string name = key.second.substr(0, key.second.find('.'));
      const char *what = MgridObjects.count({key.first, name}) ? "an nl.mgrid" : "an nl.arange";
      bool allConverted = true;
      for (const Expr *e : usesOf(key.first, name))
        if (!definesNamedArange(StmtOf.at(e)) && !ConvertedNames.count(e)) {
          if (reported.insert(e).second)
            problem(e, "'" + name + "' (" + what + ") is used outside a subscript index; it has no slice equivalent");
          allConverted = false;
        }
      if (allConverted && !ownsLines(n.def))
        problem(n.def->value, "'" + name + "' shares its line with another statement; put it on its own line first");
      if (!allConverted || !ownsLines(n.def)) continue;
      Consumed.insert(n.index.call);
      uint32_t begin = lineStartOf(n.def->range.begin);
      size_t eol = Text.find('\n', n.def->range.end);
      Coarse[begin] = {eol == llvm::StringRef::npos ? uint32_t(Text.size()) : uint32_t(eol + 1), ""};
    }
  }

  /// The definitions of named index expressions (`index = 3 * g.y + g.z`) whose every use was converted.
  void dropNamedAffines() {
    for (auto &[key, def] : NamedAffines) {
      bool allConverted = true;
      for (const Expr *e : usesOf(def, key.second))
        if (!ConvertedNames.count(e)) {
          problem(e, "'" + key.second +
                         "' (an index expression of nl.arange) is used outside a subscript index, an iota or a mask; "
                         "it has no nki dialect equivalent");
          allConverted = false;
        }
      if (allConverted && !ownsLines(def))
        problem(def->value,
                "'" + key.second + "' shares its line with another statement; put it on its own line first");
      if (!allConverted || !ownsLines(def)) continue;
      syntax::forEachExpr(def->value, [&](const Expr *x) { Consumed.insert(x), ConvertedNames.insert(x); });
      uint32_t begin = lineStartOf(def->range.begin);
      size_t eol = Text.find('\n', def->range.end);
      Coarse[begin] = {eol == llvm::StringRef::npos ? uint32_t(Text.size()) : uint32_t(eol + 1), ""};
    }
  }

  static std::string sliceText(const std::string &lo, const std::string &extent) {
    return lo.empty() ? "0:" + extent : lo + ":" + lo + " + " + extent;
  }

  void convertSubscripts() {
    std::vector<const Expr *> subscripts;
    for (const Expr *e : Exprs)
      if (e->kind == ExprKind::Subscript && !(e->base && canonicalCallee(e->base) == "nl.arange"))
        subscripts.push_back(e);
    // Inner subscripts first, so an outer one renders their slices.
    for (auto it = subscripts.rbegin(); it != subscripts.rend(); ++it) convertSubscript(*it);
  }

  void convertSubscript(const Expr *s) {
    std::vector<std::optional<ArangeIndex>> idx;
    bool any = false;
    for (const Expr *x : s->elts) {
      idx.push_back(arangeIndex(x));
      if (!idx.back() && mentionsArange(x)) {
        // A scaled or combined arange (a flattened grid) has no slice: an access pattern.
        convertToAccessPattern(s, x);
        return;
      }
      any |= bool(idx.back());
    }
    std::vector<std::string> texts;
    for (const Expr *x : s->elts) texts.push_back(render(x));
    if (any) {
      // From the first arange on, the aranges enumerate the dimensions of the index grid in order.
      // Integers between them index as integers, unless the grid has a dimension there that no
      // arange spans (`t[nl.arange(128)[:, None], 0]` is [128, 1]): then each keeps it as a
      // one-element slice.
      std::vector<size_t> at; // the arange elements
      // An arange of extent 1 spans a dimension of one element wherever the grid puts it: it is the
      // one-element slice `lo:lo + 1`, and the other aranges alone decide the order
      // (`w.reshape((1, n))[i_unit, i_f]` of `i_p, i_f, i_unit = nl.mgrid[0:128, 0:n, 0:1]`).
      std::vector<bool> unit(idx.size(), false);
      bool wide = llvm::any_of(idx, [](const auto &a) { return a && a->extent != "1"; });
      auto position = [&](size_t i) { return int64_t(idx[i]->dim) - int64_t(idx[i]->rank); };
      auto outOfOrder = [&](size_t i) {
        for (size_t j = 0; j < idx.size(); ++j)
          if (idx[j] && j != i && (j < i ? position(j) >= position(i) : position(j) <= position(i))) return true;
        return false;
      };
      for (size_t i = 0; i < idx.size(); ++i) {
        if (idx[i] && wide && idx[i]->extent == "1" && !Masks.count(StmtOf.at(s)) && outOfOrder(i)) {
          unit[i] = true;
          texts[i] = sliceText(idx[i]->lo, "1");
          Consumed.insert(idx[i]->call);
          syntax::forEachExpr(s->elts[i], [&](const Expr *x) { ConvertedNames.insert(x); });
          continue;
        }
        if (idx[i]) at.push_back(i);
      }
      size_t leadingUnits = 0;
      while (leadingUnits < unit.size() && unit[leadingUnits]) ++leadingUnits;
      // Aranges of grids of different ranks broadcast right-aligned (numpy): grid dimension d of a
      // rank-r arange is dimension d + rank - r of the index grid, and each spans only its own.
      size_t rank = 0;
      for (size_t i : at) rank = std::max(rank, idx[i]->rank);
      bool mixed = llvm::any_of(at, [&](size_t i) { return idx[i]->rank != rank; });
      auto dimOf = [&](const ArangeIndex &x) { return x.dim + rank - x.rank; };
      for (size_t k = 0; k < at.size(); ++k) {
        const ArangeIndex &a = *idx[at[k]];
        size_t nextDim = k + 1 < at.size() ? dimOf(*idx[at[k + 1]]) : rank;
        size_t end = k + 1 < at.size() ? at[k + 1] : idx.size();
        size_t gap = nextDim - dimOf(a) - 1, integers = end - at[k] - 1;
        for (size_t i = at[k] + 1; i < end; ++i) integers -= unit[i];
        if (mixed && integers == 0) gap = 0; // the dimensions between are 1s of both grids
        // After the last arange, integers index the tensor's last dimensions and the grid's remaining
        // dimensions are 1s (`mean_var[i_p, 0]` of `i_p, i_f, i_u = nl.mgrid[...]` is [128, 1, 1]).
        if (k + 1 == at.size() && integers > 0 && gap > integers) gap = integers;
        // A grid dimension of extent 1 that no element spans (`ix, iw, iy = nl.mgrid[0:128, 0:1, 0:n]`
        // indexing `t[ix, iy]`) adds nothing.
        if (!mixed && gap != integers && a.grid.size() == rank) {
          size_t units = 0;
          for (size_t d = a.dim + 1; d < nextDim; ++d) units += a.grid[d] == "1";
          if (units == gap) gap = 0;
        }
        // Fields of one nl.mgrid may leave its leading dimensions out (`t[iw, iy]` of `ix, iw, iy`).
        bool leading = k > 0 || dimOf(a) == 0 || (mixed && at.front() == leadingUnits) ||
                       (a.grid.size() == rank && integers == 0 && at.front() == leadingUnits);
        bool ordered = (mixed || a.rank == rank) && leading && nextDim > dimOf(a);
        if (!ordered || (gap != 0 && gap != integers)) {
          // Laid out across the grid in another order than the subscript: an access pattern.
          convertToAccessPattern(s, s->elts[at[k]]);
          return;
        }
        if (WindowMask *wm = windowOf(StmtOf.at(s))) {
          wm->extent.emplace(a.dim, a.extent), wm->rank = std::max(wm->rank, a.rank);
          if (windowed(*wm, a.dim)) wm->spanned.insert(a.dim);
        }
        WindowMask *wm = windowOf(StmtOf.at(s));
        texts[at[k]] = wm && windowed(*wm, a.dim)
                           ? windowMarker('l', a.dim, a.lo)
                           : splitSlice(StmtOf.at(s), a.dim, a.lo, a.extent)
                                 .value_or(sliceText(a.lo, boundedExtent(StmtOf.at(s), a.dim, a.extent)));
        Consumed.insert(a.call);
        syntax::forEachExpr(s->elts[at[k]], [&](const Expr *x) { ConvertedNames.insert(x); });
        for (size_t i = at[k] + 1; gap && i < end; ++i) {
          if (unit[i]) continue;
          if (s->elts[i]->kind == ExprKind::Int)
            texts[i] = texts[i] + ":" + std::to_string(s->elts[i]->intValue + 1);
          else if (s->elts[i]->kind != ExprKind::Slice)
            texts[i] = texts[i] + ":" + texts[i] + " + 1";
        }
      }
    }
    auto block = s->base && s->base->kind == ExprKind::Name ? blockNamed(s, s->base->name) : Blocks.end();
    if (block != Blocks.end()) {
      const BlockTensor &b = block->second;
      // `t[k]` indexes the blocks only: the tile's own dimensions are whole.
      if (s->elts.size() <= b.partition) texts.resize(b.dims.size(), ":");
      if (texts.size() != b.dims.size()) {
        problem(s, "'" + b.name + "' has " + std::to_string(b.dims.size()) +
                       " dimensions with its block dimensions but is indexed with " + std::to_string(s->elts.size()));
        return;
      }
      std::vector<std::string> order = {texts[b.partition]};
      for (size_t i = 0; i < texts.size(); ++i)
        if (i != b.partition && (!b.perIteration || i > b.partition)) order.push_back(texts[i]);
      addFine(s->elts.front()->range.begin, s->elts.back()->range.end, llvm::join(order, ", "));
      return;
    }
    if (any)
      for (size_t i = 0; i < s->elts.size(); ++i)
        if (texts[i] != render(s->elts[i])) addFine(s->elts[i]->range.begin, s->elts[i]->range.end, texts[i]);
  }

  // ---------------------------------------------------------- access patterns

  /// An index element as an affine function of the index grid: `constant + sum coef[d] * grid_d`.
  struct Affine {
    std::vector<std::string> constant; // rendered terms, summed
    int64_t number = 0;                // integer terms, summed
    /// grid dimension -> coefficient: integer multiples of factors as written ("" for 1), `sz_f1 * i_f2`
    std::map<size_t, std::map<std::string, int64_t>> coef;
    std::map<size_t, std::string> extent;
    std::vector<const Expr *> calls; // the nl.arange calls it consumes
    size_t rank = 0;                 // 0: no arange
    std::vector<std::string> grid;   // every grid dimension's extent as written, when an nl.mgrid field tells
  };

  /// An nl.arange call or a named one.
  bool mentionsArange(const Expr *e) const {
    bool found = false;
    syntax::forEachExpr(e, [&](const Expr *x) {
      found |= (x->kind == ExprKind::Call && canonicalCallee(x) == "nl.arange") || namedArange(x) != nullptr ||
               namedAffine(x) != nullptr;
    });
    return found;
  }

  static std::string parenthesized(const std::string &c) {
    bool atom = std::all_of(c.begin(), c.end(), [](char ch) { return llvm::isAlnum(ch) || ch == '_' || ch == '.'; });
    return atom ? c : "(" + c + ")";
  }

  static bool addAffine(Affine &into, const Affine &x) {
    if (into.rank && x.rank && into.rank != x.rank) return false;
    into.rank = std::max(into.rank, x.rank);
    into.constant.insert(into.constant.end(), x.constant.begin(), x.constant.end());
    into.number += x.number;
    for (const auto &[d, c] : x.coef)
      for (const auto &[f, k] : c) into.coef[d][f] += k;
    for (const auto &[d, n] : x.extent)
      if (!into.extent.emplace(d, n).second && into.extent[d] != n) return false;
    into.calls.insert(into.calls.end(), x.calls.begin(), x.calls.end());
    if (into.grid.empty()) into.grid = x.grid;
    return true;
  }

  /// `c + k * nl.arange(n)[None, :, None] + ...` with integer k; nullopt for anything else with an arange.
  std::optional<Affine> affineIndex(const Expr *e) {
    Affine a;
    if (const Stmt *def = namedAffine(e)) return affineIndex(def->value);
    if (!mentionsArange(e)) {
      if (e->kind == ExprKind::Slice) return std::nullopt;
      if (e->kind == ExprKind::Int)
        a.number = e->intValue;
      else
        a.constant.push_back(render(e));
      return a;
    }
    if (e->kind == ExprKind::BinOp && e->elts.size() == 2 && (e->name == "+" || e->name == "-")) {
      auto l = affineIndex(e->elts[0]), r = affineIndex(e->elts[1]);
      if (!l || !r) return std::nullopt;
      if (e->name == "-") {
        if (!r->constant.empty()) r->constant = {"-" + parenthesized(llvm::join(r->constant, " + "))};
        for (auto &[d, c] : r->coef)
          for (auto &[f, k] : c) k = -k;
        r->number = -r->number;
      }
      if (!addAffine(*l, *r)) return std::nullopt;
      return l;
    }
    if (e->kind == ExprKind::BinOp && e->elts.size() == 2 && e->name == "*")
      for (int side = 0; side < 2; ++side) {
        const Expr *k = e->elts[size_t(side)];
        if (k->kind == ExprKind::Int) {
          auto x = affineIndex(e->elts[size_t(1 - side)]);
          if (!x) return std::nullopt;
          if (!x->constant.empty())
            x->constant = {std::to_string(k->intValue) + " * " + parenthesized(llvm::join(x->constant, " + "))};
          for (auto &[d, c] : x->coef)
            for (auto &[f, n] : c) n *= k->intValue;
          x->number *= k->intValue;
          return x;
        }
        if (mentionsArange(k)) continue;
        // A factor the trace evaluates (`sz_f1 * i_f2`): it multiplies every term as written.
        auto x = affineIndex(e->elts[size_t(1 - side)]);
        if (!x) return std::nullopt;
        std::string factor = parenthesized(render(k));
        if (x->number) x->constant.push_back(std::to_string(x->number)), x->number = 0;
        if (!x->constant.empty()) x->constant = {factor + " * " + parenthesized(llvm::join(x->constant, " + "))};
        for (auto &[d, c] : x->coef) {
          std::map<std::string, int64_t> scaled;
          for (const auto &[f, n] : c) scaled[f.empty() ? factor : f + " * " + factor] += n;
          c = std::move(scaled);
        }
        return x;
      }
    auto single = arangeIndex(e);
    if (!single) return std::nullopt;
    if (!single->lo.empty()) a.constant.push_back(single->lo);
    a.coef[single->dim][""] = 1;
    a.extent[single->dim] = single->extent;
    a.calls.push_back(single->call);
    a.rank = single->rank;
    a.grid = single->grid;
    syntax::forEachExpr(e, [&](const Expr *x) {
      if (namedArange(x)) a.calls.push_back(x);
    });
    return a;
  }

  /// `4 + 2 * sz` from {"": 4, "sz": 2}; "0" when every coefficient is 0.
  static std::string coefficientText(const std::map<std::string, int64_t> &total) {
    std::vector<std::string> terms;
    for (const auto &[f, n] : total)
      if (n && f.empty())
        terms.insert(terms.begin(), std::to_string(n));
      else if (n)
        terms.push_back(n == 1 ? f : std::to_string(n) + " * " + f);
    return terms.empty() ? std::string("0") : llvm::join(terms, " + ");
  }

  /// The 0.1 `nisa.iota(expr)` of an integer combination of aranges over a grid as the current
  /// signature's arguments: the partition dimension's coefficient is `channel_multiplier`, each free
  /// dimension a `[step, num]` pair of `pattern`, the other terms `offset`.
  std::optional<std::string> iotaArguments(const Expr *expr, const Expr *target) {
    auto a = affineIndex(expr);
    return patternArguments(a, expr, target, "nisa.iota expression",
                            "nisa.iota(dst, pattern=[[step, num], ...], offset=..., channel_multiplier=...)");
  }

  /// The 0.1 `nisa.affine_select(pred=lhs <cmp> rhs, ...)` as the current signature's arguments: the
  /// affine value lhs - rhs as nisa.iota's pattern, offset and channel_multiplier, and cmp_op comparing
  /// it with 0.
  std::optional<std::string> affineSelectArguments(const Expr *pred, const Expr *target) {
    static constexpr std::pair<std::string_view, std::string_view> kCmp[] = {
        {">=", "nl.greater_equal"}, {">", "nl.greater"}, {"<=", "nl.less_equal"}, {"<", "nl.less"}, {"==", "nl.equal"}};
    const char *spelling = "nisa.affine_select(dst, pattern=[[step, num], ...], offset=..., channel_multiplier=..., "
                           "on_true_tile=..., on_false_value=..., cmp_op=...)";
    std::string_view cmp;
    if (pred->kind == ExprKind::Compare && pred->ops.size() == 1 && pred->elts.size() == 2)
      for (const auto &[op, fn] : kCmp)
        if (pred->ops[0] == op) cmp = fn;
    std::optional<Affine> a;
    if (!cmp.empty()) {
      a = affineIndex(pred->elts[0]);
      auto r = affineIndex(pred->elts[1]);
      if (a && r) {
        if (!r->constant.empty()) r->constant = {"-" + parenthesized(llvm::join(r->constant, " + "))};
        for (auto &[d, c] : r->coef)
          for (auto &[f, k] : c) k = -k;
        r->number = -r->number;
        if (!addAffine(*a, *r)) a.reset();
      } else {
        a.reset();
      }
    }
    if (cmp.empty()) {
      syntax::forEachExpr(pred, [&](const Expr *x) { Consumed.insert(x), ConvertedNames.insert(x); });
      problem(pred, "this nisa.affine_select pred has no pattern equivalent: it is not one comparison (>=, >, <=, <, "
                    "==) of integer combinations of nl.arange; write " +
                        std::string(spelling) + " by hand");
      return std::nullopt;
    }
    auto args = patternArguments(a, pred, target, "nisa.affine_select pred", spelling);
    if (!args) return std::nullopt;
    // The current signature has no default channel_multiplier for affine_select.
    if (args->find("channel_multiplier=") == std::string::npos) *args += ", channel_multiplier=0";
    return *args + ", cmp_op=" + std::string(cmp);
  }

  std::optional<std::string> patternArguments(const std::optional<Affine> &a, const Expr *expr, const Expr *target,
                                              const std::string &what, const std::string &spelling) {
    auto refuse = [&](const std::string &why) -> std::optional<std::string> {
      syntax::forEachExpr(expr, [&](const Expr *x) { Consumed.insert(x), ConvertedNames.insert(x); });
      problem(expr, "this " + what + " has no pattern equivalent: " + why + "; write " + spelling + " by hand");
      return std::nullopt;
    };
    if (!a || !a->rank) return refuse("it is not an integer combination of nl.arange");
    if (a->rank < 2) return refuse("its index grid has no free dimension");
    std::optional<std::vector<int64_t>> shape =
        ShapeOf && target && target->kind == ExprKind::Name ? ShapeOf(target->name, target->range.begin) : std::nullopt;
    std::vector<std::string> pattern;
    for (size_t d = 1; d < a->rank; ++d) {
      std::string extent;
      if (auto it = a->extent.find(d); it != a->extent.end())
        extent = it->second;
      else if (a->grid.size() == a->rank)
        extent = a->grid[d];
      else if (shape && shape->size() == a->rank && (*shape)[d] >= 0)
        extent = std::to_string((*shape)[d]);
      else
        return refuse("the extent of grid dimension " + std::to_string(d) + " is not known");
      auto c = a->coef.find(d);
      pattern.push_back("[" + (c == a->coef.end() ? std::string("0") : coefficientText(c->second)) + ", " + extent +
                        "]");
    }
    std::vector<std::string> offset = a->constant;
    if (a->number || offset.empty()) offset.push_back(std::to_string(a->number));
    std::string out = "pattern=[" + llvm::join(pattern, ", ") + "], offset=" + llvm::join(offset, " + ");
    if (auto c = a->coef.find(0); c != a->coef.end() && coefficientText(c->second) != "0")
      out += ", channel_multiplier=" + coefficientText(c->second);
    for (const Expr *c : a->calls) Consumed.insert(c);
    syntax::forEachExpr(expr, [&](const Expr *x) { Consumed.insert(x), ConvertedNames.insert(x); });
    return out;
  }

  /// Extent `i` (of `rank`) of the allocation `name = nl.ndarray((a, b, c), ...)` that reaches the
  /// subscript `s`, as written; else `name.shape[i]` (a tensor without block dimensions).
  std::optional<std::string> allocatedExtent(const Expr *s, const std::string &name, size_t i, size_t rank) {
    const Stmt *def = reachingDef(s, name);
    const Expr *shape = def && def->kind == StmtKind::Assign && def->value && def->value->kind == ExprKind::Call
                            ? shapeArg(def->value)
                            : nullptr;
    if (shape && (shape->kind == ExprKind::Tuple || shape->kind == ExprKind::List) && shape->elts.size() == rank &&
        shape->elts[i]->kind != ExprKind::Call && !mentionsArange(shape->elts[i]))
      return parenthesized(render(shape->elts[i]));
    if (blockNamed(s, name) != Blocks.end()) return std::nullopt;
    return name + ".shape[" + std::to_string(i) + "]";
  }

  /// `t[i, nl.arange(128)[:, None, None], 128 * nl.arange(8)[None, :, None] + nl.arange(128)[None, None, :]]`
  /// becomes `t.ap(pattern=[[1024 * .., 128], [128, 8], [1, 128]], offset=i * ..)`: the grid's
  /// dimensions outermost first, each stepping through the flattened tensor (the current layout:
  /// the partition dimension first, block dimensions behind it) by the sum of its coefficients
  /// times the strides of the dimensions it indexes.
  void convertToAccessPattern(const Expr *s, const Expr *at) {
    syntax::forEachExpr(s, [&](const Expr *y) { Consumed.insert(y), ConvertedNames.insert(y); });
    auto refuse = [&](const std::string &why) {
      problem(at, "this nl.arange index has no slice equivalent (a scaled, combined or reordered arange) and no "
                  "access pattern: " +
                      why + "; spell it with .ap(pattern=...) by hand");
    };
    if (!s->base || s->base->kind != ExprKind::Name) return refuse("the indexed tensor is not a name");
    std::vector<Affine> elts;
    size_t rank = 0;
    for (const Expr *x : s->elts) {
      auto a = affineIndex(x);
      if (!a) return refuse("an index element is not an integer combination of aranges");
      if (a->rank && rank && a->rank != rank) return refuse("its aranges have different ranks");
      rank = std::max(rank, a->rank);
      elts.push_back(std::move(*a));
    }
    std::optional<std::vector<int64_t>> shape = ShapeOf ? ShapeOf(s->base->name, s->base->range.begin) : std::nullopt;
    if (!shape) return refuse("the shape of '" + s->base->name + "' is not known from the trace");
    if (shape->size() != elts.size())
      return refuse("'" + s->base->name + "' has " + std::to_string(shape->size()) +
                    " dimensions but is indexed with " + std::to_string(elts.size()));
    // The current layout of the tensor: block dimensions behind the partition dimension (folded) or
    // gone (one tile per iteration; the block indices are its loops' variables).
    std::vector<size_t> order(elts.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    if (auto b = blockNamed(s, s->base->name); b != Blocks.end()) {
      order = {b->second.partition};
      for (size_t i = 0; i < elts.size(); ++i)
        if (i != b->second.partition && (!b->second.perIteration || i > b->second.partition)) order.push_back(i);
    }
    // A dimension whose extent differs between traces (allocated per iteration at another size)
    // strides by its allocation's extent as written: stride[i] is strideK[i] * strideSym[i].
    std::vector<std::string> extentText(elts.size());
    for (size_t i = 0; i < elts.size(); ++i)
      if ((*shape)[i] < 0) {
        std::optional<std::string> t = allocatedExtent(s, s->base->name, i, elts.size());
        if (!t)
          return refuse("the extent of dimension " + std::to_string(i) + " of '" + s->base->name +
                        "' differs between traces and is not known as written");
        extentText[i] = *t;
      }
    std::vector<int64_t> stride(elts.size(), 0);
    std::vector<std::string> strideSym(elts.size());
    int64_t step = 1;
    std::string stepSym;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      stride[*it] = step, strideSym[*it] = stepSym;
      if ((*shape)[*it] >= 0)
        step *= (*shape)[*it];
      else
        stepSym = stepSym.empty() ? extentText[*it] : stepSym + " * " + extentText[*it];
    }
    auto times = [&](const std::string &f, size_t i) {
      return strideSym[i].empty() ? f : f.empty() ? strideSym[i] : f + " * " + strideSym[i];
    };
    std::vector<std::string> pattern, offset, windowOffsets;
    for (size_t d = 0; d < rank; ++d) {
      std::map<std::string, int64_t> total;
      std::string extent;
      for (size_t i : order) {
        auto c = elts[i].coef.find(d);
        if (c == elts[i].coef.end()) continue;
        for (const auto &[f, n] : c->second) total[times(f, i)] += n * stride[i];
        extent = elts[i].extent.at(d);
      }
      if (extent.empty()) return refuse("grid dimension " + std::to_string(d) + " is spanned by no arange");
      // In a masked statement a grid dimension the mask bounds counts `min(E, bound)` steps.
      if (Splits.count(StmtOf.at(s)))
        return refuse("its statement's mask is split into whole rows and a partial row, which an access "
                      "pattern does not take");
      if (WindowMask *wm = windowOf(StmtOf.at(s)); wm && windowed(*wm, d)) {
        // A window-split statement counts and starts each region on its own.
        wm->spanned.insert(d);
        pattern.push_back("[" + coefficientText(total) + ", " + windowMarker('n', d, "") + "]");
        windowOffsets.push_back(windowMarker('s', d, coefficientText(total)));
        continue;
      }
      if (WindowMask *wm = windowOf(StmtOf.at(s))) wm->extent.emplace(d, extent), wm->rank = std::max(wm->rank, rank);
      pattern.push_back("[" + coefficientText(total) + ", " + boundedExtent(StmtOf.at(s), d, extent) + "]");
    }
    int64_t number = 0;
    for (size_t i : order) {
      std::string strideText = strideSym[i].empty() ? std::to_string(stride[i])
                               : stride[i] == 1     ? strideSym[i]
                                                    : std::to_string(stride[i]) + " * " + strideSym[i];
      if (strideSym[i].empty())
        number += elts[i].number * stride[i];
      else if (elts[i].number)
        offset.push_back(std::to_string(elts[i].number) + " * " + strideText);
      for (const std::string &c : elts[i].constant)
        offset.push_back(strideText == "1" ? c : parenthesized(c) + " * " + strideText);
    }
    if (number) offset.push_back(std::to_string(number));
    if (!windowOffsets.empty()) {
      if (offset.empty()) offset.push_back("0");
      for (const std::string &m : windowOffsets) offset.back() += m;
    }
    for (const Affine &a : elts)
      for (const Expr *c : a.calls) Consumed.insert(c);
    std::string text = s->base->name + ".ap(pattern=[" + llvm::join(pattern, ", ") + "]" +
                       (offset.empty() ? "" : ", offset=" + llvm::join(offset, " + ")) + ")";
    addFine(s->range.begin, s->range.end, text);
    const Stmt *st = StmtOf.at(s);
    if (std::find(st->targets.begin(), st->targets.end(), s) != st->targets.end()) ApTargets.insert(s);
  }

  // -------------------------------------------------------------------- masks

  /// A linear form kept as source text: integer multiples of atoms (subexpressions without an
  /// arange, as written), an integer, and aranges with their coefficients.
  struct LinearText {
    std::vector<std::pair<int64_t, const Expr *>> atoms;
    int64_t number = 0;
    std::vector<std::pair<ArangeIndex, int64_t>> aranges;
    bool ok = true;
    void add(const LinearText &o, int64_t k) {
      ok = ok && o.ok;
      for (auto [c, a] : o.atoms) atoms.push_back({c * k, a});
      number += o.number * k;
      for (const auto &[a, c] : o.aranges) aranges.push_back({a, c * k});
    }
  };

  LinearText linearText(const Expr *e) {
    LinearText out;
    if (e->kind == ExprKind::Int) {
      out.number = e->intValue;
      return out;
    }
    if (e->kind == ExprKind::UnaryOp && (e->name == "-" || e->name == "+") && e->base) {
      out.add(linearText(e->base), e->name == "-" ? -1 : 1);
      return out;
    }
    if (e->kind == ExprKind::BinOp && e->elts.size() == 2 && (e->name == "+" || e->name == "-")) {
      out.add(linearText(e->elts[0]), 1);
      out.add(linearText(e->elts[1]), e->name == "-" ? -1 : 1);
      return out;
    }
    if (e->kind == ExprKind::BinOp && e->elts.size() == 2 && e->name == "*")
      for (int side = 0; side < 2; ++side) {
        LinearText k = linearText(e->elts[size_t(side)]);
        if (!k.ok || !k.atoms.empty() || !k.aranges.empty()) continue;
        out.add(linearText(e->elts[size_t(1 - side)]), k.number);
        return out;
      }
    if (!mentionsArange(e)) {
      out.atoms.push_back({1, e});
      return out;
    }
    if (const Stmt *def = namedAffine(e)) return linearText(def->value);
    if (auto a = arangeIndex(e)) {
      // `i_p = p * 128 + nl.arange(128)[:, None]`: its start's terms, and the arange from 0.
      for (const Expr *t : a->loTerms) out.add(linearText(t), 1);
      a->lo.clear(), a->loTerms.clear();
      out.aranges.push_back({*a, 1});
      return out;
    }
    out.ok = false;
    return out;
  }

  std::string renderLinear(const LinearText &f) const {
    auto term = [&](int64_t c, const Expr *a) {
      std::string t = render(a);
      bool atom = a->kind != ExprKind::BinOp || a->name == "*";
      if (c == 1) return atom || a->name == "+" || a->name == "-" ? t : "(" + t + ")";
      return std::to_string(c) + " * " + (atom && a->kind != ExprKind::BinOp ? t : "(" + t + ")");
    };
    std::vector<std::string> plus, minus;
    for (auto [c, a] : f.atoms)
      if (c > 0)
        plus.push_back(term(c, a));
      else if (c < 0)
        minus.push_back(c == -1 && a->kind == ExprKind::BinOp && a->name != "*" ? "(" + render(a) + ")" : term(-c, a));
    if (f.number > 0) plus.push_back(std::to_string(f.number));
    if (f.number < 0) minus.push_back(std::to_string(-f.number));
    std::string out = plus.empty() ? "-" + (minus.empty() ? std::string("0") : minus.front()) : llvm::join(plus, " + ");
    for (size_t i = plus.empty() ? 1 : 0; i < minus.size(); ++i) out += " - " + minus[i];
    return out;
  }

  /// The conjuncts of `mask=e` (comparisons joined by `&`), each keeping a prefix of one grid
  /// dimension; false (and a problem) for any other mask.
  bool maskConjuncts(const Expr *e, std::vector<MaskBoundText> &out, std::vector<std::string> &guards) {
    if (e->kind == ExprKind::BinOp && e->name == "&" && e->elts.size() == 2)
      return maskConjuncts(e->elts[0], out, guards) && maskConjuncts(e->elts[1], out, guards);
    // A condition on loop variables only: the statement runs or not per iteration, `if <cond>:`.
    if (e->kind == ExprKind::Compare && !mentionsArange(e)) {
      guards.push_back(render(e));
      return true;
    }
    auto refuse = [&](const std::string &why) {
      problem(e, "this mask has no bounded-slice equivalent: " + why + "; bound the slices with min() by hand");
      return false;
    };
    if (e->kind != ExprKind::Compare || e->elts.size() != 2 || e->ops.size() != 1)
      return refuse("it is not a comparison or a conjunction (&) of comparisons");
    const std::string &op = e->ops[0];
    if (op != "<" && op != "<=" && op != ">" && op != ">=") return refuse("'" + op + "' is not an order comparison");
    LinearText d = linearText(e->elts[0]);
    d.add(linearText(e->elts[1]), -1);
    if (!d.ok) return refuse("a side is not an integer combination of nl.arange and other terms");
    // d op 0 as `c * t + rest < 0`.
    int64_t sign = op == ">" || op == ">=" ? -1 : 1;
    LinearText rest;
    rest.add(d, sign);
    CurrentCompare = e, CurrentInclusive = op == "<=" || op == ">=";
    std::optional<size_t> dim;
    int64_t coef = 0;
    std::string extent;
    if (std::string why; coupledAranges(rest) && !flattenedPrefix(rest, why)) return refuse(why);
    if (PendingSplit && PendingSplit->condition == e) return true;
    for (const auto &[a, c] : rest.aranges) {
      if (dim && (*dim != a.dim || extent != a.extent)) return refuse("it compares more than one nl.arange");
      dim = a.dim, extent = a.extent, coef += c;
    }
    rest.aranges.clear();
    if (!dim) return refuse("it compares no nl.arange (a condition on loop variables)");
    if (op == "<=" || op == ">=") rest.number -= 1; // integers: d <= 0 is d - 1 < 0
    if (coef == -1) return refuse("it keeps the end of the tile, not its start");
    if (coef != 1) return refuse("its nl.arange has coefficient " + std::to_string(coef) + ", not 1 or -1");
    LinearText bound;
    bound.add(rest, -1); // t < -rest
    out.push_back({*dim, extent, renderLinear(bound)});
    return true;
  }

  /// The statement's call whose `mask=` is a condition: its slices become bounded (`lo:lo + min(E, K)`)
  /// and its whole-tile operands sliced alike, so only what the mask kept is read and written.
  void planMasks() {
    syntax::forEachStmt(M.body(), [&](const Stmt *s) {
      const Expr *call = s->value;
      if (!call || call->kind != ExprKind::Call) return;
      const Expr *mask = call->keyword("mask");
      if (!mask || isNone(mask)) return;
      if (s->kind != StmtKind::Assign && s->kind != StmtKind::AugAssign && s->kind != StmtKind::Expr) return;
      std::vector<MaskBoundText> bounds;
      MaskArgs.insert(mask); // a mask maskConjuncts refuses is reported there
      syntax::forEachExpr(mask, [&](const Expr *x) { Consumed.insert(x), ConvertedNames.insert(x); });
      const Expr *condition = mask;
      if (auto named = mask->kind == ExprKind::Name ? NamedMasks.find(mask->name) : NamedMasks.end();
          named != NamedMasks.end())
        condition = named->second->value;
      std::vector<std::string> guards;
      PendingSplit.reset();
      if (planWindowMask(s, call, condition)) return;
      if (!maskConjuncts(condition, bounds, guards)) return;
      if (PendingSplit && !planSplit(s, *PendingSplit, bounds, guards)) return;
      Masks[s] = bounds;
      if (!guards.empty()) guardStatement(s, guards);
      // Whole tiles named as operands, alone or in arithmetic (`nl.rsqrt(var + eps, mask=...)`), or the new
      // tile `t = nisa.op(...)`, are sliced to what the mask keeps.
      std::function<void(const Expr *)> boundOperand = [&](const Expr *x) {
        if (x->kind == ExprKind::Name) return boundWholeTile(s, x);
        if (x->kind == ExprKind::BinOp)
          for (const Expr *operand : x->elts) boundOperand(operand);
        if (x->kind == ExprKind::UnaryOp && x->base) boundOperand(x->base);
        if (x->kind != ExprKind::Call || llvm::StringRef(canonicalCallee(x)).startswith("nisa.")) return;
        // A nested call masked like its statement (`nl.mean(nl.square(t, mask=m), axis=1, mask=m)`): its
        // mask goes too, and its operands are sliced alike.
        if (const Expr *inner = x->keyword("mask");
            inner && !isNone(inner) &&
            Text.slice(inner->range.begin, inner->range.end) == Text.slice(mask->range.begin, mask->range.end)) {
          MaskArgs.insert(inner);
          syntax::forEachExpr(inner, [&](const Expr *y) { Consumed.insert(y), ConvertedNames.insert(y); });
          for (const Arg &a : argumentsOf(x))
            if (a.value != inner) boundOperand(a.value);
          return;
        }
        // A tile-valued call kept as a call (`gamma.broadcast_to((128, n))`): its result sliced alike. (ISA
        // calls are hoisted into a tile of their own, which is sliced where it is named.)
        if (CallTile && BoundedUses.insert(x).second)
          if (std::optional<TracedTile> tile = CallTile(*x)) {
            std::string suffix = wholeTileBounds(s, tile->shape);
            if (!suffix.empty()) addFine(x->range.end, x->range.end, suffix);
          }
      };
      for (const Arg &a : argumentsOf(call))
        if (a.value != mask) boundOperand(a.value);
    });
    for (const Expr *e : Exprs) {
      const Expr *mask = e->kind == ExprKind::Call ? e->keyword("mask") : nullptr;
      if (!mask || isNone(mask) || MaskArgs.count(mask)) continue;
      MaskArgs.insert(mask);
      problem(mask, "a mask= on a call inside another expression has no bounded-slice equivalent; assign the "
                    "call's result first");
    }
  }

  /// `if a and b:` in front of a statement whose mask= holds conditions on loop variables (the
  /// statement's first line moves into the block; its continuation lines are inside brackets).
  void guardStatement(const Stmt *s, const std::vector<std::string> &guards) {
    const Expr *target = s->targets.size() == 1 ? s->targets.front() : nullptr;
    if (target && target->kind == ExprKind::Name && s->kind == StmtKind::Assign) {
      problem(s->value->keyword("mask"), "this mask is a condition on loop variables, and its statement defines '" +
                                             target->name + "': assign into a tile allocated first");
      return;
    }
    if (!ownsLines(s) || (s->parent && s->parent->kind != StmtKind::For && s->parent->kind != StmtKind::FunctionDef &&
                          s->parent->kind != StmtKind::If && s->parent->kind != StmtKind::While)) {
      problem(s->value->keyword("mask"), "this mask is a condition on loop variables; its statement must be alone on "
                                         "its line to be wrapped in `if`");
      return;
    }
    std::string indent = Text.slice(lineStartOf(s->range.begin), s->range.begin).str();
    std::string unit = !indent.empty() && indent[0] == '\t' ? "\t" : "    ";
    Guards[s] = "if " + llvm::join(guards, " and ") + ":\n" + indent + unit;
  }

  /// `lo + min(E, K)`'s `min(E, K)` for an arange of grid dimension `dim` and extent `extent` in a
  /// masked statement; `extent` itself elsewhere.
  std::string boundedExtent(const Stmt *s, size_t dim, const std::string &extent) {
    auto it = Masks.find(s);
    if (it == Masks.end()) return extent;
    std::vector<std::string> bounds;
    for (MaskBoundText &b : it->second)
      if (b.dim == dim && b.extent == extent) bounds.push_back(b.bound), b.used = true;
    if (bounds.empty()) return extent;
    return "min(" + extent + ", " + llvm::join(bounds, ", ") + ")";
  }

  /// `[0:min(E, K)]` or `[:, 0:min(E, K)]` after a whole tile of traced shape `shape` used in a masked
  /// statement; a dimension of 1 broadcasts and stays whole.
  std::string wholeTileBounds(const Stmt *s, const std::vector<int64_t> &shape) {
    auto it = Masks.find(s);
    if (it == Masks.end()) return "";
    size_t last = 0;
    for (const MaskBoundText &b : it->second)
      if (b.dim < shape.size() && shape[b.dim] != 1) last = std::max(last, b.dim + 1);
    auto split = Splits.find(s);
    if (split != Splits.end())
      for (size_t d : {split->second.outer, split->second.inner})
        if (d < shape.size() && shape[d] != 1) last = std::max(last, d + 1);
    std::vector<std::string> idx(last, ":");
    bool any = false;
    for (size_t d = 0; d < last; ++d) {
      if (shape[d] == 1) continue;
      if (split != Splits.end()) {
        bool outer = d == split->second.outer;
        if (outer || d == split->second.inner) {
          idx[d] = *splitSlice(s, d, "", outer ? split->second.outerExtent : split->second.innerExtent);
          any = true;
          continue;
        }
      }
      std::vector<std::string> bounds;
      std::string extent;
      for (MaskBoundText &b : it->second)
        if (b.dim == d) bounds.push_back(b.bound), extent = b.extent, b.used = true;
      if (bounds.empty()) continue;
      idx[d] = "0:min(" + extent + ", " + llvm::join(bounds, ", ") + ")";
      any = true;
    }
    return any ? "[" + llvm::join(idx, ", ") + "]" : "";
  }

  void boundWholeTile(const Stmt *s, const Expr *name) {
    if (namedArange(name) || namedAffine(name) || !BoundedUses.insert(name).second) return;
    std::optional<std::vector<int64_t>> shape = ShapeOf ? ShapeOf(name->name, name->range.begin) : std::nullopt;
    if (!shape || blockNamed(name, name->name) != Blocks.end()) return;
    std::string suffix = wholeTileBounds(s, *shape);
    if (!suffix.empty()) addFine(name->range.end, name->range.end, suffix);
  }

  /// A tile a masked statement made or wrote (`t = nl.load(x[...], mask=(i * 128 + ip < M))`) holds
  /// only what the mask kept: its bounds, and the statement, by function and name.
  struct BoundedTile {
    const Stmt *def = nullptr;
    std::vector<MaskBoundText> bounds;
    bool exact = false; // made by its statement at the bounded size (not written into a whole tile)
  };
  std::map<std::pair<const Stmt *, std::string>, BoundedTile> BoundedTiles;
  std::set<const Expr *> BoundedUses; // whole-tile names already sliced

  /// The outermost block around `def` in which `bound` means the same: no loop it leaves binds a
  /// name the bound mentions.
  const Stmt *boundScope(const Stmt *def, const std::string &bound) const {
    const Stmt *block = def->parent;
    while (block && block->kind == StmtKind::For && block->parent) {
      bool mentions = false;
      for (const Expr *t : block->targets)
        syntax::forEachExpr(t, [&](const Expr *x) {
          if (x->kind != ExprKind::Name) return;
          llvm::Regex word("(^|[^A-Za-z0-9_])" + x->name + "($|[^A-Za-z0-9_])");
          mentions |= word.match(bound);
        });
      if (mentions) break;
      block = block->parent;
    }
    return block;
  }

  /// A partial tile stays partial along the data flow: a later statement in its scope that reads it
  /// (`mean = nl.mean(t, axis=1)`, `y = t * g`) computes only the part the mask kept, as the 0.1
  /// kernel's masked-off lanes carried no data. Its indices and whole-tile operands are bounded as a
  /// mask would bound them (`nl.mean(t[0:min(128, M - 128 * i)], axis=1)`, `g[0:min(...)]`), and
  /// what it makes or writes is partial in turn.
  void propagateBounds() {
    syntax::forEachStmt(M.body(), [&](const Stmt *s) {
      if ((s->kind != StmtKind::Assign && s->kind != StmtKind::AugAssign && s->kind != StmtKind::Expr) || !s->value)
        return;
      const Stmt *fn = functionOf(s);
      std::vector<const Expr *> uses;
      auto visit = [&](const Expr *root) {
        syntax::forEachExpr(root, [&](const Expr *x) {
          if (x->kind == ExprKind::Name) uses.push_back(x);
        });
      };
      visit(s->value);
      for (const Expr *t : s->targets)
        if (t->kind == ExprKind::Subscript)
          for (const Expr *x : t->elts) visit(x);
      std::vector<MaskBoundText> inherited;
      for (const Expr *u : uses) {
        auto it = BoundedTiles.find({fn, u->name});
        if (it == BoundedTiles.end() || it->second.def == s || it->second.def->range.begin > s->range.begin) continue;
        for (MaskBoundText b : it->second.bounds) {
          if (!within(s, b.scope)) continue;
          bool known = llvm::any_of(inherited, [&](const MaskBoundText &x) {
            return x.dim == b.dim && x.extent == b.extent && x.bound == b.bound;
          });
          if (!known) b.used = true, inherited.push_back(b);
        }
      }
      auto own = Masks.find(s);
      if (!inherited.empty()) {
        std::vector<MaskBoundText> &m = Masks[s];
        for (const MaskBoundText &b : inherited)
          if (!llvm::any_of(m, [&](const MaskBoundText &x) {
                return x.dim == b.dim && x.extent == b.extent && x.bound == b.bound;
              }))
            m.push_back(b);
        const Expr *mask = s->value->kind == ExprKind::Call ? s->value->keyword("mask") : nullptr;
        for (const Expr *u : uses) {
          const Expr *parent = ParentOf.at(u);
          bool whole = !(parent && (parent->kind == ExprKind::Subscript || parent->kind == ExprKind::Attribute ||
                                    (parent->kind == ExprKind::Call && parent->base == u)));
          bool inMask = false;
          for (const Expr *p = u; p && mask; p = ParentOf.at(p)) inMask |= p == mask;
          auto tile = BoundedTiles.find({fn, u->name});
          bool exact = tile != BoundedTiles.end() && tile->second.exact && tile->second.def != s;
          if (whole && !inMask && !exact && StmtOf.at(u) == s) boundWholeTile(s, u);
        }
        own = Masks.find(s);
      }
      const Expr *target = s->targets.size() == 1 ? s->targets.front() : nullptr;
      if (target && target->kind == ExprKind::Subscript && target->base) target = target->base;
      if (!target || target->kind != ExprKind::Name || s->kind == StmtKind::Expr) return;
      if (own != Masks.end()) {
        bool made = s->targets.front()->kind == ExprKind::Name && s->kind == StmtKind::Assign &&
                    !(s->value->kind == ExprKind::Call && nki::currentDialectApi(canonicalCallee(s->value)));
        BoundedTile &t = BoundedTiles[{fn, target->name}] = {s, own->second, made};
        for (MaskBoundText &b : t.bounds) b.scope = boundScope(s, b.bound);
      } else if (s->targets.front()->kind == ExprKind::Name)
        BoundedTiles.erase({fn, target->name}); // made whole again
    });
  }

  // ------------------------------------------------------- statement splitting

  /// A mask conjunct on a flattened offset, `E * row + col < K` with `col` an arange of extent E: it
  /// keeps the rows before `K // E` whole and `K % E` elements of row `K // E`, a union of two
  /// rectangles. Its statement is split in two: the whole rows (bounded slices), then, when a partial
  /// row exists, that row (its own statement under `if`).
  struct SplitMask {
    const Expr *condition = nullptr;
    size_t outer = 0, inner = 0; // grid dimensions of the row and the column
    std::string outerExtent, innerExtent, bound;
    int64_t step = 0; // E
    bool usedOuter = false, usedInner = false;
    std::string allocation;    // `t = nl.load(...)` made whole first: `nl.ndarray(...)`
    bool isaAllocates = false; // `t = nisa.op(...)`: the call conversion allocates t
  };
  std::optional<SplitMask> PendingSplit;

  // ------------------------------------------------------------- window masks

  /// An output grid dimension `out` and a window grid dimension `win` (one the call reduces) that a
  /// mask couples through `stride * o + w` (maxpool's `stride*i1 - padding + i3 >= 0`): the window
  /// indices kept for output o are [max(0, lower - stride * o), min(K, upper - stride * o)).
  struct WindowPair {
    size_t out = 0, win = 0;
    std::string stride;
    std::string lower, upper; // "" when the mask does not bound that side
  };
  struct WindowMask {
    std::vector<WindowPair> pairs;
    std::set<size_t> reduced;             // grid dimensions the call reduces (axis=)
    std::map<size_t, std::string> extent; // grid dimension -> extent as written, from the statement's indices
    size_t rank = 0;
    TracedTile tile; // `t = op(..., mask=...)`: t allocated whole first (its dtype and buffer)
    bool targetName = false;
    std::set<size_t> spanned; // the pair dimensions the statement's indices span
  };
  std::map<const Stmt *, WindowMask> Windows;

  /// `-(C)` of the affine terms `a` (no aranges) plus `extra`, as source text.
  static std::string negatedText(const Affine &a, int64_t extra) {
    std::vector<std::string> terms;
    for (const std::string &t : a.constant) {
      llvm::StringRef r(t);
      if (r.startswith("-") && (parenthesized(r.drop_front().str()) == r.drop_front().str() ||
                                (r.drop_front().startswith("(") && r.endswith(")"))))
        terms.push_back(r.drop_front().str());
      else
        terms.push_back("-" + parenthesized(t));
    }
    int64_t number = extra - a.number;
    std::string out;
    for (const std::string &t : terms)
      out += out.empty() ? t : (llvm::StringRef(t).startswith("-") ? " - " + t.substr(1) : " + " + t);
    if (number || out.empty())
      out += out.empty() ? std::to_string(number)
                         : (number < 0 ? " - " + std::to_string(-number) : " + " + std::to_string(number));
    return out;
  }

  /// Each conjunct of `e` bounds `stride * o + w` from one side, o and w grid dimensions of which the
  /// call reduces w only; false (nothing reported) for any other mask.
  bool windowConjuncts(const Expr *e, WindowMask &wm) {
    if (e->kind == ExprKind::BinOp && e->name == "&" && e->elts.size() == 2)
      return windowConjuncts(e->elts[0], wm) && windowConjuncts(e->elts[1], wm);
    if (e->kind != ExprKind::Compare || e->elts.size() != 2 || e->ops.size() != 1) return false;
    std::string op = e->ops[0];
    if (op != "<" && op != "<=" && op != ">" && op != ">=") return false;
    auto d = affineIndex(e->elts[0]), r = affineIndex(e->elts[1]);
    if (!d || !r) return false;
    if (!r->constant.empty()) r->constant = {"-" + parenthesized(llvm::join(r->constant, " + "))};
    for (auto &[dim, c] : r->coef)
      for (auto &[f, k] : c) k = -k;
    r->number = -r->number;
    if (!addAffine(*d, *r)) return false;
    std::map<size_t, std::map<std::string, int64_t>> coef;
    for (const auto &[dim, c] : d->coef)
      for (const auto &[f, k] : c)
        if (k) coef[dim][f] += k;
    for (auto it = coef.begin(); it != coef.end();) {
      for (auto f = it->second.begin(); f != it->second.end();) f = f->second ? std::next(f) : it->second.erase(f);
      it = it->second.empty() ? coef.erase(it) : std::next(it);
    }
    if (coef.size() != 2) return false;
    size_t a = coef.begin()->first, b = std::next(coef.begin())->first;
    bool aReduced = wm.reduced.count(a) > 0, bReduced = wm.reduced.count(b) > 0;
    if (aReduced == bReduced) return false;
    size_t win = aReduced ? a : b, out = aReduced ? b : a;
    const auto &wc = coef[win];
    if (wc.size() != 1 || !wc.begin()->first.empty() || std::abs(wc.begin()->second) != 1) return false;
    int64_t sign = wc.begin()->second; // d * sign has w with coefficient 1
    if (sign < 0) op = op[0] == '<' ? ">" + op.substr(1) : "<" + op.substr(1);
    const auto &oc = coef[out];
    if (oc.size() != 1 || oc.begin()->second * sign <= 0) return false;
    int64_t k = oc.begin()->second * sign;
    const std::string &factor = oc.begin()->first;
    std::string stride = factor.empty() ? std::to_string(k) : k == 1 ? factor : std::to_string(k) + " * " + factor;
    // d * sign = w + stride * o + C: w >= -C - stride * o (lower), w < -C - stride * o (upper).
    Affine c;
    c.constant = d->constant, c.number = d->number;
    if (sign < 0) {
      if (!c.constant.empty()) c.constant = {"-" + parenthesized(llvm::join(c.constant, " + "))};
      c.number = -c.number;
    }
    bool lowerSide = op[0] == '>';
    std::string bound = negatedText(c, op == ">" || op == "<=" ? 1 : 0);
    WindowPair *pair = nullptr;
    for (WindowPair &p : wm.pairs)
      if (p.out == out && p.win == win) pair = &p;
    if (!pair) {
      wm.pairs.push_back({out, win, stride, "", ""});
      pair = &wm.pairs.back();
    }
    if (pair->stride != stride) return false;
    std::string &side = lowerSide ? pair->lower : pair->upper;
    if (!side.empty()) return false; // two bounds on one side
    side = bound;
    for (const auto &[dim, ext] : d->extent) wm.extent[dim] = ext;
    wm.rank = std::max(wm.rank, d->rank);
    return true;
  }

  /// `t = nl.max(x[...], axis=[3, 4], mask=<window conjuncts>)` (a pooling window whose edges the mask
  /// cuts off): the statement is rendered once per region of outputs whose kept windows agree (the
  /// interior, and each output of the edges), Windows[s]; false when the mask is not of this form.
  bool planWindowMask(const Stmt *s, const Expr *call, const Expr *condition) {
    WindowMask wm;
    if (const Expr *axis = call->keyword("axis")) {
      if (axis->kind == ExprKind::Int) wm.reduced.insert(size_t(axis->intValue));
      if (axis->kind == ExprKind::Tuple || axis->kind == ExprKind::List)
        for (const Expr *x : axis->elts)
          if (x->kind == ExprKind::Int && x->intValue >= 0) wm.reduced.insert(size_t(x->intValue));
    }
    if (wm.reduced.empty() || !windowConjuncts(condition, wm) || wm.pairs.empty()) return false;
    const Expr *mask = call->keyword("mask");
    auto refuse = [&](const std::string &why) {
      problem(mask, "this mask couples output and window indices (a pooling window's edges), and " + why);
      return true;
    };
    if (s->kind != StmtKind::Assign || s->targets.size() != 1)
      return refuse("its statement is not an assignment, which is what is split into regions");
    if (!ownsLines(s) || Text.slice(lineStartOf(s->range.begin), s->range.begin).trim(" \t").size() ||
        (s->parent && s->parent->kind != StmtKind::For && s->parent->kind != StmtKind::FunctionDef &&
         s->parent->kind != StmtKind::If && s->parent->kind != StmtKind::While))
      return refuse("its statement must be alone on its lines to be split into regions");
    const Expr *target = s->targets.front();
    if (target->kind == ExprKind::Name) {
      std::optional<TracedTile> tile = Allocation ? Allocation(*s) : std::nullopt;
      if (!tile)
        return refuse("'" + target->name +
                      "' is written region by region, so it must be allocated first, and the "
                      "trace does not know its shape");
      wm.tile = *tile;
      wm.targetName = true;
      addFine(target->range.end, target->range.end,
              "\x01T\x02"
              "0\x02\x01");
    } else if (target->kind != ExprKind::Subscript) {
      return refuse("its target is neither a name nor a subscript");
    }
    Windows[s] = std::move(wm);
    return true;
  }

  WindowMask *windowOf(const Stmt *s) {
    auto it = Windows.find(s);
    return it == Windows.end() ? nullptr : &it->second;
  }
  bool windowed(const WindowMask &wm, size_t dim) const {
    return llvm::any_of(wm.pairs, [&](const WindowPair &p) { return p.out == dim || p.win == dim; });
  }
  /// A marker for grid dimension `dim` of a window-split statement, rendered per region by renderWindows:
  /// 'n' its count, 's' an offset term `payload * start`, 'l' the slice `payload + start:... + count`.
  static std::string windowMarker(char kind, size_t dim, const std::string &payload) {
    return std::string("\x01") + kind + "\x02" + std::to_string(dim) + "\x02" + payload + "\x01";
  }

  /// Every pair's grid dimensions are spanned by the statement's indices, and every grid dimension of
  /// a target made whole has an extent as written.
  void checkWindows() {
    for (const auto &[s, wm] : Windows) {
      const Expr *mask = s->value->keyword("mask");
      for (const WindowPair &p : wm.pairs)
        if (!wm.spanned.count(p.out) || !wm.spanned.count(p.win))
          problem(mask, "the mask couples grid dimensions " + std::to_string(p.out) + " and " + std::to_string(p.win) +
                            ", which the statement's indices do not both span");
      for (size_t d = 0; wm.targetName && d < wm.rank; ++d)
        if (!wm.reduced.count(d) && !wm.extent.count(d))
          problem(mask, "grid dimension " + std::to_string(d) + " of the result has no extent as written");
    }
  }

  /// The statement once per region: `lo = ...` and `hi = ...` bound the interior outputs of each pair
  /// (whole windows), and each output below lo or from hi on gets its own window range, in loops.
  void renderWindows(const Stmt *s, const WindowMask &wm) {
    uint32_t b = s->range.begin, e = s->range.end;
    std::string text = renderEdited(b, e);
    std::string indent = Text.slice(lineStartOf(b), b).str();
    std::string outer = s->parent ? Text.slice(lineStartOf(s->parent->range.begin), s->parent->range.begin).str() : "";
    std::string unit = llvm::StringRef(indent).startswith(outer) && indent.size() > outer.size()
                           ? indent.substr(outer.size())
                           : (!indent.empty() && indent[0] == '\t' ? "\t" : "    ");
    if (FreshNames.empty()) FreshNames = syntax::identifiersIn(Text);
    auto fresh = [&](const std::string &base) {
      std::string n = syntax::freshName(FreshNames, base);
      FreshNames.insert(n);
      return n;
    };
    struct Names {
      std::string lo, hi, o, w, n;
    };
    std::vector<Names> names;
    std::string head;
    for (const WindowPair &p : wm.pairs) {
      std::string d = std::to_string(p.out), n = wm.extent.at(p.out), k = wm.extent.at(p.win);
      Names x{fresh("out" + d + "_lo"), fresh("out" + d + "_hi"), fresh("out" + d), fresh("win" + d),
              fresh("win" + d + "_n")};
      std::string s1 = parenthesized(p.stride);
      bool unitStride = p.stride == "1";
      // The first output whose window starts inside: stride * o >= lower; the last: stride * o + K <= upper.
      std::string first = unitStride ? p.lower : "-(-(" + p.lower + ") // " + s1 + ")";
      std::string last = unitStride ? p.upper + " - " + parenthesized(k) + " + 1"
                                    : "(" + p.upper + " - " + parenthesized(k) + ") // " + s1 + " + 1";
      head += indent + x.lo + " = " + (p.lower.empty() ? "0" : "min(" + n + ", max(0, " + first + "))") + "\n";
      head += indent + x.hi + " = " + (p.upper.empty() ? n : "max(" + x.lo + ", min(" + n + ", " + last + "))") + "\n";
      names.push_back(x);
    }
    if (wm.targetName) {
      // The grid's dimensions the call keeps, as written: what the regions write together.
      std::vector<std::string> dims;
      for (size_t d = 0; d < wm.rank; ++d)
        if (!wm.reduced.count(d)) dims.push_back(wm.extent.at(d));
      head += indent + render(s->targets.front()) + " = nl.ndarray((" + llvm::join(dims, ", ") +
              (dims.size() == 1 ? ",), " : "), ") + "dtype=" + spelledDType(s->value, wm.tile) + ", buffer=nl." +
              wm.tile.buffer + ")\n";
    }
    // Per region: grid dimension -> (start, count).
    std::map<size_t, std::pair<std::string, std::string>> region;
    auto substitute = [&]() {
      return expandMarkers(text, [&](llvm::ArrayRef<llvm::StringRef> f, std::string &out) {
        char kind = f[0].empty() ? 0 : f[0][0];
        size_t dim = 0;
        f[1].getAsInteger(10, dim);
        std::string payload = f.size() > 2 ? f[2].str() : "";
        auto slice = [&](size_t d, const std::string &lo) {
          auto r = region.find(d);
          std::string start = r == region.end() ? "" : r->second.first;
          std::string count = r == region.end() ? wm.extent.at(d) : r->second.second;
          std::string from = start == "0" || start.empty() ? lo : lo.empty() ? start : lo + " + " + start;
          return sliceText(from, count);
        };
        if (kind == 'n') {
          out += region.at(dim).second;
        } else if (kind == 's') {
          const std::string &start = region.at(dim).first;
          if (start != "0") {
            std::string term = (payload == "1" ? "" : parenthesized(payload) + " * ") + parenthesized(start);
            // An offset that was only these terms: `offset=0` gives way to the first.
            if (llvm::StringRef(out).endswith("offset=0"))
              out.replace(out.size() - 1, 1, term);
            else
              out += " + " + term;
          }
        } else if (kind == 'l') {
          out += slice(dim, payload);
        } else if (kind == 'T') {
          std::vector<std::string> dims;
          for (size_t d = 0; d < wm.rank; ++d)
            if (!wm.reduced.count(d)) dims.push_back(slice(d, ""));
          out += "[" + llvm::join(dims, ", ") + "]";
        }
      });
    };
    // Continuation lines move with the statement's first line (unless a string literal spans them).
    bool literalLines = text.find("\"\"\"") != std::string::npos || text.find("'''") != std::string::npos;
    std::function<std::string(size_t, const std::string &)> emit = [&](size_t i, const std::string &in) {
      if (i == wm.pairs.size()) {
        std::string leaf = substitute(), deeper = in.substr(std::min(indent.size(), in.size()));
        for (size_t at = leaf.find('\n'); !literalLines && at != std::string::npos; at = leaf.find('\n', at + 1))
          leaf.insert(at + 1, deeper);
        return in + leaf + "\n";
      }
      const WindowPair &p = wm.pairs[i];
      const Names &x = names[i];
      std::string n = wm.extent.at(p.out), k = wm.extent.at(p.win), inner = in + unit, out;
      // An edge output: its own window range.
      auto edge = [&](const std::string &range) {
        std::string so = p.stride == "1" ? x.o : parenthesized(p.stride) + " * " + x.o;
        std::string lines = in + "for " + x.o + " in " + range + ":\n";
        std::string start = "0";
        if (!p.lower.empty()) {
          lines += inner + x.w + " = max(0, " + p.lower + " - " + so + ")\n";
          start = x.w;
        }
        std::string end = p.upper.empty() ? k : "min(" + k + ", " + p.upper + " - " + so + ")";
        lines += inner + x.n + " = " + end + (start == "0" ? "" : " - " + start) + "\n";
        region[p.out] = {x.o, "1"};
        region[p.win] = {start, x.n};
        return lines + emit(i + 1, inner);
      };
      if (!p.lower.empty()) out += edge("range(" + x.lo + ")");
      out += in + "if " + x.hi + " > " + x.lo + ":\n";
      region[p.out] = {x.lo, x.hi + " - " + x.lo};
      region[p.win] = {"0", k};
      out += emit(i + 1, inner);
      if (!p.upper.empty()) out += edge("range(" + x.hi + ", " + n + ")");
      region.erase(p.out), region.erase(p.win);
      return out;
    };
    std::string body = emit(0, indent);
    for (auto it = Coarse.lower_bound(b); it != Coarse.end() && it->first < e;) it = Coarse.erase(it);
    // The first line's indentation is the file's; the rest carries its own.
    Coarse[b] = {e, (head + body).substr(indent.size(), head.size() + body.size() - indent.size() - 1)};
  }
  std::map<const Stmt *, SplitMask> Splits;
  const Expr *CurrentCompare = nullptr;
  bool CurrentInclusive = false;

  static bool coupledAranges(const LinearText &rest) {
    std::set<std::pair<size_t, std::string>> dims;
    for (const auto &[a, c] : rest.aranges) dims.insert({a.dim, a.extent});
    return dims.size() > 1;
  }

  /// `rest < 0` (rest of CurrentCompare) as a flattened offset over two aranges: PendingSplit; else
  /// why not.
  bool flattenedPrefix(const LinearText &rest, std::string &why) {
    std::map<std::pair<size_t, std::string>, int64_t> coef;
    for (const auto &[a, c] : rest.aranges) coef[{a.dim, a.extent}] += c;
    why = "it compares more than one nl.arange, and not as a flattened offset (`E * row + col < n`, col an "
          "nl.arange of extent E, row of another grid dimension)";
    if (coef.size() != 2) return false;
    auto first = coef.begin(), second = std::next(first);
    auto inner = first->second == 1 ? first : second, outer = inner == first ? second : first;
    int64_t extent = 0;
    if (inner->second != 1 || llvm::StringRef(inner->first.second).getAsInteger(10, extent) || extent <= 0 ||
        outer->second != extent || outer->first.first == inner->first.first)
      return false;
    if (PendingSplit && PendingSplit->condition != CurrentCompare) {
      why = "it holds two flattened offsets; one mask splits its statement once";
      return false;
    }
    LinearText constant;
    constant.atoms = rest.atoms, constant.number = rest.number - (CurrentInclusive ? 1 : 0);
    LinearText bound;
    bound.add(constant, -1);
    SplitMask split;
    split.condition = CurrentCompare;
    split.outer = outer->first.first, split.outerExtent = outer->first.second;
    split.inner = inner->first.first, split.innerExtent = inner->first.second;
    split.bound = renderLinear(bound), split.step = extent;
    PendingSplit = split;
    return true;
  }

  /// Records the split of statement s, when it can be written twice.
  bool planSplit(const Stmt *s, SplitMask &split, const std::vector<MaskBoundText> &bounds,
                 const std::vector<std::string> &guards) {
    const Expr *mask = s->value->keyword("mask");
    auto refuse = [&](const std::string &why) {
      problem(mask, "this mask keeps whole rows and a partial row (a flattened offset); " + why);
      return false;
    };
    if (!guards.empty()) return refuse("it also holds a condition on loop variables, which is not split");
    for (const MaskBoundText &b : bounds)
      if (b.dim == split.outer || b.dim == split.inner)
        return refuse("another conjunct bounds one of its grid dimensions too");
    if (!ownsLines(s) || Text.slice(lineStartOf(s->range.begin), s->range.begin).trim(" \t").size() ||
        (s->parent && s->parent->kind != StmtKind::For && s->parent->kind != StmtKind::FunctionDef &&
         s->parent->kind != StmtKind::If && s->parent->kind != StmtKind::While))
      return refuse("its statement must be alone on its lines to be split");
    const Expr *target = s->targets.size() == 1 ? s->targets.front() : nullptr;
    if (target && target->kind == ExprKind::Name && s->kind == StmtKind::Assign) {
      split.isaAllocates = s->value->kind == ExprKind::Call && nki::currentDialectApi(canonicalCallee(s->value));
      std::optional<TracedTile> alloc = Allocation ? Allocation(*s) : std::nullopt;
      if (!alloc && !split.isaAllocates)
        return refuse("'" + target->name +
                      "' is written in two parts, so it must be allocated first, and the "
                      "trace does not know its shape");
      if (!split.isaAllocates) split.allocation = allocationText(s->value, *alloc);
    } else if (s->kind == StmtKind::AugAssign) {
      return refuse("'" + s->op + "=' is not split");
    }
    Splits[s] = split;
    return true;
  }

  /// A slice marker for grid dimension `dim` of a split statement, rendered per part by renderSplit.
  std::optional<std::string> splitSlice(const Stmt *s, size_t dim, const std::string &lo, const std::string &extent) {
    auto it = Splits.find(s);
    if (it == Splits.end()) return std::nullopt;
    SplitMask &split = it->second;
    bool outer = dim == split.outer && extent == split.outerExtent;
    if (!outer && !(dim == split.inner && extent == split.innerExtent)) return std::nullopt;
    (outer ? split.usedOuter : split.usedInner) = true;
    return std::string("\x01") + (outer ? "o" : "i") + "\x02" + lo + "\x02" + extent + "\x01";
  }

  /// The split spans both its grid dimensions in its statement, and a later statement reading the
  /// tile it writes is split alike.
  void checkSplits() {
    for (const auto &[s, split] : Splits) {
      if (!split.usedOuter || !split.usedInner) {
        problem(s->value->keyword("mask"), "the mask's flattened offset spans grid dimensions " +
                                               std::to_string(split.outer) + " and " + std::to_string(split.inner) +
                                               ", which the statement's indices do not both span");
        continue;
      }
      const Expr *target = s->targets.size() == 1 ? s->targets.front() : nullptr;
      if (target && target->kind == ExprKind::Subscript) target = target->base;
      if (!target || target->kind != ExprKind::Name || !s->parent) continue;
      const std::vector<const Stmt *> &siblings = s->parent->body;
      auto at = std::find(siblings.begin(), siblings.end(), s);
      if (at == siblings.end()) continue;
      for (auto it = std::next(at); it != siblings.end(); ++it) {
        const Stmt *u = *it;
        auto other = Splits.find(u);
        bool alike = other != Splits.end() && other->second.bound == split.bound && other->second.step == split.step;
        bool reads = false;
        syntax::forEachStmt({u}, [&](const Stmt *x) {
          syntax::forEachExpr(x->value,
                              [&](const Expr *e) { reads |= e->kind == ExprKind::Name && e->name == target->name; });
        });
        if (reads && !alike) {
          problem(u->value ? u->value : target, "this statement reads '" + target->name +
                                                    "', which a flattened-offset mask wrote in whole rows and a "
                                                    "partial row; mask it alike to be split");
          break;
        }
        if (u->kind == StmtKind::Assign && u->targets.size() == 1 && u->targets.front()->kind == ExprKind::Name &&
            u->targets.front()->name == target->name)
          break; // bound again
      }
    }
  }

  /// The text of [b, e) with every edit inside it.
  std::string renderEdited(uint32_t b, uint32_t e) const {
    std::vector<std::pair<uint32_t, Edit>> edits;
    for (auto it = Coarse.lower_bound(b); it != Coarse.end() && it->first < e; ++it)
      if (it->second.end <= e) edits.push_back(*it);
    size_t coarse = edits.size();
    for (auto it = Fine.lower_bound(b); it != Fine.end() && it->first < e; ++it) {
      if (it->second.end > e) continue;
      bool inside = false;
      for (size_t k = 0; k < coarse; ++k) {
        const auto &[cb, c] = edits[k];
        inside |= c.end > cb && it->first >= cb && it->second.end <= c.end && it->first != c.end;
      }
      if (!inside) edits.push_back(*it);
    }
    std::stable_sort(edits.begin(), edits.end(), [](const auto &x, const auto &y) { return x.first < y.first; });
    std::string out;
    uint32_t at = b;
    for (const auto &[eb, edit] : edits) {
      if (eb < at) continue;
      out += Text.slice(at, eb).str() + edit.text;
      at = edit.end;
    }
    return out + Text.slice(at, e).str();
  }

  /// The statement's whole rows, then `if <a partial row exists>:` and that row.
  void renderSplit(const Stmt *s, const SplitMask &split) {
    const Expr *target = s->targets.size() == 1 ? s->targets.front() : nullptr;
    if (!split.allocation.empty()) {
      std::optional<std::vector<int64_t>> shape = ShapeOf ? ShapeOf(target->name, target->range.begin) : std::nullopt;
      if (shape) addFine(target->range.end, target->range.end, wholeTileBounds(s, *shape));
    }
    uint32_t b = s->range.begin, e = s->range.end;
    std::string text = renderEdited(b, e);
    std::string k = split.bound.find_first_of(" +-*/%") == std::string::npos ? split.bound : "(" + split.bound + ")";
    std::string rows = k + " // " + std::to_string(split.step), rest = k + " % " + std::to_string(split.step);
    auto part = [&](bool partial) {
      return expandMarkers(text, [&](llvm::ArrayRef<llvm::StringRef> f, std::string &out) {
        std::string lo = f[1].str(), extent = f[2].str();
        bool outer = f[0] == "o";
        if (!partial)
          out += sliceText(lo, outer ? "min(" + extent + ", " + rows + ")" : extent);
        else if (outer)
          out += sliceText(lo.empty() ? rows : lo + " + " + rows, "1");
        else
          out += sliceText(lo, "min(" + extent + ", " + rest + ")");
      });
    };
    std::string indent = Text.slice(lineStartOf(b), b).str();
    // One level deeper, as the file indents this block from the one around it.
    std::string outer = s->parent ? Text.slice(lineStartOf(s->parent->range.begin), s->parent->range.begin).str() : "";
    std::string unit = llvm::StringRef(indent).startswith(outer) && indent.size() > outer.size()
                           ? indent.substr(outer.size())
                           : (!indent.empty() && indent[0] == '\t' ? "\t" : "    ");
    std::string whole = part(false), partial = part(true);
    if (split.isaAllocates) // the allocation line stays with the whole rows
      if (size_t nl = partial.find('\n'); nl != std::string::npos) partial = partial.substr(nl + 1 + indent.size());
    if (!split.allocation.empty()) whole = target->name + " = " + split.allocation + "\n" + indent + whole;
    for (auto it = Coarse.lower_bound(b); it != Coarse.end() && it->first < e;) it = Coarse.erase(it);
    Coarse[b] = {e, whole + "\n" + indent + "if " + rows + " < " + split.outerExtent + " and " + rest + " > 0:\n" +
                        indent + unit + partial};
  }

  /// `buffer=ncc.sbuf.mod_alloc(base_addr=..., num_free_tiles=(2,))` (NKI 0.1 direct allocation) places
  /// each block's tile by hand; the current nl.ndarray takes one `address=` per tensor and has no block
  /// dimensions, so the placement is left to the user.
  void refuseDirectAllocation() {
    static const llvm::Regex allocator("(^|\\.)compiler\\.(sbuf|psum)\\.[A-Za-z_]*alloc$");
    for (const Expr *e : Exprs) {
      if (e->kind != ExprKind::Call || !e->base) continue;
      std::string dotted = e->base->dottedName();
      if (size_t dot = dotted.find('.'); FileAliases && dot != std::string::npos)
        if (auto it = FileAliases->find(dotted.substr(0, dot)); it != FileAliases->end())
          dotted = it->second + dotted.substr(dot);
      if (!allocator.match(dotted)) continue;
      problem(e, render(e->base) +
                     " (direct allocation) has no mechanical nki 0.3 equivalent: nl.ndarray places a "
                     "tensor by one address=(partition_offset, free_offset) and block dimensions are gone; "
                     "allocate with buffer=nl.sbuf or nl.psum, or place the tiles by hand");
    }
  }

  /// Every conjunct of a converted mask bounded some index or tile of its statement.
  void checkMasksUsed() {
    for (const auto &[s, bounds] : Masks)
      for (const MaskBoundText &b : bounds)
        if (!b.used)
          problem(s->value->keyword("mask"), "the mask bounds grid dimension " + std::to_string(b.dim) +
                                                 " (an nl.arange of extent " + b.extent +
                                                 "), which no index or tile of this statement spans");
  }

  // -------------------------------------------------------------------- calls

  struct Arg {
    syntax::ByteRange range;
    std::string keyword; // "" for a positional argument
    const Expr *value;
  };

  static bool isNone(const Expr *e) { return e && e->kind == ExprKind::None; }

  /// Drops the arguments not kept (with their commas), prefixes `named` ones with `name=`, and
  /// appends `suffix` (", accumulate=None") after the last kept one. Returns whether any is kept.
  bool editArguments(const std::vector<Arg> &args, const std::vector<bool> &kept, const std::vector<std::string> &named,
                     const std::string &suffix, uint32_t closeParen) {
    size_t n = args.size();
    int lastKept = -1;
    for (size_t i = 0; i < n; ++i) {
      if (kept[i] && !named[i].empty()) addFine(args[i].range.begin, args[i].range.begin, named[i] + "=");
      if (kept[i]) lastKept = int(i);
    }
    bool suffixPlaced = suffix.empty();
    for (size_t i = 0; i < n;) {
      if (kept[i]) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j + 1 < n && !kept[j + 1]) ++j;
      if (j + 1 < n) {
        addFine(args[i].range.begin, args[j + 1].range.begin, "");
      } else if (i > 0) {
        addFine(args[i - 1].range.end, args[j].range.end, suffix);
        suffixPlaced = true;
      } else {
        addFine(args[i].range.begin, args[j].range.end, "");
      }
      i = j + 1;
    }
    if (!suffixPlaced && lastKept >= 0)
      addFine(args[size_t(lastKept)].range.end, args[size_t(lastKept)].range.end, suffix);
    (void)closeParen;
    return lastKept >= 0;
  }

  static std::vector<Arg> argumentsOf(const Expr *call) {
    std::vector<Arg> args;
    for (const Expr *x : call->elts) args.push_back({x->range, "", x});
    for (const auto &kw : call->keywords) args.push_back({kw.range, kw.name, kw.value});
    std::sort(args.begin(), args.end(), [](const Arg &a, const Arg &b) { return a.range.begin < b.range.begin; });
    return args;
  }

  /// `mask=None` goes; any other removed keyword is a problem the user must solve.
  bool keepKeyword(const Arg &a) {
    if (a.keyword.empty()) return true;
    const nki::RemovedApi *r = nki::removedInCurrentDialect(a.keyword, /*isKeyword=*/true);
    if (!r) return true;
    if (!isNone(a.value) && !MaskArgs.count(a.value)) {
      Problems.push_back(
          {a.range.begin, "'" + a.keyword + "=' cannot be migrated mechanically; " + std::string(r->replacement)});
      syntax::forEachExpr(a.value, [&](const Expr *x) { Consumed.insert(x), ConvertedNames.insert(x); });
    }
    return false;
  }

  void convertCalls() {
    std::set<const Expr *> destinationCalls;
    syntax::forEachStmt(M.body(), [&](const Stmt *s) {
      if ((s->kind == StmtKind::Assign || s->kind == StmtKind::AugAssign) && s->value &&
          s->value->kind == ExprKind::Call && nki::currentDialectApi(canonicalCallee(s->value)))
        destinationCalls.insert(s->value), convertDestinationCall(s); // a refusal is reported there
    });
    // Statements writing an access pattern: their values are rendered after the calls inside them
    // lost their removed keywords (an nl.copy(..., mask=...) copied into a pattern).
    std::vector<const Stmt *> apWrites;
    syntax::forEachStmt(M.body(), [&](const Stmt *s) {
      if (s->targets.size() != 1 || !ApTargets.count(s->targets.front()) || destinationCalls.count(s->value)) return;
      apWrites.push_back(s);
      if (s->kind == StmtKind::Assign && s->value && s->value->kind == ExprKind::Call &&
          canonicalCallee(s->value) == "nl.load")
        destinationCalls.insert(s->value);
    });
    std::vector<const Expr *> nested;
    for (const Expr *e : Exprs) {
      if (e->kind != ExprKind::Call || destinationCalls.count(e)) continue;
      std::string callee = canonicalCallee(e);
      const nki::DialectApi *api = nki::currentDialectApi(callee);
      // A call that writes its own destination in 0.1 too (nisa.dma_copy(dst=..., src=...)) keeps its form.
      bool writesOwnDestination = api && api->op() && api->op()->slot(nki::Slot::Dest);
      if (llvm::StringRef(callee).startswith("nisa.") && api && !writesOwnDestination) {
        nested.push_back(e);
        continue;
      }
      std::vector<Arg> args = argumentsOf(e);
      std::vector<bool> kept;
      bool drops = false;
      for (const Arg &a : args) kept.push_back(keepKeyword(a)), drops |= !kept.back();
      if (drops) editArguments(args, kept, std::vector<std::string>(args.size()), "", e->range.end);
    }
    // In source order, innermost first: an outer call's hoisted text holds the inner one's tile.
    llvm::stable_sort(nested, [](const Expr *x, const Expr *y) { return x->range.end < y->range.end; });
    for (const Expr *e : nested) hoistNestedCall(e);
    for (const Stmt *s : apWrites) {
      if (s->kind == StmtKind::Assign && s->value && s->value->kind == ExprKind::Call &&
          canonicalCallee(s->value) == "nl.load")
        loadIntoAccessPattern(s);
      else if (s->kind == StmtKind::Assign && s->value)
        copyIntoAccessPattern(s, destinationCalls);
      else
        problem(s->targets.front(), "an access pattern (.ap()) is written only by a destination-passing call; this "
                                    "assignment has none");
    }
  }

  /// The name the file binds `nki.isa` to (`import neuronxcc.nki.isa as nisa`), or `nki.isa`.
  std::optional<std::string> isaModule() const {
    std::optional<std::string> alias, package;
    syntax::forEachStmt(M.body(), [&](const Stmt *s) {
      if (alias || (s->kind != StmtKind::Import && s->kind != StmtKind::ImportFrom)) return;
      llvm::StringRef text = M.text(s->range);
      for (llvm::StringRef spelling : {"nki.isa as ", "nki import isa as "})
        if (size_t at = text.find(spelling); at != llvm::StringRef::npos) {
          llvm::StringRef name = text.substr(at + spelling.size());
          alias = name.take_while([](char c) { return llvm::isAlnum(c) || c == '_'; }).str();
          return;
        }
      if (text.contains("nki as nki") || text.trim() == "import nki") package = "nki.isa";
      // `from neuronxcc import nki` becomes `import nki`.
      static const llvm::Regex fromParent("^from[ \t]+neuronxcc[ \t]+import[ \t]+nki[ \t]*$");
      if (fromParent.match(text.trim())) package = "nki.isa";
    });
    return alias ? alias : package;
  }

  /// `t[<flattened grid>] = nl.load(src, mask=None)` -> `nisa.dma_copy(dst=t.ap(...), src=src)`: an
  /// access pattern is not an assignment target, and the current dialect's load is a DMA copy.
  void loadIntoAccessPattern(const Stmt *s) {
    const Expr *call = s->value;
    const Expr *src = call->keyword("src");
    if (!src && !call->elts.empty()) src = call->elts.front();
    for (const Arg &a : argumentsOf(call))
      if (a.value != src && a.keyword != "dtype") keepKeyword(a); // a conditional mask is a problem
    std::optional<std::string> isa = isaModule();
    if (!src || call->elts.size() > 1 || !isa) {
      problem(call, "nl.load into an access pattern becomes nisa.dma_copy, which needs the source as its one "
                    "positional argument and an import of nki.isa");
      return;
    }
    Coarse[s->range.begin] = {s->range.end,
                              *isa + ".dma_copy(dst=" + render(s->targets.front()) + ", src=" + render(src) + ")"};
  }

  /// `t[<flattened grid>] = value` -> `nisa.tensor_copy(dst=t.ap(...), src=value)`; `nl.copy(x)` copies x.
  void copyIntoAccessPattern(const Stmt *s, std::set<const Expr *> &destinationCalls) {
    const Expr *src = s->value;
    if (src->kind == ExprKind::Call && canonicalCallee(src) == "nl.copy" && src->elts.size() == 1 &&
        llvm::all_of(src->keywords, [&](const syntax::Keyword &k) {
          return k.name == "mask" && (isNone(k.value) || (MaskArgs.count(k.value) && Masks.count(s)));
        })) {
      destinationCalls.insert(src);
      src = src->elts.front();
    }
    std::optional<std::string> isa = isaModule();
    if (!isa) {
      problem(s->targets.front(), "an access pattern (.ap()) is written only by a destination-passing call; "
                                  "nisa.tensor_copy would need an import of nki.isa");
      return;
    }
    Coarse[s->range.begin] = {s->range.end,
                              *isa + ".tensor_copy(dst=" + render(s->targets.front()) + ", src=" + render(src) + ")"};
  }

  /// `nl.bfloat16`, `np.float32`, `float32`: the dtype a name spells, when it is one.
  static std::optional<nki::DType> literalDtype(const Expr *e) {
    if (e->kind != ExprKind::Name && e->kind != ExprKind::Attribute) return std::nullopt;
    return nki::parseDType(e->name);
  }

  /// Which of a 0.1 call's arguments the current signature keeps (removed keywords and parameters it
  /// lacks go) and which become keywords (a positional argument whose place moved behind the destination).
  void planArguments(const nki::DialectApi &api, const nki::OpInfo &op, const std::vector<Arg> &args,
                     std::vector<bool> &kept, std::vector<std::string> &named) {
    size_t positional = 0, keptPositional = 0;
    bool keywordsFromHere = false;
    for (const Arg &a : args) {
      named.emplace_back();
      if (!a.keyword.empty()) {
        kept.push_back(keepKeyword(a) && api.paramIndex(a.keyword) >= 0);
        keywordsFromHere = true;
        continue;
      }
      // A 0.1 positional argument is the op-table parameter at its position.
      std::string_view name = positional < op.params.size() ? op.params[positional].name : "";
      ++positional;
      int at = name.empty() ? -1 : api.paramIndex(name);
      kept.push_back(at >= 0);
      if (at < 0) continue;
      if (!keywordsFromHere && size_t(at) == keptPositional + 1)
        ++keptPositional;
      else
        named.back() = std::string(name), keywordsFromHere = true;
    }
  }

  /// The tile dimensions one operand of a call moves, each with the extent it is written with and its
  /// traced size: a whole tile `t` (its allocation's extents as written, else `t.shape[i]`), or a
  /// subscript whose indices are slices `a:b`, `nl.ds(s, n)`, integers and loop variables (dropped), or
  /// aranges of one grid (its extents, in grid order). Empty when the spelling and the traced tile do not
  /// pair up one to one.
  std::vector<std::pair<std::string, int64_t>> operandExtents(const Expr *x) {
    std::vector<std::pair<std::string, int64_t>> out;
    bool whole = x->kind == ExprKind::Name;
    if (!OperandTile || !(whole || (x->kind == ExprKind::Subscript && x->base && x->base->kind == ExprKind::Name)))
      return out;
    const Expr *base = whole ? x : x->base;
    if (namedArange(base) || namedAffine(base) || blockNamed(base, base->name) != Blocks.end()) return out;
    std::optional<std::vector<int64_t>> shape = OperandTile(x->range.begin);
    if (!shape) return out;
    std::vector<std::string> texts;
    if (whole) {
      // `t = nl.load(x[0:P, 0:N])`: t's extents are those its load spells.
      const Stmt *def = reachingDef(x, base->name);
      if (def && def->kind == StmtKind::Assign && def->value && def->value->kind == ExprKind::Call &&
          canonicalCallee(def->value) == "nl.load" && !def->value->elts.empty() &&
          (def->value->elts.front()->kind == ExprKind::Subscript || def->value->elts.front()->kind == ExprKind::Name)) {
        auto loaded = operandExtents(def->value->elts.front());
        if (loaded.size() == shape->size() && std::equal(loaded.begin(), loaded.end(), shape->begin(),
                                                         [](const auto &a, int64_t b) { return a.second == b; }))
          return loaded;
      }
      // `t = nisa.op(...)`: t's extents as the migration spells the tile it allocates for the call.
      if (def && def->kind == StmtKind::Assign && def->value && def->value->kind == ExprKind::Call && Allocation &&
          SpellingDepth < 16)
        if (std::optional<TracedTile> made = Allocation(*def); made && made->shape == *shape) {
          ++SpellingDepth;
          std::vector<std::string> dims = spelledDims(def->value, *made);
          --SpellingDepth;
          for (size_t i = 0; i < dims.size(); ++i) out.push_back({dims[i], (*shape)[i]});
          return out;
        }
      for (size_t i = 0; i < shape->size(); ++i) {
        std::optional<std::string> e = allocatedExtent(x, base->name, i, shape->size());
        if (!e) return {};
        if (*e == base->name + ".shape[" + std::to_string(i) + "]")
          if (auto named = unpackedExtent(x, base->name, i, shape->size())) e = named;
        texts.push_back(*e);
      }
    } else {
      std::vector<std::pair<size_t, std::string>> grid; // (grid dimension, extent) of arange indices
      size_t gridRank = 0;
      for (const Expr *e : x->elts) {
        if (e->kind == ExprKind::Slice) {
          if (e->elts.size() != 3 || e->elts[2] || !e->elts[1]) return {};
          const Expr *lo = e->elts[0], *hi = e->elts[1];
          bool zero = !lo || (lo->kind == ExprKind::Int && lo->intValue == 0);
          // `lo:lo + E` spans E.
          if (!zero && hi->kind == ExprKind::BinOp && hi->name == "+" && hi->elts.size() == 2 &&
              render(hi->elts[0]) == render(lo))
            texts.push_back(render(hi->elts[1]));
          else
            texts.push_back(zero ? render(hi) : parenthesized(render(hi)) + " - " + parenthesized(render(lo)));
        } else if (e->kind == ExprKind::Call && canonicalCallee(e) == "nl.ds" && e->elts.size() == 2) {
          texts.push_back(render(e->elts[1]));
        } else if (auto a = arangeIndex(e)) {
          if (gridRank && gridRank != a->rank) return {};
          gridRank = a->rank;
          grid.push_back({a->dim, a->extent});
        } else if (mentionsArange(e) || e->kind == ExprKind::Ellipsis) {
          return {}; // a combined or scaled arange: no extent as written
        }
        // anything else is an integer index: no tile dimension
      }
      if (!grid.empty()) {
        if (!texts.empty()) return {}; // slices and aranges mixed
        llvm::sort(grid);
        for (size_t i = 0; i < grid.size(); ++i)
          if (i && grid[i].first == grid[i - 1].first) return {};
        for (const auto &g : grid) texts.push_back(g.second);
      }
    }
    if (texts.size() != shape->size()) return {};
    for (size_t i = 0; i < texts.size(); ++i) {
      // A literal extent that is not the traced one: the pairing is wrong.
      int64_t literal = 0;
      if (!llvm::StringRef(texts[i]).getAsInteger(10, literal) && literal != (*shape)[i]) return {};
      out.push_back({texts[i], (*shape)[i]});
    }
    return out;
  }

  /// `m` for extent `i` of `tensor` where `n, m = tensor.shape` binds the `m` that reaches `use` (and the
  /// same `tensor`).
  std::optional<std::string> unpackedExtent(const Expr *use, const std::string &tensor, size_t i, size_t rank) {
    auto at = StmtOf.find(use);
    if (at == StmtOf.end()) return std::nullopt;
    const Stmt *function = functionOf(at->second);
    for (const auto &[key, defs] : Defs) {
      if (key.first != function) continue;
      for (const Stmt *d : defs) {
        const Expr *t = d->targets.size() == 1 ? d->targets.front() : nullptr, *v = d->value;
        if (d->kind != StmtKind::Assign || !t || !v || t->kind != ExprKind::Tuple || t->elts.size() != rank ||
            t->elts[i]->kind != ExprKind::Name || t->elts[i]->name != key.second)
          continue;
        if (v->kind != ExprKind::Attribute || v->name != "shape" || !v->base || v->base->kind != ExprKind::Name ||
            v->base->name != tensor)
          continue;
        if (reachingDef(use, key.second) == d && reachingDef(use, tensor) == reachingDef(d, tensor)) return key.second;
      }
    }
    return std::nullopt;
  }

  /// The dimensions of the tile `call` makes, each as the extent its operands spell for dimensions of
  /// that traced size when they spell it one way only, else the traced number.
  std::vector<std::string> spelledDims(const Expr *call, const TracedTile &tile) {
    std::vector<std::pair<std::string, int64_t>> extents;
    if (call && call->kind == ExprKind::Call)
      for (const Arg &a : argumentsOf(call))
        for (auto &e : operandExtents(a.value)) extents.push_back(std::move(e));
    std::vector<std::string> dims;
    for (int64_t v : tile.shape) {
      std::set<std::string> spelled;
      for (const auto &[text, size] : extents)
        if (size == v) spelled.insert(text);
      dims.push_back(v > 1 && spelled.size() == 1 ? *spelled.begin() : std::to_string(v));
    }
    return dims;
  }

  /// The dtype of the tile `call` makes, spelled from the source like its dimensions, so the migrated kernel
  /// stays generic in its input dtypes: the call's `dtype=` as written; else `x.dtype` of the tile operand
  /// the op table's row takes its result dtype from (nki::defaultResultDType: the data operand, or the front
  /// end's first tile operand for a row that keeps its result as computed), when that operand is a named
  /// tile (`x`, or `x[...]` of a kernel argument or of a tile an nl/nisa call made); else the traced dtype
  /// (a matmul's fp32 PSUM result, two tile operands promoted, an operand with no name to spell).
  std::string spelledDType(const Expr *call, const TracedTile &tile) {
    std::string traced = "nl." + tile.dtype;
    if (!call || call->kind != ExprKind::Call) return traced;
    if (const Expr *dt = call->keyword("dtype")) return isNone(dt) ? traced : render(dt);
    const nki::OpInfo *op = nki::lookupOp(canonicalCallee(call));
    if (!op || op->shape == nki::ShapeRule::MatmulResult || op->kind == nki::OpKind::Alloc || !OperandTile)
      return traced;
    // The tile operands by parameter, in the row's order (the front end's "first tile operand").
    std::map<size_t, const Expr *> tiles;
    size_t positional = 0;
    for (const Arg &a : argumentsOf(call)) {
      int i = a.keyword.empty() ? int(positional++) : op->paramIndex(a.keyword);
      if (i >= 0 && size_t(i) < op->params.size() && op->params[size_t(i)].role == nki::Role::Tile &&
          OperandTile(a.value->range.begin))
        tiles[size_t(i)] = a.value;
    }
    if (tiles.empty()) return traced;
    const Expr *from = tiles.begin()->second;
    if (op->numerics.resultDType == nki::ResultDType::Promoted && tiles.size() > 1) return traced;
    if (op->numerics.resultDType != nki::ResultDType::Computed) {
      const nki::ParamInfo *data = op->slot(nki::Slot::Data);
      auto it = data ? tiles.find(size_t(data - op->params.data())) : tiles.end();
      if (it == tiles.end()) return traced;
      from = it->second;
    }
    if (from->kind == ExprKind::Name) return from->name + ".dtype";
    if (from->kind != ExprKind::Subscript || !from->base || from->base->kind != ExprKind::Name) return traced;
    const Expr *base = from->base;
    if (namedArange(base) || namedAffine(base) || blockNamed(base, base->name) != Blocks.end()) return traced;
    // `x[...]`: x must be a tensor, not a Python list of tiles (whose element is what has a dtype).
    const Stmt *def = reachingDef(base, base->name);
    bool madeByCall =
        def && def->kind == StmtKind::Assign && def->value && def->value->kind == ExprKind::Call &&
        (canonicalCallee(def->value).rfind("nl.", 0) == 0 || canonicalCallee(def->value).rfind("nisa.", 0) == 0);
    bool argument = false;
    if (auto at = StmtOf.find(base); !def && at != StmtOf.end())
      if (const Stmt *fn = functionOf(at->second); fn && !Defs.count({fn, base->name}))
        argument = std::any_of(fn->params.begin(), fn->params.end(),
                               [&](const syntax::Param &p) { return p.name == base->name; });
    return madeByCall || argument ? base->name + ".dtype" : traced;
  }

  /// `nl.ndarray((P, N), dtype=x.dtype, buffer=nl.sbuf)`: the allocation of the tile `call` makes. Each
  /// dimension is written as the extent the call's operands spell for dimensions of its traced size,
  /// when they spell it one way only (the shape stays generic in the kernel's sizes), else as the traced
  /// number; the dtype as spelledDType writes it, or `dtype` as written when given.
  std::string allocationText(const Expr *call, const TracedTile &tile, const std::string &dtype = "") {
    std::vector<std::string> dims = spelledDims(call, tile);
    return "nl.ndarray((" + llvm::join(dims, ", ") + (dims.size() == 1 ? ",), " : "), ") +
           "dtype=" + (dtype.empty() ? spelledDType(call, tile) : dtype) + ", buffer=nl." + tile.buffer + ")";
  }

  /// `y = x * nisa.op(a, dtype=d)` -> `op_tile = nl.ndarray(<traced shape>, ...)` and `nisa.op(op_tile, a)`
  /// on lines of their own in front of the statement, which reads `op_tile` in place of the call: the
  /// current dialect writes a destination where 0.1 returned the result.
  void hoistNestedCall(const Expr *call) {
    std::string callee = canonicalCallee(call);
    const nki::DialectApi *api = nki::currentDialectApi(callee);
    const nki::OpInfo *op = api->op();
    const Stmt *s = StmtOf.at(call);
    auto refuse = [&](const std::string &why) {
      syntax::forEachExpr(call, [&](const Expr *x) { Consumed.insert(x), ConvertedNames.insert(x); });
      problem(call, callee + " returns its result in NKI 0.1 but writes a destination in the nki dialect, and " + why +
                        "; assign its result to a subscripted tensor first");
    };
    if (const Expr *mask = call->keyword("mask"); mask && !isNone(mask)) return; // reported by planMasks
    if (!op || op->kind == nki::OpKind::Iota || op->kind == nki::OpKind::AffineSelect)
      return refuse("its arguments have no destination-passing spelling inside an expression");
    if (s->kind != StmtKind::Assign && s->kind != StmtKind::AugAssign && s->kind != StmtKind::Expr &&
        s->kind != StmtKind::Return)
      return refuse("its statement is not an assignment, an expression or a return, in front of which it could "
                    "be written");
    for (const Expr *p = ParentOf.at(call); p; p = ParentOf.at(p))
      if (p->kind == ExprKind::IfExp || p->kind == ExprKind::BoolOp || p->kind == ExprKind::Lambda)
        return refuse("it is evaluated only under a condition");
    if (!syntax::startsLine(Text, s->range.begin) || Guards.count(s))
      return refuse("its statement does not start its line or becomes conditional");
    std::optional<TracedTile> tile = CallTile ? CallTile(*call) : std::nullopt;
    if (!tile) return refuse("the shape of its result is not known from the trace");
    std::string allocation = allocationText(call, *tile);
    std::vector<Arg> args = argumentsOf(call);
    std::vector<bool> kept;
    std::vector<std::string> named;
    planArguments(*api, *op, args, kept, named);
    // A fresh tile: a matmul overwrites it.
    std::string accumulate = op->kind == nki::OpKind::Matmul ? "accumulate=False" : "";
    bool anyKept = editArguments(args, kept, named, accumulate.empty() ? "" : ", " + accumulate, call->range.end);
    if (FreshNames.empty()) FreshNames = syntax::identifiersIn(Text);
    std::string base = callee.substr(callee.rfind('.') + 1);
    std::string name = syntax::freshName(FreshNames, base + "_tile");
    FreshNames.insert(name);
    size_t open = Text.find('(', call->base->range.end);
    std::string rest = render(uint32_t(open + 1), call->range.end);
    std::string head = render(call->base) + "(" + name;
    if (anyKept)
      head += llvm::StringRef(rest).ltrim(" \t\r").startswith("\n") ? "," : ", ";
    else if (!accumulate.empty())
      head += ", " + accumulate;
    uint32_t line = lineStartOf(s->range.begin);
    std::string indent = Text.slice(line, s->range.begin).str();
    Hoisted[line] += indent + name + " = " + allocation + "\n" + indent + head + rest + "\n";
    addFine(call->range.begin, call->range.end, name);
  }

  /// `t[...] = nisa.op(a, k=v, mask=None)` -> `nisa.op(t[...], a, k=v)`.
  bool convertDestinationCall(const Stmt *s) {
    const Expr *call = s->value;
    std::string callee = canonicalCallee(call);
    const nki::DialectApi *api = nki::currentDialectApi(callee);
    const nki::OpInfo *op = api->op();
    const Expr *target = s->targets.size() == 1 ? s->targets.front() : nullptr;
    // `t = nisa.op(...)` creates the tile t: the current dialect allocates it first.
    std::optional<std::string> allocation;
    // The allocation goes on a line of its own, so the statement must start its line.
    bool startsLine = Text.slice(lineStartOf(s->range.begin), s->range.begin).trim(" \t").empty();
    if (target && target->kind == ExprKind::Name && s->kind == StmtKind::Assign && Allocation && startsLine)
      if (std::optional<TracedTile> tile = Allocation(*s)) allocation = allocationText(call, *tile);
    // `acc += nisa.nc_matmul(...)` adds into the whole of an existing tile.
    bool wholeTile = target && target->kind == ExprKind::Name && s->kind == StmtKind::AugAssign;
    if (!target || (target->kind != ExprKind::Subscript && !allocation && !wholeTile) || !op) {
      problem(call, callee + " must write a subscripted tensor to become a destination-passing call");
      return false;
    }
    bool matmul = op->kind == nki::OpKind::Matmul;
    if (s->kind == StmtKind::AugAssign && !(matmul && s->op == "+")) {
      problem(call, "'" + s->op + "=' into the result of " + callee + " has no nki dialect spelling");
      return false;
    }
    std::vector<Arg> args = argumentsOf(call);
    std::vector<bool> kept;
    std::vector<std::string> named;
    planArguments(*api, *op, args, kept, named);
    // `+=` adds to what the tile holds: accumulate=None (docs/NKI.md §2), which adds into written PSUM
    // and overwrites a fresh one (where 0.1 added to uninitialised memory), without the warning
    // accumulate=True gets on a tile only nl.zeros wrote. `=` overwrites every time: accumulate=False
    // (None would add from the second write on).
    std::string accumulate = matmul ? (s->kind == StmtKind::AugAssign ? "accumulate=None" : "accumulate=False") : "";
    // iota's expression and affine_select's predicate become pattern arguments, written in place of
    // the expression after the arguments kept.
    if (op->kind == nki::OpKind::Iota || op->kind == nki::OpKind::AffineSelect) {
      bool iota = op->kind == nki::OpKind::Iota;
      std::string keyword = iota ? "expr" : "pred";
      const Expr *expr = call->keyword(keyword);
      if (!expr && !call->elts.empty()) expr = call->elts.front();
      std::optional<std::string> pattern;
      if (expr) pattern = iota ? iotaArguments(expr, target) : affineSelectArguments(expr, target);
      if (!pattern) {
        if (!expr)
          problem(call, "nisa." + std::string(iota ? "iota" : "affine_select") + " without its " + keyword +
                            " has no nki dialect spelling");
        return false;
      }
      accumulate = *pattern;
    }
    size_t open = Text.find('(', call->base->range.end);
    bool anyKept = editArguments(args, kept, named, accumulate.empty() ? "" : ", " + accumulate, call->range.end);
    std::string head = render(call->base) + "(" + render(target);
    // `t[...] = nisa.op(..., dtype=d)` into a tile allocated with another dtype: 0.1 rounded the result to
    // d before storing it. The call writes a tile of dtype d (the traced result), copied into t after it.
    if (const Expr *dt = call->keyword("dtype"); dt && target->kind == ExprKind::Subscript && target->base &&
                                                 target->base->kind == ExprKind::Name && s->kind == StmtKind::Assign) {
      const Stmt *def = reachingDef(target, target->base->name);
      const Expr *held =
          def && def->value && def->value->kind == ExprKind::Call ? def->value->keyword("dtype") : nullptr;
      std::optional<nki::DType> want = literalDtype(dt), have = held ? literalDtype(held) : std::nullopt;
      if (want && have && *want != *have) {
        std::optional<TracedTile> tile = CallTile ? CallTile(*call) : std::nullopt;
        if (!tile) {
          problem(dt, "dtype= rounds the result of " + callee + " to another dtype than '" + target->base->name +
                          "' holds, and the shape of that result is not known from the trace; the nki dialect takes "
                          "the dtype from the destination");
          return false;
        }
        if (FreshNames.empty()) FreshNames = syntax::identifiersIn(Text);
        std::string name = syntax::freshName(FreshNames, callee.substr(callee.rfind('.') + 1) + "_tile");
        FreshNames.insert(name);
        std::string indent = Text.slice(lineStartOf(s->range.begin), s->range.begin).str();
        std::string module = render(call->base);
        module = module.substr(0, module.rfind('.'));
        head = name + " = " + allocationText(call, *tile, render(dt)) + "\n" + indent + render(call->base) + "(" + name;
        Coarse[s->range.end] = {s->range.end,
                                "\n" + indent + module + ".tensor_copy(" + render(target) + ", " + name + ")"};
      }
    }
    if (target->kind == ExprKind::Name && Masks.count(s)) {
      std::optional<std::vector<int64_t>> shape = ShapeOf ? ShapeOf(target->name, target->range.begin) : std::nullopt;
      if (!shape) {
        problem(target, "the shape of the masked tile '" + target->name + "' is not known from the trace");
        return false;
      }
      head += wholeTileBounds(s, *shape);
    }
    if (allocation)
      head = target->name + " = " + *allocation + "\n" + Text.slice(lineStartOf(s->range.begin), s->range.begin).str() +
             head;
    // Arguments that start on the next line stay there.
    if (anyKept)
      head += Text.substr(open + 1).ltrim(" \t\r").startswith("\n") ? "," : ", ";
    else if (!accumulate.empty())
      head += ", " + accumulate;
    Coarse[s->range.begin] = {uint32_t(open + 1), head};
    return true;
  }

  Migration finish() {
    Migration out;
    std::stable_sort(Problems.begin(), Problems.end(),
                     [](const MigrationProblem &a, const MigrationProblem &b) { return a.offset < b.offset; });
    out.problems = std::move(Problems);
    if (!out.problems.empty()) return out;
    moveAllocations();
    for (const auto &[s, split] : Splits) renderSplit(s, split);
    for (const auto &[s, window] : Windows) renderWindows(s, window);
    // Hoisted calls after an allocation moved to the same place (they may read it).
    for (const auto &[at, text] : Hoisted)
      if (auto it = Coarse.find(at); it != Coarse.end() && it->second.end == at)
        it->second.text += text;
      else if (it != Coarse.end())
        it->second.text = text + it->second.text;
      else
        Coarse[at] = {at, text};
    for (const auto &[s, text] : Guards) {
      if (auto it = Coarse.find(s->range.begin); it != Coarse.end())
        it->second.text = text + it->second.text;
      else if (auto f = Fine.find(s->range.begin); f != Fine.end())
        f->second.text = text + f->second.text;
      else
        Coarse[s->range.begin] = {s->range.begin, text};
    }
    std::string path = M.source().path().str();
    std::vector<std::pair<uint32_t, Edit>> all(Coarse.begin(), Coarse.end());
    for (const auto &[b, e] : Fine) {
      bool inside = false;
      for (const auto &[cb, c] : Coarse) inside |= c.end > cb && b >= cb && e.end <= c.end && !(b == c.end);
      if (!inside) all.push_back({b, e});
    }
    for (const auto &[b, e] : all)
      if (auto err = out.edits.add(clang::tooling::Replacement(path, b, e.end - b, e.text)))
        out.problems.push_back({b, "internal: overlapping migration edits: " + llvm::toString(std::move(err))});
    return out;
  }
};

} // namespace

Migration migrateToCurrentDialect(const syntax::Module &module, const TileAllocation &allocation,
                                  const TensorShape &shapeOf, const CallAllocation &callAllocation,
                                  const OperandTileShape &operandTile) {
  if (nki::dialectOfImports(module) == nki::Dialect::Nki) return {};
  return Migrator(module, allocation, shapeOf, callAllocation, operandTile).run();
}

} // namespace accelopt::rewrite
