#include "KernelInputs.h"
#include "Syntax/Errors.h"

#include "Interp/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace accelopt::cli {

llvm::Expected<SeededInputs> referenceInputsForSeed(llvm::StringRef referencePath, const nki::InputSpecs *specs,
                                                    double timeoutSeconds, const nki::Kernel &kernel, uint64_t seed) {
  SeededInputs out;
  llvm::SmallString<128> dir;
  if (auto ec = llvm::sys::fs::createUniqueDirectory("accelopt-ref", dir))
    return stringError("error: cannot create a temporary directory: " + ec.message());
  auto data = nki::runReference(referencePath.str(), seed, dir, timeoutSeconds);
  auto cleanup = [&] { llvm::sys::fs::remove_directories(dir); };
  if (!data) {
    cleanup();
    return data.takeError();
  }
  if (data->inputFiles.size() > kernel.params.size()) { // fewer: the kernel's defaults apply to the rest
    cleanup();
    return stringError(referencePath + ": error: the reference gives " + std::to_string(data->inputFiles.size()) +
                       " inputs but kernel '" + kernel.name + "' takes " + std::to_string(kernel.params.size()));
  }
  for (size_t i = 0; i < data->inputFiles.size(); ++i) {
    interp::KernelArg a;
    a.name = kernel.params[i].name;
    if (!data->literals[i].empty()) {
      a.literal = data->literals[i];
    } else if (data->scalars[i]) {
      a.scalar = *data->scalars[i];
      // The reference's Python ints are ints for the kernel too (its specs say which).
      if (specs)
        for (const nki::InputSpec &s : *specs)
          if (s.name == a.name) a.isInt = s.isInt;
    } else {
      auto arr = interp::readNpy(data->inputFiles[i]);
      if (!arr) {
        cleanup();
        return arr.takeError();
      }
      a.array = std::move(*arr);
    }
    out.args.push_back(std::move(a));
  }
  for (auto &f : data->outputFiles) {
    auto arr = interp::readNpy(f);
    if (!arr) {
      cleanup();
      return arr.takeError();
    }
    out.reference.push_back(std::move(*arr));
  }
  cleanup();
  return out;
}

llvm::Expected<SeededInputs> inputsForSeed(const InputOptions &opts, const nki::Kernel &kernel, uint64_t seed,
                                           bool useReference) {
  SeededInputs out;
  if (useReference && !opts.resolvedReference.empty())
    return referenceInputsForSeed(opts.resolvedReference, opts.resolvedInputs ? &*opts.resolvedInputs : nullptr,
                                  opts.referenceTimeoutSeconds, kernel, seed);
  if (!opts.resolvedInputs)
    return stringError("error: no input shapes: give --inputs, --reference or --case to run the kernel");
  auto args = interp::makeRandomInputs(*opts.resolvedInputs, seed);
  if (!args) return args.takeError();
  out.args = std::move(*args);
  return out;
}

/// True if a .npy array can stand for a parameter of `spec`: same shape, and the
/// same dtype, except that numpy has no bfloat16, tfloat32 or fp8, so float32
/// files feed those.
static bool npyFits(const interp::NDArray &array, const nki::InputSpec &spec) {
  if (array.shape() != spec.shape) return false;
  if (array.dtype() == spec.dtype) return true;
  bool numpyLacksSpecDtype = spec.dtype == nki::DType::BFloat16 || spec.dtype == nki::DType::TFloat32 ||
                             spec.dtype == nki::DType::Float8E4M3 || spec.dtype == nki::DType::Float8E5M2;
  return numpyLacksSpecDtype && array.dtype() == nki::DType::Float32;
}

/// The Python literal the input specs give for argument `name`, or "".
static std::string literalInput(const InputOptions &opts, const std::string &name) {
  if (opts.resolvedInputs)
    for (const nki::InputSpec &spec : *opts.resolvedInputs)
      if (spec.name == name) return spec.literal;
  return "";
}

llvm::Expected<SeededInputs> inputsFromDir(const InputOptions &opts, const nki::Kernel &kernel, llvm::StringRef dir) {
  SeededInputs out;
  for (const auto &p : kernel.params) {
    interp::KernelArg a;
    a.name = p.name;
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, p.name + ".npy");
    if (llvm::sys::fs::exists(path)) {
      auto arr = interp::readNpy(path);
      if (!arr) return arr.takeError();
      if (opts.resolvedInputs)
        for (const nki::InputSpec &spec : *opts.resolvedInputs)
          if (spec.name == p.name && !spec.isScalar && spec.literal.empty()) {
            if (!npyFits(*arr, spec))
              return stringError(path + ": error: the file holds " + std::string(nki::dtypeName(arr->dtype())) +
                                 interp::formatShape(arr->shape()) + " but the kernel's input shapes give " + p.name +
                                 "=" + std::string(nki::dtypeName(spec.dtype)) + interp::formatShape(spec.shape));
            // A float32 file feeding a dtype numpy lacks (bf16): the argument has the kernel's dtype.
            arr->convertTo(spec.dtype);
          }
      a.array = std::move(*arr);
    } else if (p.scalar) {
      a.scalar = *p.scalar;
    } else if (auto lit = literalInput(opts, p.name); !lit.empty()) {
      a.literal = lit; // a tuple, None, dtype or object argument has no file
    } else {
      return stringError(path + ": error: missing input file for kernel argument '" + p.name + "'");
    }
    out.args.push_back(std::move(a));
  }
  return out;
}

} // namespace accelopt::cli

#include <unistd.h>

namespace accelopt::cli {
void applyMemoryLimit(double gib) {
  double bytes =
      gib > 0 ? gib * double(1ull << 30) : 0.75 * double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  // A cap past what 64 bits count (--memory-limit 1e30) is no cap; converting it would wrap to 0.
  interp::setMemoryCap(bytes >= 0x1p64 ? UINT64_MAX : uint64_t(bytes));
}
} // namespace accelopt::cli
