#include "NKI/KernelQueries.h"

#include "Syntax/AstWalks.h"
#include "Syntax/SourceBuffer.h"
#include "Syntax/TextLayout.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace accelopt::nki {

static void collect(const Kernel &k, const std::vector<NodeRef> &nodes, std::vector<int> *stmts,
                    std::vector<int> *loops) {
  for (NodeRef n : nodes) {
    if (n.isLoop) {
      if (loops) loops->push_back(n.index);
      collect(k, k.loops[n.index].body, stmts, loops);
    } else if (stmts) {
      stmts->push_back(n.index);
    }
  }
}

std::vector<int> stmtsIn(const Kernel &k, int loop) {
  std::vector<int> out;
  collect(k, k.loops[loop].body, &out, nullptr);
  return out;
}

std::vector<int> loopsIn(const Kernel &k, int loop) {
  std::vector<int> out;
  collect(k, k.loops[loop].body, nullptr, &out);
  return out;
}

bool directlyFollows(const Kernel &k, NodeRef first, NodeRef second) {
  const auto &sib = k.siblingsOf(first);
  auto pos = std::find(sib.begin(), sib.end(), first);
  return pos != sib.end() && pos + 1 != sib.end() && *(pos + 1) == second;
}

std::vector<std::pair<NodeRef, NodeRef>> adjacentNodes(const Kernel &k) {
  std::vector<std::pair<NodeRef, NodeRef>> out;
  auto scan = [&](const std::vector<NodeRef> &nodes) {
    for (size_t i = 0; i + 1 < nodes.size(); ++i) out.push_back({nodes[i], nodes[i + 1]});
  };
  scan(k.body);
  for (const Loop &l : k.loops) scan(l.body);
  return out;
}

std::string loopLabel(const Kernel &k, int loop) {
  const Loop &l = k.loops[loop];
  return llvm::formatv("L{0} ({1}, trip {2})", loop, l.iv, l.tripCount.str()).str();
}

std::string tensorName(const Kernel &k, int tensor) {
  if (tensor < 0 || tensor >= int(k.tensors.size())) return "<tensor>";
  const Tensor &t = k.tensors[tensor];
  return t.name.empty() ? "<tile>" : t.name;
}

std::string where(const Kernel &k, uint32_t offset) { return k.source->location(offset); }

int storageOf(const Kernel &k, int tensor) {
  const Tensor &t = k.tensors[tensor];
  return t.aliasOf >= 0 ? t.aliasOf : tensor;
}

bool privateTo(const Kernel &k, int tensor, int loop) {
  int t = storageOf(k, tensor);
  int scope = k.tensors[t].scope;
  if (scope < 0 || k.tensors[t].isArgument) return false;
  return scope == loop || k.encloses(loop, NodeRef{true, scope});
}

bool isAccumulation(const Statement &s, const Access &a) {
  if (a.isAccumulate) return true;
  if (a.isWrite) return false;
  for (const Access &w : s.writes)
    if (w.isAccumulate && w.tensor == a.tensor && w.range.begin == a.range.begin && w.range.end == a.range.end)
      return true;
  return false;
}

const std::vector<std::string> &boundNames(const Statement &s) {
  static const std::vector<std::string> none;
  return s.kind == StmtKind::Accumulate ? none : s.defines;
}

const syntax::Expr *iterCall(const Loop &l) {
  if (!l.syntax || !l.syntax->value || l.syntax->value->kind != syntax::ExprKind::Call) return nullptr;
  return l.syntax->value;
}

const syntax::Expr *singleStopArg(const Loop &l) {
  const syntax::Expr *call = iterCall(l);
  if (!call || call->elts.size() != 1 || !call->keywords.empty()) return nullptr;
  if (call->elts[0]->kind == syntax::ExprKind::Starred) return nullptr;
  return call->elts[0];
}

std::vector<const syntax::Expr *> namesInBody(const Loop &loop, llvm::StringRef name) {
  std::vector<const syntax::Expr *> out;
  for (const syntax::Stmt *b : loop.syntax->body)
    for (const syntax::Expr *e : syntax::namesIn(b, name)) out.push_back(e);
  return out;
}

bool bodyHasMultilineString(const Loop &loop, llvm::StringRef text) {
  for (const syntax::Stmt *b : loop.syntax->body)
    if (syntax::hasMultilineString(b, text)) return true;
  return false;
}

std::string bodyIndentUnit(const Kernel &k, const Loop &loop) {
  llvm::StringRef text = k.source->text();
  if (!loop.syntax || loop.syntax->body.empty()) return "";
  uint32_t first = loop.syntax->body.front()->range.begin;
  if (!syntax::startsLine(text, first)) return "";
  std::string header = syntax::indentAt(text, loop.range.begin), body = syntax::indentAt(text, first);
  if (body.size() <= header.size() || body.compare(0, header.size(), header) != 0) return "";
  return body.substr(header.size());
}

} // namespace accelopt::nki
