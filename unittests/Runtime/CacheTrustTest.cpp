//===- CacheTrustTest.cpp - whose kernel cache is trusted -----------------===//
//
// Part of gnnc. The cache folder and its entries are used only when the
// effective user owns them and nobody else can write them: an entry's
// checksum detects accidents, not another user planting a kernel. Runs
// without CUDA; the tests of other owners run only as root.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/CacheEntry.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace gnn::runtime;
namespace fs = std::filesystem;

namespace {

/// A uid that is not ours (nobody's, usually).
constexpr uid_t kOtherUid = 65534;

CacheKey makeKey(std::string text) {
  CacheKey key;
  key.text = std::move(text);
  key.hash();
  return key;
}

/// A folder of its own for each test (traversable by others, so that a
/// process of another user can reach the cache inside it).
class TempDir {
public:
  TempDir() {
    path = fs::temp_directory_path() /
           ("gnnc-trust-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
    fs::permissions(path, fs::perms(0755));
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
};

mode_t modeOf(const fs::path &p) {
  struct stat st;
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

size_t entries(const fs::path &dir) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec))
    ++n;
  return n;
}

const std::vector<char> kImage = {'\x7f', 'E', 'L', 'F', 'x', 'y'};

/// Writes the entry for `key` in `dir` and checks it reads back.
void writeGood(const fs::path &dir, const CacheKey &key) {
  writeCacheFile(dir.string(), ".cubin", key, kImage);
  std::vector<char> out;
  ASSERT_TRUE(readCacheFile(dir.string(), ".cubin", key, out));
  ASSERT_EQ(out, kImage);
}

/// What reading `key` from `dir` prints, and whether it was read.
std::string readQuietly(const fs::path &dir, const CacheKey &key, bool &hit) {
  std::vector<char> out;
  testing::internal::CaptureStderr();
  hit = readCacheFile(dir.string(), ".cubin", key, out);
  return testing::internal::GetCapturedStderr();
}

} // namespace

TEST(CacheTrust, CreatesAPrivateFolderAndPrivateEntries) {
  TempDir t;
  fs::path dir = t.path / "parent" / "cache";
  CacheKey key = makeKey("k");
  writeGood(dir, key);
  EXPECT_EQ(modeOf(dir), 0700u);
  EXPECT_EQ(modeOf(dir / (key.hex() + ".cubin")), 0600u);
  EXPECT_EQ(entries(dir), 1u) << "the temporary was left behind";
}

TEST(CacheTrust, AnExistingFolderOnlyWeCanWriteIsUsed) {
  // 0755: what earlier versions created; others may read, not write.
  TempDir t;
  fs::path dir = t.path / "cache";
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms(0755));
  writeGood(dir, makeKey("k"));
}

TEST(CacheTrust, FolderWritableByGroupOrOthersIsNotUsed) {
  for (unsigned mode : {0777u, 0770u, 0702u}) {
    TempDir t;
    fs::path dir = t.path / ("cache" + std::to_string(mode));
    CacheKey key = makeKey("k");
    writeGood(dir, key);
    fs::permissions(dir, fs::perms(mode));
    bool hit = true;
    std::string err = readQuietly(dir, key, hit);
    EXPECT_FALSE(hit) << "an entry in a folder others can write was read";
    char octal[8];
    std::snprintf(octal, sizeof(octal), "%04o", mode);
    EXPECT_NE(err.find("gnnc: warning: the cache '" + dir.string() +
                       "' is not used: it is writable by group or others "
                       "(owner uid " +
                       std::to_string(geteuid()) + ", mode " + octal + ")"),
              std::string::npos)
        << err;
    // Nothing is written there either, and the warning is not repeated.
    testing::internal::CaptureStderr();
    writeCacheFile(dir.string(), ".cubin", makeKey("other"), kImage);
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
    EXPECT_EQ(entries(dir), 1u);
  }
}

TEST(CacheTrust, SymlinkedFolderIsNotUsed) {
  TempDir t;
  fs::path real = t.path / "real", link = t.path / "link";
  CacheKey key = makeKey("k");
  writeGood(real, key);
  fs::create_directory_symlink(real, link);
  bool hit = true;
  std::string err = readQuietly(link, key, hit);
  EXPECT_FALSE(hit);
  EXPECT_NE(err.find("the cache '" + link.string() +
                     "' is not used: it is a symbolic link"),
            std::string::npos)
      << err;
  writeCacheFile(link.string(), ".cubin", makeKey("other"), kImage);
  EXPECT_EQ(entries(real), 1u);
}

TEST(CacheTrust, EntryWritableByOthersIsIgnoredAndReplaced) {
  TempDir t;
  fs::path dir = t.path / "cache";
  CacheKey key = makeKey("k");
  writeGood(dir, key);
  fs::path entry = dir / (key.hex() + ".cubin");
  fs::permissions(entry, fs::perms(0666));
  bool hit = true;
  std::string err = readQuietly(dir, key, hit);
  EXPECT_FALSE(hit);
  EXPECT_NE(err.find("holds an entry that is not used: '" + key.hex() +
                     ".cubin' is writable by group or others"),
            std::string::npos)
      << err;
  // The compiler then writes it again: private, and trusted.
  writeGood(dir, key);
  EXPECT_EQ(modeOf(entry), 0600u);
}

TEST(CacheTrust, SymlinkedEntryIsIgnored) {
  TempDir t;
  fs::path dir = t.path / "cache", elsewhere = t.path / "elsewhere";
  CacheKey key = makeKey("k");
  writeGood(elsewhere, key);
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms(0700));
  fs::create_symlink(elsewhere / (key.hex() + ".cubin"),
                     dir / (key.hex() + ".cubin"));
  bool hit = true;
  readQuietly(dir, key, hit);
  EXPECT_FALSE(hit);
}

TEST(CacheTrust, FolderAndEntryOfAnotherUserAreNotUsed) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root to give files to another user";
  TempDir t;
  fs::path dir = t.path / "cache";
  CacheKey key = makeKey("k");
  writeGood(dir, key);
  fs::path entry = dir / (key.hex() + ".cubin");
  // The entry of another user, in our folder.
  ASSERT_EQ(::chown(entry.c_str(), kOtherUid, 0), 0);
  bool hit = true;
  std::string err = readQuietly(dir, key, hit);
  EXPECT_FALSE(hit);
  EXPECT_NE(err.find("'" + key.hex() + ".cubin' is not owned by uid 0 (owner "
                                       "uid 65534, mode 0600)"),
            std::string::npos)
      << err;
  // The folder of another user (mode 0700: only they can write it).
  fs::path other = t.path / "other";
  writeGood(other, key);
  ASSERT_EQ(::chown(other.c_str(), kOtherUid, 0), 0);
  err = readQuietly(other, key, hit);
  EXPECT_FALSE(hit);
  EXPECT_NE(err.find("the cache '" + other.string() +
                     "' is not used: it is not owned by uid 0 (owner uid "
                     "65534, mode 0700)"),
            std::string::npos)
      << err;
}

TEST(CacheTrust, ReadOnlyFolderReportsTheRealReason) {
  // The reason was once overwritten by the cleanup ("No such file or
  // directory"). Root writes anywhere: it is tested as another user.
  TempDir t;
  fs::path dir = t.path / "cache", log = t.path / "stderr";
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms(0500));
  if (geteuid() == 0) {
    ASSERT_EQ(::chown(dir.c_str(), kOtherUid, 0), 0);
  }
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    FILE *f = std::freopen(log.c_str(), "w", stderr);
    if (!f || (geteuid() == 0 && ::setuid(kOtherUid) != 0))
      _exit(2);
    writeCacheFile(dir.string(), ".cubin", makeKey("k"), kImage);
    std::fflush(stderr);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::ifstream in(log);
  std::stringstream err;
  err << in.rdbuf();
  EXPECT_NE(err.str().find("the cache '" + dir.string() +
                           "' cannot be written (Permission denied)"),
            std::string::npos)
      << err.str();
  EXPECT_EQ(entries(dir), 0u);
}
