// Small kernels for the Profile unit tests, built from text with input shapes.
#pragma once

#include "NKI/FrontEnd.h"
#include "Syntax/SourceBuffer.h"

#include <gtest/gtest.h>

#include <string>

namespace accelopt::profile::testing {

/// `out = a OP b` over one [128, 512] tile: OP is an nl function name.
inline std::string elementwiseKernel(const std::string &op) {
  return "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n\n@nki.jit\ndef kernel(a, b):\n"
         "  out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)\n"
         "  x = nl.load(a)\n  y = nl.load(b)\n  nl.store(out, value=nl." +
         op + "(x, y))\n  return out\n";
}

inline nki::InputSpecs abSpecs() {
  auto specs = nki::parseInputSpecs("a=f32[128,512],b=f32[128,512]");
  if (!specs) {
    ADD_FAILURE() << llvm::toString(specs.takeError());
    return {};
  }
  return std::move(*specs);
}

/// The kernel file of `text` with `specs`; a failure is a test failure.
inline nki::KernelFile mustBuild(const std::string &text, const nki::InputSpecs &specs) {
  auto source = syntax::SourceBuffer::fromText("k.py", text);
  if (!source) {
    ADD_FAILURE() << llvm::toString(source.takeError());
    return {};
  }
  nki::FrontEndOptions opts;
  opts.inputs = &specs;
  auto file = nki::buildKernelFile(std::move(*source), opts);
  if (!file) {
    ADD_FAILURE() << llvm::toString(file.takeError());
    return {};
  }
  return std::move(*file);
}

} // namespace accelopt::profile::testing
