//===- ProgramFuzzer.cpp - the Program JSON reader --------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
//
// Program::parse on the input; a Program it accepts must verify, print, and
// parse back to the same text.
//
//===----------------------------------------------------------------------===//

#include "gnn/Runtime/Program.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using gnn::runtime::Program;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string json(reinterpret_cast<const char *>(data), size);
  gnn::runtime::StatusOr<Program> p = Program::parse(json);
  if (!p.ok())
    return 0;
  (void)p->verify();
  std::string text = p->toJson();
  gnn::runtime::StatusOr<Program> again = Program::parse(text);
  if (!again.ok() || again->toJson() != text) {
    std::fprintf(stderr, "the printed Program does not parse back:\n%s\n%s\n",
                 text.c_str(),
                 again.ok() ? again->toJson().c_str()
                            : again.message().c_str());
    std::abort();
  }
  return 0;
}
