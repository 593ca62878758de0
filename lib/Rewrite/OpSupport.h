// Helpers shared by the rewrite ops (internal to lib/Rewrite): parameter
// parsing, text layout (lines, indentation), name walks over the syntax tree,
// edit collection, and dependence tests with per-loop directions.
#pragma once

#include "Rewrite/Rewrite.h"

#include "Syntax/PyAST.h"

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace accelopt::rewrite {

// --- results -----------------------------------------------------------------

OpResult badInput(llvm::StringRef op, const std::string &message);
OpResult refuse(llvm::StringRef op, std::string ids, uint32_t offset, std::string reason,
                std::vector<Note> notes = {});

/// Reads the parameters of one op: checks that only known fields are present
/// and resolves ids; records the first problem as a bad-input message.
class Params {
public:
  Params(const nki::Kernel &k, const nlohmann::json &j, llvm::StringRef op, std::vector<std::string> fields);
  std::optional<int> loop(const char *field);
  std::optional<int> stmt(const char *field);
  std::optional<int64_t> integer(const char *field);
  std::optional<std::string> string(const char *field);
  bool ok() const { return Error.empty(); }
  OpResult error() const { return badInput(Op, Error); }

private:
  const nki::Kernel &K;
  const nlohmann::json &J;
  std::string Op;
  std::string Error;
  const nlohmann::json *get(const char *field);
};

// --- text layout -------------------------------------------------------------

/// Offset where the line containing `offset` starts.
uint32_t lineBegin(llvm::StringRef text, uint32_t offset);
/// Offset just past the newline ending the line containing `offset` (or text end).
uint32_t nextLineBegin(llvm::StringRef text, uint32_t offset);
/// Leading whitespace of the line containing `offset`.
std::string indentAt(llvm::StringRef text, uint32_t offset);
/// True if only whitespace lies between the line start and `offset`.
bool startsLine(llvm::StringRef text, uint32_t offset);
/// True if only whitespace or a comment follows `offset` on its line.
bool endsLine(llvm::StringRef text, uint32_t offset);
/// The indentation one level deeper than `loop`'s header, from its body; empty
/// when the body is on the header line.
std::string bodyIndentUnit(const nki::Kernel &k, const nki::Loop &loop);
/// Line starts of every line in [begin, end) that is not blank.
std::vector<uint32_t> nonBlankLineStarts(llvm::StringRef text, uint32_t begin, uint32_t end);

// --- syntax walks ------------------------------------------------------------

void forEachExpr(const syntax::Stmt *s, const std::function<void(const syntax::Expr *)> &fn);
void forEachExpr(const syntax::Expr *e, const std::function<void(const syntax::Expr *)> &fn);
/// Name expressions spelled `name` in the statement (and nested blocks).
std::vector<const syntax::Expr *> namesIn(const syntax::Stmt *s, llvm::StringRef name);
/// A string literal spanning several lines (re-indenting would change it).
bool hasMultilineString(const syntax::Stmt *s, llvm::StringRef text);
/// Every identifier-like token in the kernel text (to pick fresh names).
std::set<std::string> identifiersIn(llvm::StringRef text);
std::string freshName(const std::set<std::string> &taken, const std::string &base);

// --- kernel structure ---------------------------------------------------------

/// Statements inside `loop` (any depth), in source order.
std::vector<int> stmtsIn(const nki::Kernel &k, int loop);
/// Loops inside `loop` (any depth, not including it).
std::vector<int> loopsIn(const nki::Kernel &k, int loop);
/// "L2 (h, trip 2)".
std::string loopLabel(const nki::Kernel &k, int loop);
std::string tensorName(const nki::Kernel &k, int tensor);
/// "path:line:col".
std::string where(const nki::Kernel &k, uint32_t offset);
/// Is the tensor created inside `loop` (private to each of its iterations)?
bool privateTo(const nki::Kernel &k, int tensor, int loop);
/// Is `a` (of statement `s`) the destination of a `+=`-style accumulation, or the
/// read of that destination by the same statement?
bool isAccumulation(const nki::Statement &s, const nki::Access &a);
/// The `nl.xxx_range(...)` call of a loop, and its single positional argument
/// when the loop is `range(N)` shaped.
const syntax::Expr *iterCall(const nki::Loop &l);
const syntax::Expr *singleStopArg(const nki::Loop &l);

/// Names a statement binds as new values (not the target of a tensor `+=`,
/// whose dependences are the accesses').
const std::vector<std::string> &boundNames(const nki::Statement &s);
/// A Python name the body of `loop` reads before (re)binding it: a value carried
/// from one iteration to the next ("acc = nl.add(acc, t)", "offset += 128").
std::optional<std::pair<int, std::string>> carriedName(const nki::Kernel &k, int loop);

// --- dependence with directions ---------------------------------------------

/// Relation of two instances' counters of one loop: d = n_a - n_b.
enum class Dir { Eq, Pos, Neg, Any };
struct DirConstraint {
  int loop;
  Dir dir;
};
/// Can `a` and `b` touch a common element for instances whose loop counters are
/// related by `dirs` (loops not listed vary independently)? `aliasB` renames loop
/// ids of b's index expressions (fuse: the second loop becomes the first).
bool mayOverlapDir(const nki::Kernel &k, const nki::Access &a, const nki::Access &b,
                   const std::vector<DirConstraint> &dirs, std::pair<int, int> aliasB = {-1, -1});

/// A conflicting pair of accesses, for refusal messages.
struct Conflict {
  int stmtA = -1, stmtB = -1;
  const nki::Access *a = nullptr;
  const nki::Access *b = nullptr;
};
/// "write of 'x' (S11) at f:46:9 and read of 'x' (S12) at f:49:21"
std::string describeConflict(const nki::Kernel &k, const Conflict &c);
std::vector<Note> conflictNotes(const nki::Kernel &k, const Conflict &c);

// --- edits --------------------------------------------------------------------

/// Collects text edits, then turns them into non-overlapping Replacements
/// (insertions at one offset are concatenated in the order added).
class EditList {
public:
  void replace(uint32_t offset, uint32_t length, std::string text) { Edits.push_back({offset, length, std::move(text), Seq++}); }
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

// --- buffers (shrink_buffer, expand_buffer) -------------------------------------

/// Resolves a tensor reference: the name `show` prints (unique among the
/// kernel's non-argument tensors) or the id of the statement creating it
/// ("S3"). Sets `error` and returns -1 when it names none or several.
int resolveTensor(const nki::Kernel &k, const std::string &ref, std::string &error);

/// One textual use of a tensor's name in the kernel (outside its creating
/// statement's target): `subscript` is the `t[...]` around it, if any, and
/// `access` the IR access that use produced (null for other uses).
struct TensorUse {
  int stmt = -1;                              // -1 for a loop header
  const syntax::Expr *name = nullptr;
  const syntax::Expr *subscript = nullptr;
  const nki::Access *access = nullptr;
};
/// Every use of the name of `tensor` in its kernel, in source order.
std::vector<TensorUse> tensorUses(const nki::Kernel &k, int tensor);
/// The shape tuple literal of an allocation statement (`nl.ndarray((a, b), ...)`), or null.
const syntax::Expr *allocShapeTuple(const nki::Statement &s);

/// Why tensor `t` cannot have its block dimensions changed (shrink/expand_buffer):
/// not an SBUF/PSUM allocation of its own, an argument/output, viewed, or bound
/// twice. std::nullopt when it can.
std::optional<std::string> bufferReshapeRefusal(const nki::Kernel &k, int t);
/// The lines of statement `s` re-indented from its own indentation to `indent`,
/// after replacing [begin, end) (offsets in the file) by `with` (pass begin == end for none).
std::string movedLines(llvm::StringRef text, const nki::Statement &s, const std::string &indent,
                       std::vector<std::tuple<uint32_t, uint32_t, std::string>> inner);

// --- the ops (one file each) ----------------------------------------------------
const Op &setLoopKindOp();
const Op &splitOp();
const Op &hoistOp();
const Op &interchangeOp();
const Op &fuseOp();
const Op &fissionOp();
const Op &sinkOp();
const Op &unrollOp();
const Op &shrinkBufferOp();
const Op &expandBufferOp();
const Op &replaceOp();

} // namespace accelopt::rewrite
