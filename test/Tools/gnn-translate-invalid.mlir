// RUN: gnn-translate --no-implicit-module --gnn-to-program %s -verify-diagnostics
// RUN: gnn-translate --no-implicit-module --gnn-to-cuda %s -verify-diagnostics
// RUN: not gnn-translate --gnn-to-program --gnn-index-bits=16 %s 2>&1 | FileCheck %s --check-prefix=PROGRAM
// RUN: not gnn-translate --gnn-to-cuda --gnn-index-bits=16 %s 2>&1 | FileCheck %s --check-prefix=CUDA

// Both translations compile a module: without the implicit one, a lone
// function is rejected.

// A function already lowered (no gnn op) goes straight to the Program
// builder and the CUDA printer, which check the index width themselves.

// PROGRAM: error: expects 32- or 64-bit graph indices but got 16
// CUDA: error: expects an index width of 32 or 64 bits but got 16

// expected-error @+1 {{expects a module}}
func.func @f(%g: !gnn.graph, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  return %x : tensor<?x8xf32>
}
