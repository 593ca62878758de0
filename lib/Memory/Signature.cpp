#include "Memory/Signature.h"

#include <algorithm>
#include <set>

namespace accelopt::memory {

using namespace nki;

std::string loopKindToken(LoopKind kind) {
  switch (kind) {
  case LoopKind::Affine: return "affine";
  case LoopKind::Sequential: return "sequential";
  case LoopKind::Static: return "static";
  case LoopKind::PyRange: return "range";
  }
  return "?";
}

std::string bufferClass(Buffer buffer) {
  switch (buffer) {
  case Buffer::SharedHBM:
  case Buffer::PrivateHBM: return "hbm";
  case Buffer::SBUF: return "sbuf";
  case Buffer::PSUM: return "psum";
  case Buffer::Unknown: return "?";
  }
  return "?";
}

std::string stmtOpKind(const nki::Statement &stmt) {
  if (!stmt.callee.empty()) return stmt.callee;
  return std::string(stmtKindName(stmt.kind));
}

static Buffer tensorBuffer(const Kernel &k, int t) {
  for (int guard = 0; t >= 0 && t < int(k.tensors.size()) && guard < 16; ++guard) {
    const Tensor &tensor = k.tensors[size_t(t)];
    if (tensor.aliasOf < 0 || tensor.buffer != Buffer::Unknown) return tensor.buffer;
    t = tensor.aliasOf;
  }
  return Buffer::Unknown;
}

static std::string joinBuffers(const Kernel &k, const std::vector<Access> &accesses, int extra) {
  std::set<std::string> names;
  for (const Access &a : accesses)
    if (a.tensor >= 0) names.insert(bufferClass(tensorBuffer(k, a.tensor)));
  if (accesses.empty() && extra >= 0) names.insert(bufferClass(tensorBuffer(k, extra)));
  std::string out;
  for (const std::string &n : names) out += (out.empty() ? "" : "+") + n;
  return out;
}

std::string stmtReadBuffers(const Kernel &k, const nki::Statement &stmt) { return joinBuffers(k, stmt.reads, -1); }

std::string stmtWriteBuffers(const Kernel &k, const nki::Statement &stmt) {
  return joinBuffers(k, stmt.writes, stmt.definesTensor);
}

bool isStructural(const nki::Statement &stmt) {
  switch (stmt.kind) {
  case StmtKind::Alloc:
  case StmtKind::Op:
  case StmtKind::Accumulate:
  case StmtKind::Store: return true;
  default: return !stmt.callee.empty();
  }
}

std::string stmtToken(const Kernel &k, const nki::Statement &stmt) {
  return stmtOpKind(stmt) + "(" + stmtReadBuffers(k, stmt) + ">" + stmtWriteBuffers(k, stmt) + ")";
}

static void appendBody(const Kernel &k, const std::vector<NodeRef> &body, std::string &out) {
  for (const NodeRef &n : body) {
    if (n.isLoop) {
      const Loop *l = k.loopById(n.index);
      if (!l) continue;
      out += (out.empty() ? "" : " ") + loopKindToken(l->kind) + "{";
      appendBody(k, l->body, out);
      out += " }";
    } else if (n.index >= 0 && n.index < int(k.stmts.size())) {
      const nki::Statement &s = k.stmts[size_t(n.index)];
      if (!isStructural(s)) continue;
      out += (out.empty() ? "" : " ") + stmtToken(k, s);
    }
  }
}

std::string computeSignature(const Kernel &k) {
  std::string out;
  appendBody(k, k.body, out);
  return out;
}

std::vector<std::string> signatureTokens(llvm::StringRef signature) {
  std::vector<std::string> tokens;
  llvm::SmallVector<llvm::StringRef, 32> parts;
  signature.split(parts, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef p : parts) tokens.push_back(p.str());
  return tokens;
}

double signatureSimilarity(llvm::StringRef a, llvm::StringRef b) {
  if (a == b) return 1.0;
  auto ta = signatureTokens(a), tb = signatureTokens(b);
  size_t n = ta.size(), m = tb.size();
  if (n == 0 || m == 0) return 0.0;
  std::vector<size_t> prev(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j) prev[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= m; ++j) {
      size_t sub = prev[j - 1] + (ta[i - 1] == tb[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  double d = double(prev[m]);
  return 1.0 - d / double(std::max(n, m));
}

} // namespace accelopt::memory
