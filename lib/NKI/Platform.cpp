#include "NKI/Platform.h"

#include "NKI/KernelIR.h"
#include "Syntax/PyAST.h"

namespace accelopt::nki {

std::string_view allocatorBuffer(std::string_view callee) {
  constexpr std::string_view kPrefix = "nki.compiler.";
  if (!callee.starts_with(kPrefix)) return "";
  callee.remove_prefix(kPrefix.size());
  size_t dot = callee.find('.');
  if (dot == std::string_view::npos) return "";
  std::string_view buffer = callee.substr(0, dot), allocator = callee.substr(dot + 1);
  if (allocator != "mod_alloc" && allocator != "auto_alloc" && allocator != "alloc") return "";
  if (buffer == "sbuf") return "nl.sbuf";
  if (buffer == "psum") return "nl.psum";
  return "";
}

std::optional<std::string> platformTarget(const Kernel &kernel) {
  if (!kernel.def) return std::nullopt;
  for (const syntax::Expr *d : kernel.def->decorators)
    if (d->kind == syntax::ExprKind::Call)
      if (const syntax::Expr *t = d->keyword("platform_target"); t && t->kind == syntax::ExprKind::Str) return t->str;
  return std::nullopt;
}

std::string ncVersionOf(const Kernel &kernel) {
  std::string target = platformTarget(kernel).value_or("trn1");
  std::string_view generation = target == "trn2" ? "gen3" : target == "trn3" ? "gen4" : "gen2";
  return "nisa.nc_version." + std::string(generation);
}

} // namespace accelopt::nki
