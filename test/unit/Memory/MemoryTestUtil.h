// Shared helpers of the Memory unit tests: a scratch directory per test and
// kernels parsed from nkibench/kernels.
#pragma once

#include "Memory/Store.h"
#include "NKI/FrontEnd.h"
#include "Syntax/SourceBuffer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>

namespace accelopt::memory::test {

/// A fresh directory removed at the end of the test.
class ScratchDir {
public:
  ScratchDir() {
    llvm::SmallString<128> p;
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("accelopt-memory-test", p));
    Path = std::string(p);
  }
  ~ScratchDir() { llvm::sys::fs::remove_directories(Path); }
  std::string file(llvm::StringRef name) const { return Path + "/" + name.str(); }
  const std::string &path() const { return Path; }

private:
  std::string Path;
};

inline std::string readSource(llvm::StringRef relative) {
  std::string path = std::string(ACCELOPT_SOURCE_DIR) + "/" + relative.str();
  auto buf = llvm::MemoryBuffer::getFile(path);
  EXPECT_TRUE(bool(buf)) << path;
  return buf ? (*buf)->getBuffer().str() : std::string();
}

inline nki::KernelFile parseKernel(std::string name, std::string text) {
  auto src = syntax::SourceBuffer::fromText(std::move(name), std::move(text));
  EXPECT_TRUE(bool(src));
  nki::FrontEndOptions opts;
  auto file = nki::buildKernelFile(std::move(*src), opts);
  if (!file) {
    ADD_FAILURE() << llvm::toString(file.takeError());
    std::abort();
  }
  EXPECT_FALSE(file->kernels.empty());
  return std::move(*file);
}

/// silu_M256_N2048.py with every tensor, loop variable and the kernel renamed
/// (the same structure under different names).
inline std::string renamedSilu() {
  std::string text = readSource("nkibench/kernels/silu_M256_N2048.py");
  const std::pair<const char *, const char *> renames[] = {{"\\binv_denom\\b", "recip"},
                                                           {"\\bdenom\\b", "one_plus"},
                                                           {"\\bexp_neg\\b", "e_tile"},
                                                           {"\\bx_chunks\\b", "xin"},
                                                           {"\\by_chunks\\b", "yout"},
                                                           {"\\bzero_bias\\b", "zb"},
                                                           {"\\bkernel\\b", "silu_kernel"},
                                                           {"\\br\\b", "row"},
                                                           {"\\bc\\b", "col"},
                                                           {"\\bh\\b", "half"},
                                                           {"\\bx\\b", "inp"},
                                                           {"\\bout\\b", "res"}};
  for (auto &[from, to] : renames) text = std::regex_replace(text, std::regex(from), to);
  return text;
}

inline std::string errorText(llvm::Error err) { return llvm::toString(std::move(err)); }

} // namespace accelopt::memory::test
