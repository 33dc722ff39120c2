//===- CacheEntry.cpp - the kernel cache's disk format ----------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/CacheEntry.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <streambuf>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace gnn::runtime;

uint64_t gnn::runtime::cacheHash(const char *data, size_t size,
                                 uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ull ^ seed;
  for (size_t i = 0; i < size; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 0x100000001b3ull;
  }
  return h;
}

void CacheKey::hash() {
  a = cacheHash(text.data(), text.size(), 0);
  b = cacheHash(text.data(), text.size(), 0x9e3779b97f4a7c15ull);
}

std::string CacheKey::hex() const {
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx",
                static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return buf;
}

namespace {
constexpr char kMagic[8] = {'G', 'N', 'N', 'C', 'C', 'U', 'B', '1'};

/// The fixed-size header in front of every entry.
struct EntryHeader {
  char magic[8];
  uint64_t keyA, keyB, keySize, payloadSize, payloadHash;
};
} // namespace

bool gnn::runtime::readCacheEntry(std::istream &is, uint64_t fileSize,
                                  const CacheKey &key,
                                  std::vector<char> &image) {
  EntryHeader h;
  if (!is.read(reinterpret_cast<char *>(&h), sizeof(h)) ||
      std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0 || h.keyA != key.a ||
      h.keyB != key.b || h.keySize != key.text.size() ||
      h.payloadSize > kMaxCacheEntryPayload ||
      fileSize != sizeof(h) + h.keySize + h.payloadSize)
    return false;
  // The full key text follows the header: compare it, no hash collisions.
  std::string stored(h.keySize, '\0');
  if (!is.read(stored.data(), h.keySize) || stored != key.text)
    return false;
  image.resize(h.payloadSize);
  if (!is.read(image.data(), h.payloadSize) ||
      is.peek() != std::char_traits<char>::eof())
    return false;
  return cacheHash(image.data(), image.size(), 0) == h.payloadHash;
}

void gnn::runtime::writeCacheEntry(std::ostream &os, const CacheKey &key,
                                   const std::vector<char> &image) {
  EntryHeader h;
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.keyA = key.a;
  h.keyB = key.b;
  h.keySize = key.text.size();
  h.payloadSize = image.size();
  h.payloadHash = cacheHash(image.data(), image.size(), 0);
  os.write(reinterpret_cast<const char *>(&h), sizeof(h));
  os.write(key.text.data(), key.text.size());
  os.write(image.data(), image.size());
}

//===----------------------------------------------------------------------===//
// The cache directory and its files: trusted only when only we can write them
//===----------------------------------------------------------------------===//

namespace {
/// A file descriptor closed on scope exit.
struct Fd {
  int fd = -1;
  explicit Fd(int fd) : fd(fd) {}
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
  explicit operator bool() const { return fd >= 0; }
};

/// An input stream buffer reading an open file descriptor.
class FdInBuf : public std::streambuf {
public:
  explicit FdInBuf(int fd) : fd(fd) {}

protected:
  int_type underflow() override {
    if (gptr() < egptr())
      return traits_type::to_int_type(*gptr());
    ssize_t n;
    do
      n = ::read(fd, buf, sizeof(buf));
    while (n < 0 && errno == EINTR);
    if (n <= 0)
      return traits_type::eof();
    setg(buf, buf, buf + n);
    return traits_type::to_int_type(*gptr());
  }

private:
  int fd;
  char buf[1 << 16];
};

/// The octal permission bits of `mode`, e.g. "0777".
std::string octalMode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

/// Says once per process and directory why the cache is not used or not
/// written: the work is still done, every time, which the user should know.
void warnCache(const std::string &dir, const std::string &what) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!warned.insert(dir).second)
      return;
  }
  std::fprintf(stderr,
               "gnnc: warning: the cache '%s' %s; kernels are compiled and "
               "schedules tuned every time (set GNNC_CACHE_DIR to a directory "
               "only you can write)\n",
               dir.c_str(), what.c_str());
}
} // namespace

std::string gnn::runtime::untrustedCacheFile(const struct stat &st,
                                             bool directory) {
  if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
    return directory ? "is not a directory" : "is not a regular file";
  std::string owner = "owner uid " + std::to_string(st.st_uid) + ", mode " +
                      octalMode(st.st_mode);
  if (st.st_uid != geteuid())
    return "is not owned by uid " + std::to_string(geteuid()) + " (" + owner +
           ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return "is writable by group or others (" + owner + ")";
  return "";
}

/// Opens the cache directory `dir` (not following a symbolic link) and checks
/// it on the open descriptor. -1 when there is none (`why` empty), it cannot
/// be opened or it is not to be trusted (`why` says why; `untrusted` tells
/// the last).
static int openCacheDir(const std::string &dir, std::string &why,
                        bool &untrusted) {
  why.clear();
  untrusted = false;
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    struct stat st;
    if (err == ENOENT)
      return -1;
    if (::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      why = "is a symbolic link";
      untrusted = true;
    } else if (err == ENOTDIR) {
      why = "is not a directory";
    } else {
      why = std::string("cannot be opened (") + std::strerror(err) + ")";
    }
    return -1;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    why = std::string("cannot be inspected (") + std::strerror(errno) + ")";
  } else {
    why = untrustedCacheFile(st, /*directory=*/true);
    untrusted = !why.empty();
  }
  if (!why.empty()) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool gnn::runtime::readCacheFile(const std::string &dir,
                                 const std::string &suffix,
                                 const CacheKey &key, std::vector<char> &image) {
  // A folder that is missing or cannot be opened is only a miss (writing
  // the entry reports it); one that is not to be trusted is said so here.
  std::string why;
  bool untrusted = false;
  Fd dirFd(openCacheDir(dir, why, untrusted));
  if (!dirFd) {
    if (untrusted)
      warnCache(dir, "is not used: it " + why);
    return false;
  }
  std::string name = key.hex() + suffix;
  // Not through a symbolic link, and without blocking on a FIFO (which is
  // then refused as not a regular file).
  Fd fd(::openat(dirFd.fd, name.c_str(),
                 O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd)
    return false;
  struct stat st;
  if (::fstat(fd.fd, &st) != 0 || !S_ISREG(st.st_mode))
    return false;
  // An entry someone else could have written is ignored (and replaced).
  if (std::string bad = untrustedCacheFile(st, /*directory=*/false);
      !bad.empty()) {
    warnCache(dir, "holds an entry that is not used: '" + name + "' " + bad);
    return false;
  }
  FdInBuf buf(fd.fd);
  std::istream is(&buf);
  return readCacheEntry(is, static_cast<uint64_t>(st.st_size), key, image);
}

/// Writes all of `data` to `fd`; false with errno set on failure.
static bool writeAll(int fd, const char *data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = EIO;
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

void gnn::runtime::writeCacheFile(const std::string &dir,
                                  const std::string &suffix,
                                  const CacheKey &key,
                                  const std::vector<char> &image) {
  namespace fs = std::filesystem;
  // The parents as any tool makes them, the cache itself for us alone.
  std::error_code ec;
  fs::path parent = fs::path(dir).parent_path();
  if (!parent.empty())
    fs::create_directories(parent, ec);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    warnCache(dir, std::string("cannot be written (") + std::strerror(errno) +
                       ")");
    return;
  }
  std::string why;
  bool untrusted = false;
  Fd dirFd(openCacheDir(dir, why, untrusted));
  if (!dirFd) {
    warnCache(dir, untrusted     ? "is not used: it " + why
                   : why.empty() ? "cannot be written (it disappeared)"
                                 : "cannot be written: it " + why);
    return;
  }
  std::string name = key.hex() + suffix;
  std::random_device rd;
  std::string tmp = name + ".tmp." + std::to_string(getpid()) + "." +
                    std::to_string(rd());
  std::ostringstream os;
  writeCacheEntry(os, key, image);
  std::string bytes = os.str();
  // A new private file, then renamed into place: concurrent writers each
  // write their own, readers see the old entry or the new one.
  int fd = ::openat(dirFd.fd, tmp.c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    warnCache(dir, std::string("cannot be written (") + std::strerror(errno) +
                       ")");
    return;
  }
  bool ok = writeAll(fd, bytes.data(), bytes.size());
  int err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && ::renameat(dirFd.fd, tmp.c_str(), dirFd.fd, name.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    // The reason is kept before the cleanup can change errno.
    ::unlinkat(dirFd.fd, tmp.c_str(), 0);
    warnCache(dir, std::string("cannot be written (") + std::strerror(err) +
                       ")");
  }
}
