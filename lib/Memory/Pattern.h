// Reusable rewrite patterns: an op list generalised over ids. Every loop or
// statement id in the ops (L3, S12, or an induction variable name) is replaced
// by a placeholder naming its structural role, e.g.
//   {"op":"hoist","stmt":"<nl.load hbm>sbuf in innermost affine loop>",
//    "out_of":"<innermost affine loop>"}
// together with the role's features (loop kind, nest depth/height, op kinds,
// buffers) and the relations between the ids of one op (parent, encloses,
// next sibling, earlier sibling). instantiatePattern() finds the sites of
// another kernel whose roles and relations match and yields concrete op lists;
// this is what lets an experience from one kernel be tried on another.
#pragma once

#include "NKI/KernelIR.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace accelopt::memory {

/// The structural role of one loop or statement.
struct NodeRole {
  bool isLoop = false;
  int depth = 0; // enclosing loops (0 = kernel level)
  // Loops.
  std::string loopKind;         // "affine", "sequential", "static", "range"
  int height = 0;               // loop levels nested below (0 = innermost)
  std::vector<std::string> ops; // sorted op kinds of the statements directly in the body
  // Statements.
  std::string opKind;           // "nl.load", "nisa.nc_matmul", "alloc", ...
  std::string reads, writes;    // buffer classes, "+"-joined ("hbm", "psum+sbuf")
  std::string parentKind;       // kind of the enclosing loop ("" at kernel level)
  bool parentInnermost = false; // the enclosing loop has no nested loop

  /// The placeholder text, e.g. "<innermost affine loop>".
  std::string text() const;
  nlohmann::json toJson() const;
  static llvm::Expected<NodeRole> fromJson(const nlohmann::json &j);
};

/// The role of `node` in `k`.
NodeRole roleOf(const nki::Kernel &k, nki::NodeRef node);

/// How well a site's role fits a pattern's: 0 = incompatible (kind, op kind,
/// innermost-ness or written buffers differ); otherwise 1 + the number of
/// optional features that also agree (depth, height, body ops, reads, parent kind).
int roleMatch(const NodeRole &pattern, const NodeRole &site);

/// "parent" (a is b's enclosing loop), "encloses" (a encloses b deeper),
/// "next" (a directly precedes b in one body), "before" (a precedes b in one
/// body, not directly), or "" for none.
std::string relationOf(const nki::Kernel &k, nki::NodeRef a, nki::NodeRef b);

struct PatternVar {
  std::string name; // the placeholder used in the ops
  int step = 0;     // index of the op whose kernel the role was computed on
  NodeRole role;
};

struct PatternRelation {
  int step = 0;
  std::string a, b; // placeholders
  std::string rel;  // see relationOf
};

struct Pattern {
  std::vector<nlohmann::json> ops; // placeholders instead of ids
  std::vector<PatternVar> vars;
  std::vector<PatternRelation> relations;
  std::string signature; // of the kernel the pattern was generalised on

  /// The ops as one canonical JSON array text (the dedup key in the store).
  std::string opsKey() const;
  /// "hoist <...> out_of <...>; split <...> by 4"
  std::string description() const;
  /// {"ops": [...], "vars": [...], "relations": [...], "signature": "..."}
  nlohmann::json toJson() const;
  static llvm::Expected<Pattern> fromJson(const nlohmann::json &j);
  /// The "vars" and "relations" part only (the `roles` column).
  nlohmann::json rolesJson() const;
  llvm::Error setRoles(const nlohmann::json &roles);
  const PatternVar *var(llvm::StringRef name, int step) const;
};

/// Generalises `ops` applied to `k`. Every op's ids are resolved on `k`
/// (fine for ops on unrelated sites; use the overload below when later ops
/// address loops that earlier ops created).
llvm::Expected<Pattern> generalisePattern(const nki::Kernel &k, llvm::ArrayRef<nlohmann::json> ops);

/// As above with the kernel each op was addressed against: stepKernels[i] is
/// the kernel after ops 0..i-1 (one kernel = the same for every op).
llvm::Expected<Pattern> generalisePattern(llvm::ArrayRef<const nki::Kernel *> stepKernels,
                                          llvm::ArrayRef<nlohmann::json> ops);

struct Instantiation {
  std::vector<nlohmann::json> ops; // concrete ops with L#/S# ids
  int score = 0;                   // sum of roleMatch over all placeholders
};

struct InstantiateOptions {
  size_t maxResults = 16;
  /// Optional: the kernel after applying `opsSoFar` to the original (for
  /// patterns with several ops). Errors (a refused op) drop that branch.
  /// Without it every op is matched on the original kernel.
  std::function<llvm::Expected<const nki::Kernel *>(llvm::ArrayRef<nlohmann::json> opsSoFar)> advance;
  /// Upper bound on site assignments explored (keeps big kernels cheap).
  size_t maxExplored = 20000;
};

/// The concrete op lists that apply `pattern` to `k`, best score first, ties
/// in source order. Empty when no site matches. Legality is not checked here:
/// the rewrite engine decides.
llvm::Expected<std::vector<Instantiation>> instantiatePattern(const Pattern &pattern, const nki::Kernel &k,
                                                              const InstantiateOptions &options = {});

/// True for "<...>" placeholders.
bool isPlaceholder(const nlohmann::json &value);

} // namespace accelopt::memory
