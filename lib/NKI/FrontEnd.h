// From a parsed Python file to the kernel IR of each @nki.jit function.
#pragma once

#include "NKI/Imports.h"
#include "NKI/KernelIR.h"
#include "NKI/Types.h"
#include "Syntax/PyAST.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace accelopt::nki {

/// One kernel argument: an array `name=f32[128,512]`, a Python scalar `eps=1e-5`, or another trace-time
/// Python value written as a literal (`hw=(4,128)`, `bias=None`, `dt=nl.bfloat16`, `act='gelu'`,
/// `cfg=Config(tile=128)` of a class of the kernel's file).
struct InputSpec {
  std::string name;
  bool isScalar = false;
  double scalar = 0;
  bool isInt = false;  // a scalar written without fraction or exponent: a Python int (n_tiles=2)
  std::string literal; // non-empty: the argument is this Python expression, evaluated in the kernel's module
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  std::string init; // how random inputs are drawn ("normal(0,1)", ...), from a suite manifest
};
/// The kernel's arguments and the launch grid it runs in (`--grid 2,3`, a reference's `grid`): empty
/// `grid` = not given (the file's own `kernel[2, 3](...)` launch, else one instance).
struct InputSpecs : std::vector<InputSpec> {
  using std::vector<InputSpec>::vector;
  std::vector<int64_t> grid;
};

/// Parses "a=f32[32,128],b=bf16[40,128],eps=0.001".
llvm::Expected<InputSpecs> parseInputSpecs(llvm::StringRef text);
std::string formatInputSpecs(const InputSpecs &specs);

/// A parsed file and the IR of the kernels in it.
struct KernelFile {
  std::unique_ptr<syntax::Module> module;
  std::vector<Kernel> kernels;
  /// The Python files next to it that it imports (the kernels' helpers may live there).
  std::shared_ptr<const ModuleImports> imports;

  const syntax::SourceBuffer &source() const { return module->source(); }
};

struct FrontEndOptions {
  const InputSpecs *inputs = nullptr; // shapes of the arguments, when known
  std::string kernelName;             // select one kernel ("" = all)
  std::vector<int64_t> grid;          // the launch grid; empty: the inputs' grid, else the file's launch
  /// A file with no decorated or wrapped kernel that imports NKI: its module-level functions no other
  /// function of the file calls are its kernels (plain functions a harness wraps elsewhere; `migrate`).
  bool entryFunctionsAsKernels = false;
};

/// Builds the IR. Fails (with "file:line:col: error: ..." text) on syntax errors,
/// on a file without any @nki.jit function, and on an unknown --kernel name.
/// Problems inside a kernel are diagnostics on the Kernel, not failures.
llvm::Expected<KernelFile> buildKernelFile(std::unique_ptr<syntax::SourceBuffer> source,
                                           const FrontEndOptions &options);

/// As above for an already parsed module (e.g. Module::reparse of an edited file).
llvm::Expected<KernelFile> buildKernelFile(std::unique_ptr<syntax::Module> module, const FrontEndOptions &options);

/// With input shapes given for a file's entry kernel, a kernel another kernel of the file calls (a @nki.jit
/// helper the entry calls with its tiles) is traced in place at each call and has no inputs of its own:
/// drops such kernels from `file` (all stay when every kernel is called by another).
void keepEntryKernels(KernelFile &file);

/// Convenience: read the file, then buildKernelFile.
llvm::Expected<KernelFile> loadKernelFile(llvm::StringRef path, const FrontEndOptions &options);

} // namespace accelopt::nki
