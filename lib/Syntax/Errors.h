//===- Errors.h - An llvm::Error from a message ----------------------------===//
#pragma once

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace accelopt {

/// An llvm::Error that carries only a message: LLVM 14's createStringError also wants an error code.
inline llvm::Error stringError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace accelopt
