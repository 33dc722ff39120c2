//===- TensorTest.cpp - .npy files -----------------------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Tensor/Tensor.h"
#include "gnn/Tensor/HalfFloat.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace gnn;
namespace fs = std::filesystem;

namespace {

// Large tensors' memory is handed out again for the next tensor of its size
// class (a training step's shapes repeat, a sampled subgraph's nearly),
// small ones and other classes are not, and what is kept never exceeds the
// limit, the most recently freed kept first. (Sizes no other test of this
// binary uses: the kept blocks are the process's.)
TEST(HostMemory, LargeBlocksReusedForTheSameSizeClassWithinTheLimit) {
  const int64_t big = (int64_t(3) << 20) / 8 + 1; // 3 MiB and 8 bytes
  if (!kHostReuse) { // (under AddressSanitizer) nothing is kept
    { Tensor t({big}, 1.5); }
    EXPECT_EQ(hostBytesKept(), 0u);
    return;
  }
  size_t before = hostBytesKept();
  const double *first;
  {
    Tensor t({big}, 1.5);
    first = t.data.data();
  }
  EXPECT_EQ(hostBytesKept(), before + hostBlockBytes(big * 8));
  {
    Tensor other({2 * big}); // another class: not that block
    EXPECT_NE(other.data.data(), first);
    // 8,000 bytes more, the same class (3 MiB + 128 KiB): that block,
    // refilled.
    Tensor near({big + 1000}, 2.0);
    EXPECT_EQ(near.data.data(), first);
    EXPECT_EQ(near.data[0], 2.0);
    EXPECT_EQ(near.data[big + 999], 2.0);
  }
  {
    Tensor same({big}, 3.0); // the same size again: that block
    EXPECT_EQ(same.data.data(), first);
    EXPECT_EQ(same.data[big - 1], 3.0);
  }
  size_t kept = hostBytesKept();
  {
    Tensor small({1000}); // below kHostReuseMinBytes: never kept
  }
  EXPECT_EQ(hostBytesKept(), kept);

  // More freed than the limit holds: at most the limit kept, the newest
  // blocks. Eight blocks of one class are freed (all kept: the limit is at
  // least what was in use at once), then eight of the next class: the
  // oldest of the first go. (Raw blocks: their pages are never touched.)
  const size_t part = kHostReuseBytes / 5 + 24, next = hostBlockBytes(part) + 8;
  ASSERT_LT(hostBlockBytes(part), hostBlockBytes(next));
  std::vector<void *> blocks;
  for (int i = 0; i < 8; ++i)
    blocks.push_back(allocateHostBlock(part));
  for (void *p : blocks) // freed first to last: the last is the newest
    freeHostBlock(p, part);
  // (Where a quarter of the machine's memory is less, the limit is that.)
  bool roomy = hostReuseLimit() >= hostBlockBytes(next) * 8;
  EXPECT_LE(hostBytesKept(), hostReuseLimit());
  if (roomy)
    EXPECT_GE(hostBytesKept(), hostBlockBytes(part) * 8);
  blocks.clear();
  for (int i = 0; i < 8; ++i)
    blocks.push_back(allocateHostBlock(next));
  void *newest = blocks.back();
  for (void *p : blocks)
    freeHostBlock(p, next);
  EXPECT_LE(hostBytesKept(), hostReuseLimit());
  if (roomy)
    EXPECT_GE(hostBytesKept(), hostBlockBytes(next) * 8);
  void *again = allocateHostBlock(next + 16); // (next's class)
  EXPECT_EQ(again, newest);
  freeHostBlock(again, next + 16);
}

// Size classes: below 1 MiB a request's own size; above, rounded up to a
// sixteenth of its power of two (at most 1/16 more), the same class for
// every size between two steps.
TEST(HostMemory, SizeClassesRoundUpBySixteenthsOfAPowerOfTwo) {
  const size_t mib = size_t(1) << 20;
  EXPECT_EQ(hostBlockBytes(1000), 1000u);
  EXPECT_EQ(hostBlockBytes(mib - 8), mib - 8);
  EXPECT_EQ(hostBlockBytes(mib), mib);
  EXPECT_EQ(hostBlockBytes(mib + 1), mib + mib / 16);
  EXPECT_EQ(hostBlockBytes(3 * mib + 8), 3 * mib + mib / 8);
  EXPECT_EQ(hostBlockBytes(3 * mib + mib / 8), 3 * mib + mib / 8);
  EXPECT_EQ(hostBlockBytes(100 * mib + 1), 100 * mib + 4 * mib);
  for (size_t b = mib; b < 64 * mib; b += 4093) {
    size_t c = hostBlockBytes(b);
    ASSERT_GE(c, b);
    ASSERT_LE(c - b, b / 16) << b;
    ASSERT_EQ(hostBlockBytes(c), c) << b;
  }
}

// What is kept follows the largest evaluation: blocks of 384 MiB in all,
// in use at once and then freed, are all kept (above kHostReuseBytes, the
// fixed limit of before, where a third of them went back to the system each
// step), unless that is more than a quarter of the machine's memory; and
// releaseHostBlocks gives everything back.
TEST(HostMemory, KeptBytesFollowTheMostInUseAtOnce) {
  const size_t block = (size_t(128) << 20) + 40;
  std::vector<void *> blocks;
  for (int i = 0; i < 3; ++i)
    blocks.push_back(allocateHostBlock(block));
  for (void *p : blocks)
    freeHostBlock(p, block);
  if (!kHostReuse) {
    EXPECT_EQ(hostBytesKept(), 0u);
    EXPECT_EQ(releaseHostBlocks(), 0u);
    return;
  }
  size_t all = 3 * hostBlockBytes(block);
  EXPECT_GE(hostReuseLimit(), std::min<size_t>(
                                  all, sysconf(_SC_PHYS_PAGES) / 4 *
                                           size_t(sysconf(_SC_PAGESIZE))));
  if (hostReuseLimit() >= all)
    EXPECT_GE(hostBytesKept(), all);
  size_t kept = hostBytesKept();
  EXPECT_EQ(releaseHostBlocks(), kept);
  EXPECT_EQ(hostBytesKept(), 0u);
  EXPECT_EQ(releaseHostBlocks(), 0u);
}

// Sizes that change from step to step: a request that finds no block of
// its class first gives back the kept blocks that the blocks in use leave
// no room for under the peak. Four blocks of 200 MiB are freed (kept: the
// peak was 800 MiB), then four of the next class are made: the kept ones
// go back as they come (without the rule, 800 MiB kept beside 832 in use).
TEST(HostMemory, BlocksOfOtherSizesGoBackRatherThanRaiseThePeak) {
  const size_t a = size_t(200) << 20, b = hostBlockBytes(a) + 8;
  if (sysconf(_SC_PHYS_PAGES) / 4 * size_t(sysconf(_SC_PAGESIZE)) <
      5 * hostBlockBytes(b))
    GTEST_SKIP() << "a quarter of this machine's memory is below 1 GiB";
  releaseHostBlocks();
  std::vector<void *> blocks;
  for (int i = 0; i < 4; ++i)
    blocks.push_back(allocateHostBlock(a));
  for (void *p : blocks)
    freeHostBlock(p, a);
  if (!kHostReuse) { // (under AddressSanitizer) nothing is kept
    EXPECT_EQ(hostBytesKept(), 0u);
    return;
  }
  EXPECT_EQ(hostBytesKept(), 4 * hostBlockBytes(a));
  blocks.clear();
  for (int i = 0; i < 4; ++i) {
    blocks.push_back(allocateHostBlock(b));
    EXPECT_LE(hostBytesKept(), hostReuseLimit()) << i;
  }
  EXPECT_LE(hostBytesKept(), kHostReuseBytes);
  for (void *p : blocks)
    freeHostBlock(p, b);
  EXPECT_GE(hostBytesKept(), 4 * hostBlockBytes(b));
  releaseHostBlocks();
}

// A tensor made with a value has it everywhere, also in a kept block that
// held other values; Tensor::uninitialized has the shape's size (its
// values unset).
TEST(HostMemory, TensorsMadeWithAValueAreFilledInReusedBlocks) {
  const int64_t n = (int64_t(5) << 20) / 8 + 3;
  { Tensor junk({n}, -7.25); }
  Tensor zeros({n});
  Tensor ones({n}, 1.0);
  int64_t wrong = 0;
  for (int64_t k = 0; k < n; ++k)
    wrong += zeros.data[k] != 0.0 || ones.data[k] != 1.0;
  EXPECT_EQ(wrong, 0);
  Tensor unset = Tensor::uninitialized({n / 3, 3});
  EXPECT_EQ(unset.data.size(), size_t(n / 3 * 3));
  EXPECT_EQ(unset.shape, (std::vector<int64_t>{n / 3, 3}));
}

// Tensors made and freed on several threads at once: each gets a block of
// its own (values written by one thread are not seen changed by another).
TEST(HostMemory, ThreadsGetBlocksOfTheirOwn) {
  const int64_t n = (int64_t(2) << 20) / 8 + 5;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 50; ++k) {
        Tensor a({n}, double(t * 1000 + k));
        Tensor b({n}, -double(t * 1000 + k));
        if (a.data[n / 2] != double(t * 1000 + k) ||
            b.data[n - 1] != -double(t * 1000 + k))
          ++wrong;
      }
    });
  for (std::thread &th : threads)
    th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(hostBytesKept(), hostReuseLimit());
}

// fork() while another thread makes and frees large tensors: the child's
// first large tensor does not wait for ever on the kept blocks' lock (held
// by a thread that does not exist in the child). Each child has 10 s.
TEST(HostMemory, ForkWhileAnotherThreadAllocatesLeavesTheChildWorking) {
  const int64_t n = (int64_t(2) << 20) / 8 + 7;
  std::atomic<bool> stop{false};
  // (Blocks taken and given back in a tight loop: the thread holds the
  // lock much of the time.)
  std::thread busy([&] {
    while (!stop.load()) {
      void *a = allocateHostBlock(n * 8);
      void *b = allocateHostBlock(n * 8);
      freeHostBlock(a, n * 8);
      freeHostBlock(b, n * 8);
    }
  });
  int stuck = 0, failed = 0;
  for (int k = 0; k < 100; ++k) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      alarm(10);
      Tensor c({n}, 3.0);
      Tensor d({n}, 4.0);
      _exit(c.data[n - 1] == 3.0 && d.data[0] == 4.0 ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    stuck += WIFSIGNALED(status);
    failed += WIFEXITED(status) && WEXITSTATUS(status) != 0;
    if (stuck || failed)
      break;
  }
  stop = true;
  busy.join();
  EXPECT_EQ(stuck, 0);
  EXPECT_EQ(failed, 0);
}

TEST(Npy, RoundTripFloat64) {
  Tensor t({2, 3});
  for (int i = 0; i < 6; ++i)
    t.data[i] = 0.1 * i - 0.25;
  fs::path p = fs::temp_directory_path() / "gnnc-npy-f64.npy";
  ASSERT_EQ(writeNpy(p.string(), t, NpyType::Float64), "");
  Tensor back;
  ASSERT_EQ(readNpy(p.string(), back), "");
  EXPECT_EQ(back.shape, t.shape);
  EXPECT_EQ(back.data, t.data);
  // The header is padded so the data starts on a 64-byte boundary.
  EXPECT_EQ(fs::file_size(p) % 8, 0u);
  EXPECT_EQ((fs::file_size(p) - 6 * sizeof(double)) % 64, 0u);
  fs::remove(p);
}

TEST(Npy, RoundTripFloat32AndVector) {
  Tensor t({5});
  for (int i = 0; i < 5; ++i)
    t.data[i] = static_cast<float>(1.0 / (i + 1));
  fs::path p = fs::temp_directory_path() / "gnnc-npy-f32.npy";
  ASSERT_EQ(writeNpy(p.string(), t, NpyType::Float32), "");
  Tensor back;
  ASSERT_EQ(readNpy(p.string(), back), "");
  EXPECT_EQ(back.shape, std::vector<int64_t>{5});
  EXPECT_EQ(back.data, t.data);
  fs::remove(p);
}

TEST(Npy, ScalarAndEmpty) {
  Tensor empty({0, 4});
  fs::path p = fs::temp_directory_path() / "gnnc-npy-empty.npy";
  ASSERT_EQ(writeNpy(p.string(), empty, NpyType::Float32), "");
  Tensor back;
  ASSERT_EQ(readNpy(p.string(), back), "");
  EXPECT_EQ(back.shape, (std::vector<int64_t>{0, 4}));
  fs::remove(p);
}

TEST(Npy, Errors) {
  fs::path p = fs::temp_directory_path() / "gnnc-npy-bad.npy";
  std::ofstream(p) << "not numpy";
  Tensor t;
  EXPECT_NE(readNpy(p.string(), t).find("is not a .npy file"), std::string::npos);
  EXPECT_NE(readNpy("/no/such.npy", t).find("cannot open"), std::string::npos);
  // Truncated data.
  Tensor big({100});
  ASSERT_EQ(writeNpy(p.string(), big, NpyType::Float64), "");
  fs::resize_file(p, fs::file_size(p) - 8);
  EXPECT_NE(readNpy(p.string(), t).find("data shorter than its shape [100]"),
            std::string::npos);
  fs::remove(p);
}

/// Writes a version-`version` `.npy` file with `header` (padded as numpy
/// does) and `payload` bytes, declaring `declaredLength` as the header
/// length when it is not 0.
static void writeRawNpy(const fs::path &p, const std::string &header,
                        size_t payload, int version = 1,
                        uint32_t declaredLength = 0) {
  std::string h = header;
  size_t lenBytes = version == 1 ? 2 : 4;
  while ((8 + lenBytes + h.size() + 1) % 64)
    h += ' ';
  h += '\n';
  uint32_t len = declaredLength ? declaredLength : h.size();
  std::ofstream os(p, std::ios::binary);
  os << "\x93NUMPY" << char(version) << char(0);
  for (size_t i = 0; i < lenBytes; ++i)
    os << char((len >> (8 * i)) & 0xff);
  os << h << std::string(payload, '\0');
}

// An empty file is read through the buffer's bulk read before anything is
// buffered (the fuzzers found a memcpy from its null get area, UBSan).
TEST(Npy, EmptyFileIsAnError) {
  fs::path p = fs::temp_directory_path() / "gnnc-npy-empty.npy";
  std::ofstream(p).close();
  Tensor t;
  EXPECT_NE(readNpy(p.string(), t), "");
  fs::remove(p);
}

TEST(Npy, HeaderChecksAgainstTheFile) {
  fs::path p = fs::temp_directory_path() / "gnnc-npy-lies.npy";
  Tensor t;
  // A shape whose element count overflows: refused before any allocation.
  writeRawNpy(p,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (6, "
              "9223372036854775807), }",
              1536);
  EXPECT_NE(readNpy(p.string(), t).find("shape [6, 9223372036854775807] of "
                                         "float32 holds more than 2^63 "
                                         "elements but the file has 1536 "
                                         "payload bytes"),
            std::string::npos)
      << readNpy(p.string(), t);
  // A shape far larger than the payload.
  writeRawNpy(p, "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000, 64), }", 16);
  EXPECT_NE(readNpy(p.string(), t).find("data shorter than its shape "
                                         "[1000000000000, 64]: "
                                         "256000000000000 payload bytes "
                                         "expected but 16 found"),
            std::string::npos)
      << readNpy(p.string(), t);
  // Trailing bytes beyond the shape.
  writeRawNpy(p, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 12);
  EXPECT_NE(readNpy(p.string(), t).find("12 payload bytes but its shape [2] "
                                         "of float32 holds 8"),
            std::string::npos)
      << readNpy(p.string(), t);
  // A version 2 header claiming 4 GiB: refused without reading it.
  writeRawNpy(p, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8,
              2, 0xffffffffu);
  EXPECT_NE(readNpy(p.string(), t).find("truncated header (4294967295 bytes "
                                         "declared, "),
            std::string::npos)
      << readNpy(p.string(), t);
  fs::remove(p);
}

/// The error of parseNpyHeaderDict on `text` ("" when it parses).
static std::string dictError(const std::string &text) {
  NpyHeader h;
  return parseNpyHeaderDict(text, h);
}

TEST(NpyHeaderDict, AcceptsWhatNumPyWrites) {
  NpyHeader h;
  ASSERT_EQ(parseNpyHeaderDict("{'descr': '<f4', 'fortran_order': False, "
                               "'shape': (3, 4), }          \n",
                               h),
            "");
  EXPECT_EQ(h.descr, "<f4");
  EXPECT_FALSE(h.fortranOrder);
  EXPECT_EQ(h.shape, (std::vector<int64_t>{3, 4}));
  // Any order, double quotes, no trailing comma, Python 2's long suffix.
  ASSERT_EQ(parseNpyHeaderDict("{\"shape\": (7L,), \"fortran_order\": True, "
                               "\"descr\": \"<i8\"}\n",
                               h),
            "");
  EXPECT_EQ(h.descr, "<i8");
  EXPECT_TRUE(h.fortranOrder);
  EXPECT_EQ(h.shape, (std::vector<int64_t>{7}));
  // A scalar; whitespace and newlines inside the dict.
  ASSERT_EQ(parseNpyHeaderDict("{ 'descr' : '|b1' ,\n 'fortran_order' : False "
                               ", 'shape' : ( ) , }",
                               h),
            "");
  EXPECT_TRUE(h.shape.empty());
  ASSERT_EQ(parseNpyHeaderDict("{'descr': '<f8', 'fortran_order': False, "
                               "'shape': (0, 9223372036854775807)}",
                               h),
            "");
  EXPECT_EQ(h.shape[1], 9223372036854775807);
}

TEST(NpyHeaderDict, RefusesRepeatedKeys) {
  // NumPy keeps the last value; we refuse, naming both places.
  EXPECT_EQ(dictError("{'descr': '<i8', 'fortran_order': False, 'shape': (2, "
                      "7), 'shape': (7, 2), }"),
            "malformed header at byte 58: the key 'shape' is repeated (first "
            "at byte 41)");
  EXPECT_EQ(dictError("{'descr': '<i8', 'fortran_order': True, 'shape': (2, "
                      "7), 'fortran_order': False, }"),
            "malformed header at byte 57: the key 'fortran_order' is repeated "
            "(first at byte 17)");
  EXPECT_NE(dictError("{'descr': '<i8', 'descr': '<f4', 'fortran_order': "
                      "False, 'shape': (2,)}")
                .find("the key 'descr' is repeated"),
            std::string::npos);
}

TEST(NpyHeaderDict, RefusesUnknownAndMissingKeys) {
  EXPECT_EQ(dictError("{'descr': '<f4', 'fortran_order': False, 'shape': "
                      "(2,), 'extra': 1}"),
            "malformed header at byte 56: unknown key 'extra' (expected "
            "'descr', 'fortran_order' or 'shape')");
  EXPECT_EQ(dictError("{'descr': '<f4', 'shape': (2,)}"),
            "malformed header at byte 30: the key 'fortran_order' is missing");
  EXPECT_EQ(dictError("{'descr': '<f4', 'fortran_order': False}"),
            "malformed header at byte 39: the key 'shape' is missing");
  EXPECT_NE(dictError("{}").find("the key 'descr' is missing"),
            std::string::npos);
  // A key that is not a string.
  EXPECT_EQ(dictError("{descr: '<f4'}"),
            "malformed header at byte 1: expected a key ('descr', "
            "'fortran_order' or 'shape') or '}' but found 'descr: '<f4'}'");
}

TEST(NpyHeaderDict, RefusesTrailingJunk) {
  const std::string ok =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  EXPECT_EQ(dictError(ok + "  \n"), "");
  EXPECT_EQ(dictError(ok + " x\n"),
            "malformed header at byte 58: expected only spaces and a newline "
            "after the dict but found 'x\\x0a'");
  EXPECT_NE(dictError(ok + "}").find("expected only spaces"),
            std::string::npos);
  EXPECT_NE(dictError(ok + std::string(1, '\0')).find("but found '\\x00'"),
            std::string::npos);
  // Missing closing brace; a missing comma between entries.
  EXPECT_EQ(dictError("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)"),
            "malformed header at byte 54: expected ',' or '}' but found the "
            "end of the header");
  EXPECT_NE(dictError("{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}")
                .find("at byte 16: expected ',' or '}'"),
            std::string::npos);
  EXPECT_NE(dictError("not a dict").find("at byte 0: expected '{'"),
            std::string::npos);
}

TEST(NpyHeaderDict, RefusesMalformedValues) {
  auto withShape = [](const std::string &shape) {
    return dictError("{'descr': '<f4', 'fortran_order': False, 'shape': " +
                     shape + "}");
  };
  // `(3)` is an integer in Python, not a tuple.
  EXPECT_EQ(withShape("(3)"),
            "malformed shape in header at byte 52: expected a tuple such as "
            "(3,) but found an integer in parentheses");
  EXPECT_EQ(withShape("(3, 4"),
            "malformed shape in header at byte 55: expected ',' or ')' but "
            "found '}'");
  EXPECT_EQ(withShape("(-6, 64)"),
            "malformed shape in header at byte 51: expected a nonnegative "
            "integer or ')' but found '-6, 64)}'");
  EXPECT_NE(withShape("(3,,)").find("expected a nonnegative integer but"),
            std::string::npos);
  EXPECT_NE(withShape("(07,)").find("expected an integer without leading "
                                    "zeros"),
            std::string::npos);
  EXPECT_NE(withShape("(3 4)").find("expected ',' or ')'"), std::string::npos);
  EXPECT_NE(withShape("[3, 4]").find("expected a tuple such as (3, 4)"),
            std::string::npos);
  EXPECT_NE(withShape("(0x10,)").find("expected ',' or ')'"),
            std::string::npos);
  EXPECT_EQ(withShape("(9223372036854775808,)"),
            "malformed shape in header at byte 51: expected a dimension below "
            "2^63 but found '9223372036854775808'");
  EXPECT_NE(dictError("{'descr': <f4, 'fortran_order': False, 'shape': (2,)}")
                .find("malformed descr in header at byte 10"),
            std::string::npos);
  EXPECT_NE(dictError("{'descr': '<f4\\'', 'fortran_order': False, 'shape': "
                      "(2,)}")
                .find("malformed descr in header"),
            std::string::npos);
  EXPECT_NE(dictError("{'descr': [('a', '<f4')], 'fortran_order': False, "
                      "'shape': (2,)}")
                .find("malformed descr in header"),
            std::string::npos);
  EXPECT_NE(dictError("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}")
                .find("malformed fortran_order in header at byte 34: expected "
                      "True or False but found '0, "),
            std::string::npos);
  EXPECT_NE(dictError("{'descr': '<f4', 'fortran_order': Falsey, 'shape': "
                      "(2,)}")
                .find("malformed fortran_order in header"),
            std::string::npos);
}

TEST(Npy, HeaderErrorsNameTheFileAndByte) {
  fs::path p = fs::temp_directory_path() / "gnnc-npy-duplicate.npy";
  // The reproducer of issue 34: NumPy reads [7, 2], a reader taking the first
  // key [2, 7].
  writeRawNpy(p,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 7), "
              "'shape': (7, 2), }",
              56);
  Tensor t;
  EXPECT_EQ(readNpy(p.string(), t),
            "'" + p.string() +
                "': malformed header at byte 68: the key 'shape' is repeated "
                "(first at byte 51)");
  fs::remove(p);
}

TEST(Npy, RefusesWhatIsNotARegularFile) {
  fs::path dir = fs::temp_directory_path() / "gnnc-npy-not-regular";
  fs::remove_all(dir);
  fs::create_directories(dir / "folder.npy");
  Tensor t;
  EXPECT_EQ(readNpy((dir / "folder.npy").string(), t),
            "'" + (dir / "folder.npy").string() +
                "' is a folder, not a regular file");
  // A FIFO without a writer: refused at once, not waited on.
  fs::path fifo = dir / "fifo.npy";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(readNpy(fifo.string(), t),
            "'" + fifo.string() + "' is a FIFO, not a regular file");
  EXPECT_EQ(readNpy("/dev/null", t),
            "'/dev/null' is a character device, not a regular file");
  // A symbolic-link loop.
  fs::create_symlink("loop.npy", dir / "loop.npy");
  EXPECT_EQ(readNpy((dir / "loop.npy").string(), t),
            "cannot open '" + (dir / "loop.npy").string() +
                "': Too many levels of symbolic links");
  fs::remove_all(dir);
}

TEST(ReadableFile, StreamSeeksAndReads) {
  fs::path p = fs::temp_directory_path() / "gnnc-readable-file.bin";
  std::string text;
  for (int i = 0; i < 200000; ++i)
    text += static_cast<char>('a' + i % 26);
  std::ofstream(p, std::ios::binary) << text;
  ReadableFile f;
  ASSERT_EQ(f.open(p.string()), "");
  EXPECT_EQ(f.size(), text.size());
  std::istream &is = f.stream();
  char head[5] = {};
  ASSERT_TRUE(is.read(head, 4));
  EXPECT_STREQ(head, "abcd");
  EXPECT_EQ(is.tellg(), std::streampos(4));
  is.seekg(0, std::ios::end);
  EXPECT_EQ(is.tellg(), std::streampos(text.size()));
  is.seekg(70000);
  std::string rest(text.size() - 70000, '\0');
  ASSERT_TRUE(is.read(rest.data(), rest.size()));
  EXPECT_EQ(rest, text.substr(70000));
  EXPECT_FALSE(is.read(head, 1));
  fs::remove(p);
}

} // namespace

namespace {

using ::gnn::halfBits;
using ::gnn::HalfKind;
using ::gnn::halfValue;
using ::gnn::roundToHalf;

TEST(HalfFloat, RoundsToNearestEvenFromTheDouble) {
  // bf16 keeps 8 significand bits: 1 + 2^-8 is halfway between 1 and
  // 1 + 2^-7, and goes to the even one (1); 1 + 3 2^-8 to 1 + 2^-6.
  EXPECT_EQ(roundToHalf(1 + 0x1p-8, HalfKind::BF16), 1.0);
  EXPECT_EQ(roundToHalf(1 + 3 * 0x1p-8, HalfKind::BF16), 1 + 0x1p-6);
  EXPECT_EQ(roundToHalf(1 + 0x1p-8 + 0x1p-30, HalfKind::BF16), 1 + 0x1p-7);
  EXPECT_EQ(roundToHalf(-5.0 / 3, HalfKind::BF16), -1.6640625);
  // f16 keeps 11: 5/3 = 1706.67 quanta of 2^-10.
  EXPECT_EQ(roundToHalf(-5.0 / 3, HalfKind::F16), -1.6669921875);
  EXPECT_EQ(roundToHalf(1 + 0x1p-11, HalfKind::F16), 1.0);
  // Once from the double, not through f32: a value just above a bf16 tie
  // whose f32 rounding would land on the tie still rounds up.
  double above = 1 + 0x1p-8 + 0x1p-40;
  EXPECT_EQ(static_cast<double>(static_cast<float>(above)), 1 + 0x1p-8);
  EXPECT_EQ(roundToHalf(above, HalfKind::BF16), 1 + 0x1p-7);
}

TEST(HalfFloat, RangeSubnormalsAndSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  // f16: largest finite 65504; 65520 is the tie with 2^16 and overflows.
  EXPECT_EQ(roundToHalf(65519.0, HalfKind::F16), 65504.0);
  EXPECT_EQ(roundToHalf(65520.0, HalfKind::F16), inf);
  EXPECT_EQ(roundToHalf(-1e6, HalfKind::F16), -inf);
  // Subnormals down to 2^-24; 2^-25 ties to 0, 3 2^-25 to 2^-23.
  EXPECT_EQ(roundToHalf(0x1p-24, HalfKind::F16), 0x1p-24);
  EXPECT_EQ(roundToHalf(0x1p-25, HalfKind::F16), 0.0);
  EXPECT_EQ(roundToHalf(3 * 0x1p-25, HalfKind::F16), 0x1p-23);
  // bf16 has f32's range: FLT_MAX rounds up to infinity, 1e38 stays.
  EXPECT_EQ(roundToHalf(std::numeric_limits<float>::max(), HalfKind::BF16),
            inf);
  EXPECT_NEAR(roundToHalf(1e38, HalfKind::BF16), 1e38, 1e36);
  EXPECT_TRUE(std::isnan(roundToHalf(std::nan(""), HalfKind::BF16)));
  EXPECT_EQ(roundToHalf(-0.0, HalfKind::F16), 0.0);
  EXPECT_TRUE(std::signbit(roundToHalf(-0.0, HalfKind::F16)));
}

TEST(HalfFloat, BitsRoundTrip) {
  EXPECT_EQ(halfBits(1.0, HalfKind::F16), 0x3c00u);
  EXPECT_EQ(halfBits(-2.0, HalfKind::BF16), 0xc000u);
  EXPECT_EQ(halfBits(65504.0, HalfKind::F16), 0x7bffu);
  EXPECT_EQ(halfBits(0x1p-24, HalfKind::F16), 0x0001u);
  EXPECT_EQ(halfBits(1e9, HalfKind::F16), 0x7c00u);
  EXPECT_EQ(halfBits(-0.0, HalfKind::BF16), 0x8000u);
  EXPECT_TRUE(std::isnan(
      halfValue(halfBits(std::nan(""), HalfKind::F16), HalfKind::F16)));
  EXPECT_TRUE(std::isnan(
      halfValue(halfBits(std::nan(""), HalfKind::BF16), HalfKind::BF16)));
  // Every finite bit pattern reads back to itself.
  for (HalfKind kind : {HalfKind::BF16, HalfKind::F16})
    for (uint32_t b = 0; b < 0x10000u; ++b) {
      double v = halfValue(static_cast<uint16_t>(b), kind);
      if (std::isnan(v))
        continue;
      EXPECT_EQ(halfBits(v, kind), b) << "bits " << b;
      EXPECT_EQ(roundToHalf(v, kind), v);
    }
}

} // namespace
