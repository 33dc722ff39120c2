//===- CUDAPrinter.cpp - gnnk kernels as CUDA C++ -------------------------===//
//
// Part of gnnc. The printer state, the module prelude, kernels, thread
// mappings, edge loops, team and block reductions, loads and stores. The
// scalar ops (arith, math, scf) are in CUDAPrinterScalar.cpp.
//
//===----------------------------------------------------------------------===//

#include "gnn/Target/CUDA/CUDAPrinter.h"
#include "CUDAPrinterState.h"

#include "gnn/Dialect/GNNKernel/IR/GNNKernelOps.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::cuda;

//===----------------------------------------------------------------------===//
// Printer state
//===----------------------------------------------------------------------===//

StringRef cuda::getScalarType(Type type) {
  if (type.isF32())
    return "float";
  if (type.isF64())
    return "double";
  // Storage only: kernels compute them in f32 (gnn_device.cuh).
  if (type.isBF16())
    return "gnn_bf16";
  if (type.isF16())
    return "gnn_f16";
  if (type.isInteger(1))
    return "bool";
  if (type.isInteger(32))
    return "int";
  if (type.isInteger(64) || type.isIndex())
    return "long long";
  return "";
}

void CUDAPrinterState::startKernel(gnnk::KernelOp k) {
  kernel = k;
  exprs.clear();
  exprStorage.Reset();
  written.clear();
  counter = 0;
  k.walk([&](gnnk::StoreOp store) { written.insert(store.getBuffer()); });
  k.walk([&](gnnk::AtomicAddOp add) { written.insert(add.getBuffer()); });
}

FailureOr<StringRef> CUDAPrinterState::getType(Operation *where, Type type) {
  StringRef c = getScalarType(type);
  if (c.empty())
    return where->emitOpError()
           << "uses a value of type " << type
           << ", which the CUDA printer does not support (only f16, bf16, "
              "f32, f64, i1, i32, i64 and index)";
  return c;
}

LogicalResult CUDAPrinterState::printConstLocal(Value result, const Twine &rhs,
                                                StringRef prefix) {
  Operation *where = result.getDefiningOp();
  if (!where)
    where = result.getParentBlock()->getParentOp();
  FailureOr<StringRef> type = getType(where, result.getType());
  if (failed(type))
    return failure();
  std::string name = getFreshName(prefix);
  os << "const " << *type << " " << name << " = " << rhs << ";\n";
  bind(result, name);
  return success();
}

FailureOr<SmallVector<std::string>>
CUDAPrinterState::printMutableLocals(Operation *where, ValueRange inits,
                                     StringRef prefix) {
  SmallVector<std::string> names;
  for (Value init : inits) {
    FailureOr<StringRef> type = getType(where, init.getType());
    if (failed(type))
      return failure();
    names.push_back(getFreshName(prefix));
    os << *type << " " << names.back() << " = " << getExpr(init) << ";\n";
  }
  return names;
}

void CUDAPrinterState::printAssignments(ArrayRef<std::string> targets,
                                        ArrayRef<std::string> values,
                                        TypeRange types) {
  bool crossed = false;
  for (auto [k, value] : llvm::enumerate(values))
    for (auto [j, target] : llvm::enumerate(targets))
      crossed |= j != k && value == target;
  SmallVector<std::string> sources(values);
  if (crossed) {
    for (auto [k, value] : llvm::enumerate(values)) {
      if (value == targets[k])
        continue;
      sources[k] = getFreshName("t");
      os << "const " << getScalarType(types[k]) << " " << sources[k] << " = "
         << value << ";\n";
    }
  }
  for (auto [target, source] : llvm::zip(targets, sources))
    if (target != source)
      os << target << " = " << source << ";\n";
}

LogicalResult CUDAPrinterState::printBlock(Block &block) {
  for (Operation &op : block.without_terminator())
    if (failed(printOperation(*this, op)))
      return failure();
  return success();
}

LogicalResult
CUDAPrinterState::printInlined(Block &block, ArrayRef<std::string> args,
                               SmallVectorImpl<std::string> &yields) {
  for (auto [arg, expr] : llvm::zip_equal(block.getArguments(), args))
    bind(arg, expr);
  if (failed(printBlock(block)))
    return failure();
  for (Value v : block.getTerminator()->getOperands())
    yields.push_back(getExpr(v).str());
  return success();
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// Whether `element` is a storage-only float type (bf16, f16): read as
/// f32, written from f32.
static bool isHalf(Type element) { return element.isBF16() || element.isF16(); }

/// `buffer[index]` of a parameter, through the read-only cache (`__ldg`) when
/// the kernel never writes the buffer; a bf16 or f16 element widened to f32
/// (`gnn_widen(gnn_ldg(in0 + i))`).
static std::string printElementRead(CUDAPrinterState &state, Value buffer,
                                    StringRef index) {
  StringRef name = state.getExpr(buffer);
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  std::string read = state.isWritten(buffer)
                         ? (name + "[" + index + "]").str()
                         : ((isHalf(element) ? "gnn_ldg(" : "__ldg(") + name +
                            " + " + index + ")")
                               .str();
  return isHalf(element) ? "gnn_widen(" + read + ")" : read;
}

/// The CUDA vector type prefix of an element type (`float` for float2 and
/// float4, `longlong` for longlong2).
static StringRef getVectorPrefix(Type element) {
  if (element.isInteger(64))
    return "longlong";
  return getScalarType(element);
}

/// The number of elements one vector access of `count` elements of `element`
/// moves: at most 16 bytes, so that no deprecated 32-byte vector type
/// (double4, longlong4) is needed.
static unsigned getVectorWidth(Type element, unsigned count) {
  return std::min<unsigned>(count, 16 / (element.getIntOrFloatBitWidth() / 8));
}

static constexpr const char *kComponents[] = {"x", "y", "z", "w"};

/// The vector type of `words` 32-bit words (two bf16 or f16 each):
/// `unsigned`, `uint2`, `uint4`.
static std::string getWordVector(unsigned words) {
  return words == 1 ? "unsigned" : "uint" + std::to_string(words);
}

/// The expression of word `k` of a word vector `name` of `words` words.
static std::string getWord(StringRef name, unsigned words, unsigned k) {
  return words == 1 ? name.str() : (name + "." + kComponents[k]).str();
}

/// Declares `const VECTOR vN = buffer[index + first ...]` (one vector load,
/// through the read-only cache unless the kernel writes `buffer`) and returns
/// vN.
static std::string printVectorRead(CUDAPrinterState &state, Value buffer,
                                   StringRef index, StringRef vector,
                                   unsigned first) {
  std::string address = (state.getExpr(buffer) + " + " + index).str();
  if (first)
    address += " + " + std::to_string(first);
  std::string pointer =
      ("reinterpret_cast<const " + vector + " *>(" + address + ")").str();
  std::string name = state.getFreshName("v");
  state.ostream() << "const " << vector << " " << name << " = "
                  << (state.isWritten(buffer) ? "*" + pointer
                                              : "__ldg(" + pointer + ")")
                  << ";\n";
  return name;
}

/// A vector load of bf16 or f16 elements, widened to f32: one access per 16
/// bytes (8 elements), each 32-bit word widened to a float2:
///
///   const uint4 v5 = __ldg(reinterpret_cast<const uint4 *>(in0 + i));
///   const float2 v6 = gnn_widen2_bf16(v5.x);
///   ...
static LogicalResult printHalfLoad(CUDAPrinterState &state, gnnk::LoadOp op,
                                   Type element, unsigned width) {
  Value buffer = op.getBuffer();
  StringRef index = state.getExpr(op.getIndex());
  unsigned count = op.getNumResults(), words = width / 2;
  std::string vector = getWordVector(words);
  std::string widen = element.isBF16() ? "gnn_widen2_bf16" : "gnn_widen2_f16";
  raw_indented_ostream &os = state.ostream();
  for (unsigned first = 0; first < count; first += width) {
    std::string name = printVectorRead(state, buffer, index, vector, first);
    for (unsigned k = 0; k < words; ++k) {
      std::string pair = state.getFreshName("v");
      os << "const float2 " << pair << " = " << widen << "("
         << getWord(name, words, k) << ");\n";
      state.bind(op.getResult(first + 2 * k), pair + ".x");
      state.bind(op.getResult(first + 2 * k + 1), pair + ".y");
    }
  }
  return success();
}

/// A store of f32 values into a bf16 or f16 buffer, rounded to nearest
/// even: `out0[i] = gnn_round_bf16(v);`, or one access per 16 bytes of
/// rounded pairs (`*reinterpret_cast<uint4 *>(out0 + i) =
/// make_uint4(gnn_round2_bf16(a, b), ...);`).
static LogicalResult printHalfStore(CUDAPrinterState &state, gnnk::StoreOp op,
                                    Type element, unsigned width) {
  raw_indented_ostream &os = state.ostream();
  StringRef buffer = state.getExpr(op.getBuffer());
  StringRef index = state.getExpr(op.getIndex());
  unsigned count = op.getValues().size();
  StringRef suffix = element.isBF16() ? "bf16" : "f16";
  if (count == 1) {
    os << buffer << "[" << index << "] = gnn_round_" << suffix << "("
       << state.getExpr(op.getValues()[0]) << ");\n";
    return success();
  }
  unsigned words = width / 2;
  std::string vector = getWordVector(words);
  for (unsigned first = 0; first < count; first += width) {
    os << "*reinterpret_cast<" << vector << " *>(" << buffer << " + " << index;
    if (first)
      os << " + " << first;
    os << ") = ";
    if (words > 1)
      os << "make_" << vector << "(";
    for (unsigned k = 0; k < words; ++k)
      os << (k ? ", " : "") << "gnn_round2_" << suffix << "("
         << state.getExpr(op.getValues()[first + 2 * k]) << ", "
         << state.getExpr(op.getValues()[first + 2 * k + 1]) << ")";
    os << (words > 1 ? ");\n" : ";\n");
  }
  return success();
}

/// One element: `const T v = __ldg(buf + i);`. Two or four: one vector load
/// per 16 bytes (`const float4 v = __ldg(reinterpret_cast<const float4 *>(buf
/// + i));`), whose components are the results.
static LogicalResult printOperation(CUDAPrinterState &state, gnnk::LoadOp op) {
  Value buffer = op.getBuffer();
  StringRef index = state.getExpr(op.getIndex());
  if (op.getNumResults() == 1)
    return state.printConstLocal(op.getResult(0),
                                 printElementRead(state, buffer, index));
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  unsigned count = op.getNumResults();
  unsigned width = getVectorWidth(element, count);
  if (isHalf(element))
    return printHalfLoad(state, op, element, width);
  std::string vector = (getVectorPrefix(element) + Twine(width)).str();
  for (unsigned first = 0; first < count; first += width) {
    std::string name = printVectorRead(state, buffer, index, vector, first);
    for (unsigned k = 0; k < width; ++k)
      state.bind(op.getResult(first + k), name + "." + kComponents[k]);
  }
  return success();
}

/// One element: `buf[i] = v;`. Two or four: one vector store per 16 bytes
/// (`*reinterpret_cast<float4 *>(buf + i) = make_float4(a, b, c, d);`).
static LogicalResult printOperation(CUDAPrinterState &state, gnnk::StoreOp op) {
  raw_indented_ostream &os = state.ostream();
  StringRef buffer = state.getExpr(op.getBuffer());
  StringRef index = state.getExpr(op.getIndex());
  unsigned count = op.getValues().size();
  Type element = cast<MemRefType>(op.getBuffer().getType()).getElementType();
  unsigned width = getVectorWidth(element, count);
  if (isHalf(element))
    return printHalfStore(state, op, element, width);
  if (count == 1) {
    os << buffer << "[" << index << "] = " << state.getExpr(op.getValues()[0])
       << ";\n";
    return success();
  }
  std::string vector = (getVectorPrefix(element) + Twine(width)).str();
  for (unsigned first = 0; first < count; first += width) {
    os << "*reinterpret_cast<" << vector << " *>(" << buffer << " + " << index;
    if (first)
      os << " + " << first;
    os << ") = make_" << vector << "(";
    for (unsigned k = 0; k < width; ++k)
      os << (k ? ", " : "") << state.getExpr(op.getValues()[first + k]);
    os << ");\n";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Thread mappings
//===----------------------------------------------------------------------===//

/// Prints `if (index < count) { body }`: threads, teams or blocks past the
/// count skip the body (never an early return, so that code after the
/// mapping still runs).
static LogicalResult printGuardedBody(CUDAPrinterState &state, Block &body,
                                      StringRef index, Value count) {
  raw_indented_ostream &os = state.ostream();
  os << "if (" << index << " < " << state.getExpr(count) << ") {\n";
  os.indent();
  if (failed(state.printBlock(body)))
    return failure();
  os.unindent() << "}\n";
  return success();
}

/// A thread per element: `i = blockIdx.x * blockDim.x + threadIdx.x`.
static LogicalResult printOperation(CUDAPrinterState &state,
                                    gnnk::ForElementsOp op) {
  Block &body = op.getBody().front();
  if (failed(state.printConstLocal(
          body.getArgument(0),
          "blockIdx.x * (long long)blockDim.x + threadIdx.x", "i")))
    return failure();
  return printGuardedBody(state, body, state.getExpr(body.getArgument(0)),
                          op.getCount());
}

/// Teams of `lanes` consecutive threads: `row = t / lanes`, `lane = t %
/// lanes` of the global thread index t.
static LogicalResult printOperation(CUDAPrinterState &state,
                                    gnnk::ForRowsOp op) {
  raw_indented_ostream &os = state.ostream();
  Block &body = op.getBody().front();
  std::string thread = state.getFreshName("t");
  os << "const long long " << thread
     << " = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n";
  int64_t lanes = op.getLanes();
  if (failed(state.printConstLocal(body.getArgument(0),
                                   thread + " / " + std::to_string(lanes),
                                   "row")) ||
      failed(state.printConstLocal(
          body.getArgument(1), thread + " % " + std::to_string(lanes), "lane")))
    return failure();
  return printGuardedBody(state, body, state.getExpr(body.getArgument(0)),
                          op.getCount());
}

/// A block per index: `index = blockIdx.x`, `team = threadIdx.x / lanes`,
/// `lane = threadIdx.x % lanes`; the guard is uniform across the block.
static LogicalResult printOperation(CUDAPrinterState &state,
                                    gnnk::ForBlocksOp op) {
  Block &body = op.getBody().front();
  std::string lanes = std::to_string(op.getLanes());
  if (failed(state.printConstLocal(body.getArgument(0), "blockIdx.x", "blk")) ||
      failed(state.printConstLocal(body.getArgument(1),
                                   "threadIdx.x / " + lanes, "team")) ||
      failed(state.printConstLocal(body.getArgument(2),
                                   "threadIdx.x % " + lanes, "lane")))
    return failure();
  return printGuardedBody(state, body, state.getExpr(body.getArgument(0)),
                          op.getCount());
}

//===----------------------------------------------------------------------===//
// gnnk.for_edges
//===----------------------------------------------------------------------===//

/// The carried values are mutable locals initialised from the inits:
///
///   float acc0 = v3;
///   #pragma unroll 4
///   for (long long p1 = v4; p1 < v5; p1 += 1LL) {
///     const long long slot2 = (long long)__ldg(csc_to_csr + p1);
///     const long long nbr3 = (long long)__ldg(csc_row + p1);
///     ...
///     acc0 = v9;
///   }
///
/// The slot and neighbour are loaded only when the body uses them; without a
/// permutation the slot is the position itself. The `merge` region is for
/// the passes that split rows and is not printed. With a group of K > 1
/// edges a step, the position lives outside two loops: the body's, while K
/// positions remain, then the rest region's, an edge at a time:
///
///   long long p1 = v4;
///   for (; (p1 + 1LL * (v6)) < v5; p1 += 2LL * (v6)) {
///     const long long nbr2 = (long long)__ldg(csr_col + p1);
///     const long long nbr3 = (long long)__ldg(csr_col + (p1 + 1LL * (v6)));
///     ...
///   }
///   for (; p1 < v5; p1 += v6) {
///     <the rest region at p1>
///   }

/// Binds (or loads) the slot and neighbour of the edge at `pos` to the block
/// arguments `slot` and `nbr`.
static LogicalResult printEdgeIndices(CUDAPrinterState &state,
                                      gnnk::ForEdgesOp op, BlockArgument slot,
                                      BlockArgument nbr, const std::string &pos) {
  if (!op.getPerm())
    state.bind(slot, pos);
  else if (!slot.use_empty() &&
           failed(state.printConstLocal(
               slot, "(long long)" + printElementRead(state, op.getPerm(), pos),
               "slot")))
    return failure();
  if (!nbr.use_empty() &&
      failed(state.printConstLocal(
          nbr, "(long long)" + printElementRead(state, op.getNbrs(), pos),
          "nbr")))
    return failure();
  return success();
}

/// Prints the loop `header` and, as its body, `block` (its first 2 `edges`
/// arguments bound to the edges at `positions`, the rest to the `carried`
/// locals) and the assignments of its yield to them.
static LogicalResult printEdgeLoop(CUDAPrinterState &state,
                                   gnnk::ForEdgesOp op, const Twine &header,
                                   Block &block,
                                   ArrayRef<std::string> positions,
                                   ArrayRef<std::string> carried) {
  raw_indented_ostream &os = state.ostream();
  os << header << " {\n";
  os.indent();
  for (auto [k, pos] : llvm::enumerate(positions))
    if (failed(printEdgeIndices(state, op, block.getArgument(2 * k),
                                block.getArgument(2 * k + 1), pos)))
      return failure();
  for (auto [arg, name] : llvm::zip_equal(
           block.getArguments().drop_front(2 * positions.size()), carried))
    state.bind(arg, name);
  if (failed(state.printBlock(block)))
    return failure();
  SmallVector<std::string> yields;
  for (Value v : block.getTerminator()->getOperands())
    yields.push_back(state.getExpr(v).str());
  state.printAssignments(carried, yields, op.getInits().getTypes());
  os.unindent() << "}\n";
  return success();
}

static LogicalResult printOperation(CUDAPrinterState &state,
                                    gnnk::ForEdgesOp op) {
  raw_indented_ostream &os = state.ostream();
  FailureOr<SmallVector<std::string>> carried =
      state.printMutableLocals(op, op.getInits(), "acc");
  if (failed(carried))
    return failure();
  std::string pos = state.getFreshName("p");
  std::string begin = state.getExpr(op.getBegin()).str();
  std::string end = state.getExpr(op.getEnd()).str();
  std::string step = state.getExpr(op.getStep()).str();
  int64_t group = op.getEdgesPerStep();
  if (group == 1) {
    if (std::optional<int64_t> unroll = op.getUnroll())
      os << "#pragma unroll " << *unroll << "\n";
    if (failed(printEdgeLoop(state, op,
                             "for (long long " + pos + " = " + begin + "; " +
                                 pos + " < " + end + "; " + pos +
                                 " += " + step + ")",
                             op.getBody().front(), {pos}, *carried)))
      return failure();
  } else {
    // (The group is the unrolling of the body's loop; `unroll` is not
    // applied on top of it.)
    SmallVector<std::string> positions = {pos};
    for (int64_t k = 1; k < group; ++k)
      positions.push_back("(" + pos + " + " + std::to_string(k) + "LL * (" +
                          step + "))");
    os << "long long " << pos << " = " << begin << ";\n";
    if (failed(printEdgeLoop(state, op,
                             "for (; " + positions.back() + " < " + end +
                                 "; " + pos + " += " + std::to_string(group) +
                                 "LL * (" + step + "))",
                             op.getBody().front(), positions, *carried)) ||
        failed(printEdgeLoop(state, op,
                             "for (; " + pos + " < " + end + "; " + pos +
                                 " += " + step + ")",
                             op.getRest().front(), {pos}, *carried)))
      return failure();
  }
  for (auto [result, name] : llvm::zip_equal(op.getResults(), *carried))
    state.bind(result, name);
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Butterfly shuffles within the `width`-lane segment of the warp:
///
///   float acc0 = v5;
///   const unsigned mask1 = gnn_segment_mask(32);
///   #pragma unroll
///   for (int o2 = 1; o2 < 32; o2 <<= 1) {
///     const float v3 = __shfl_xor_sync(mask1, acc0, o2);
///     <combine (acc0, v3)>
///     acc0 = v4;
///   }
///
/// A bool is shuffled as an int.
static LogicalResult printOperation(CUDAPrinterState &state,
                                    gnnk::TeamReduceOp op) {
  raw_indented_ostream &os = state.ostream();
  FailureOr<SmallVector<std::string>> acc =
      state.printMutableLocals(op, op.getValues(), "acc");
  if (failed(acc))
    return failure();
  std::string mask = state.getFreshName("mask");
  std::string offset = state.getFreshName("o");
  int64_t width = op.getWidth();
  os << "const unsigned " << mask << " = gnn_segment_mask(" << width << ");\n";
  os << "#pragma unroll\n";
  os << "for (int " << offset << " = " << op.getStride() << "; " << offset
     << " < " << width << "; " << offset << " <<= 1) {\n";
  os.indent();
  SmallVector<std::string> args(*acc);
  for (auto [value, name] : llvm::zip_equal(op.getValues(), *acc)) {
    std::string partner = state.getFreshName("v");
    StringRef type = getScalarType(value.getType());
    if (value.getType().isInteger(1))
      os << "const bool " << partner << " = (bool)__shfl_xor_sync(" << mask
         << ", (int)" << name << ", " << offset << ");\n";
    else
      os << "const " << type << " " << partner << " = __shfl_xor_sync(" << mask
         << ", " << name << ", " << offset << ");\n";
    args.push_back(partner);
  }
  SmallVector<std::string> yields;
  if (failed(state.printInlined(op.getCombine().front(), args, yields)))
    return failure();
  state.printAssignments(*acc, yields, op.getValues().getTypes());
  os.unindent() << "}\n";
  for (auto [result, name] : llvm::zip_equal(op.getResults(), *acc))
    state.bind(result, name);
  return success();
}

/// A tree in a fixed order that keeps the teams' order (deterministic; the
/// left operand of every combine holds the lower teams, so an associative
/// combine gives what team order gives, a float sum up to its rounding): in
/// round s = 1, 2, 4, ... team t, a multiple of 2s, combines its value with
/// team t + s's (where there is one).
///
/// The rounds between teams of one warp (lanes dividing 32, a block of
/// whole warps, values of 32- or 64-bit types or bool) run on shuffles,
/// team t + s's value coming down s * lanes lanes; the rest, between the
/// warps' first teams, through shared memory with a barrier each. A block
/// of 8 warps of 1-lane teams:
///
///   double acc5 = v4;
///   #pragma unroll
///   for (int o6 = 1; o6 < 32; o6 <<= 1) {
///     const double v7 = __shfl_down_sync(0xffffffffu, acc5, o6 * 1);
///     if (team2 % (2 * o6) == 0) {
///       <combine (acc5, v7)>
///       acc5 = v8;
///     }
///   }
///   __shared__ double red0[8][1];
///   if (team2 % 32 == 0)
///     red0[team2 / 32][lane3] = acc5;
///   __syncthreads();
///   for (int q9 = 1; q9 < 8; q9 <<= 1) {
///     if (team2 % (2 * 32 * q9) == 0 && team2 / 32 + q9 < 8) {
///       const double v10 = red0[team2 / 32][lane3];
///       const double v11 = red0[team2 / 32 + q9][lane3];
///       <combine (v10, v11)>
///       red0[team2 / 32][lane3] = v12;
///     }
///     __syncthreads();
///   }
///   double acc13 = red0[0][lane3];
///   __syncthreads();
///
/// The pairs are the shared-memory tree's, so the bits are too; a 256-team
/// sum takes 5 barriers instead of 10. Teams of a whole warp or more (or
/// other types) take every round through shared memory (the same code with
/// one team a "warp"). log2 rounds instead of every thread combining all
/// teams in turn (a 256-team sum's chain of 255 dependent shared loads and
/// adds took about 5 us a kernel). The last barrier keeps every thread from
/// going on (and, in a loop, writing the arrays again) before all threads
/// have read them.
static LogicalResult printOperation(CUDAPrinterState &state,
                                    gnnk::BlockReduceOp op) {
  raw_indented_ostream &os = state.ostream();
  auto blocks = op->getParentOfType<gnnk::ForBlocksOp>();
  Block &mapping = blocks.getBody().front();
  StringRef team = state.getExpr(mapping.getArgument(1));
  StringRef lane = state.getExpr(mapping.getArgument(2));
  int64_t block = state.getKernel().getBlock();
  int64_t lanes = blocks.getLanes();
  int64_t teams = block / lanes;
  auto shuffled = [](Type t) {
    return t.isF32() || t.isF64() || t.isInteger(1) || t.isInteger(32) ||
           t.isInteger(64) || t.isIndex();
  };
  // Teams a warp holds whose rounds run on shuffles (1: none).
  int64_t perWarp = 1;
  if (block % 32 == 0 && lanes < 32 && 32 % lanes == 0 &&
      llvm::all_of(op.getValues().getTypes(), shuffled))
    perWarp = std::min<int64_t>(32 / lanes, teams);
  int64_t warps = teams / perWarp;
  SmallVector<std::string> values;
  for (Value value : op.getValues())
    values.push_back(state.getExpr(value).str());
  if (perWarp > 1) {
    FailureOr<SmallVector<std::string>> acc =
        state.printMutableLocals(op, op.getValues(), "acc");
    if (failed(acc))
      return failure();
    std::string o = state.getFreshName("o");
    os << "#pragma unroll\n";
    os << "for (int " << o << " = 1; " << o << " < " << perWarp << "; " << o
       << " <<= 1) {\n";
    os.indent();
    SmallVector<std::string> args(*acc);
    for (auto [value, name] : llvm::zip_equal(op.getValues(), *acc)) {
      std::string partner = state.getFreshName("v");
      std::string shift = o + " * " + std::to_string(lanes);
      if (value.getType().isInteger(1))
        os << "const bool " << partner
           << " = (bool)__shfl_down_sync(0xffffffffu, (int)" << name << ", "
           << shift << ");\n";
      else
        os << "const " << getScalarType(value.getType()) << " " << partner
           << " = __shfl_down_sync(0xffffffffu, " << name << ", " << shift
           << ");\n";
      args.push_back(partner);
    }
    os << "if (" << team << " % (2 * " << o << ") == 0) {\n";
    os.indent();
    SmallVector<std::string> yields;
    if (failed(state.printInlined(op.getCombine().front(), args, yields)))
      return failure();
    state.printAssignments(*acc, yields, op.getValues().getTypes());
    os.unindent() << "}\n";
    os.unindent() << "}\n";
    values = *acc;
  }
  // Shared memory from here, indexed by warp (one team a warp without
  // shuffles).
  std::string warp = perWarp > 1
                         ? (team + " / " + std::to_string(perWarp)).str()
                         : team.str();
  SmallVector<std::string> arrays, acc;
  for (auto [value, expr] : llvm::zip_equal(op.getValues(), values)) {
    FailureOr<StringRef> type = state.getType(op, value.getType());
    if (failed(type))
      return failure();
    arrays.push_back(state.getFreshName("red"));
    os << "__shared__ " << *type << " " << arrays.back() << "[" << warps
       << "][" << lanes << "];\n";
    if (perWarp == 1)
      os << arrays.back() << "[" << warp << "][" << lane << "] = " << expr
         << ";\n";
  }
  if (perWarp > 1) {
    // (Each warp's first team holds the warp's value.)
    os << "if (" << team << " % " << perWarp << " == 0) {\n";
    for (auto [array, expr] : llvm::zip_equal(arrays, values))
      os << "  " << array << "[" << warp << "][" << lane << "] = " << expr
         << ";\n";
    os << "}\n";
  }
  os << "__syncthreads();\n";
  if (warps > 1) {
    std::string q = state.getFreshName("q");
    os << "for (int " << q << " = 1; " << q << " < " << warps << "; " << q
       << " <<= 1) {\n";
    os.indent();
    if (perWarp > 1)
      os << "if (" << team << " % (2 * " << perWarp << " * " << q
         << ") == 0 && " << warp << " + " << q << " < " << warps << ") {\n";
    else
      os << "if (" << team << " % (2 * " << q << ") == 0 && " << team << " + "
         << q << " < " << warps << ") {\n";
    os.indent();
    SmallVector<std::string> left, right;
    for (auto [value, array] : llvm::zip_equal(op.getValues(), arrays)) {
      left.push_back(state.getFreshName("v"));
      os << "const " << getScalarType(value.getType()) << " " << left.back()
         << " = " << array << "[" << warp << "][" << lane << "];\n";
    }
    for (auto [value, array] : llvm::zip_equal(op.getValues(), arrays)) {
      right.push_back(state.getFreshName("v"));
      os << "const " << getScalarType(value.getType()) << " " << right.back()
         << " = " << array << "[" << warp << " + " << q << "][" << lane
         << "];\n";
    }
    SmallVector<std::string> args = left;
    args.append(right.begin(), right.end());
    SmallVector<std::string> yields;
    if (failed(state.printInlined(op.getCombine().front(), args, yields)))
      return failure();
    SmallVector<std::string> slots;
    for (StringRef array : arrays)
      slots.push_back((array + "[" + warp + "][" + lane + "]").str());
    state.printAssignments(slots, yields, op.getValues().getTypes());
    os.unindent() << "}\n";
    os << "__syncthreads();\n";
    os.unindent() << "}\n";
  }
  for (auto [value, array] : llvm::zip_equal(op.getValues(), arrays)) {
    acc.push_back(state.getFreshName("acc"));
    os << getScalarType(value.getType()) << " " << acc.back() << " = " << array
       << "[0][" << lane << "];\n";
  }
  os << "__syncthreads();\n";
  for (auto [result, name] : llvm::zip_equal(op.getResults(), acc))
    state.bind(result, name);
  return success();
}

/// `__shared__ __align__(16) float sh0[1024];` (aligned for vector
/// accesses).
static LogicalResult printOperation(CUDAPrinterState &state,
                                    gnnk::SharedOp op) {
  std::string name = state.getFreshName("sh");
  state.ostream() << "__shared__ __align__(16) "
                  << getScalarType(op.getBuffer().getType().getElementType())
                  << " " << name << "[" << op.getSize() << "];\n";
  state.bind(op.getBuffer(), name);
  return success();
}

/// `__syncthreads();`
static LogicalResult printOperation(CUDAPrinterState &state, gnnk::BarrierOp) {
  state.ostream() << "__syncthreads();\n";
  return success();
}

/// `atomicAdd(buf + i, v);` (float and double: sm_60 and later).
static LogicalResult printOperation(CUDAPrinterState &state,
                                    gnnk::AtomicAddOp op) {
  state.ostream() << "atomicAdd(" << state.getExpr(op.getBuffer()) << " + "
                  << state.getExpr(op.getIndex()) << ", "
                  << state.getExpr(op.getValue()) << ");\n";
  return success();
}

LogicalResult cuda::printOperation(CUDAPrinterState &state, Operation &op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case<gnnk::ForElementsOp, gnnk::ForRowsOp, gnnk::ForBlocksOp,
            gnnk::ForEdgesOp, gnnk::TeamReduceOp, gnnk::BlockReduceOp,
            gnnk::LoadOp, gnnk::StoreOp, gnnk::AtomicAddOp, gnnk::SharedOp,
            gnnk::BarrierOp>(
          [&](auto op) { return ::printOperation(state, op); })
      .Default([&](Operation *op) { return printScalarOperation(state, *op); });
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// An affine expression of the launch-shape symbols with their names
/// (`(nodes * 32) ceildiv 256`).
static void printSizeExpr(llvm::raw_ostream &os, AffineExpr expr,
                          bool nested = false) {
  if (auto sym = dyn_cast<AffineSymbolExpr>(expr)) {
    os << gnnk::sizeSymbolName(sym.getPosition());
    return;
  }
  if (auto c = dyn_cast<AffineConstantExpr>(expr)) {
    os << c.getValue();
    return;
  }
  auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!binary) {
    os << expr;
    return;
  }
  const char *op = " + ";
  switch (expr.getKind()) {
  case AffineExprKind::Mul:
    op = " * ";
    break;
  case AffineExprKind::Mod:
    op = " mod ";
    break;
  case AffineExprKind::FloorDiv:
    op = " floordiv ";
    break;
  case AffineExprKind::CeilDiv:
    op = " ceildiv ";
    break;
  default:
    break;
  }
  if (nested)
    os << "(";
  printSizeExpr(os, binary.getLHS(), true);
  os << op;
  printSizeExpr(os, binary.getRHS(), true);
  if (nested)
    os << ")";
}

/// The name of parameter `i` after its binding: `in<K>`, `out<K>`, the graph
/// array's name or the size's name.
static std::string getParameterName(gnnk::KernelOp kernel, unsigned i) {
  DictionaryAttr attrs = kernel.getArgAttrDict(i);
  if (attrs) {
    if (auto k = attrs.getAs<IntegerAttr>(gnnk::KernelOp::kOperand))
      return "in" + std::to_string(k.getInt());
    if (auto k = attrs.getAs<IntegerAttr>(gnnk::KernelOp::kResult))
      return "out" + std::to_string(k.getInt());
    if (auto name = attrs.getAs<StringAttr>(gnnk::KernelOp::kGraph))
      return name.str();
    if (auto name = attrs.getAs<StringAttr>(gnnk::KernelOp::kSize))
      return name.str();
  }
  return "arg" + std::to_string(i);
}

/// The C declaration of parameter `i` named `name`: `const float
/// *__restrict__ in0` for a buffer the kernel only reads, `float
/// *__restrict__ out0` for one it writes, `const idx_t *__restrict__ csr_col`
/// for a graph array, `long long nodes` for a size.
static FailureOr<std::string> getParameterDecl(CUDAPrinterState &state,
                                               gnnk::KernelOp kernel,
                                               unsigned i,
                                               const std::string &name) {
  Type type = kernel.getArgumentTypes()[i];
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref) {
    FailureOr<StringRef> scalar = state.getType(kernel, type);
    if (failed(scalar))
      return failure();
    return (*scalar + " " + name).str();
  }
  Type element = memref.getElementType();
  StringRef scalar = getScalarType(element);
  if (memref.getRank() != 1 || !memref.getLayout().isIdentity() ||
      memref.getMemorySpace() || scalar.empty() || element.isInteger(1) ||
      element.isIndex())
    return kernel.emitOpError()
           << "has parameter #" << i << " of type " << type
           << ", which the CUDA printer does not support (only rank-1 "
              "buffers of f16, bf16, f32, f64, i32 or i64)";
  std::string qualifier =
      state.isWritten(kernel.getArgument(i)) ? "" : "const ";
  if (isa<IntegerType>(element)) {
    // The kernel verifier allows integer buffers only as graph arrays.
    unsigned bits = element.getIntOrFloatBitWidth();
    if (static_cast<int>(bits) != state.getIndexBits())
      return kernel.emitOpError()
             << "expects graph array parameter #" << i << " to have "
             << state.getIndexBits()
             << "-bit elements (the graph index width) but got " << type;
    return qualifier + "idx_t *__restrict__ " + name;
  }
  return (qualifier + scalar + " *__restrict__ " + name).str();
}

/// Prints one kernel:
///
///   // spmm_0: block 256, grid (nodes * 32) ceildiv 256
///   extern "C" __global__ void __launch_bounds__(256) spmm_0(
///       const float *__restrict__ in0,
///       ...) {
///     <body>
///   }
static LogicalResult printKernel(CUDAPrinterState &state,
                                 gnnk::KernelOp kernel) {
  state.startKernel(kernel);
  raw_indented_ostream &os = state.ostream();
  os << "\n// " << kernel.getSymName() << ": block " << kernel.getBlock()
     << ", grid ";
  AffineMap grid = kernel.getGrid();
  if (grid.getNumResults() > 1)
    os << "min(";
  llvm::interleave(
      grid.getResults(), os, [&](AffineExpr e) { printSizeExpr(os, e); },
      ", ");
  if (grid.getNumResults() > 1)
    os << ")";
  os << "\nextern \"C\" __global__ void __launch_bounds__(" << kernel.getBlock();
  if (std::optional<uint64_t> minBlocks = kernel.getMinBlocks())
    os << ", " << *minBlocks;
  os << ") " << kernel.getSymName() << "(";
  llvm::StringSet<> names;
  for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i) {
    std::string name = getParameterName(kernel, i);
    if (!names.insert(name).second)
      name += "_" + std::to_string(i);
    names.insert(name);
    FailureOr<std::string> decl = getParameterDecl(state, kernel, i, name);
    if (failed(decl))
      return failure();
    os << (i ? ",\n    " : "\n    ") << *decl;
    state.bind(kernel.getArgument(i), name);
  }
  os << ") {\n";
  os.indent();
  if (failed(state.printBlock(kernel.getBody().front())))
    return failure();
  os.unindent() << "}\n";
  return success();
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//


/// The kernels that convert edge tensors at a Program's boundary (a unit of
/// their own: the generated kernels do not call them).
static constexpr const char *kEdgeOrder = R"cuda(
// Edge tensors at a Program's boundary: edge-list order <-> CSR slot order,
// one body for both directions and every element type (f32, f64, bf16, f16).
template <typename T>
__device__ __forceinline__ void gnn_edge_order(T *__restrict__ out,
    const T *__restrict__ in, const idx_t *__restrict__ csr_edge,
    long long rows, long long width, bool toSlots) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= rows * width) return;
  const long long i = t / width, k = t % width;
  const long long e = (long long)csr_edge[i] * width + k;
  if (toSlots) out[t] = in[e]; else out[e] = in[t];
}
extern "C" __global__ void gnn_edges_to_slots(float *__restrict__ out,
    const float *__restrict__ in, const idx_t *__restrict__ csr_edge,
    long long rows, long long width) {
  gnn_edge_order(out, in, csr_edge, rows, width, true);
}
extern "C" __global__ void gnn_slots_to_edges(float *__restrict__ out,
    const float *__restrict__ in, const idx_t *__restrict__ csr_edge,
    long long rows, long long width) {
  gnn_edge_order(out, in, csr_edge, rows, width, false);
}
extern "C" __global__ void gnn_edges_to_slots_f64(double *__restrict__ out,
    const double *__restrict__ in, const idx_t *__restrict__ csr_edge,
    long long rows, long long width) {
  gnn_edge_order(out, in, csr_edge, rows, width, true);
}
extern "C" __global__ void gnn_slots_to_edges_f64(double *__restrict__ out,
    const double *__restrict__ in, const idx_t *__restrict__ csr_edge,
    long long rows, long long width) {
  gnn_edge_order(out, in, csr_edge, rows, width, false);
}
extern "C" __global__ void gnn_edges_to_slots_bf16(gnn_bf16 *__restrict__ out,
    const gnn_bf16 *__restrict__ in, const idx_t *__restrict__ csr_edge,
    long long rows, long long width) {
  gnn_edge_order(out, in, csr_edge, rows, width, true);
}
extern "C" __global__ void gnn_slots_to_edges_bf16(gnn_bf16 *__restrict__ out,
    const gnn_bf16 *__restrict__ in, const idx_t *__restrict__ csr_edge,
    long long rows, long long width) {
  gnn_edge_order(out, in, csr_edge, rows, width, false);
}
extern "C" __global__ void gnn_edges_to_slots_f16(gnn_f16 *__restrict__ out,
    const gnn_f16 *__restrict__ in, const idx_t *__restrict__ csr_edge,
    long long rows, long long width) {
  gnn_edge_order(out, in, csr_edge, rows, width, true);
}
extern "C" __global__ void gnn_slots_to_edges_f16(gnn_f16 *__restrict__ out,
    const gnn_f16 *__restrict__ in, const idx_t *__restrict__ csr_edge,
    long long rows, long long width) {
  gnn_edge_order(out, in, csr_edge, rows, width, false);
}
)cuda";

FailureOr<CUDAUnits> mlir::gnn::printKernelUnits(ModuleOp module,
                                                int indexBits) {
  if (indexBits != 32 && indexBits != 64)
    return module.emitError()
           << "expects an index width of 32 or 64 bits but got " << indexBits;
  CUDAUnits units;
  {
    llvm::raw_string_ostream out(units.prelude);
    out << "// Generated by gnnc from gnnk kernels. Do not edit.\n"
        << "typedef " << (indexBits == 32 ? "int" : "long long") << " idx_t;\n"
        // Everything the printed kernels call (NVRTC gets the header from
        // the runtime, deviceHeaderSource()).
        << "#include \"gnn_device.cuh\"\n";
  }
  units.kernels.push_back(
      {{"gnn_edges_to_slots", "gnn_slots_to_edges", "gnn_edges_to_slots_f64",
        "gnn_slots_to_edges_f64", "gnn_edges_to_slots_bf16",
        "gnn_slots_to_edges_bf16", "gnn_edges_to_slots_f16",
        "gnn_slots_to_edges_f16"},
       kEdgeOrder});
  for (auto kernel : module.getOps<gnnk::KernelOp>()) {
    CUDAUnits::Kernel unit;
    unit.names.push_back(kernel.getSymName().str());
    {
      llvm::raw_string_ostream out(unit.text);
      CUDAPrinterState state(out, indexBits);
      if (failed(printKernel(state, kernel)))
        return failure();
    }
    units.kernels.push_back(std::move(unit));
  }
  return units;
}

std::string CUDAUnits::text() const {
  std::string all = prelude;
  for (const Kernel &k : kernels)
    all += k.text;
  return all;
}

LogicalResult mlir::gnn::printKernelsAsCUDA(ModuleOp module,
                                            llvm::raw_ostream &os,
                                            int indexBits) {
  FailureOr<std::string> source = printKernelsAsCUDA(module, indexBits);
  if (failed(source))
    return failure();
  os << *source;
  return success();
}

FailureOr<std::string> mlir::gnn::printKernelsAsCUDA(ModuleOp module,
                                                     int indexBits) {
  FailureOr<CUDAUnits> units = printKernelUnits(module, indexBits);
  if (failed(units))
    return failure();
  return units->text();
}
