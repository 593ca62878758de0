// What a kernel says about the hardware it targets: the platform its decorator names, and the TensorE
// performance modes of nisa.nc_matmul (perf_mode=, NKI.md §3.2). One statement for the front end, the
// verifier, the interpreter, the performance model and the CLI.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace accelopt::nki {

struct Kernel;

/// The target a kernel's decorator names (`@nki.jit(platform_target='trn2')`), if any: the default
/// `--target` of `check` and `profile`.
std::optional<std::string> platformTarget(const Kernel &kernel);

/// What `nisa.get_nc_version()` returns for a kernel, as the constant it compares with
/// ("nisa.nc_version.gen2"): the NeuronCore generation of its platform target (trn1 and inf2: gen2,
/// trn2: gen3, trn3: gen4), trn1's without one, as `check` and `profile` default to trn1.
std::string ncVersionOf(const Kernel &kernel);

/// The parameter that selects a mode; the front end and the interpreter treat it as a flag.
inline constexpr std::string_view kPerfModeParam = "perf_mode";

/// The buffer constant ("nl.sbuf", "nl.psum") a direct-allocation call of nki.compiler stands for
/// (`ncc.sbuf.mod_alloc(base_addr=0)`, `ncc.psum.mod_alloc(base_bank=0)`, `auto_alloc()`, `alloc(...)`), or ""
/// for any other callee. Its placement arguments (addresses, banks, tile counts) are evaluated and not
/// modelled: the interpreter and the performance model place tiles themselves, and the buffer is what the
/// verifier's rules and the model's costs depend on.
std::string_view allocatorBuffer(std::string_view canonicalCallee);

/// Is a flag parameter given as a string set? A mode name ('double_row', 'double_row_gen3') is;
/// '' and 'none' (no mode) are not.
inline bool flagStringSet(std::string_view s) { return !s.empty() && s != "none"; }

/// FP8 double-row mode: each operand is [K, 2, F], two contraction rows packed per PE row, so the
/// matmul contracts over K x 2 and each operand has twice the free elements of the plain mode.
/// Whether a target has the mode is a target fact (`double_row` in lib/Perf/targets/*.json).
inline constexpr int kDoubleRowPacking = 2;

} // namespace accelopt::nki
