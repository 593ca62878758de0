// The verifier's limits on a target. Like the timing model's parameters they are facts of the target
// description (lib/Perf/targets/*.json: memory.*, matmul.stationary_free_max, moving_free_max, double_row).
#pragma once

#include "Analysis/Verifier.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace accelopt::perf {

/// The limits of a built-in target by name, or of a target JSON file by path (as loadTarget).
llvm::Expected<analysis::VerifyOptions> verifyOptions(llvm::StringRef nameOrPath);

} // namespace accelopt::perf
