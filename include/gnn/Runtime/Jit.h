//===- Jit.h - compiling a Program's kernels in parallel ----------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A Program's source comes in units (Program.h): the shared prelude and one
/// unit per generated kernel. compileProgram() compiles the units on the JIT
/// pool, a small process-wide set of threads (GNNC_JIT_THREADS, default the
/// hardware's concurrency up to 16; 1 compiles on the caller's thread, one
/// unit after another). Each unit is its own kernel cache entry (Compiler.h),
/// so kernels that are identical in several Programs (two specialisations of
/// one function, a forward and its backward) are compiled once.
///
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNTIME_JIT_H
#define GNN_RUNTIME_JIT_H

#include "gnn/Runtime/Compiler.h"
#include "gnn/Runtime/Program.h"

#include <functional>
#include <vector>

namespace gnn {
namespace runtime {

/// Runs `task(0) .. task(count - 1)` on the JIT pool and the calling thread,
/// returning when all are done. Several callers share the pool's threads, so
/// concurrent calls (a training step's forward and backward) together use
/// at most the pool's threads plus the callers.
void runOnJitPool(size_t count, const std::function<void(size_t)> &task);

/// The pool's size: GNNC_JIT_THREADS, else the hardware's concurrency (at
/// most 16); an error for a value that is not a positive integer.
StatusOr<int> jitThreads();

/// Compiles every unit of `program` that defines a kernel it launches (the
/// others get a null cubin), one NVRTC call and one cache entry per unit, in
/// parallel on the JIT pool. Each unit's file name is `<program>.<kernel>.cu`,
/// so NVRTC's log names the kernel; when several units fail, the error holds
/// every failure, in unit order.
StatusOr<std::vector<CompileResult>>
compileProgram(const Program &program, Compiler &compiler,
               const std::string &arch = "");

/// compileProgram for several Programs at once (a training step's forward
/// and backward): one batch on the pool, each distinct unit source compiled
/// once; one result list per Program.
StatusOr<std::vector<std::vector<CompileResult>>>
compilePrograms(const std::vector<const Program *> &programs,
                Compiler &compiler, const std::string &arch = "");

} // namespace runtime
} // namespace gnn

#endif // GNN_RUNTIME_JIT_H
