// Queries over one kernel's IR that need nothing but the kernel: its loop and
// statement structure, names for messages, tensor storage and scope, and the
// syntax behind a loop. Rewrite ops, the verifier and the dependence analysis
// read them.
#pragma once

#include "NKI/KernelIR.h"

#include "llvm/ADT/StringRef.h"

#include <string>
#include <utility>
#include <vector>

namespace accelopt::nki {

/// Statements inside `loop` (any depth), in source order.
std::vector<int> stmtsIn(const Kernel &k, int loop);
/// Loops inside `loop` (any depth, not including it).
std::vector<int> loopsIn(const Kernel &k, int loop);
/// Does `second` directly follow `first` in the same block?
bool directlyFollows(const Kernel &k, NodeRef first, NodeRef second);
/// Every two neighbouring nodes of a block: the kernel body's, then each loop body's.
std::vector<std::pair<NodeRef, NodeRef>> adjacentNodes(const Kernel &k);

/// "L2 (h, trip 2)".
std::string loopLabel(const Kernel &k, int loop);
/// The tensor's Python name, "<tile>" when anonymous, "<tensor>" for a bad id.
std::string tensorName(const Kernel &k, int tensor);
/// "path:line:col".
std::string where(const Kernel &k, uint32_t offset);

/// The tensor storage an access really touches (reshape views alias their source).
int storageOf(const Kernel &k, int tensor);
/// Is the tensor's storage created inside `loop` (private to each of its iterations)?
bool privateTo(const Kernel &k, int tensor, int loop);
/// Is `a` (of statement `s`) the destination of a `+=`-style accumulation, or the
/// read of that destination by the same statement?
bool isAccumulation(const Statement &s, const Access &a);
/// Names a statement binds as new values (not the target of a tensor `+=`,
/// whose dependences are the accesses').
const std::vector<std::string> &boundNames(const Statement &s);

/// The `nl.xxx_range(...)` call of a loop, and its single positional argument
/// when the loop is `range(N)` shaped.
const syntax::Expr *iterCall(const Loop &l);
const syntax::Expr *singleStopArg(const Loop &l);
/// Name expressions spelled `name` in the body of a loop (not its header), in body order.
std::vector<const syntax::Expr *> namesInBody(const Loop &loop, llvm::StringRef name);
/// A string literal spanning several lines in the body of the loop.
bool bodyHasMultilineString(const Loop &loop, llvm::StringRef text);
/// The indentation one level deeper than `loop`'s header, from its body; empty
/// when the body is on the header line.
std::string bodyIndentUnit(const Kernel &k, const Loop &loop);

} // namespace accelopt::nki
