// Data files compiled into the library (generated EmbeddedData.cpp, see
// lib/Perf/CMakeLists.txt). Internal to the Perf layer.
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace accelopt::perf::embedded {

struct DataFile {
  const char *name; ///< file name without extension ("trn1")
  const char *text;
};

/// lib/Perf/targets/*.json
llvm::ArrayRef<DataFile> targetFiles();
/// nkibench/roofline.json
llvm::StringRef rooflineFile();

} // namespace accelopt::perf::embedded
