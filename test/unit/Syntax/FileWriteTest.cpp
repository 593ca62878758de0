// The one writer every layer uses: atomic replacement keeps mode and owner, in-place rewrites write
// through symbolic links, keep hard links, and refuse a file that changed since it was read
// (reliability report D4, D11, D20).
#include "Syntax/SourceBuffer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

using namespace accelopt::syntax;

namespace {

class FileWriteTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("accelopt-write", Dir)); }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }

  std::string path(llvm::StringRef name) {
    llvm::SmallString<256> p(Dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  static std::string read(const std::string &p) {
    auto buf = llvm::MemoryBuffer::getFile(p);
    return buf ? (*buf)->getBuffer().str() : "<missing>";
  }
  static void write(const std::string &p, llvm::StringRef text) { ASSERT_FALSE(bool(writeFileAtomically(p, text))); }
  static mode_t mode(const std::string &p) {
    struct stat st;
    EXPECT_EQ(::stat(p.c_str(), &st), 0);
    return st.st_mode & 07777;
  }
  /// Names left in the directory (no temporary or backup file may stay behind).
  size_t entries() {
    std::error_code ec;
    size_t n = 0;
    for (llvm::sys::fs::directory_iterator it(Dir, ec), end; it != end && !ec; it.increment(ec)) ++n;
    return n;
  }

  llvm::SmallString<128> Dir;
};

TEST_F(FileWriteTest, ReplacementKeepsTheMode) {
  std::string p = path("k.py");
  write(p, "old\n");
  ASSERT_EQ(::chmod(p.c_str(), 0600), 0);
  ASSERT_FALSE(bool(rewriteFileInPlace(p, "old\n", "new\n")));
  EXPECT_EQ(read(p), "new\n");
  EXPECT_EQ(mode(p), 0600u);
  ASSERT_EQ(::chmod(p.c_str(), 0755), 0);
  write(p, "newer\n");
  EXPECT_EQ(mode(p), 0755u);
  EXPECT_EQ(entries(), 1u);
}

TEST_F(FileWriteTest, ReplacementKeepsTheOwnerWherePermitted) {
  if (::geteuid() != 0) GTEST_SKIP() << "changing a file's owner needs root";
  std::string p = path("owned.py");
  write(p, "old\n");
  ASSERT_EQ(::chown(p.c_str(), 65534, 65534), 0); // nobody:nogroup
  ASSERT_FALSE(bool(rewriteFileInPlace(p, "old\n", "new\n")));
  struct stat st;
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
}

TEST_F(FileWriteTest, InPlaceWritesThroughASymlink) {
  std::string real = path("real.py"), link = path("link.py");
  write(real, "old\n");
  ASSERT_EQ(::symlink(real.c_str(), link.c_str()), 0);
  ASSERT_FALSE(bool(rewriteFileInPlace(link, "old\n", "new\n")));
  EXPECT_EQ(read(real), "new\n");
  struct stat st;
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link must stay a link";
}

TEST_F(FileWriteTest, OutputPathThatIsASymlinkIsReplacedNotFollowed) {
  std::string victim = path("victim.txt"), link = path("out.py");
  write(victim, "keep me\n");
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  write(link, "output\n");
  EXPECT_EQ(read(victim), "keep me\n");
  EXPECT_EQ(read(link), "output\n");
}

TEST_F(FileWriteTest, InPlaceKeepsHardLinks) {
  std::string a = path("a.py"), b = path("b.py");
  write(a, "old\n");
  ASSERT_EQ(::link(a.c_str(), b.c_str()), 0);
  ASSERT_FALSE(bool(rewriteFileInPlace(a, "old\n", "a longer new text\n")));
  EXPECT_EQ(read(a), "a longer new text\n");
  EXPECT_EQ(read(b), "a longer new text\n");
  ASSERT_FALSE(bool(rewriteFileInPlace(b, "a longer new text\n", "short\n")));
  EXPECT_EQ(read(a), "short\n");
  EXPECT_EQ(entries(), 2u) << "the backup of the old text is removed";
}

TEST_F(FileWriteTest, InPlaceRefusesAFileChangedSinceItWasRead) {
  std::string p = path("k.py");
  write(p, "edited by the user\n");
  llvm::Error err = rewriteFileInPlace(p, "what the tool read\n", "rewritten\n");
  ASSERT_TRUE(bool(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("conflict: the file changed on disk since it was read"),
            std::string::npos);
  EXPECT_EQ(read(p), "edited by the user\n");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(FileWriteTest, InPlaceDoesNotBringBackADeletedFile) {
  std::string p = path("gone.py");
  llvm::Error err = rewriteFileInPlace(p, "old\n", "new\n");
  ASSERT_TRUE(bool(err));
  llvm::consumeError(std::move(err));
  EXPECT_FALSE(llvm::sys::fs::exists(p));
}

TEST_F(FileWriteTest, ErrorsNameTheCause) {
  std::string p = path("missing-dir/out.json");
  llvm::Error err = writeFileAtomically(p, "x");
  ASSERT_TRUE(bool(err));
  std::string msg = llvm::toString(std::move(err));
  EXPECT_NE(msg.find("cannot create a temporary file in"), std::string::npos) << msg;
  EXPECT_NE(msg.find("No such file or directory"), std::string::npos) << msg;
}

TEST_F(FileWriteTest, AFifoIsNotReadAsAKernel) {
  std::string p = path("fifo.py");
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  auto buf = SourceBuffer::fromFile(p);
  ASSERT_FALSE(bool(buf));
  EXPECT_NE(llvm::toString(buf.takeError()).find("is not a regular file"), std::string::npos);
  // llvm::sys::fs::remove refuses a FIFO, so TearDown's remove_directories would leave the directory behind.
  EXPECT_EQ(::unlink(p.c_str()), 0);
}

} // namespace

namespace {

TEST(SourceBufferInput, OldMacLineEndingsAreNamed) {
  auto buf = SourceBuffer::fromText("cr.py", "import neuronxcc.nki as nki\r@nki.jit\rdef kernel(x):\r  return x\r");
  ASSERT_FALSE(bool(buf));
  EXPECT_NE(llvm::toString(buf.takeError()).find("cr.py: error: lines end in a lone CR (old Mac line endings)"),
            std::string::npos);
  auto crlf = SourceBuffer::fromText("crlf.py", "a = 1\r\nb = 2\r\n");
  EXPECT_TRUE(bool(crlf));
  if (!crlf) llvm::consumeError(crlf.takeError());
}

} // namespace
