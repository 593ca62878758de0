// Small builders for synthetic instruction streams in the Perf unit tests.
#pragma once

#include "Perf/Hardware.h"
#include "Perf/Trace.h"

#include <gtest/gtest.h>

namespace accelopt::perf::testing {

inline HardwareDesc target(llvm::StringRef name) {
  auto hw = loadTarget(name);
  if (!hw) {
    ADD_FAILURE() << llvm::toString(hw.takeError());
    return {};
  }
  return std::move(*hw);
}

inline Instruction compute(OpKind op, nki::Engine engine, uint32_t freeElems, uint16_t partitions = 128) {
  Instruction inst;
  inst.op = op;
  inst.engine = engine;
  inst.freeElems = freeElems;
  inst.partitions = partitions;
  return inst;
}

/// nc_matmul: stationary [K, M], moving [K, N].
inline Instruction matmul(uint16_t k, uint32_t m, uint32_t n, nki::DType dtype = nki::DType::Float32) {
  Instruction inst = compute(OpKind::NcMatmul, nki::Engine::Tensor, n, k);
  inst.stationaryFreeElems = m;
  inst.inputDType = inst.stationaryDType = dtype;
  return inst;
}

inline Instruction dma(OpKind op, uint16_t partitions, uint32_t bytesPerPartition) {
  Instruction inst;
  inst.op = op;
  inst.engine = nki::Engine::DMA;
  inst.partitions = partitions;
  inst.bytesPerPartition = bytesPerPartition;
  inst.bytes = uint64_t(partitions) * bytesPerPartition;
  return inst;
}

inline TensorId sbuf(Trace &trace, uint32_t blocks, uint64_t bytesPerPartition, std::string name = "t") {
  return trace.addTensor({nki::Buffer::SBUF, blocks, 128, bytesPerPartition, std::move(name)});
}
inline TensorId psum(Trace &trace, uint32_t blocks, uint64_t bytesPerPartition) {
  return trace.addTensor({nki::Buffer::PSUM, blocks, 128, bytesPerPartition, "acc"});
}
inline TensorId hbm(Trace &trace, uint64_t bytes, std::string name = "hbm") {
  return trace.addTensor({nki::Buffer::SharedHBM, 1, 1, bytes, std::move(name)});
}

/// The whole of one block of `tensor`.
inline Region whole(const Trace &trace, TensorId tensor, uint32_t block = 0) {
  return {tensor, block, 0, trace.tensors()[tensor].bytesPerPartition};
}

} // namespace accelopt::perf::testing
