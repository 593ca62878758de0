#include "Interp/Npy.h"
#include "Interp/Uninit.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

using namespace accelopt::interp;
using accelopt::nki::DType;

namespace {

bool haveNumpy() { return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0; }

/// A fresh directory removed with its contents at the end of the test.
class NpyTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("accelopt-npy", Dir)); }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }

  std::string path(llvm::StringRef name) const { return (Dir + "/" + name).str(); }

  /// Runs a Python snippet with numpy imported as np and the test directory as cwd.
  void runPython(const std::string &code) const {
    std::string script = path("script.py");
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(script, ec);
      ASSERT_FALSE(ec) << ec.message();
      os << "import numpy as np, os\nos.chdir(" << '"' << Dir << '"' << ")\n" << code << "\n";
    }
    std::string command = "/usr/bin/python3 " + script;
    ASSERT_EQ(std::system(command.c_str()), 0) << code;
  }

  std::string fileBytes(llvm::StringRef name) const {
    auto buffer = llvm::MemoryBuffer::getFile(path(name), false, false);
    return buffer ? (*buffer)->getBuffer().str() : std::string();
  }

  std::vector<std::string> directoryEntries() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(Dir, ec), end; it != end && !ec; it.increment(ec))
      names.push_back(llvm::sys::path::filename(it->path()).str());
    std::sort(names.begin(), names.end());
    return names;
  }

  llvm::SmallString<128> Dir;
};

std::string errorOf(llvm::Expected<NDArray> result) {
  return result ? std::string("<success>") : llvm::toString(result.takeError());
}

NDArray sampleArray(std::vector<int64_t> shape, DType dtype = DType::Float32) {
  NDArray array = llvm::cantFail(NDArray::allocate(std::move(shape), dtype));
  for (int64_t i = 0; i < array.numel(); ++i) array.data()[i] = float(i % 7) - 2.5f;
  return array;
}

} // namespace

TEST_F(NpyTest, Float32RoundTripKeepsShapeAndBits) {
  for (std::vector<int64_t> shape : {std::vector<int64_t>{2, 3}, {5}, {}, {0, 4}, {2, 1, 3, 2}}) {
    NDArray original = sampleArray(shape);
    if (original.numel() > 0) original.data()[0] = uninitValue();
    ASSERT_FALSE(writeNpy(path("a.npy"), original));
    llvm::Expected<NDArray> back = readNpy(path("a.npy"));
    ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
    EXPECT_EQ(back->shape(), original.shape());
    EXPECT_EQ(back->dtype(), DType::Float32);
    for (int64_t i = 0; i < original.numel(); ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(back->data()[i]), std::bit_cast<uint32_t>(original.data()[i]));
  }
}

TEST_F(NpyTest, HeaderIsPaddedToSixtyFourBytes) {
  ASSERT_FALSE(writeNpy(path("a.npy"), sampleArray({2, 3})));
  std::string bytes = fileBytes("a.npy");
  ASSERT_EQ(bytes.size(), 128u + 24u); // like numpy: preamble padded to a multiple of 64
  EXPECT_EQ(bytes.substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));
  EXPECT_EQ(bytes[127], '\n');
  EXPECT_NE(bytes.find("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"), std::string::npos);
  ASSERT_FALSE(writeNpy(path("b.npy"), sampleArray({5})));
  EXPECT_NE(fileBytes("b.npy").find("'shape': (5,), }"), std::string::npos);
}

TEST_F(NpyTest, WritesTheArrayDTypeWhenNumpyHasIt) {
  struct Case {
    DType dtype;
    const char *descr;
    std::vector<float> values;
  };
  const Case cases[] = {
      {DType::Float16, "<f2", {1.0f, -0.0999755859375f, 65504.0f}},
      {DType::Int32, "<i4", {-2147483648.0f, 7.0f, 2147483520.0f}},
      {DType::UInt16, "<u2", {0.0f, 65535.0f, 3.0f}},
      {DType::Int8, "|i1", {-128.0f, 127.0f, 0.0f}},
      {DType::Bool, "|b1", {1.0f, 0.0f, 1.0f}},
      {DType::BFloat16, "<f4", {1.0f, 2.0f, 3.0f}},
  };
  for (const Case &c : cases) {
    NDArray array = llvm::cantFail(NDArray::fromValues({3}, c.dtype, c.values));
    ASSERT_FALSE(writeNpy(path("t.npy"), array, NpyElementType::ArrayDType));
    EXPECT_NE(fileBytes("t.npy").find(std::string("'descr': '") + c.descr + "'"), std::string::npos) << c.descr;
    NDArray back = llvm::cantFail(readNpy(path("t.npy")));
    EXPECT_EQ(back.dtype(), c.dtype == DType::BFloat16 ? DType::Float32 : c.dtype);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(back.data()[i], c.values[size_t(i)]) << c.descr;
  }
}

TEST_F(NpyTest, ReadsFilesWrittenByNumpy) {
  if (!haveNumpy()) GTEST_SKIP() << "numpy is not available at /usr/bin/python3";
  runPython(R"(
base = np.arange(6).reshape(2, 3) - 2
np.save('f4.npy', (base * 0.5).astype('<f4'))
np.save('f8.npy', (base * 0.1).astype('<f8'))
np.save('f2.npy', (base * 0.25).astype('<f2'))
np.save('i4.npy', base.astype('<i4'))
np.save('i8.npy', np.array([[-(1 << 40), 5, 1 << 40]], dtype='<i8'))
np.save('u2.npy', (base + 2).astype('<u2'))
np.save('u1.npy', (base + 250).astype('|u1') if False else np.array([[0, 128, 255]], dtype='|u1'))
np.save('i1.npy', np.array([[-128, -1, 127]], dtype='|i1'))
np.save('b1.npy', np.array([[True, False, True]]))
np.save('scalar.npy', np.float32(3.5))
np.lib.format.write_array(open('v2.npy', 'wb'), base.astype('<f4'), version=(2, 0))
np.save('fortran.npy', np.asfortranarray(base.astype('<f4')))
np.save('bigendian.npy', base.astype('>f4'))
np.save('structured.npy', np.zeros(2, dtype=[('a', '<f4'), ('b', '<i4')]))
np.save('complex.npy', np.zeros(2, dtype='<c8'))
)");
  auto read = [&](const char *name) {
    llvm::Expected<NDArray> array = readNpy(path(name));
    EXPECT_TRUE(bool(array)) << name << ": " << llvm::toString(array.takeError());
    return array ? std::move(*array) : NDArray();
  };
  auto values = [](const NDArray &a) { return std::vector<float>(a.values().begin(), a.values().end()); };

  NDArray f4 = read("f4.npy");
  EXPECT_EQ(f4.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(f4), (std::vector<float>{-1, -0.5f, 0, 0.5f, 1, 1.5f}));
  NDArray f8 = read("f8.npy");
  EXPECT_EQ(f8.dtype(), DType::Float32);
  EXPECT_EQ(values(f8),
            (std::vector<float>{float(-0.2), float(-0.1), 0, float(0.1), float(0.2), float(0.30000000000000004)}));
  NDArray f2 = read("f2.npy");
  EXPECT_EQ(f2.dtype(), DType::Float16);
  EXPECT_EQ(values(f2), (std::vector<float>{-0.5f, -0.25f, 0, 0.25f, 0.5f, 0.75f}));
  NDArray i4 = read("i4.npy");
  EXPECT_EQ(i4.dtype(), DType::Int32);
  EXPECT_EQ(values(i4), (std::vector<float>{-2, -1, 0, 1, 2, 3}));
  NDArray i8 = read("i8.npy");
  EXPECT_EQ(i8.dtype(), DType::Int32);
  EXPECT_EQ(values(i8), (std::vector<float>{-2147483648.0f, 5, 2147483648.0f})); // saturated
  NDArray u2 = read("u2.npy");
  EXPECT_EQ(u2.dtype(), DType::UInt16);
  EXPECT_EQ(values(u2), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(values(read("u1.npy")), (std::vector<float>{0, 128, 255}));
  EXPECT_EQ(values(read("i1.npy")), (std::vector<float>{-128, -1, 127}));
  NDArray b1 = read("b1.npy");
  EXPECT_EQ(b1.dtype(), DType::Bool);
  EXPECT_EQ(values(b1), (std::vector<float>{1, 0, 1}));
  NDArray scalar = read("scalar.npy");
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(values(scalar), std::vector<float>{3.5f});
  EXPECT_EQ(values(read("v2.npy")), (std::vector<float>{-2, -1, 0, 1, 2, 3}));

  EXPECT_EQ(errorOf(readNpy(path("fortran.npy"))),
            path("fortran.npy") + ": Fortran-order arrays are not supported; save with np.ascontiguousarray first");
  EXPECT_EQ(errorOf(readNpy(path("bigendian.npy"))),
            path("bigendian.npy") + ": big-endian data ('>f4') is not supported");
  EXPECT_EQ(errorOf(readNpy(path("structured.npy"))),
            path("structured.npy") + ": structured numpy dtypes are not supported");
  EXPECT_EQ(errorOf(readNpy(path("complex.npy"))), path("complex.npy") + ": unsupported numpy dtype '<c8'");
}

TEST_F(NpyTest, NumpyReadsOurFiles) {
  if (!haveNumpy()) GTEST_SKIP() << "numpy is not available at /usr/bin/python3";
  ASSERT_FALSE(writeNpy(path("f4.npy"), sampleArray({2, 3, 4})));
  NDArray half = llvm::cantFail(NDArray::fromValues({2}, DType::Float16, std::vector<float>{0.5f, -3.0f}));
  ASSERT_FALSE(writeNpy(path("f2.npy"), half, NpyElementType::ArrayDType));
  runPython(R"(
a = np.load('f4.npy')
assert a.dtype == np.float32 and a.shape == (2, 3, 4), (a.dtype, a.shape)
assert (a.ravel() == (np.arange(24) % 7 - 2.5)).all()
h = np.load('f2.npy')
assert h.dtype == np.float16 and h.tolist() == [0.5, -3.0], h
)");
}

TEST_F(NpyTest, HeadersLongerThan64KiBUseVersion2) {
  // Only absurd ranks need it (numpy itself caps ranks at 32), but the format allows it.
  NDArray tall = llvm::cantFail(NDArray::allocate(std::vector<int64_t>(25000, 1)));
  tall.data()[0] = 42.0f;
  ASSERT_FALSE(writeNpy(path("v2.npy"), tall));
  std::string bytes = fileBytes("v2.npy");
  EXPECT_EQ(bytes[6], '\x02');
  EXPECT_EQ(bytes.size() % 64, 4u); // preamble multiple of 64, then one float
  NDArray back = llvm::cantFail(readNpy(path("v2.npy")));
  EXPECT_EQ(back.rank(), 25000);
  EXPECT_EQ(back.data()[0], 42.0f);
}

TEST_F(NpyTest, CorruptFilesAreClearErrors) {
  ASSERT_FALSE(writeNpy(path("good.npy"), sampleArray({2, 3})));
  std::string good = fileBytes("good.npy");
  auto parse = [](const std::string &bytes) { return errorOf(parseNpy(bytes, "x.npy")); };

  EXPECT_EQ(parse("PK\x03\x04 not numpy"), "x.npy: not a .npy file (missing the \\x93NUMPY magic)");
  EXPECT_EQ(parse(good.substr(0, 7)), "x.npy: truncated .npy preamble");
  EXPECT_EQ(parse(good.substr(0, 40)), "x.npy: truncated .npy header");
  EXPECT_EQ(parse(good.substr(0, good.size() - 1)),
            "x.npy: truncated: shape [2, 3] needs 24 data bytes, the file has 23");
  EXPECT_EQ(parse(good + "xx"), "x.npy: 2 unexpected bytes after the array data");
  std::string badVersion = good;
  badVersion[6] = 9;
  EXPECT_EQ(parse(badVersion), "x.npy: unsupported .npy format version 9");
  std::string noShape = good;
  noShape.replace(noShape.find("'shape'"), 7, "'shapf'");
  EXPECT_EQ(parse(noShape), "x.npy: malformed .npy header: unexpected key 'shapf'");
  std::string badDim = good;
  badDim.replace(badDim.find("(2, 3)"), 6, "(2, -3)");
  EXPECT_EQ(parse(badDim), "x.npy: malformed .npy header: expected a non-negative dimension in the shape");
  // The longer shape pushes 6 padding bytes past the (unchanged) header length.
  std::string hugeShape = good;
  hugeShape.replace(hugeShape.find("(2, 3), "), 8, "(99999, 99999)");
  EXPECT_EQ(parse(hugeShape), "x.npy: truncated: shape [99999, 99999] needs 39999200004 data bytes, the file has 30");
  std::string overflowingShape = good;
  overflowingShape.replace(overflowingShape.find("(2, 3), "), 8, "(9999999999,9999999999)");
  EXPECT_EQ(parse(overflowingShape), "x.npy: shape [9999999999, 9999999999] overflows");
  EXPECT_EQ(errorOf(readNpy(path("missing.npy"))).rfind("cannot read " + path("missing.npy"), 0), 0u);
}

TEST_F(NpyTest, EveryTruncationAndByteCorruptionFailsCleanly) {
  ASSERT_FALSE(writeNpy(path("good.npy"), sampleArray({3, 2})));
  std::string good = fileBytes("good.npy");
  for (size_t length = 0; length < good.size(); ++length)
    EXPECT_FALSE(bool(parseNpy(llvm::StringRef(good.data(), length), "x.npy"))) << length;
  // Overwrite each header byte with characters that confuse the dict parser; any
  // outcome is fine as long as nothing crashes (ASan/UBSan builds check that).
  for (size_t position = 0; position < 64; ++position)
    for (char replacement : {'\0', '(', ')', ',', '\'', '9', '}', '\xff'}) {
      std::string corrupt = good;
      corrupt[position] = replacement;
      llvm::Expected<NDArray> result = parseNpy(corrupt, "x.npy");
      if (!result) llvm::consumeError(result.takeError());
    }
}

TEST_F(NpyTest, WritesAtomicallyAndReplacesExistingFiles) {
  ASSERT_FALSE(writeNpy(path("a.npy"), sampleArray({4})));
  NDArray replacement = llvm::cantFail(NDArray::full({2}, DType::Float32, 9.0f));
  ASSERT_FALSE(writeNpy(path("a.npy"), replacement));
  NDArray back = llvm::cantFail(readNpy(path("a.npy")));
  EXPECT_EQ(back.shape(), std::vector<int64_t>{2});
  EXPECT_EQ(back.data()[1], 9.0f);
  EXPECT_EQ(directoryEntries(), std::vector<std::string>{"a.npy"}); // no temporary files left

  llvm::Error err = writeNpy(path("no-such-dir/a.npy"), replacement);
  ASSERT_TRUE(bool(err));
  EXPECT_EQ(
      llvm::toString(std::move(err)).rfind("cannot create a temporary file next to " + path("no-such-dir/a.npy"), 0),
      0u);
}
