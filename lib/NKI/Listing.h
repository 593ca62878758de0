// The `show` listing: every loop and statement with its stable id, and the
// tensor table. Shared by the CLI, the prompts and the language server.
#pragma once

#include "NKI/KernelIR.h"

#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

namespace accelopt::nki {

/// Source text of a statement or loop header on one line (whitespace folded).
std::string oneLine(llvm::StringRef text);

void printListing(llvm::raw_ostream &os, const Kernel &k);
void printTensorTable(llvm::raw_ostream &os, const Kernel &k);
nlohmann::json kernelToJson(const Kernel &k);

/// "L3" / "S12".
std::string nodeId(NodeRef n);

} // namespace accelopt::nki
