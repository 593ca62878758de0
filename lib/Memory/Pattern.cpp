#include "Memory/Pattern.h"

#include "Memory/Database.h"
#include "Memory/Signature.h"

#include <algorithm>
#include <map>
#include <set>

namespace accelopt::memory {

using nki::Kernel;
using nki::NodeRef;
using nlohmann::json;

namespace {

int loopHeight(const Kernel &k, int loop) {
  int h = 0;
  for (const NodeRef &n : k.loops[size_t(loop)].body)
    if (n.isLoop) h = std::max(h, loopHeight(k, n.index) + 1);
  return h;
}

std::string idOf(NodeRef n) { return (n.isLoop ? "L" : "S") + std::to_string(n.index); }

std::string loopPlace(int depth, int height) {
  if (height == 0) return "innermost";
  if (depth == 0) return "outermost";
  return "depth-" + std::to_string(depth);
}

bool validNode(const Kernel &k, NodeRef n) {
  return n.index >= 0 && (n.isLoop ? n.index < int(k.loops.size()) : n.index < int(k.stmts.size()));
}

} // namespace

// ------------------------------------------------------------------- roles

std::string NodeRole::text() const {
  if (isLoop) return "<" + loopPlace(depth, height) + " " + loopKind + " loop>";
  std::string where = "kernel body";
  if (!parentKind.empty())
    where = (parentInnermost ? std::string("innermost")
             : depth == 1    ? std::string("outermost")
                             : "depth-" + std::to_string(depth - 1)) +
            " " + parentKind + " loop";
  return "<" + opKind + " " + reads + ">" + writes + " in " + where + ">";
}

json NodeRole::toJson() const {
  json j;
  j["kind"] = isLoop ? "loop" : "stmt";
  j["depth"] = depth;
  if (isLoop) {
    j["loop_kind"] = loopKind;
    j["height"] = height;
    j["body_ops"] = ops;
  } else {
    j["op"] = opKind;
    j["reads"] = reads;
    j["writes"] = writes;
    j["parent_kind"] = parentKind;
    j["parent_innermost"] = parentInnermost;
  }
  return j;
}

llvm::Expected<NodeRole> NodeRole::fromJson(const json &j) {
  try {
    NodeRole r;
    r.isLoop = j.at("kind").get<std::string>() == "loop";
    r.depth = j.value("depth", 0);
    if (r.isLoop) {
      r.loopKind = j.at("loop_kind").get<std::string>();
      r.height = j.value("height", 0);
      r.ops = j.value("body_ops", std::vector<std::string>{});
    } else {
      r.opKind = j.at("op").get<std::string>();
      r.reads = j.value("reads", "");
      r.writes = j.value("writes", "");
      r.parentKind = j.value("parent_kind", "");
      r.parentInnermost = j.value("parent_innermost", false);
    }
    return r;
  } catch (const json::exception &e) {
    return makeError(MemoryError::BadInput, std::string("error: malformed pattern role: ") + e.what());
  }
}

NodeRole roleOf(const Kernel &k, NodeRef node) {
  NodeRole r;
  r.isLoop = node.isLoop;
  if (node.isLoop) {
    const nki::Loop &l = k.loops[size_t(node.index)];
    r.loopKind = loopKindToken(l.kind);
    r.depth = l.depth;
    r.height = loopHeight(k, l.id);
    std::set<std::string> ops;
    for (const NodeRef &n : l.body)
      if (!n.isLoop && isStructural(k.stmts[size_t(n.index)])) ops.insert(stmtOpKind(k.stmts[size_t(n.index)]));
    r.ops.assign(ops.begin(), ops.end());
    return r;
  }
  const nki::Statement &s = k.stmts[size_t(node.index)];
  r.opKind = stmtOpKind(s);
  r.reads = stmtReadBuffers(k, s);
  r.writes = stmtWriteBuffers(k, s);
  if (s.parent >= 0) {
    const nki::Loop &p = k.loops[size_t(s.parent)];
    r.depth = p.depth + 1;
    r.parentKind = loopKindToken(p.kind);
    r.parentInnermost = loopHeight(k, p.id) == 0;
  }
  return r;
}

int roleMatch(const NodeRole &p, const NodeRole &s) {
  if (p.isLoop != s.isLoop) return 0;
  int score = 1;
  if (p.isLoop) {
    if (p.loopKind != s.loopKind) return 0;
    if ((p.height == 0) != (s.height == 0)) return 0;
    if (!p.ops.empty()) {
      bool overlap = false;
      for (const std::string &o : p.ops)
        if (std::binary_search(s.ops.begin(), s.ops.end(), o)) overlap = true;
      if (!overlap) return 0;
    }
    score += p.depth == s.depth;
    score += p.height == s.height;
    score += p.ops == s.ops;
    return score;
  }
  if (p.opKind != s.opKind || p.writes != s.writes) return 0;
  if (p.parentKind.empty() != s.parentKind.empty() || p.parentInnermost != s.parentInnermost) return 0;
  score += p.depth == s.depth;
  score += p.reads == s.reads;
  score += p.parentKind == s.parentKind;
  return score;
}

std::string relationOf(const Kernel &k, NodeRef a, NodeRef b) {
  if (a == b) return "";
  if (a.isLoop) {
    int parent = k.parentOf(b);
    if (parent == a.index) return "parent";
    if (k.encloses(a.index, b)) return "encloses";
  }
  const auto &sa = k.siblingsOf(a);
  const auto &sb = k.siblingsOf(b);
  if (&sa != &sb) return "";
  auto ia = std::find(sa.begin(), sa.end(), a), ib = std::find(sa.begin(), sa.end(), b);
  if (ia == sa.end() || ib == sa.end() || ia >= ib) return "";
  return ib - ia == 1 ? "next" : "before";
}

bool isPlaceholder(const json &value) {
  if (!value.is_string()) return false;
  const std::string &s = value.get_ref<const std::string &>();
  return s.size() >= 2 && s.front() == '<' && s.back() == '>';
}

// ----------------------------------------------------------------- Pattern

std::string Pattern::opsKey() const { return json(ops).dump(); }

std::string Pattern::description() const {
  std::string out;
  for (const json &op : ops) {
    if (!out.empty()) out += "; ";
    out += op.value("op", "?");
    for (auto it = op.begin(); it != op.end(); ++it) {
      if (it.key() == "op") continue;
      out += " " + it.key() + "=" + (it->is_string() ? it->get<std::string>() : it->dump());
    }
  }
  return out;
}

json Pattern::rolesJson() const {
  json vs = json::array(), rs = json::array();
  for (const PatternVar &v : vars) vs.push_back({{"name", v.name}, {"step", v.step}, {"role", v.role.toJson()}});
  for (const PatternRelation &r : relations) rs.push_back({{"step", r.step}, {"a", r.a}, {"b", r.b}, {"rel", r.rel}});
  return {{"vars", vs}, {"relations", rs}};
}

llvm::Error Pattern::setRoles(const json &roles) {
  vars.clear();
  relations.clear();
  try {
    for (const json &v : roles.value("vars", json::array())) {
      auto role = NodeRole::fromJson(v.at("role"));
      if (!role) return role.takeError();
      vars.push_back({v.at("name").get<std::string>(), v.value("step", 0), *role});
    }
    for (const json &r : roles.value("relations", json::array()))
      relations.push_back({r.value("step", 0), r.at("a").get<std::string>(), r.at("b").get<std::string>(),
                           r.at("rel").get<std::string>()});
  } catch (const json::exception &e) {
    return makeError(MemoryError::BadInput, std::string("error: malformed pattern roles: ") + e.what());
  }
  return llvm::Error::success();
}

json Pattern::toJson() const {
  json j = rolesJson();
  j["ops"] = ops;
  j["signature"] = signature;
  return j;
}

llvm::Expected<Pattern> Pattern::fromJson(const json &j) {
  Pattern p;
  if (!j.is_object() || !j.contains("ops") || !j["ops"].is_array())
    return makeError(MemoryError::BadInput, "error: a pattern needs an \"ops\" array");
  for (const json &op : j["ops"]) p.ops.push_back(op);
  p.signature = j.value("signature", "");
  if (auto err = p.setRoles(j)) return err;
  return p;
}

const PatternVar *Pattern::var(llvm::StringRef name, int step) const {
  for (const PatternVar &v : vars)
    if (v.step == step && v.name == name) return &v;
  return nullptr;
}

// -------------------------------------------------------------- generalise

llvm::Expected<Pattern> generalisePattern(const Kernel &k, llvm::ArrayRef<json> ops) {
  const Kernel *one = &k;
  return generalisePattern(llvm::ArrayRef<const Kernel *>(one), ops);
}

llvm::Expected<Pattern> generalisePattern(llvm::ArrayRef<const Kernel *> stepKernels, llvm::ArrayRef<json> ops) {
  if (stepKernels.empty() || (stepKernels.size() != 1 && stepKernels.size() != ops.size()))
    return makeError(MemoryError::BadInput, "error: generalisePattern needs one kernel or one per op");
  Pattern p;
  p.signature = computeSignature(*stepKernels[0]);
  for (size_t i = 0; i < ops.size(); ++i) {
    const Kernel &k = *stepKernels[stepKernels.size() == 1 ? 0 : i];
    const json &op = ops[i];
    if (!op.is_object() || !op.contains("op") || !op["op"].is_string())
      return makeError(MemoryError::BadInput, "error: op " + std::to_string(i) + " is not an object with \"op\"");
    json out = json::object();
    std::vector<std::pair<std::string, NodeRef>> stepVars; // placeholder, node
    for (auto it = op.begin(); it != op.end(); ++it) {
      if (it.key() == "op" || !it->is_string()) {
        out[it.key()] = *it;
        continue;
      }
      const std::string &value = it->get_ref<const std::string &>();
      std::optional<NodeRef> node = k.resolve(value);
      bool looksLikeId = value.size() >= 2 && (value[0] == 'L' || value[0] == 'S') &&
                         value.find_first_not_of("0123456789", 1) == std::string::npos;
      if (!node || !validNode(k, *node)) {
        if (looksLikeId)
          return makeError(MemoryError::BadInput, "error: op " + std::to_string(i) + " (" +
                                                      op["op"].get<std::string>() + "): unknown id '" + value +
                                                      "' in kernel " + k.name);
        out[it.key()] = *it; // a literal such as "affine_range"
        continue;
      }
      std::string name;
      for (auto &[n, ref] : stepVars)
        if (ref == *node) name = n;
      if (name.empty()) {
        NodeRole role = roleOf(k, *node);
        std::string base = role.text();
        name = base; // unique within the op's step (vars are per step)
        for (int suffix = 2; p.var(name, int(i)); ++suffix)
          name = base.substr(0, base.size() - 1) + " #" + std::to_string(suffix) + ">";
        p.vars.push_back({name, int(i), role});
        stepVars.push_back({name, *node});
      }
      out[it.key()] = name;
    }
    for (auto &[na, a] : stepVars)
      for (auto &[nb, b] : stepVars) {
        std::string rel = relationOf(k, a, b);
        if (!rel.empty()) p.relations.push_back({int(i), na, nb, rel});
      }
    p.ops.push_back(std::move(out));
  }
  return p;
}

// ------------------------------------------------------------- instantiate

namespace {

struct Instantiator {
  const Pattern &pattern;
  const InstantiateOptions &options;
  std::vector<Instantiation> results;
  std::set<std::string> seen;
  size_t explored = 0;

  std::vector<NodeRef> allNodes(const Kernel &k) {
    std::vector<NodeRef> nodes;
    for (const nki::Loop &l : k.loops) nodes.push_back({true, l.id});
    for (const nki::Statement &s : k.stmts)
      if (isStructural(s)) nodes.push_back({false, s.id});
    return nodes;
  }

  llvm::Error step(size_t i, const Kernel &k, std::vector<json> &done, int score) {
    if (i == pattern.ops.size()) {
      std::string key = json(done).dump();
      if (seen.insert(key).second) results.push_back({done, score});
      return llvm::Error::success();
    }
    std::vector<const PatternVar *> vars;
    for (const PatternVar &v : pattern.vars)
      if (v.step == int(i)) vars.push_back(&v);
    // Sites for each var, best match first.
    std::vector<NodeRef> nodes = allNodes(k);
    std::vector<std::vector<std::pair<NodeRef, int>>> sites(vars.size());
    for (size_t v = 0; v < vars.size(); ++v) {
      for (const NodeRef &n : nodes)
        if (int s = roleMatch(vars[v]->role, roleOf(k, n))) sites[v].push_back({n, s});
      std::stable_sort(sites[v].begin(), sites[v].end(), [](auto &a, auto &b) { return a.second > b.second; });
      if (sites[v].empty()) return llvm::Error::success();
    }
    std::vector<NodeRef> chosen(vars.size());
    return assign(i, k, vars, sites, chosen, 0, done, score);
  }

  bool relationsHold(size_t i, const Kernel &k, const std::vector<const PatternVar *> &vars,
                     const std::vector<NodeRef> &chosen, size_t upto) {
    auto index = [&](const std::string &name) -> int {
      for (size_t v = 0; v < upto; ++v)
        if (vars[v]->name == name) return int(v);
      return -1;
    };
    for (const PatternRelation &r : pattern.relations) {
      if (r.step != int(i)) continue;
      int a = index(r.a), b = index(r.b);
      if (a < 0 || b < 0) continue;
      if (relationOf(k, chosen[size_t(a)], chosen[size_t(b)]) != r.rel) return false;
    }
    return true;
  }

  llvm::Error assign(size_t i, const Kernel &k, const std::vector<const PatternVar *> &vars,
                     const std::vector<std::vector<std::pair<NodeRef, int>>> &sites, std::vector<NodeRef> &chosen,
                     size_t v, std::vector<json> &done, int score) {
    if (explored >= options.maxExplored) return llvm::Error::success();
    if (v == vars.size()) {
      json op = json::object();
      const json &tmpl = pattern.ops[i];
      for (auto it = tmpl.begin(); it != tmpl.end(); ++it) {
        op[it.key()] = *it;
        if (it.key() == "op" || !isPlaceholder(*it)) continue;
        for (size_t w = 0; w < vars.size(); ++w)
          if (vars[w]->name == it->get<std::string>()) op[it.key()] = idOf(chosen[w]);
        if (isPlaceholder(op[it.key()]))
          return makeError(MemoryError::BadInput,
                           "error: pattern op " + std::to_string(i) + " uses an undeclared placeholder " + it->dump());
      }
      done.push_back(op);
      llvm::Error err = llvm::Error::success();
      if (i + 1 == pattern.ops.size() || !options.advance) {
        err = step(i + 1, k, done, score);
      } else {
        auto next = options.advance(done);
        if (!next)
          llvm::consumeError(next.takeError());
        else if (*next)
          err = step(i + 1, **next, done, score);
      }
      done.pop_back();
      return err;
    }
    for (auto &[node, s] : sites[v]) {
      if (explored++ >= options.maxExplored) break;
      bool used = false;
      for (size_t w = 0; w < v; ++w) used |= chosen[w] == node;
      if (used) continue;
      chosen[v] = node;
      if (!relationsHold(i, k, vars, chosen, v + 1)) continue;
      if (auto err = assign(i, k, vars, sites, chosen, v + 1, done, score + s)) return err;
    }
    return llvm::Error::success();
  }
};

} // namespace

llvm::Expected<std::vector<Instantiation>> instantiatePattern(const Pattern &pattern, const Kernel &k,
                                                              const InstantiateOptions &options) {
  Instantiator inst{pattern, options, {}, {}, 0};
  std::vector<json> done;
  if (auto err = inst.step(0, k, done, 0)) return err;
  std::stable_sort(inst.results.begin(), inst.results.end(),
                   [](const Instantiation &a, const Instantiation &b) { return a.score > b.score; });
  if (inst.results.size() > options.maxResults) inst.results.resize(options.maxResults);
  return std::move(inst.results);
}

} // namespace accelopt::memory
