// The dependence analysis over the affine accesses of the kernel IR: the one
// test the verifier's affine-output-dep rule and every rewrite op ask.
//
// Two accesses may touch a common element for instances whose loop counters
// are related per loop by a direction (d = n_a - n_b: =, >0, <0, or
// independent). Each index dimension is checked with a GCD test and interval
// bounds over the loop trip counts and nl.arange extents; any dimension that
// proves the accesses apart separates them. Non-affine or unresolved indices,
// and whole-dimension (":") indices, never separate.
#pragma once

#include "NKI/KernelIR.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace accelopt::analysis {

/// Trip count of a loop if known.
std::optional<int64_t> tripCount(const nki::Kernel &k, int loop);

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
/// The loops around `loop` at equal iterations and `loop` at a later one for the
/// first access (Pos): the instance pairs a change to `loop` may reorder, and the
/// pairs of two different iterations of `loop` (for a pair of accesses tested in
/// both orders, or one access against itself).
std::vector<DirConstraint> laterIterationDirs(const nki::Kernel &k, int loop);

/// Two statement instances described by the loops they share: equal counters
/// on `sameIteration`, different ones on `carrier`.
struct InstancePair {
  std::vector<int> sameIteration; // loops whose counters are equal in both instances
  int carrier = -1;               // loop whose counters differ (-1: none)
  int carrierSign = 0;            // +1: first instance earlier, -1: later, 0: either
};
/// mayOverlapDir for the instances `pair` describes (a carrier of either sign
/// is tested as Pos and as Neg). `sa` and `sb` name the accesses' statements.
bool mayOverlap(const nki::Kernel &k, const nki::Access &a, int sa, const nki::Access &b, int sb,
                const InstancePair &pair);

/// A pair of accesses of two statements that may touch a common element.
struct Conflict {
  int stmtA = -1, stmtB = -1;
  const nki::Access *a = nullptr;
  const nki::Access *b = nullptr;
};
/// The first pair of an access of statement `s1` and one of `s2`, not both reads,
/// that may touch a common element under `dirs` (mayOverlapDir with `aliasB`).
/// Tensors private to an iteration of `privateA` (for s1) or `privateB` (for s2)
/// and two `+=` accumulations never conflict.
std::optional<Conflict> firstConflict(const nki::Kernel &k, int s1, int s2, int privateA, int privateB,
                                      const std::vector<DirConstraint> &dirs, std::pair<int, int> aliasB = {-1, -1});
/// The first write of a statement of `stmts` and access (writes, then reads) of a
/// statement of `stmts` that `overlap` accepts; tensors private to an iteration
/// of `loop` and two `+=` accumulations are skipped.
std::optional<Conflict> firstWriteConflict(const nki::Kernel &k, const std::vector<int> &stmts, int loop,
                                           llvm::function_ref<bool(const nki::Access &, const nki::Access &)> overlap);

/// A Python name the body of `loop` reads before (re)binding it: a value carried
/// from one iteration to the next ("acc = nl.add(acc, t)", "offset += 128").
/// Returns the reading statement and the name.
std::optional<std::pair<int, std::string>> carriedName(const nki::Kernel &k, int loop);

} // namespace accelopt::analysis
