// Structural signature of a kernel: a canonical, name- and size-independent
// string of the loop nest shape with the op kind and buffers of every NKI
// statement, e.g.
//   nisa.memset(>sbuf) affine{ affine{ nl.load(hbm>sbuf) affine{ ... } nl.store(sbuf>hbm) } }
// Two kernels that differ only in names, comments, sizes or trip counts share
// a signature; signatureSimilarity() grades the rest.
#pragma once

#include "NKI/KernelIR.h"

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace accelopt::memory {

/// "affine", "sequential", "static" or "range".
std::string loopKindToken(nki::LoopKind kind);
/// "hbm", "sbuf", "psum" or "?" (shared and private HBM are one class).
std::string bufferClass(nki::Buffer buffer);
/// The op kind of a statement: its callee ("nl.load"), else its kind ("alloc", "accumulate", ...).
std::string stmtOpKind(const nki::Statement &stmt);
/// Buffers a statement reads / writes, sorted, '+'-joined ("hbm", "psum+sbuf", "").
std::string stmtReadBuffers(const nki::Kernel &k, const nki::Statement &stmt);
std::string stmtWriteBuffers(const nki::Kernel &k, const nki::Statement &stmt);
/// True for statements that take part in signatures and patterns (NKI calls,
/// allocations, accumulations, stores; not trace-time Python).
bool isStructural(const nki::Statement &stmt);
/// One statement's signature token: "nl.load(hbm>sbuf)".
std::string stmtToken(const nki::Kernel &k, const nki::Statement &stmt);

/// The canonical signature text of a kernel.
std::string computeSignature(const nki::Kernel &k);

/// Splits a signature into tokens ("affine{", "}" and statement tokens).
std::vector<std::string> signatureTokens(llvm::StringRef signature);

/// 1 - (token edit distance / longer token count), in [0, 1]; 1 iff equal.
double signatureSimilarity(llvm::StringRef a, llvm::StringRef b);

} // namespace accelopt::memory
