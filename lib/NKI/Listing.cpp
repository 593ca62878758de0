#include "NKI/Listing.h"

#include "llvm/Support/FormatVariadic.h"

namespace accelopt::nki {

std::string nodeId(NodeRef n) { return (n.isLoop ? "L" : "S") + std::to_string(n.index); }

std::string oneLine(llvm::StringRef text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space && !out.empty() && out.back() != '(' && out.back() != '[' && c != ')' && c != ']') out += ' ';
    space = false;
    out += c;
  }
  return out;
}

static uint32_t lineOf(const Kernel &k, uint32_t offset) { return k.source ? k.source->lineCol(offset).line : 0; }

/// The text of a statement (its header for a loop), from the file it was traced from.
static std::string nodeText(const Kernel &k, NodeRef n) {
  const ForeignCall *f = k.foreignOf(n);
  if (n.isLoop) {
    const Loop &l = k.loops[size_t(n.index)];
    return oneLine(f && l.syntax ? f->source->slice(l.syntax->headerRange) : k.source->slice(l.headerRange));
  }
  const Statement &s = k.stmts[size_t(n.index)];
  return oneLine(f && s.syntax ? f->source->slice(s.syntax->range) : k.source->slice(s.range));
}

/// "    # in load_tile (utils.py:3:1)" for what a call of another file's function made.
static std::string foreignNote(const Kernel &k, NodeRef n) {
  const ForeignCall *f = k.foreignOf(n);
  return f ? "    # in " + f->function + " (" + f->origin + ")" : "";
}

static std::string tensorLabel(const Kernel &k, int t) {
  const Tensor &T = k.tensors[t];
  return T.name.empty() ? "<tile@" + std::to_string(lineOf(k, T.range.begin)) + ">" : T.name;
}

static void printNodes(llvm::raw_ostream &os, const Kernel &k, const std::vector<NodeRef> &nodes, int depth) {
  for (NodeRef n : nodes) {
    std::string indent(2 * depth, ' ');
    if (n.isLoop) {
      const Loop &l = k.loops[n.index];
      os << llvm::formatv("{0,-5}{1,5}  {2}{3}", nodeId(n), lineOf(k, l.range.begin), indent, nodeText(k, n));
      os << "    # " << loopKindName(l.kind);
      if (l.runsAs != l.kind) os << " (runs as " << loopKindName(l.runsAs) << ")";
      os << ", trip " << l.tripCount.str();
      if (const ForeignCall *f = k.foreignOf(n)) os << ", in " << f->function << " (" << f->origin << ")";
      os << "\n";
      printNodes(os, k, l.body, depth + 1);
    } else {
      const Statement &s = k.stmts[n.index];
      os << llvm::formatv("{0,-5}{1,5}  {2}{3}{4}\n", nodeId(n), lineOf(k, s.range.begin), indent, nodeText(k, n),
                          foreignNote(k, n));
    }
  }
}

void printTensorTable(llvm::raw_ostream &os, const Kernel &k) {
  os << llvm::formatv("  {0,-24} {1,-10} {2,-32} {3,-9} {4}\n", "tensor", "buffer", "shape", "dtype",
                      "bytes/partition");
  for (const Tensor &t : k.tensors) {
    if (t.name == "<discarded>" || t.aliasOf >= 0) continue;
    std::string bytes = "-";
    if (auto b = t.bytesPerPartition()) {
      bytes = std::to_string(*b);
      auto total = t.totalBytesPerPartition();
      if (t.blockDims() > 0 && total)
        bytes += llvm::formatv(" (x{0} blocks = {1})", *total / std::max<int64_t>(*b, 1), *total).str();
    }
    std::string role = t.isArgument ? " arg" : t.isOutput ? " out" : "";
    os << llvm::formatv("  {0,-24} {1,-10} {2,-32} {3,-9} {4}{5}\n", tensorLabel(k, t.id), bufferName(t.buffer),
                        t.shapeString(), t.dtypeKnown ? dtypeName(t.dtype) : "?", bytes, role);
  }
}

void printListing(llvm::raw_ostream &os, const Kernel &k) {
  os << "kernel " << k.name << "  (" << k.source->path() << ":" << lineOf(k, k.def->range.begin) << ")";
  if (!k.shapesKnown) os << "  [input shapes unknown: trip counts and shapes are symbolic]";
  os << "\n";
  if (!k.grid.empty()) {
    os << "grid: " << k.gridSize() << " instances [";
    for (size_t d = 0; d < k.grid.size(); ++d) os << (d ? ", " : "") << k.grid[d];
    os << "]" << (k.gridInstances ? "; the listing is instance 0's (nl.program_id 0)" : "") << "\n";
  }
  printNodes(os, k, k.body, 0);
  os << "tensors:\n";
  printTensorTable(os, k);
}

static nlohmann::json accessJson(const Kernel &k, const Access &a) {
  nlohmann::json j;
  j["tensor"] = tensorLabel(k, a.tensor);
  j["tile"] = a.tileShape;
  j["text"] = oneLine(k.source->slice(a.range));
  j["line"] = lineOf(k, a.range.begin);
  if (!a.param.empty()) j["param"] = a.param;
  if (a.isAccumulate) j["accumulate"] = true;
  return j;
}

nlohmann::json kernelToJson(const Kernel &k) {
  nlohmann::json j;
  j["name"] = k.name;
  j["line"] = lineOf(k, k.def->range.begin);
  j["shapes_known"] = k.shapesKnown;
  j["grid"] = k.grid;
  j["loops"] = nlohmann::json::array();
  for (const Loop &l : k.loops) {
    nlohmann::json lj = {
        {"id", nodeId({true, l.id})},
        {"iv", l.iv},
        {"kind", loopKindName(l.kind)},
        {"runs_as", loopKindName(l.runsAs)},
        {"trip", l.tripCount.isKnown() ? nlohmann::json(*l.tripCount.value) : nlohmann::json(l.tripCount.str())},
        {"line", lineOf(k, l.range.begin)},
        {"parent", l.parent >= 0 ? nlohmann::json(nodeId({true, l.parent})) : nlohmann::json(nullptr)}};
    nlohmann::json body = nlohmann::json::array();
    for (NodeRef n : l.body) body.push_back(nodeId(n));
    lj["body"] = body;
    j["loops"].push_back(lj);
  }
  j["statements"] = nlohmann::json::array();
  for (const Statement &s : k.stmts) {
    nlohmann::json sj = {
        {"id", nodeId({false, s.id})},
        {"kind", stmtKindName(s.kind)},
        {"line", lineOf(k, s.range.begin)},
        {"text", nodeText(k, {false, s.id})},
        {"parent", s.parent >= 0 ? nlohmann::json(nodeId({true, s.parent})) : nlohmann::json(nullptr)}};
    if (s.op) sj["op"] = s.callee;
    if (const ForeignCall *f = k.foreignOf({false, s.id})) sj["from"] = {{"function", f->function}, {"at", f->origin}};
    sj["reads"] = nlohmann::json::array();
    for (auto &a : s.reads) sj["reads"].push_back(accessJson(k, a));
    sj["writes"] = nlohmann::json::array();
    for (auto &a : s.writes) sj["writes"].push_back(accessJson(k, a));
    j["statements"].push_back(sj);
  }
  j["tensors"] = nlohmann::json::array();
  for (const Tensor &t : k.tensors) {
    if (t.name == "<discarded>" || t.aliasOf >= 0) continue;
    nlohmann::json shape = nlohmann::json::array();
    for (auto &d : t.shape) shape.push_back(d.isKnown() ? nlohmann::json(*d.value) : nlohmann::json(d.str()));
    nlohmann::json tj = {{"name", tensorLabel(k, t.id)},
                         {"buffer", bufferName(t.buffer)},
                         {"shape", shape},
                         {"par_dim", t.parDim},
                         {"dtype", t.dtypeKnown ? dtypeName(t.dtype) : "?"},
                         {"argument", t.isArgument},
                         {"output", t.isOutput}};
    if (auto b = t.bytesPerPartition()) tj["bytes_per_partition"] = *b;
    if (auto b = t.totalBytesPerPartition()) tj["total_bytes_per_partition"] = *b;
    j["tensors"].push_back(tj);
  }
  nlohmann::json body = nlohmann::json::array();
  for (NodeRef n : k.body) body.push_back(nodeId(n));
  j["body"] = body;
  return j;
}

} // namespace accelopt::nki
