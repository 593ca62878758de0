// The trace-time Python core shared by the front end (`check`) and the interpreter (`run`), so both
// accept the same language: module canonicalisation and import bindings, the builtins and NKI
// intrinsics they evaluate (with their argument checks), and the one argument binder (kernel
// parameters, helper functions, NKI op calls). Integer operators are in PyInt.
//
// Builtins compute over PyValue, a small value both evaluators translate their own values to and
// from: numbers, strings, None, sequences, ranges, and "opaque" values the core only passes
// through (tiles, index expressions) as references to the caller's arguments.
#pragma once

#include "NKI/OpTable.h"
#include "Syntax/PyAST.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace accelopt::nki::pycore {

// ---------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------

/// The canonical spelling of a module (nki::canonicalModule, declared in OpTable.h for its older
/// callers and defined here from the one module table).
using nki::canonicalModule;

/// A dotted path with its module part canonical: "neuronxcc.nki.language.add" -> "nl.add",
/// "nki.isa.iota" -> "nisa.iota", "numpy.float32" -> "np.float32"; other paths unchanged.
std::string canonicalPath(std::string_view dotted);

/// The module a conventional alias stands for ("nl" -> "neuronxcc.nki.language", "np" -> "numpy"),
/// for a file that uses the alias without importing it; "" for other names.
std::string_view conventionalModule(std::string_view alias);

/// The dtype a canonical path denotes: `nl.bfloat16`, `np.float32`, and the values `t.dtype` evaluates to
/// (`dtype.bfloat16`, `npdtype.np.float32` of np.dtype(np.float32)); std::nullopt for other paths.
std::optional<DType> dtypeOfPath(std::string_view path);

/// Whether two canonical paths denote the same trace-time object: dtypes compare by their type however
/// they are spelled (`t.dtype == nl.bfloat16` holds for a bf16 tile), other paths by their spelling.
bool samePath(std::string_view a, std::string_view b);

/// Whether a module-level assignment's value may be evaluated when tracing starts: it calls nothing
/// (TILE = 128, sizes computed from other constants), so it has no side effects.
/// `isClass` names the module's classes: a call of one with such arguments (`CFG = Cfg()`) builds a
/// configuration object, which runs nothing else.
bool isModuleConstant(const syntax::Expr *value, const std::function<bool(std::string_view)> &isClass = {});

/// Why a kernel cannot read module-level `name`: the file assigns it at module level from a value that is
/// not a module constant (it calls something: `M = np.fromfunction(f, (P, N))`, `A = np.arange(N)`), so
/// neither evaluator binds it. Empty when `m` has no such assignment of `name`. Said alike by `check`,
/// `run` and `profile` where the kernel reads the name; a name the kernel never reads is never reported.
std::string unevaluatedModuleNameMessage(const syntax::Module &m, std::string_view name,
                                         const std::function<bool(std::string_view)> &isClass = {});

/// The names an import statement binds, each with the canonical dotted path it denotes:
/// `import neuronxcc.nki.language as nl` -> {nl, "nl"}; `import numpy` -> {numpy, "np"};
/// `from neuronxcc.nki.language import par_dim` -> {par_dim, "nl.par_dim"}.
std::vector<std::pair<std::string, std::string>> importBindings(const syntax::Stmt &importStmt);

// ---------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------

struct PyValue {
  enum class Kind : uint8_t {
    Unknown, // not known at trace time (the front end without input shapes)
    None,
    Bool,
    Int,
    Float,
    Str,
    Seq,    // tuple or list (isList)
    Range,  // range(start, stop, step)
    Opaque, // a value of the caller the core does not look into (a tile, an index expression)
    Ref,    // in results only: the caller's argument `arg`, element `elt` (-1: the argument itself)
  };
  Kind kind = Kind::Unknown;
  int64_t i = 0;             // Bool, Int; Range start
  double f = 0;              // Float
  std::string s;             // Str; Opaque: how str() prints it
  std::vector<PyValue> elts; // Seq
  bool isList = false;
  int64_t stop = 0, step = 1;    // Range
  std::optional<int64_t> length; // Opaque: len() when the caller knows it (a tile's first dimension)
  std::optional<bool> truth;     // Opaque: bool() when the caller knows it
  int arg = -1, elt = -1;        // Ref

  static PyValue unknown() { return {}; }
  static PyValue none() {
    PyValue v;
    v.kind = Kind::None;
    return v;
  }
  static PyValue boolean(bool b) {
    PyValue v;
    v.kind = Kind::Bool;
    v.i = b;
    return v;
  }
  static PyValue integer(int64_t x) {
    PyValue v;
    v.kind = Kind::Int;
    v.i = x;
    return v;
  }
  static PyValue floating(double x) {
    PyValue v;
    v.kind = Kind::Float;
    v.f = x;
    return v;
  }
  static PyValue str(std::string x) {
    PyValue v;
    v.kind = Kind::Str;
    v.s = std::move(x);
    return v;
  }
  static PyValue seq(std::vector<PyValue> e, bool list) {
    PyValue v;
    v.kind = Kind::Seq;
    v.elts = std::move(e);
    v.isList = list;
    return v;
  }
  static PyValue range(int64_t start, int64_t stop, int64_t step) {
    PyValue v;
    v.kind = Kind::Range;
    v.i = start;
    v.stop = stop;
    v.step = step;
    return v;
  }
  static PyValue ref(int arg, int elt) {
    PyValue v;
    v.kind = Kind::Ref;
    v.arg = arg;
    v.elt = elt;
    return v;
  }

  bool isNumber() const { return kind == Kind::Int || kind == Kind::Bool || kind == Kind::Float; }
  bool isIntLike() const { return kind == Kind::Int || kind == Kind::Bool; }
  double number() const { return kind == Kind::Float ? f : double(i); }
};

/// Python's str() of a value ("True", "(1,)", "[1, 2]"); Opaque values print as their `s`.
std::string toText(const PyValue &v);

// ---------------------------------------------------------------------------
// Builtins
// ---------------------------------------------------------------------------

struct BuiltinInfo {
  std::string_view name;
  bool evaluated;    // the core computes it (else it is only known to be free of side effects)
  bool hostEffect;   // it acts on the host when traced (print)
  bool unknownIsInt; // with unknown arguments, the result is still an integer (min, max, int)
};

/// The builtin named `name`, or null. Names an evaluator resolves to `builtins.NAME` when the kernel
/// does not bind them are the `evaluated` ones.
const BuiltinInfo *lookupBuiltin(std::string_view name);
std::span<const BuiltinInfo> allBuiltins();

/// The outcome of a builtin: a value (its Refs point into the arguments), unknown, or a Python error.
struct BuiltinResult {
  PyValue value;
  std::string error; // non-empty: the call raises (the message names the builtin)
  bool ok() const { return error.empty(); }
};

/// Calls builtin `name` (an `evaluated` one) on positional `args`. `chargeItems` is asked before a
/// result of that many new items is built (the interpreter's memory cap); it may throw.
BuiltinResult callBuiltin(std::string_view name, std::span<const PyValue> args,
                          const std::function<void(uint64_t items)> &chargeItems = {});

// ---------------------------------------------------------------------------
// The math module
// ---------------------------------------------------------------------------

/// Whether `canonicalName` ("math.ceil") is a function of Python's math module the core evaluates.
/// `append`, `extend`, `insert`, `pop`, `clear`: list methods that change their list in place (and
/// do no work on the device).
bool isListMutator(std::string_view method);

bool isMathFunction(std::string_view canonicalName);

/// Whether math function `canonicalName` returns an int (math.ceil, math.floor, math.gcd, ...), so an
/// evaluator that cannot compute it still knows the result is an integer.
bool mathReturnsInt(std::string_view canonicalName);

/// Calls math function `canonicalName` on positional `args` as CPython does (math.ceil(2.5) is the int 3,
/// math.sqrt(-1) raises). Unknown arguments give an unknown result.
BuiltinResult callMath(std::string_view canonicalName, std::span<const PyValue> args);

// ---------------------------------------------------------------------------
// The operator module and functools.reduce
// ---------------------------------------------------------------------------

/// The Python operator a function of the operator module applies ("operator.mul" -> "*",
/// "operator.floordiv" -> "//"), or "" for any other name. Both evaluators call it on two values and
/// fold `functools.reduce(operator.X, seq[, init])` with it.
std::string_view operatorSymbol(std::string_view canonicalName);
inline constexpr std::string_view kReduce = "functools.reduce";

// ---------------------------------------------------------------------------
// Tile attributes and methods
// ---------------------------------------------------------------------------

/// Whether `.name` of a tile is an attribute or method both evaluators know (shape, dtype, reshape,
/// view, broadcast_to, ap); any other (`t.indirect(...)`) is an NKI API accelopt does not know.
bool isKnownTileMember(std::string_view name);

/// The one message for an unknown tile member: `check` reports it as an `unknown-api` warning at the
/// attribute, `run` refuses with it there, and `profile` leaves the statement's work out of the trace.
std::string unknownTileMemberMessage(std::string_view name);

// ---------------------------------------------------------------------------
// numpy on host scalars
// ---------------------------------------------------------------------------

/// Whether `canonicalName` ("np.floor") is a numpy function the core evaluates on Python scalars at
/// trace time (np.floor(x * 0.5)), or a reduction of a host sequence of numbers to one scalar
/// (np.prod(a.shape[:2]), np.sum, np.max, np.min); numpy array builders (np.arange, np.fromfunction) are not.
bool isNumpyScalarFunction(std::string_view canonicalName);

/// Calls numpy function `canonicalName` on scalar `args` as numpy does: IEEE results, never an exception
/// (np.sqrt(-1) is nan); np.floor/ceil/trunc/sqrt/exp/log give floats; np.abs/maximum/minimum of ints
/// stay ints. A non-scalar argument (a list, an array) is an error naming the function, except for the
/// reductions, which take a number or a (nested) list or tuple of numbers.
BuiltinResult callNumpyScalar(std::string_view canonicalName, std::span<const PyValue> args);

/// The one refusal of numpy code the core does not evaluate (an array built on the host at trace time),
/// said alike by `check`, `run` and `profile` at the call.
std::string hostNumpyMessage(std::string_view canonicalName);

// ---------------------------------------------------------------------------
// NKI intrinsics
// ---------------------------------------------------------------------------

/// Trace-time NKI functions that are not ops of the op table: they build index expressions, mark
/// dimensions or name the launch.
enum class Intrinsic : uint8_t { Arange, Mgrid, Ds, ParDim, ProgramId, NumPrograms, ProgramNdim, NcVersion };

struct IntrinsicInfo {
  Intrinsic id;
  std::string_view name;  // canonical ("nl.arange")
  std::string_view usage; // as the error messages spell it
  /// The parameters' names in positional order, as the NKI API reference spells them; "" past the last.
  /// None for a positional-only intrinsic (nl.arange(*args)).
  std::array<std::string_view, 2> params = {};
};

const IntrinsicInfo *lookupIntrinsic(std::string_view canonicalName);
std::span<const IntrinsicInfo> allIntrinsics();

/// The argument expressions of an intrinsic call in parameter order: a keyword argument
/// (`nl.program_id(axis=0)`) takes its parameter's place. `error` names a keyword the intrinsic does
/// not have or a parameter given twice, as CPython would.
struct IntrinsicArguments {
  std::vector<const syntax::Expr *> args;
  std::string error;
};
IntrinsicArguments intrinsicArguments(const IntrinsicInfo &info, const syntax::Expr &call);

/// nl.arange(stop) or nl.arange(start, stop): the first value and the count. Unknown bounds give
/// std::nullopt in the optional fields; a wrong call gives an error.
struct ArangeBounds {
  std::optional<int64_t> start, extent;
  std::string error;
};
ArangeBounds arangeBounds(std::span<const PyValue> args);

/// One axis `lo:hi` of nl.mgrid[...]: lo defaults to 0.
ArangeBounds mgridAxis(const PyValue &lo, const PyValue &hi);

/// The axis an nl.mgrid field names (`.p` the partition axis, then `.x`, `.y`, `.z`), or std::nullopt.
std::optional<int> mgridFieldAxis(std::string_view field);

/// nl.ds(start, size): the slice start:start+size. `start` is the first value, `extent` the size.
ArangeBounds dsBounds(std::span<const PyValue> args);

/// Said where a kernel reads nl.program_id / nl.num_programs but no launch grid is known: one instance runs.
inline constexpr std::string_view kOneInstanceNote =
    "an SPMD kernel launched without a grid: accelopt checks, runs and models one instance (nl.program_id is 0, "
    "nl.num_programs is 1); give the grid with --grid G0[,G1] or launch the kernel in the file (kernel[G0, G1](...))";
/// At most this many grid instances are traced (each instance is traced and profiled on its own).
inline constexpr int64_t kMaxGridInstances = 1024;

/// The launch grid `kernel[g0, g1](...)` and the instance being traced or run: nl.program_id(axis) is
/// `instance[axis]`, nl.num_programs(axis) is `dims[axis]`.
struct LaunchGrid {
  std::vector<int64_t> dims;     // empty: a single instance, no grid
  std::vector<int64_t> instance; // per axis; empty: instance 0
  /// Instance `flat` of `dims` in row-major order (the last axis fastest).
  static LaunchGrid at(const std::vector<int64_t> &dims, int64_t flat);
  int64_t size() const; // instances in the grid (1 without one)
  int64_t programId(int64_t axis) const {
    return axis >= 0 && size_t(axis) < instance.size() ? instance[size_t(axis)] : 0;
  }
  int64_t numPrograms(int64_t axis) const { return axis >= 0 && size_t(axis) < dims.size() ? dims[size_t(axis)] : 1; }
  int64_t ndim() const { return int64_t(dims.size()); }
  /// An error for an axis past a given grid's rank (nl.program_id(1) in a kernel launched as kernel[4]).
  std::string axisError(std::string_view callee, int64_t axis) const;
  /// "(1, 0)".
  std::string instanceText() const;
};
/// "(2, 3)" for a grid's extents.
std::string gridText(const std::vector<int64_t> &dims);
/// "2,3", "[2, 3]" or "(2, 3)": positive extents; an error message otherwise.
struct ParsedGrid {
  std::vector<int64_t> dims;
  std::string error;
};
ParsedGrid parseGrid(std::string_view text);

/// The axis argument of nl.program_id(axis) / nl.num_programs(axes): an error unless it is a
/// non-negative integer (unknown: std::nullopt, no error).
struct AxisArg {
  std::optional<int64_t> axis;
  std::string error;
};
AxisArg launchAxis(std::string_view callee, std::span<const PyValue> args, bool optional);

// ---------------------------------------------------------------------------
// Argument binding
// ---------------------------------------------------------------------------

struct ParamSpec {
  std::string_view name;
  bool required = true;  // no default value
  bool variadic = false; // *args / **kwargs: takes the extra arguments; later parameters are keyword-only
};

/// How a call's arguments (`positional` of them, then `keywords` by name) meet a parameter list.
struct Binding {
  static constexpr int Unbound = -1;
  /// Per parameter, the argument bound to it: i < positional is the i-th positional argument,
  /// positional + k the k-th keyword; Unbound if none. A keyword repeating a positional wins.
  std::vector<int> argOf;
  std::vector<size_t> extraPositional; // positional arguments no parameter takes
  std::vector<size_t> unknownKeywords; // keywords naming no parameter (indices into keywords)
  std::vector<size_t> repeated;        // parameters given both by position and by keyword
  std::vector<size_t> missing;         // required parameters left unbound
};

Binding bindArguments(std::span<const ParamSpec> params, size_t positional, std::span<const std::string_view> keywords);

/// The parameters of a Python function definition.
std::vector<ParamSpec> paramsOf(const syntax::Stmt &def);

/// The innermost function defined inside `def` (at any depth) whose text holds `offset`; null when none does.
const syntax::Stmt *nestedFunctionAt(const syntax::Stmt &def, uint32_t offset);

// ---------------------------------------------------------------------------
// Classes (configuration objects: class attributes, @dataclass fields)
// ---------------------------------------------------------------------------

/// The name a `class` statement binds, or "" for any other statement.
std::string_view classNameOf(const syntax::Stmt &s);

/// What calling a class builds, as far as trace-time Python goes: the class attributes (assignments
/// of its body, evaluated in the module's scope), and for a @dataclass the fields the constructor
/// binds (annotated names, in order; a field without a value is required). `error` is set for a
/// class the core does not construct (one with an __init__ or other methods it would run).
struct ClassLayout {
  std::vector<const syntax::Stmt *> attributes; // Assign statements of the body
  std::vector<ParamSpec> fields;                // constructor parameters (a @dataclass's fields)
  std::vector<const syntax::Expr *> defaults;   // per field, its default value (null: required)
  std::string error;
};
ClassLayout classLayout(const syntax::Stmt &cls);

// ---------------------------------------------------------------------------
// Kernel arguments given as Python literals
// ---------------------------------------------------------------------------

/// A non-tensor kernel argument written as Python (`(4, 128)`, `None`, `nl.bfloat16`, `'gelu'`,
/// `Config(tile=128)`), parsed on its own: `value` is its expression in `module` (which owns it), to be
/// evaluated in the kernel's module scope. `error` says why the text is not such a literal.
struct ParsedLiteral {
  std::unique_ptr<syntax::Module> module;
  const syntax::Expr *value = nullptr;
  std::string error;
};
ParsedLiteral parseLiteral(std::string_view text, const std::function<bool(std::string_view)> &isClass = {});

} // namespace accelopt::nki::pycore
