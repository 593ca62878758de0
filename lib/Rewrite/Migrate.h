// Migration of a `neuronxcc.nki` (NKI 0.1) kernel file to the current `nki` dialect (NKI 0.3) as
// minimal source edits, driven by the dialect table (NKI/Dialect.h): imports renamed, ISA calls
// made destination-passing, keywords the current signature lacks dropped, nl.arange indices turned
// into slices (or access patterns, `.ap()`, when scaled or combined), block dimensions folded behind the partition
// dimension (SBUF) or allocated per iteration (PSUM), `+=` into PSUM spelled accumulate=None. docs/migrate.md describes
// each edit.
#pragma once

#include "Syntax/PyAST.h"

#include "clang/Tooling/Core/Replacement.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace accelopt::rewrite {

/// Something the migration cannot do mechanically, at a byte offset of the original text.
struct MigrationProblem {
  uint32_t offset = 0;
  std::string message;
};

struct Migration {
  clang::tooling::Replacements edits;
  std::vector<MigrationProblem> problems; // non-empty: the file must be left untouched
};

/// A tile as the trace made it: its shape, dtype and buffer (`nl.ndarray((128, 1), dtype=nl.float32,
/// buffer=nl.sbuf)` when the migration allocates it). The migration writes each dimension as the
/// extent the call's operands spell for it (`(P, N)`), else as the traced number.
struct TracedTile {
  std::vector<int64_t> shape;
  std::string dtype;  ///< "float32"
  std::string buffer; ///< "sbuf", "psum"
  bool operator==(const TracedTile &) const = default;
};

/// The tile a statement `t = nisa.op(...)` creates, when the traced kernel knows its shape; the current
/// dialect needs it allocated as the call's destination.
using TileAllocation = std::function<std::optional<TracedTile>(const syntax::Stmt &)>;

/// The tile an ISA call returns, by the call, when the traced kernel knows it: a call nested in an
/// expression (`y = x * nisa.nc_transpose(t)`) is hoisted in front of its statement, writing that tile;
/// for a call that writes a subscript, the tile of the region it writes (the destination's dtype).
using CallAllocation = std::function<std::optional<TracedTile>(const syntax::Expr &call)>;

/// The traced shape of the tile an operand moves, by the offset of the operand (a subscript `x[...]` or a
/// whole-tile name) in the original: its dimensions in order, -1 where traces differ.
using OperandTileShape = std::function<std::optional<std::vector<int64_t>>(uint32_t at)>;

/// The traced shape of the tensor a kernel names `name` (0.1 order, block dimensions included) where
/// the use at byte offset `at` reads or writes it (or, failing that, wherever the function holding `at`
/// defines the name, when the same), when known, -1 for a dimension whose extent differs between traces; an index that
/// needs an access pattern (`.ap()`) gets its steps from it.
using TensorShape = std::function<std::optional<std::vector<int64_t>>(llvm::StringRef name, uint32_t at)>;

/// The edits that turn `module` (a 0.1 kernel file) into the current dialect. A file already in the
/// current dialect gets no edits.
Migration migrateToCurrentDialect(const syntax::Module &module, const TileAllocation &allocation = {},
                                  const TensorShape &shapeOf = {}, const CallAllocation &callAllocation = {},
                                  const OperandTileShape &operandTile = {});

} // namespace accelopt::rewrite
