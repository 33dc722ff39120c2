//===- GNNInterfaces.cpp - gnn dialect interfaces -------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnn/Dialect/GNN/IR/GNNInterfaces.h"

#include "gnn/Dialect/GNN/IR/GNNInterfaces.cpp.inc"
