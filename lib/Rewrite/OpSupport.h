// What the rewrite ops share as ops (internal to lib/Rewrite): results and
// refusals, parameter parsing, edit collection, and the op families (statement
// moves, counted loops, buffer reshapes). Text layout lives in Syntax/TextLayout,
// kernel queries in NKI/KernelQueries, dependences in Analysis/Dependence.
#pragma once

#include "Rewrite/Rewrite.h"

#include "Analysis/Dependence.h"
#include "NKI/KernelQueries.h"
#include "Syntax/AstWalks.h"
#include "Syntax/PyAST.h"
#include "Syntax/TextLayout.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace accelopt::rewrite {

// --- results -----------------------------------------------------------------

OpResult badInput(llvm::StringRef op, const std::string &message);
OpResult refuse(llvm::StringRef op, std::string ids, uint32_t offset, std::string reason, std::vector<Note> notes = {});

/// The refusals of one application of an op, which all carry its ids and anchor.
class Refuser {
public:
  Refuser(llvm::StringRef op, std::string ids, uint32_t anchor) : OpName(op), Ids(std::move(ids)), Anchor(anchor) {}
  OpResult operator()(std::string reason, std::vector<Note> notes = {}) const {
    return refuse(OpName, Ids, Anchor, std::move(reason), std::move(notes));
  }

private:
  llvm::StringRef OpName;
  std::string Ids;
  uint32_t Anchor;
};

/// Reads the parameters of one op against its declared fields (OpSpec): checks
/// that only declared fields are present (exactly one of an alternative pair)
/// and resolves ids; records the first problem as a bad-input message.
class Params {
public:
  Params(const nki::Kernel &k, const nlohmann::json &j, const OpSpec &spec);
  std::optional<int> loop(const char *field);
  std::optional<int> stmt(const char *field);
  std::optional<int64_t> integer(const char *field);
  /// A Node, Tensor or Code field's text, unresolved.
  std::optional<std::string> string(const char *field);
  /// A Choice field's value, one of its declared choices.
  std::optional<std::string> choice(const char *field);
  bool ok() const { return Error.empty(); }
  OpResult error() const { return badInput(Spec.name, Error); }

private:
  const nki::Kernel &K;
  const nlohmann::json &J;
  const OpSpec &Spec;
  std::string Error;
  /// The field's value, after checking that the op declares it as one of `kinds`.
  const nlohmann::json *get(const char *field, std::initializer_list<FieldKind> kinds);
};

// --- what the ops read from the layers below -----------------------------------

using syntax::endsLine;
using syntax::forEachExpr;
using syntax::freshName;
using syntax::hasMultilineString;
using syntax::identifiersIn;
using syntax::indentAt;
using syntax::lineBegin;
using syntax::namesIn;
using syntax::nextLineBegin;
using syntax::nonBlankLineStarts;
using syntax::startsLine;

using analysis::carriedName;
using analysis::Conflict;
using analysis::Dir;
using analysis::DirConstraint;
using analysis::firstConflict;
using analysis::firstWriteConflict;
using analysis::laterIterationDirs;
using analysis::mayOverlapDir;

/// A write that may touch the elements `read` (an access of statement `later`) reads, executed
/// between statement `earlier` and `later` of the same block: written by a statement between them
/// (at any depth), or, when the block is inside a loop, by any statement of its outermost loop
/// (another iteration may run in between). Tested with mayOverlapDir, loop counters independent.
std::optional<Conflict> writeBetween(const nki::Kernel &k, int earlier, int later, const nki::Access &read);

// --- refusal texts ---------------------------------------------------------------

/// The refusal of an op that needs the trip count of `loop` when it is unknown.
std::string unknownTripReason(const nki::Kernel &k, int loop);

/// The loops from `outer` down to the loop directly around statement `s`.
std::vector<int> loopsBetween(const nki::Kernel &k, int outer, int s);
/// Loops whose counters index the blocks of a buffer computed before loop `out_of` (stage, hoist_transpose):
/// the number of blocks, or why a loop cannot index one (unknown trip count, a header that is not one line
/// over <kind>(N), bounds that use a name bound inside `outOf`, in `boundInside`).
llvm::Expected<int64_t> blockCount(const nki::Kernel &k, llvm::ArrayRef<int> blockLoops, int outOf,
                                   const std::set<std::string> &boundInside);
/// "write of 'x' (S11) at f:46:9 and read of 'x' (S12) at f:49:21"
std::string describeConflict(const nki::Kernel &k, const Conflict &c);
std::vector<Note> conflictNotes(const nki::Kernel &k, const Conflict &c);

// --- edits --------------------------------------------------------------------

/// Collects text edits, then turns them into non-overlapping Replacements
/// (insertions at one offset are concatenated in the order added).
class EditList {
public:
  void replace(uint32_t offset, uint32_t length, std::string text) {
    Edits.push_back({offset, length, std::move(text), Seq++});
  }
  void replace(syntax::ByteRange range, std::string text) {
    replace(range.begin, range.end - range.begin, std::move(text));
  }
  void insert(uint32_t offset, std::string text) { replace(offset, 0, std::move(text)); }
  void remove(uint32_t begin, uint32_t end) { replace(begin, end - begin, ""); }
  llvm::Expected<clang::tooling::Replacements> build(llvm::StringRef path) const;

private:
  struct Edit {
    uint32_t offset, length;
    std::string text;
    unsigned seq;
  };
  std::vector<Edit> Edits;
  unsigned Seq = 0;
};

/// Turns the edit list into an applied OpResult (or an internal refusal).
OpResult applied(llvm::StringRef op, std::string ids, const nki::Kernel &k, const EditList &edits,
                 std::string description, uint32_t anchor);

/// The checks shared by hoist and sink: `stmt` binds a new value, alone on its
/// lines, and is invariant in `loop` (uses nothing the loop binds or writes, and
/// the loop never modifies what it creates). Returns the refusal, if any. The
/// statement may be inside the loop (hoist) or before it (sink).
std::optional<OpResult> checkMovable(const nki::Kernel &k, int stmt, int loop, llvm::StringRef op,
                                     const std::string &ids, uint32_t anchor);

/// hoist and sink: move statement "stmt" across the header of the loop named by
/// the second field. apply() reads both, refuses a statement not placed for the
/// move (`placementRefusal`) or not movable (checkMovable), then calls `applyMove`.
class StmtMoveOp : public Op {
public:
  OpResult apply(const nki::Kernel &k, const nlohmann::json &j) const final;

protected:
  /// `spec` declares "stmt" then the loop field.
  explicit StmtMoveOp(OpSpec spec) : Op(std::move(spec)), LoopField(this->spec().fields.at(1).name) {}
  virtual std::optional<std::string> placementRefusal(const nki::Kernel &k, int stmt, int loop) const = 0;
  virtual OpResult applyMove(const nki::Kernel &k, int stmt, int loop, const std::string &ids,
                             uint32_t anchor) const = 0;

private:
  const char *LoopField;
};

/// Moves the lines of statement `s` to the line start `to`, each line (with its
/// newline) rewritten by `reindent`.
void moveStmtLines(EditList &edits, llvm::StringRef text, const nki::Statement &s, uint32_t to,
                   llvm::function_ref<std::string(llvm::StringRef line)> reindent);

// --- composite ops (compute_at) ---------------------------------------------------

/// An op applied by the engine as a sequence of other ops, each chosen here with the
/// ids it will see and applied (legality, re-parse, re-verification) on the kernel the
/// previous ones produced. apply() returns Applied without edits when the sequence can
/// be formed (its steps still check their own legality), else the refusal.
class CompositeOp : public Op {
public:
  using Op::Op;
  /// The steps for `params` on `k`; only called after apply() returned Applied.
  virtual std::vector<nlohmann::json> steps(const nki::Kernel &k, const nlohmann::json &params) const = 0;
};

// --- counted loops (split, unroll) ------------------------------------------------

/// split and unroll: rewrite loop "loop" by "factor". apply() reads both, takes
/// a factor of at least 2 (and at most `maxCopies`, if any) and a loop with a
/// known trip count, then calls `applyFactor`.
class LoopFactorOp : public Op {
public:
  OpResult apply(const nki::Kernel &k, const nlohmann::json &j) const final;

protected:
  /// `spec` declares "loop" and "factor".
  explicit LoopFactorOp(OpSpec spec, std::optional<int64_t> maxCopies = std::nullopt)
      : Op(std::move(spec)), CopyLimit(maxCopies) {}
  virtual OpResult applyFactor(const nki::Kernel &k, int loop, int64_t factor, int64_t trip, const std::string &ids,
                               uint32_t anchor) const = 0;

private:
  std::optional<int64_t> CopyLimit;
};

/// The parts of a `for i in <kind>(N)` loop that split and unroll rewrite.
struct CountedLoop {
  const syntax::Expr *call = nullptr; // <kind>(N)
  const syntax::Expr *stop = nullptr; // N
  std::string bodyUnit;               // the body's indentation beyond the header's
  std::string refusal;                // why the loop is not of that form ("" when it is)
};
CountedLoop countedLoop(const nki::Kernel &k, int loop, llvm::StringRef op);
/// {"op": op, "loop": L, "factor": f} for each loop of known trip count and each
/// f in [2, maxFactor] dividing it, below the trip count (`belowTrip`) or up to it.
std::vector<nlohmann::json> divisorInstances(const nki::Kernel &k, llvm::StringRef op, int64_t maxFactor,
                                             bool belowTrip);
/// Why the induction variable of `loop` cannot be substituted in its body: a
/// statement or an inner loop rebinds it.
std::optional<std::string> ivRebindingReason(const nki::Kernel &k, int loop);
/// Why code after `loop` needs its induction variable: Python leaves it at the last iteration's value,
/// which a rewrite that peels or coarsens iterations does not keep.
std::optional<std::string> ivReadAfterLoopReason(const nki::Kernel &k, int loop);
/// Rewrites the header `for i in <kind>(N)` of `l` to `for outer in <kind>(N // f)`.
void divideHeader(EditList &edits, const nki::Kernel &k, const nki::Loop &l, const syntax::Expr *stop,
                  const std::string &outer, int64_t f);

// --- buffers (shrink_buffer, expand_buffer) -------------------------------------

/// Resolves a tensor reference: the name `show` prints (unique among the
/// kernel's non-argument tensors) or the id of the statement creating it
/// ("S3"). Sets `error` and returns -1 when it names none or several.
int resolveTensor(const nki::Kernel &k, const std::string &ref, std::string &error);

/// One textual use of a tensor's name in the kernel (outside its creating
/// statement's target): `subscript` is the `t[...]` around it, if any, and
/// `access` the IR access that use produced (null for other uses).
struct TensorUse {
  int stmt = -1; // -1 for a loop header
  const syntax::Expr *name = nullptr;
  const syntax::Expr *subscript = nullptr;
  const nki::Access *access = nullptr;
};
/// Every use of the name of `tensor` in its kernel, in source order.
std::vector<TensorUse> tensorUses(const nki::Kernel &k, int tensor);
/// The shape tuple literal of an allocation statement (`nl.ndarray((a, b), ...)`), or null.
const syntax::Expr *allocShapeTuple(const nki::Statement &s);

/// How an op names tensor `t`: its name when that resolves to it, else the id
/// of the statement creating it.
std::string tensorRef(const nki::Kernel &k, const nki::Tensor &t);
/// Tensors a statement of the kernel creates in SBUF or PSUM.
std::vector<const nki::Tensor *> onChipBuffers(const nki::Kernel &k);
/// Where results about tensor `t` point: the statement creating it, else its name.
uint32_t tensorAnchor(const nki::Kernel &k, const nki::Tensor &t);

/// Why tensor `t` cannot have its block dimensions changed (shrink/expand_buffer):
/// not an SBUF/PSUM allocation of its own, an argument/output, viewed, bound
/// twice, its shape not a tuple literal (one element per dimension), or the
/// allocation not alone on its lines. std::nullopt when it can.
std::optional<std::string> bufferReshapeRefusal(const nki::Kernel &k, int t);
/// The lines of statement `s` re-indented from its own indentation to `indent`,
/// after replacing [begin, end) (offsets in the file) by `with` (pass begin == end for none).
std::string movedLines(llvm::StringRef text, const nki::Statement &s, const std::string &indent,
                       std::vector<std::tuple<uint32_t, uint32_t, std::string>> inner);

// --- the ops (one file each, listed in RewriteOps.def) ---------------------------
#define ACCELOPT_REWRITE_OP(accessor) const Op &accessor();
#include "Rewrite/RewriteOps.def"

} // namespace accelopt::rewrite
