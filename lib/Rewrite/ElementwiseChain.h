// What substitute and set_engine share (internal to lib/Rewrite): the arguments of an NKI call by
// parameter name, the function a statement computes as the op table declares it, the file's own
// spelling of the NKI modules, and the legality of folding a chain of single-use elementwise
// statements into its last one.
#pragma once

#include "NKI/Dialect.h"
#include "Rewrite/OpSupport.h"

#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace accelopt::rewrite {

/// The NKI call of an Op statement with its arguments looked up by parameter name (keyword or
/// positional, as the op table orders the parameters, or, for a destination-passing call of the
/// current dialect, as that dialect's signature orders them).
struct CallView {
  const nki::Statement *stmt = nullptr;
  const syntax::Expr *call = nullptr;
  const nki::OpInfo *op = nullptr;
  /// The current dialect's signature of a destination-passing call `nisa.op(dst=t[...], ...)` (or
  /// `nisa.op(t[...], ...)`); null for `t = op(...)`, whose arguments follow the op table's order.
  const nki::DialectApi *api = nullptr;

  /// The call of `s` when it is an op statement `x = call(...)` / `t[...] = call(...)` (not an
  /// allocation) or a destination-passing call statement `nisa.op(dst=t[...], ...)`.
  static std::optional<CallView> of(const nki::Statement &s);
  /// The destination argument of a destination-passing call; null for `t = op(...)`.
  const syntax::Expr *dst() const;
  const syntax::Expr *arg(std::string_view param) const;
  const syntax::Expr *slot(nki::Slot slot) const;
  /// The argument is absent or the literal None.
  bool absent(std::string_view param) const;
  /// Every argument name that is given and not None, keyword or positional (never `dst`).
  std::vector<std::string> givenParams() const;
};

/// A compile-time number: a literal, a signed literal, or a literal wrapped in a dtype constructor
/// (np.float32(1), np.dtype(np.float32).type(1)).
std::optional<double> constantNumber(const syntax::Expr *e);
/// The shortest Python spelling of `v` that reads back as the same float.
std::string numberText(double v);

/// How the kernel's file spells the NKI modules ("nl" -> "nl", "nisa" -> "nisa" or "isa"), read
/// from the calls the front end resolved, so emitted code matches the file's imports.
class ModuleSpelling {
public:
  explicit ModuleSpelling(const nki::Kernel &k);
  /// The canonical name ("nl.exp") of a dotted function value as the file spells it ("lang.exp").
  std::string canonical(const syntax::Expr *dotted) const;
  /// The file's spelling of a canonical name ("nisa.activation" -> "nisa.activation"; the longest
  /// module prefix the file spells decides: "nisa.engine.gpsimd" -> "isa.engine.gpsimd").
  std::string spell(std::string_view canonicalName) const;

private:
  std::map<std::string, std::string> LocalToCanonical, CanonicalToLocal;
};

/// The unary function a statement computes, read from the op table: a row that fixes its
/// activation function (nl.exp, nisa.reciprocal) or nisa.activation with `op=` naming such a row.
struct UnaryFunction {
  nki::ActFunc func;
  const syntax::Expr *data = nullptr;
  std::optional<double> scale;             // the input scale when constant (1 when not given)
  const syntax::Expr *scaleExpr = nullptr; // non-constant scale
  const syntax::Expr *bias = nullptr;      // null when absent or None
};
std::optional<UnaryFunction> unaryFunction(const nki::Kernel &k, const CallView &call, const ModuleSpelling &names);
/// The canonical name of the nl.* row fixing `f` ("nl.sigmoid"), used as nisa.activation's op=.
std::optional<std::string_view> functionRowName(nki::ActFunc f);

/// The binary ALU operator a function value names (op0=nl.add), read from the op table.
std::optional<nki::AluOp> aluOf(const syntax::Expr *fn, const ModuleSpelling &names);

/// The statement writing the tile that statement `consumer` reads through `operand`, when that tile
/// is an intermediate value: written once, by an op statement of the same block before `consumer`,
/// at the subscript `consumer` reads, read only there, not stored, returned or viewed. Otherwise
/// sets `why` (naming the tensor and the reason) and returns -1.
int singleUseProducer(const nki::Kernel &k, const nki::Statement &consumer, const syntax::Expr *operand,
                      std::string &why);

/// The read access of statement `s` at argument `operand`, or null.
const nki::Access *readAt(const nki::Statement &s, const syntax::Expr *operand);
/// The read `read` (at argument `operand`) sees exactly the elements `write` wrote: the same subscript
/// text, the same resolved index set, or both whole tensors.
bool readsWrittenTile(const nki::Kernel &k, const nki::Access &write, const nki::Access &read,
                      const syntax::Expr *operand);

/// True when the tensor read at `operand` of `s` is written only by a constant fill of zero.
bool readsZeroFill(const nki::Kernel &k, const nki::Statement &s, const syntax::Expr *operand,
                   const ModuleSpelling &names);

/// Why the chain's first statements cannot be evaluated at the position of its last one: a
/// statement between them writes a tensor they read or rebinds a name they use. `chain` is in
/// source order, the last statement is the one kept.
std::optional<std::string> chainMoveRefusal(const nki::Kernel &k, const std::vector<int> &chain);

/// Removes statement `s` (its whole lines) and the allocations of `intermediates` that nothing else
/// uses; refusal text when `s` shares its lines.
std::optional<std::string> removeChainStatement(EditList &edits, const nki::Kernel &k, int s);
void removeDeadAllocation(EditList &edits, const nki::Kernel &k, int tensor, const std::vector<int> &removedStmts);

/// The source text of an expression.
std::string exprText(const nki::Kernel &k, const syntax::Expr *e);

/// Arguments of an emitted call, (parameter name, source text), in any order.
using CallArgs = std::vector<std::pair<std::string, std::string>>;

/// The call of op-table row `row` with `args` that replaces the call of `replaced`, in the kernel's
/// dialect: `row(k=v, ...)` in the op table's parameter order where `replaced` returns its result
/// (`t = op(...)`), `row(dst=<replaced's dst>, k=v, ...)` in the current dialect's order where it
/// passes its destination (dtype= and mask=, which that dialect removed, are dropped: dst's dtype
/// decides). The refusal text when the dialect has no such spelling.
llvm::Expected<std::string> emitCall(const nki::Kernel &k, const ModuleSpelling &names, std::string_view row,
                                     const CallArgs &args, const CallView &replaced);
/// Whether emitCall can spell a call of `row` in place of `replaced`'s (same conditions, no text).
bool canEmitCall(const nki::Kernel &k, std::string_view row, const CallView &replaced);

/// The file's spelling of engine `e`'s constant in the kernel's dialect: `nisa.scalar_engine` in
/// NKI 0.1, `nisa.engine.scalar` in the current dialect.
std::string engineConstant(const nki::Kernel &k, const ModuleSpelling &names, nki::Engine e);

} // namespace accelopt::rewrite
