//===- InputGuard.cpp - what the tools do before and around MLIR ----------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Tools/InputGuard.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace {

/// Walks the text of an `.mlir` buffer token-free: skips string literals and
/// `//` comments and reports the rest character by character.
class Scanner {
public:
  Scanner(SourceMgr &sourceMgr)
      : sourceMgr(sourceMgr),
        text(sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())
                 ->getBuffer()) {}

  bool run() {
    checkNesting();
    checkIteratorTypes();
    checkReassociations();
    checkDenseArrays();
    return ok;
  }

private:
  SourceMgr &sourceMgr;
  StringRef text;
  bool ok = true;

  /// Reports `message` at `pos` through the SourceMgr (its handler when the
  /// caller installed one, else stderr): `name:line:col: error: message`
  /// with the source line and a caret, or, on a line longer than
  /// kMaxShownLine (a 100,000-bracket line), an excerpt of it around `pos`.
  void error(size_t pos, const Twine &message) {
    SMLoc loc = SMLoc::getFromPointer(text.data() + pos);
    size_t lineStart = text.rfind('\n', pos);
    lineStart = lineStart == StringRef::npos ? 0 : lineStart + 1;
    size_t lineEnd = text.find('\n', pos);
    if (lineEnd == StringRef::npos)
      lineEnd = text.size();
    ok = false;
    if (lineEnd - lineStart <= kMaxShownLine) {
      sourceMgr.PrintMessage(loc, SourceMgr::DK_Error, message);
      return;
    }
    // SMDiagnostic::print puts the caret at the column it prints in the
    // location, so the excerpt and its caret go into the message, and the
    // location (`name:line:col`) into the file name; getLoc() is exact.
    auto [line, column] = sourceMgr.getLineAndColumn(loc);
    std::string located;
    raw_string_ostream(located)
        << sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())
               ->getBufferIdentifier()
        << ":" << line << ":" << column;
    std::string shown = message.str();
    appendExcerpt(shown, lineStart, lineEnd, pos);
    SMDiagnostic diagnostic(sourceMgr, loc, located, /*Line=*/-1, /*Col=*/-1,
                            SourceMgr::DK_Error, shown, /*LineStr=*/"",
                            /*Ranges=*/{});
    sourceMgr.PrintMessage(errs(), diagnostic);
  }

  /// The longest line shown whole under an error.
  static constexpr size_t kMaxShownLine = 400;
  /// How many characters of a longer line are shown on each side of `pos`.
  static constexpr size_t kExcerptSide = 40;

  /// Appends to `out` a newline, the part of the line [lineStart, lineEnd)
  /// within kExcerptSide characters of `pos` (`...` marking a cut, cut at
  /// UTF-8 character boundaries), a newline and a caret under `pos`.
  void appendExcerpt(std::string &out, size_t lineStart, size_t lineEnd,
                     size_t pos) const {
    auto isContinuation = [&](size_t i) {
      return i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80;
    };
    size_t begin = pos - std::min(pos - lineStart, kExcerptSide);
    while (begin < pos && isContinuation(begin))
      ++begin;
    size_t end = std::min(lineEnd, pos + 1 + kExcerptSide);
    while (end > pos + 1 && isContinuation(end))
      --end;
    while (end < lineEnd && isContinuation(end)) // finish the character at pos
      ++end;
    std::string prefix = begin > lineStart ? "..." : "";
    out += "\n" + prefix;
    // Tabs and other control characters would move the caret: spaces.
    for (size_t i = begin; i < end; ++i)
      out += static_cast<unsigned char>(text[i]) < 0x20 ? ' ' : text[i];
    if (end < lineEnd)
      out += "...";
    // One caret column per character (UTF-8 continuation bytes take none).
    size_t columns = prefix.size();
    for (size_t i = begin; i < pos; ++i)
      if (!isContinuation(i))
        ++columns;
    out += "\n" + std::string(columns, ' ') + "^";
  }

  /// The position after the string literal or comment starting at `pos`, or
  /// `pos` when there is none.
  size_t skipLiteral(size_t pos) const {
    if (text[pos] == '"') {
      for (size_t i = pos + 1; i < text.size(); ++i) {
        if (text[i] == '\\')
          ++i;
        else if (text[i] == '"')
          return i + 1;
      }
      return text.size();
    }
    if (text[pos] == '/' && pos + 1 < text.size() && text[pos + 1] == '/') {
      size_t end = text.find('\n', pos);
      return end == StringRef::npos ? text.size() : end;
    }
    return pos;
  }

  /// Nesting of (), [], {} and <> (not `->`, `<=`, `>=`), outside strings
  /// and comments. The first opening beyond kMaxNesting is reported; the
  /// parser would recurse past its stack on 100,000 levels.
  void checkNesting() {
    int depth = 0;
    for (size_t i = 0; i < text.size();) {
      size_t next = skipLiteral(i);
      if (next != i) {
        i = next;
        continue;
      }
      char c = text[i];
      char after = i + 1 < text.size() ? text[i + 1] : '\0';
      char before = i ? text[i - 1] : '\0';
      bool open = c == '(' || c == '[' || c == '{' || (c == '<' && after != '=');
      bool close = c == ')' || c == ']' || c == '}' ||
                   (c == '>' && before != '-' && after != '=');
      if (open && ++depth > gnn::kMaxNesting) {
        error(i, "expects brackets nested at most " +
                     Twine(gnn::kMaxNesting) +
                     " deep but this one is deeper (checked before parsing: "
                     "the parser recurses once per level)");
        return;
      }
      if (close && depth > 0)
        --depth;
      ++i;
    }
  }

  /// The positions of `word` as a whole identifier outside strings and
  /// comments.
  SmallVector<size_t> find(StringRef word) const {
    SmallVector<size_t> found;
    for (size_t i = 0; i < text.size();) {
      size_t next = skipLiteral(i);
      if (next != i) {
        i = next;
        continue;
      }
      if (text.substr(i).starts_with(word) &&
          (i == 0 || !isIdentifierChar(text[i - 1])) &&
          (i + word.size() >= text.size() ||
           !isIdentifierChar(text[i + word.size()])))
        found.push_back(i);
      ++i;
    }
    return found;
  }

  static bool isIdentifierChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           c == '.' || c == '$';
  }

  /// The position after the blanks at `pos`: what MLIR's lexer skips between
  /// tokens, i.e. white space, NUL bytes and `//` comments (a check that
  /// stopped at a NUL or a comment would miss what the parser reads next).
  size_t skipSpace(size_t pos) const {
    while (pos < text.size()) {
      char c = text[pos];
      if (std::isspace(static_cast<unsigned char>(c)) || c == '\0')
        ++pos;
      else if (c == '/' && pos + 1 < text.size() && text[pos + 1] == '/')
        pos = skipLiteral(pos);
      else
        break;
    }
    return pos;
  }

  /// The elements of the top-level list `[a, b, ...]` at `pos` (which must
  /// be `[`), as (position, text) pairs with nested brackets kept whole.
  /// Returns false when the list does not close.
  bool listElements(size_t pos,
                    SmallVectorImpl<std::pair<size_t, StringRef>> &out) const {
    int depth = 0;
    size_t start = pos + 1;
    for (size_t i = pos; i < text.size();) {
      size_t next = skipLiteral(i);
      if (next != i) {
        i = next;
        continue;
      }
      char c = text[i];
      if (c == '[' || c == '(' || c == '{' || c == '<')
        ++depth;
      else if (c == ']' || c == ')' || c == '}' || c == '>')
        --depth;
      if ((depth == 1 && c == ',') || depth == 0) {
        size_t b = skipSpace(start);
        StringRef element = text.slice(b, i).rtrim();
        if (!element.empty() || c == ',')
          out.push_back({b, element});
        start = i + 1;
      }
      if (depth == 0)
        return true;
      ++i;
    }
    return false;
  }

  /// `iterator_types = [...]` holds "parallel" / "reduction" strings or
  /// #linalg.iterator_type<...>; MLIR 22's linalg.generic parser crashes on
  /// anything else (`iterator_types = [35]`).
  void checkIteratorTypes() {
    for (size_t at : find("iterator_types")) {
      size_t i = skipSpace(at + StringRef("iterator_types").size());
      if (i >= text.size() || text[i] != '=')
        continue;
      i = skipSpace(i + 1);
      if (i >= text.size() || text[i] != '[')
        continue;
      SmallVector<std::pair<size_t, StringRef>> elements;
      if (!listElements(i, elements))
        continue;
      for (auto [pos, element] : elements) {
        bool isString = element.size() >= 2 && element.front() == '"' &&
                        element.back() == '"';
        if (isString || element.starts_with("#linalg.iterator_type<"))
          continue;
        error(pos, "expects each of `iterator_types` to be \"parallel\" or "
                   "\"reduction\" but got `" +
                       element.take_front(40) + "`");
        break;
      }
    }
  }

  /// Whether `[int, int, ...]` (64-bit decimal or hex integers, possibly
  /// empty) starts at `pos`.
  bool isIntegerList(size_t pos) const {
    if (pos >= text.size() || text[pos] != '[')
      return false;
    size_t i = skipSpace(pos + 1);
    if (i < text.size() && text[i] == ']')
      return true;
    while (true) {
      if (i < text.size() && text[i] == '-')
        ++i;
      size_t digits = i;
      if (text.substr(i).starts_with("0x"))
        for (i += 2; i < text.size() && std::isxdigit((unsigned char)text[i]);)
          ++i;
      else
        while (i < text.size() && std::isdigit((unsigned char)text[i]))
          ++i;
      // Up to 18 digits always fit in an int64.
      if (i == digits || i - digits > 18 || text.substr(digits, i - digits) == "0x")
        return false;
      i = skipSpace(i);
      if (i < text.size() && text[i] == ']')
        return true;
      if (i >= text.size() || text[i] != ',')
        return false;
      i = skipSpace(i + 1);
    }
  }

  /// The custom forms of linalg.transpose (`permutation = [...]`),
  /// linalg.broadcast and linalg.reduce (`dimensions = [...]`) take a list of
  /// integers; MLIR 22's parsers store the failed parse of anything else as a
  /// null attribute and crash (`permutation = [1, x]`, `dimensions = 0`,
  /// `dimensions = [1,]`). The keyword checked is the first after the op.
  void checkDenseArrays() {
    for (auto [op, keyword] :
         {std::pair<StringRef, StringRef>{"linalg.transpose", "permutation"},
          {"linalg.broadcast", "dimensions"},
          {"linalg.reduce", "dimensions"}}) {
      SmallVector<size_t> keywords = find(keyword);
      for (size_t at : find(op)) {
        const size_t *k = llvm::upper_bound(keywords, at);
        if (k == keywords.end())
          continue;
        size_t i = skipSpace(*k + keyword.size());
        if (i >= text.size() || text[i] != '=')
          continue;
        i = skipSpace(i + 1);
        if (isIntegerList(i))
          continue;
        error(i, "expects `" + keyword + "` of " + op +
                     " to be a list of integers like [1, 0] but got `" +
                     text.substr(i, 40).split('\n').first + "`");
      }
    }
  }

  /// The reassociation of tensor.expand_shape / collapse_shape has no empty
  /// group; MLIR 22's ExpandShapeOp verifier crashes on `[[], [1, 2]]`.
  void checkReassociations() {
    SmallVector<size_t> starts;
    for (StringRef op : {"tensor.expand_shape", "tensor.collapse_shape",
                         "memref.expand_shape", "memref.collapse_shape"})
      for (size_t at : find(op)) {
        // The custom form: `op %src [[...], ...]`.
        size_t i = at + op.size();
        i = skipSpace(i);
        while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i])) &&
               text[i] != '[')
          ++i;
        i = skipSpace(i);
        if (i < text.size() && text[i] == '[')
          starts.push_back(i);
      }
    // The generic form: `reassociation = [[...], ...]`.
    for (size_t at : find("reassociation")) {
      size_t i = skipSpace(at + StringRef("reassociation").size());
      if (i < text.size() && text[i] == '=') {
        i = skipSpace(i + 1);
        if (i < text.size() && text[i] == '[')
          starts.push_back(i);
      }
    }
    for (size_t start : starts) {
      SmallVector<std::pair<size_t, StringRef>> groups;
      if (!listElements(start, groups))
        continue;
      for (auto [pos, group] : groups) {
        if (!group.starts_with("["))
          break; // not a list of lists: left to the parser
        if (!group.drop_front().ltrim().starts_with("]"))
          continue;
        error(pos, "expects every reassociation group to hold at least one "
                   "dimension but got `" +
                       group.take_front(40) + "`");
        break;
      }
    }
  }
};

} // namespace

bool gnn::precheckSource(SourceMgr &sourceMgr) {
  return Scanner(sourceMgr).run();
}

bool gnn::precheckBuffer(const MemoryBuffer &buffer) {
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      MemoryBuffer::getMemBuffer(buffer.getMemBufferRef(),
                                 /*RequiresNullTerminator=*/false),
      SMLoc());
  return precheckSource(sourceMgr);
}

//===----------------------------------------------------------------------===//
// Reading the input
//===----------------------------------------------------------------------===//

/// `--max-input-bytes`, once registered.
static cl::opt<uint64_t> *inputLimitOption = nullptr;

void gnn::registerInputLimitOption() {
  static cl::opt<uint64_t> option(
      "max-input-bytes", cl::init(kDefaultMaxInputBytes),
      cl::value_desc("N"),
      cl::desc("Refuse an input of more than N bytes (default 256 MiB); an "
               "endless input such as /dev/zero is read up to N"));
  inputLimitOption = &option;
}

uint64_t gnn::maxInputBytes() {
  return inputLimitOption ? inputLimitOption->getValue()
                          : kDefaultMaxInputBytes;
}

/// What a file that is not a regular one is, for messages.
static const char *streamKind(mode_t mode) {
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

std::unique_ptr<MemoryBuffer>
gnn::readInputFile(StringRef path, uint64_t limit, std::string &error,
                   std::optional<Align> alignment) {
  bool standardInput = path == "-";
  std::string name = standardInput ? "<stdin>" : path.str();
  auto fail = [&](const Twine &reason) {
    error = ("cannot open input file '" + name + "': " + reason).str();
    return nullptr;
  };
  int fd = 0;
  if (!standardInput) {
    // Blocking: a FIFO is read once a writer opens it, as `cat` would.
    do
      fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
      return fail(std::strerror(errno));
  }
  scope_exit closeFile([&] {
    if (!standardInput)
      ::close(fd);
  });
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return fail(std::strerror(errno));
  std::string raise = " (--max-input-bytes=N raises it)";
  bool regular = S_ISREG(st.st_mode);
  if (regular && static_cast<uint64_t>(st.st_size) > limit) {
    error = "'" + name + "' holds " + std::to_string(st.st_size) +
            " bytes, more than the limit of " + std::to_string(limit) +
            " bytes of input" + raise;
    return nullptr;
  }
  if (regular && !alignment) {
    ErrorOr<std::unique_ptr<MemoryBuffer>> buffer = MemoryBuffer::getOpenFile(
        sys::fs::convertFDToNativeFile(fd), name, st.st_size);
    if (!buffer)
      return fail(buffer.getError().message());
    return std::move(*buffer);
  }
  // Read in blocks, up to one byte past the limit: a stream's size is known
  // only at its end, which an endless one never reaches.
  SmallVector<char, 0> data;
  uint64_t block = regular ? static_cast<uint64_t>(st.st_size) + 1 : 1 << 20;
  for (;;) {
    if (data.size() > limit) {
      error = "'" + name + "' (" +
              (standardInput ? std::string("standard input")
                             : streamKind(st.st_mode)) +
              ") gave more than the limit of " + std::to_string(limit) +
              " bytes of input; reading stopped there" + raise;
      return nullptr;
    }
    size_t want = static_cast<size_t>(
        std::min<uint64_t>(block, limit + 1 - data.size()));
    size_t old = data.size();
    data.resize_for_overwrite(old + want);
    ssize_t n;
    do
      n = ::read(fd, data.data() + old, want);
    while (n < 0 && errno == EINTR);
    if (n < 0)
      return fail(std::strerror(errno));
    data.truncate(old + static_cast<size_t>(n));
    if (n == 0)
      break;
  }
  std::unique_ptr<WritableMemoryBuffer> buffer =
      WritableMemoryBuffer::getNewUninitMemBuffer(data.size(), name,
                                                  alignment);
  if (!buffer)
    return fail("out of memory");
  if (!data.empty())
    std::memcpy(buffer->getBufferStart(), data.data(), data.size());
  return buffer;
}

/// The internal-error message, formatted before any crash: the signal
/// handler below may only write it.
static std::string &crashMessage() {
  static std::string message;
  return message;
}

/// Called by LLVM's signal handler (after the stack trace) for a crash on a
/// thread without a CrashRecoveryContext, such as MLIR's worker threads:
/// prints the internal error and exits with kInternalErrorExitCode.
static void onUncontainedCrash(void *) {
  const std::string &message = crashMessage();
  size_t done = 0;
  while (done < message.size()) {
    ssize_t n = ::write(2, message.data() + done, message.size() - done);
    if (n <= 0)
      break;
    done += static_cast<size_t>(n);
  }
  ::_exit(gnn::kInternalErrorExitCode);
}

/// `arg` as a POSIX shell word: as it is when it holds only safe
/// characters, else in single quotes.
static std::string shellQuoted(StringRef arg) {
  bool safe = !arg.empty() && llvm::all_of(arg, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           StringRef("-_=./,:+@%").contains(c);
  });
  if (safe)
    return arg.str();
  std::string quoted = "'";
  for (char c : arg) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  return quoted + "'";
}

int gnn::runContained(StringRef tool, StringRef input, int argc, char **argv,
                      function_ref<int()> body) {
  {
    raw_string_ostream os(crashMessage());
    os << tool << ": internal error: crashed while processing '" << input
       << "' (a bug in gnnc or in the MLIR it is built on; the input may "
          "be malformed in a way no check catches yet)\n"
       << tool << ": reproduce with:";
    for (int i = 0; i < argc; ++i)
      os << " " << shellQuoted(argv[i]);
    os << "\n";
  }
  sys::AddSignalHandler(onUncontainedCrash, nullptr);
  CrashRecoveryContext::Enable();
  CrashRecoveryContext context;
  int code = 0;
  if (context.RunSafelyOnThread([&] { code = body(); }, kToolStackBytes))
    return code;
  errs() << crashMessage();
  errs().flush();
  return kInternalErrorExitCode;
}
