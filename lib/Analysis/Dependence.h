// Dependence tests over the affine accesses of the kernel IR.
#pragma once

#include "NKI/KernelIR.h"

#include <optional>

namespace accelopt::analysis {

/// How the loops enclosing two statement instances relate.
struct InstancePair {
  std::vector<int> sameIteration;  // loops whose counters are equal in both instances
  int carrier = -1;                // loop whose counters differ (-1: none)
  int carrierSign = 0;             // +1: first instance earlier, -1: later, 0: either
};

/// Trip count of a loop if known.
std::optional<int64_t> tripCount(const nki::Kernel &k, int loop);

/// Can accesses `a` (of statement sa) and `b` (of statement sb) touch a common
/// element in two instances related by `pair`? Conservative: true unless an
/// index dimension proves them apart (GCD and bounds tests per dimension).
bool mayOverlap(const nki::Kernel &k, const nki::Access &a, int sa, const nki::Access &b, int sb,
                const InstancePair &pair);

/// Loops enclosing both statements (outermost first).
std::vector<int> commonLoops(const nki::Kernel &k, int sa, int sb);

/// The tensor storage an access really touches (reshape views alias their source).
int storageOf(const nki::Kernel &k, int tensor);

} // namespace accelopt::analysis
