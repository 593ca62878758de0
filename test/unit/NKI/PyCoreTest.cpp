#include "NKI/PyCore.h"
#include "Syntax/PyAST.h"
#include "Syntax/SourceBuffer.h"

#include <gtest/gtest.h>

#include <set>

using namespace accelopt;
using namespace accelopt::nki::pycore;

namespace {

using K = PyValue::Kind;

TEST(PyCoreNames, CanonicalPathsOfEverySpelling) {
  EXPECT_EQ(canonicalPath("neuronxcc.nki.language.add"), "nl.add");
  EXPECT_EQ(canonicalPath("nki.language.add"), "nl.add");
  EXPECT_EQ(canonicalPath("neuronxcc.nki.isa.iota"), "nisa.iota");
  EXPECT_EQ(canonicalPath("nki.isa"), "nisa");
  EXPECT_EQ(canonicalPath("neuronxcc.nki.jit"), "nki.jit");
  EXPECT_EQ(canonicalPath("neuronxcc.nki.typing.tensor"), "nt.tensor");
  EXPECT_EQ(canonicalPath("numpy.float32"), "np.float32");
  EXPECT_EQ(canonicalPath("nl.add"), "nl.add");
  // Only whole components match: `numpyx` is not numpy, `nkit` is not nki.
  EXPECT_EQ(canonicalPath("numpyx.f"), "numpyx.f");
  EXPECT_EQ(canonicalPath("nkit.language"), "nkit.language");
  EXPECT_EQ(canonicalModule("neuronxcc.nki.language"), "nl");
  EXPECT_EQ(canonicalModule("math"), "math");
  EXPECT_EQ(canonicalModule("os"), "");
  EXPECT_EQ(conventionalModule("nl"), "neuronxcc.nki.language");
  EXPECT_EQ(conventionalModule("np"), "numpy");
  EXPECT_EQ(conventionalModule("nt"), "");
}

TEST(PyCoreNames, ImportBindings) {
  auto src = syntax::SourceBuffer::fromText("k.py", "import neuronxcc.nki.language as nl\n"
                                                    "import neuronxcc.nki.isa\n"
                                                    "import numpy\n"
                                                    "from neuronxcc.nki.language import par_dim as pd, arange\n"
                                                    "from neuronxcc import nki\n"
                                                    "from os import system\n");
  ASSERT_TRUE(bool(src));
  auto m = syntax::Module::parse(std::move(*src));
  std::vector<std::pair<std::string, std::string>> all;
  for (const syntax::Stmt *s : m->body())
    for (auto &b : importBindings(*s)) all.push_back(b);
  std::vector<std::pair<std::string, std::string>> want = {
      {"nl", "nl"},   {"neuronxcc", "neuronxcc"}, {"numpy", "np"}, {"pd", "nl.par_dim"}, {"arange", "nl.arange"},
      {"nki", "nki"}, {"system", "os.system"}};
  EXPECT_EQ(all, want);
}

// Every builtin of the table: evaluated ones compute on plain values, the others are only known to
// be free of side effects, and only print acts on the host.
TEST(PyCoreBuiltins, TableRowsAreConsistent) {
  std::set<std::string_view> names;
  for (const BuiltinInfo &b : allBuiltins()) {
    EXPECT_TRUE(names.insert(b.name).second) << "duplicate builtin " << b.name;
    EXPECT_EQ(lookupBuiltin(b.name), &b);
    EXPECT_EQ(b.hostEffect, b.name == "print") << b.name;
    BuiltinResult r = callBuiltin(b.name, std::vector<PyValue>{PyValue::seq({PyValue::integer(3)}, false)});
    bool unsupported = r.error.find("is not supported here") != std::string::npos;
    EXPECT_EQ(unsupported, !b.evaluated) << b.name << ": " << r.error;
  }
  for (std::string_view n : {"range", "len", "min", "max", "int", "float", "abs", "tuple", "list", "print",
                             "isinstance", "bool", "str", "enumerate", "zip", "sum", "round"})
    ASSERT_TRUE(lookupBuiltin(n) && lookupBuiltin(n)->evaluated) << n;
  EXPECT_EQ(lookupBuiltin("open"), nullptr);
  EXPECT_EQ(lookupBuiltin("__import__"), nullptr);
}

TEST(PyCoreBuiltins, Semantics) {
  auto call = [](std::string_view fn, std::vector<PyValue> args) { return callBuiltin(fn, args); };
  EXPECT_EQ(call("len", {PyValue::str("abc")}).value.i, 3);
  PyValue tile;
  tile.kind = K::Opaque;
  tile.length = 128;
  EXPECT_EQ(call("len", {tile}).value.i, 128);
  EXPECT_EQ(call("min", {PyValue::integer(4), PyValue::integer(2)}).value.i, 2);
  EXPECT_EQ(call("max", {PyValue::seq({PyValue::integer(4), PyValue::floating(7.5)}, true)}).value.f, 7.5);
  EXPECT_EQ(call("max", {PyValue::integer(4), PyValue::unknown()}).value.kind, K::Unknown);
  EXPECT_EQ(call("min", {PyValue::seq({}, true)}).error, "min() of an empty sequence");
  EXPECT_EQ(call("min", {tile, PyValue::integer(1)}).error, "min() needs numbers");
  EXPECT_EQ(call("int", {PyValue::floating(-2.7)}).value.i, -2);
  EXPECT_EQ(call("abs", {PyValue::integer(-5)}).value.i, 5);
  EXPECT_FALSE(call("abs", {PyValue::integer(INT64_MIN)}).ok()); // never wraps
  EXPECT_EQ(call("sum", {PyValue::seq({PyValue::integer(64), PyValue::integer(64)}, true)}).value.i, 128);
  EXPECT_FALSE(call("sum", {PyValue::seq({PyValue::integer(INT64_MAX), PyValue::integer(1)}, true)}).ok());
  EXPECT_EQ(call("round", {PyValue::floating(2.4)}).value.i, 2);
  EXPECT_EQ(call("bool", {PyValue::seq({}, false)}).value.i, 0);
  EXPECT_EQ(call("str", {PyValue::seq({PyValue::integer(1)}, false)}).value.s, "(1,)");
  EXPECT_EQ(call("str", {PyValue::boolean(true)}).value.s, "True");
  EXPECT_EQ(call("isinstance", {PyValue::integer(1), PyValue::none()}).value.i, 1);
  EXPECT_EQ(call("print", {PyValue::str("x")}).value.kind, K::None);
  BuiltinResult r = call("range", {PyValue::integer(2), PyValue::integer(10), PyValue::integer(3)});
  ASSERT_EQ(r.value.kind, K::Range);
  EXPECT_EQ(r.value.i, 2);
  EXPECT_EQ(r.value.stop, 10);
  EXPECT_EQ(r.value.step, 3);
  EXPECT_EQ(call("range", {}).error, "range expects 1 to 3 arguments, got 0");
  BuiltinResult t = call("tuple", {PyValue::range(0, 3, 1)});
  ASSERT_EQ(t.value.elts.size(), 3u);
  EXPECT_EQ(t.value.elts[2].i, 2);
  // Structural builtins hand back the caller's own elements as references.
  BuiltinResult e = call("enumerate", {PyValue::seq({tile, tile}, false)});
  ASSERT_EQ(e.value.elts.size(), 2u);
  EXPECT_EQ(e.value.elts[1].elts[0].i, 1);
  EXPECT_EQ(e.value.elts[1].elts[1].kind, K::Ref);
  EXPECT_EQ(e.value.elts[1].elts[1].elt, 1);
  BuiltinResult z = call("zip", {PyValue::seq({tile, tile, tile}, true), PyValue::range(0, 2, 1)});
  ASSERT_EQ(z.value.elts.size(), 2u);
  EXPECT_EQ(z.value.elts[1].elts[0].arg, 0);
  EXPECT_EQ(z.value.elts[1].elts[1].i, 1);
  uint64_t charged = 0;
  callBuiltin("list", std::vector<PyValue>{PyValue::range(0, 10, 2)}, [&](uint64_t n) { charged += n; });
  EXPECT_GE(charged, 5u);
}

TEST(PyCoreIntrinsics, TableAndArguments) {
  for (std::string_view n : {"nl.arange", "nl.mgrid", "nl.par_dim", "nl.program_id", "nl.num_programs",
                             "nl.program_ndim", "nisa.get_nc_version"}) {
    const IntrinsicInfo *i = lookupIntrinsic(n);
    ASSERT_NE(i, nullptr) << n;
    EXPECT_FALSE(i->usage.empty());
  }
  EXPECT_EQ(allIntrinsics().size(), 8u); // nl.ds (RC2), nisa.get_nc_version
  EXPECT_EQ(dsBounds(std::vector<PyValue>{PyValue::integer(256), PyValue::integer(128)}).extent,
            std::optional<int64_t>(128));
  EXPECT_EQ(lookupIntrinsic("nl.add"), nullptr);
  ArangeBounds a = arangeBounds(std::vector<PyValue>{PyValue::integer(128)});
  EXPECT_EQ(a.start, 0);
  EXPECT_EQ(a.extent, 128);
  a = arangeBounds(std::vector<PyValue>{PyValue::integer(4), PyValue::integer(12)});
  EXPECT_EQ(a.start, 4);
  EXPECT_EQ(a.extent, 8);
  a = arangeBounds(std::vector<PyValue>{PyValue::unknown()});
  EXPECT_TRUE(a.error.empty());
  EXPECT_FALSE(a.extent);
  EXPECT_EQ(arangeBounds(std::vector<PyValue>{}).error, "nl.arange takes (stop) or (start, stop)");
  EXPECT_EQ(arangeBounds(std::vector<PyValue>{PyValue::str("x")}).error, "expected an integer, got a string");
  ArangeBounds m = mgridAxis(PyValue::none(), PyValue::integer(64));
  EXPECT_EQ(m.start, 0);
  EXPECT_EQ(m.extent, 64);
  AxisArg axis = launchAxis("nl.program_id", std::vector<PyValue>{PyValue::integer(1)}, false);
  EXPECT_EQ(axis.axis, 1);
  EXPECT_FALSE(launchAxis("nl.program_id", std::vector<PyValue>{}, false).error.empty());
  EXPECT_EQ(launchAxis("nl.num_programs", std::vector<PyValue>{}, true).axis, 0);
  EXPECT_EQ(launchAxis("nl.program_id", std::vector<PyValue>{PyValue::integer(-1)}, false).error,
            "nl.program_id's axis must be a non-negative integer, got -1");
  LaunchGrid one;
  EXPECT_EQ(one.programId(0), 0);
  EXPECT_EQ(one.numPrograms(2), 1);
  EXPECT_EQ(one.ndim(), 0);
  EXPECT_EQ(one.size(), 1);
  // Row-major instances: the last axis fastest.
  LaunchGrid g = LaunchGrid::at({2, 3}, 4);
  EXPECT_EQ(g.programId(0), 1);
  EXPECT_EQ(g.programId(1), 1);
  EXPECT_EQ(g.numPrograms(1), 3);
  EXPECT_EQ(g.size(), 6);
  EXPECT_EQ(g.instanceText(), "(1, 1)");
  EXPECT_EQ(LaunchGrid::at({4}, 3).instanceText(), "(3,)");
  EXPECT_EQ(g.axisError("nl.program_id", 1), "");
  EXPECT_EQ(LaunchGrid::at({4}, 0).axisError("nl.program_id", 1),
            "nl.program_id(1) but the launch grid (4,) has 1 axis");
  EXPECT_EQ(parseGrid("2,3").dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(parseGrid("[4]").dims, (std::vector<int64_t>{4}));
  EXPECT_EQ(parseGrid("(8, )").dims, (std::vector<int64_t>{8}));
  EXPECT_FALSE(parseGrid("2,-1").error.empty());
  EXPECT_FALSE(parseGrid("").error.empty());
  EXPECT_FALSE(parseGrid("2048").error.empty());
}

TEST(PyCoreBinder, PositionalKeywordsDefaultsAndErrors) {
  std::vector<ParamSpec> params = {{"x", true}, {"y", true}, {"dtype", false}, {"mask", false}};
  std::vector<std::string_view> kw = {"mask", "dtype"};
  Binding b = bindArguments(params, 2, kw);
  EXPECT_EQ(b.argOf, (std::vector<int>{0, 1, 3, 2}));
  EXPECT_TRUE(b.missing.empty() && b.extraPositional.empty() && b.unknownKeywords.empty() && b.repeated.empty());

  std::vector<std::string_view> kw2 = {"bogus", "x"};
  b = bindArguments(params, 5, kw2);
  EXPECT_EQ(b.extraPositional, (std::vector<size_t>{4}));
  EXPECT_EQ(b.unknownKeywords, (std::vector<size_t>{0}));
  EXPECT_EQ(b.repeated, (std::vector<size_t>{0}));
  EXPECT_EQ(b.argOf[0], 5 + 1); // the keyword wins

  b = bindArguments(params, 0, std::vector<std::string_view>{"y"});
  EXPECT_EQ(b.missing, (std::vector<size_t>{0}));
  EXPECT_EQ(b.argOf[2], Binding::Unbound);

  // def f(a, *rest, scale=1.0): extra positionals go to *rest, scale only by keyword.
  std::vector<ParamSpec> variadic = {{"a", true}, {"rest", false, true}, {"scale", false}};
  b = bindArguments(variadic, 3, std::vector<std::string_view>{"scale", "other"});
  EXPECT_EQ(b.argOf[0], 0);
  EXPECT_EQ(b.argOf[2], 3);
  EXPECT_TRUE(b.extraPositional.empty());
  EXPECT_TRUE(b.unknownKeywords.empty()); // **kwargs-like: taken by the variadic parameter

  auto src = syntax::SourceBuffer::fromText("k.py", "def f(a, b=2, *args):\n  pass\n");
  ASSERT_TRUE(bool(src));
  auto m = syntax::Module::parse(std::move(*src));
  std::vector<ParamSpec> ps = paramsOf(*m->body()[0]);
  ASSERT_EQ(ps.size(), 3u);
  EXPECT_TRUE(ps[0].required);
  EXPECT_FALSE(ps[1].required);
  EXPECT_TRUE(ps[2].variadic);
}

} // namespace
