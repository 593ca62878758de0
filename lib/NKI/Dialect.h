// The two NKI dialects and, declared once, how their APIs differ: the older `neuronxcc.nki`
// (NKI 0.1, AccelOpt/NKIBench) and the standalone `nki` package (NKI 0.2+, destination-passing ISA
// calls). The front end, the interpreter and the verifier all bind calls through this table, so a
// call means the same thing in every layer (docs/NKI.md §2).
#pragma once

#include "NKI/KernelIR.h"
#include "NKI/OpTable.h"

#include <span>
#include <string_view>
#include <vector>

namespace accelopt::syntax {
class Module;
struct Stmt;
} // namespace accelopt::syntax

namespace accelopt::nki {

std::string_view dialectName(Dialect d); // "neuronxcc.nki 0.1", "nki 0.3"

/// How the compiler runs a loop written as `spelled` in dialect `d` (never PyRange; docs/NKI.md §1.6, §2).
/// 0.1's compiler turns a Python `range` into a sequential_range (the sequential_range API page); the `nki`
/// compiler (0.2+) runs the kernel as Python and unrolls a `for` over `range` while specializing it (the
/// NKI Loops deep dive), which is what static_range does. The nl iterators keep their kind in both.
LoopKind resolvedLoopKind(Dialect d, LoopKind spelled);

/// The package each dialect imports: `neuronxcc.nki.language` becomes `nki.language`.
constexpr std::string_view kLegacyPackage = "neuronxcc.nki", kCurrentPackage = "nki";

/// The kernel's dialect from the file's imports and its own uses of them: the package (`nki` or
/// `neuronxcc.nki`) whose imported names the file's code names most; with no uses either way, any
/// `import nki` / `from nki...` is the current dialect, everything else the 0.1 dialect AccelOpt reads.
/// A current-dialect file may import a utility from neuronxcc.nki (`from neuronxcc.nki.language import
/// par_dim`): it binds like the current package's name, and only a 0.1-only API it names inside the kernel
/// is an error (`dialect-removed`, at the use).
Dialect dialectOfImports(const syntax::Module &m);

/// One parameter of an API in one dialect. A name the op-table row also has binds that row
/// parameter; `dst` is the destination; other names are the dialect's own (accumulate, pattern).
struct DialectParam {
  std::string_view name;
  bool required = false;
};

/// An API whose spelling differs in the current dialect: its parameters in positional order there.
struct DialectApi {
  std::string_view name;                // canonical ("nisa.tensor_tensor")
  std::span<const DialectParam> params; // the `nki` dialect's positional order
  /// The op-table row this call computes (null: the API has no row, e.g. nisa.dma_compute).
  const OpInfo *op() const { return lookupOp(name); }
  int paramIndex(std::string_view n) const;
};

/// The current-dialect signature of `canonicalName`, or null when the call is spelled as in 0.1.
const DialectApi *currentDialectApi(std::string_view canonicalName);

/// An API or keyword the current dialect removed, with what replaces it.
struct RemovedApi {
  std::string_view name; // "nl.arange", "mask" (a keyword of any call), "dst_rmw_op"
  bool isKeyword;
  std::string_view replacement; // one line, for the diagnostic
};
const RemovedApi *removedInCurrentDialect(std::string_view canonicalNameOrKeyword, bool isKeyword);

/// A documented nki API accelopt does not model (nl.alloc_tiles, nl.alloc_blocks: storage as a grid of tiles),
/// with the one-line reason every layer refuses it with, by name; nullptr for any other name.
const char *unmodelledApiReason(std::string_view canonicalName);

/// A call bound against the current-dialect signature. `argOf[i]` is the argument of op-table
/// parameter i (pycore::Binding's numbering: positional first, then keywords; -1 if unbound);
/// dialect-only parameters (dst, accumulate, ...) are found with `arg(name)`.
struct DialectBinding {
  const DialectApi *api = nullptr;
  std::vector<int> argOf;        // per op-table parameter
  std::vector<int> dialectArgOf; // per DialectApi parameter
  std::vector<size_t> extraPositional;
  std::vector<size_t> unknownKeywords;
  std::vector<std::string_view> missing;  // required dialect parameters left unbound
  std::vector<std::string_view> repeated; // parameters given both by position and by keyword
  int arg(std::string_view dialectParam) const;
};

/// Binds a call of `api` (positional count, keyword names in call order).
DialectBinding bindCurrentDialectCall(const DialectApi &api, size_t positional,
                                      std::span<const std::string_view> keywords);

/// nc_matmul's accumulate= of the current dialect: how a write combines with what dst holds.
enum class AccumulateMode : uint8_t {
  Overwrite, // accumulate=False
  Add,       // accumulate=True
  Auto,      // accumulate=None (the default): the first write of a location overwrites, later ones add
};

} // namespace accelopt::nki
