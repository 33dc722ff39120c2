// RUN: gnn-translate --gnnk-to-cuda -split-input-file %s | FileCheck %s

// Float arithmetic, f32 and f64.
// CHECK-LABEL: // float_arith: block 32, grid nodes
// CHECK: const float [[A:v[0-9]+]] = __ldg(in0 + [[I:i[0-9]+]]);
// CHECK-NEXT: const float [[S:v[0-9]+]] = [[A]] + 2.5f;
// CHECK-NEXT: const float [[D:v[0-9]+]] = [[S]] - [[A]];
// CHECK-NEXT: const float [[M:v[0-9]+]] = [[D]] * [[A]];
// CHECK-NEXT: const float [[Q:v[0-9]+]] = [[M]] / 2.5f;
// CHECK-NEXT: const float [[R:v[0-9]+]] = fmodf([[Q]], 2.5f);
// CHECK-NEXT: const float [[NG:v[0-9]+]] = -[[R]];
// CHECK-NEXT: const float [[MX:v[0-9]+]] = gnn_maximumf([[NG]], [[A]]);
// CHECK-NEXT: const float [[MN:v[0-9]+]] = gnn_minimumf([[MX]], [[A]]);
// CHECK-NEXT: const float [[MXN:v[0-9]+]] = fmaxf([[MN]], [[A]]);
// CHECK-NEXT: const float [[MNN:v[0-9]+]] = fminf([[MXN]], [[A]]);
// CHECK-NEXT: const double [[AD:v[0-9]+]] = (double)[[MNN]];
// CHECK-NEXT: const double [[RD:v[0-9]+]] = fmod([[AD]], 0.1);
// CHECK-NEXT: const double [[MXD:v[0-9]+]] = gnn_maximumf([[RD]], [[AD]]);
// CHECK-NEXT: const double [[MXND:v[0-9]+]] = fmax([[MXD]], [[AD]]);
// CHECK-NEXT: const double [[MND:v[0-9]+]] = fmin([[MXND]], (-1.5));
// CHECK-NEXT: const float [[F:v[0-9]+]] = (float)[[MND]];
gnnk.kernel @float_arith(%x: memref<?xf32> {gnnk.operand = 0 : i64},
                         %out: memref<?xf32> {gnnk.result = 0 : i64},
                         %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 32 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_elements %n {
  ^bb0(%i: index):
    %a = gnnk.load %x[%i] : memref<?xf32> -> f32
    %c = arith.constant 2.5 : f32
    %s = arith.addf %a, %c : f32
    %d = arith.subf %s, %a : f32
    %m = arith.mulf %d, %a : f32
    %q = arith.divf %m, %c : f32
    %r = arith.remf %q, %c : f32
    %ng = arith.negf %r : f32
    %mx = arith.maximumf %ng, %a : f32
    %mn = arith.minimumf %mx, %a : f32
    %mxn = arith.maxnumf %mn, %a : f32
    %mnn = arith.minnumf %mxn, %a : f32
    %ad = arith.extf %mnn : f32 to f64
    %tenth = arith.constant 0.1 : f64
    %m15 = arith.constant -1.5 : f64
    %rd = arith.remf %ad, %tenth : f64
    %mxd = arith.maximumf %rd, %ad : f64
    %mxnd = arith.maxnumf %mxd, %ad : f64
    %mnd = arith.minnumf %mxnd, %m15 : f64
    %f = arith.truncf %mnd : f64 to f32
    gnnk.store %f to %out[%i] : f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.return
}

// -----

// Float constants are exact: the shortest decimal that reads back, NaN and
// infinities by their bits, f64 without the f suffix.
// CHECK-LABEL: // float_literals: block 32, grid nodes
// CHECK: = [[A:v[0-9]+]] + 0.1f;
// CHECK-NEXT: = [[A]] + 3.4028235e+38f;
// CHECK-NEXT: = [[A]] + (-0.0f);
// CHECK-NEXT: = [[A]] + 1e-45f;
// CHECK-NEXT: = [[A]] + __int_as_float(0x7fc00000);
// CHECK-NEXT: = [[A]] + __int_as_float((int)0xffc00001u);
// CHECK-NEXT: = [[A]] + __int_as_float(0x7f800000);
// CHECK-NEXT: = [[A]] + __int_as_float((int)0xff800000u);
// CHECK-NEXT: const double [[D:v[0-9]+]] = (double)[[A]];
// CHECK-NEXT: = [[D]] + 0.1;
// CHECK-NEXT: = [[D]] + 1.0000000000000002;
// CHECK-NEXT: = [[D]] + 1e+300;
// CHECK-NEXT: = [[D]] + __longlong_as_double(0x7ff8000000000000LL);
// CHECK-NEXT: = [[D]] + __longlong_as_double((long long)0xfff0000000000000ull);
gnnk.kernel @float_literals(%x: memref<?xf32> {gnnk.operand = 0 : i64},
                            %out: memref<?xf32> {gnnk.result = 0 : i64},
                            %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 32 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_elements %n {
  ^bb0(%i: index):
    %a = gnnk.load %x[%i] : memref<?xf32> -> f32
    %c0 = arith.constant 0.1 : f32
    %c1 = arith.constant 3.40282347e+38 : f32
    %c2 = arith.constant -0.0 : f32
    %c3 = arith.constant 1.0e-45 : f32
    %c4 = arith.constant 0x7FC00000 : f32
    %c5 = arith.constant 0xFFC00001 : f32
    %c6 = arith.constant 0x7F800000 : f32
    %c7 = arith.constant 0xFF800000 : f32
    %r0 = arith.addf %a, %c0 : f32
    %r1 = arith.addf %a, %c1 : f32
    %r2 = arith.addf %a, %c2 : f32
    %r3 = arith.addf %a, %c3 : f32
    %r4 = arith.addf %a, %c4 : f32
    %r5 = arith.addf %a, %c5 : f32
    %r6 = arith.addf %a, %c6 : f32
    %r7 = arith.addf %a, %c7 : f32
    %d = arith.extf %a : f32 to f64
    %d0 = arith.constant 0.1 : f64
    %d1 = arith.constant 1.0000000000000002 : f64
    %d2 = arith.constant 1.0e300 : f64
    %d3 = arith.constant 0x7FF8000000000000 : f64
    %d4 = arith.constant 0xFFF0000000000000 : f64
    %s0 = arith.addf %d, %d0 : f64
    %s1 = arith.addf %d, %d1 : f64
    %s2 = arith.addf %d, %d2 : f64
    %s3 = arith.addf %d, %d3 : f64
    %s4 = arith.addf %d, %d4 : f64
    %t = arith.truncf %s4 : f64 to f32
    gnnk.store %t to %out[%i] : f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.return
}

// -----

// Float comparisons with MLIR's ordered / unordered semantics, and select.
// CHECK-LABEL: // float_compare: block 32, grid nodes
// CHECK: const bool {{v[0-9]+}} = false;
// CHECK-NEXT: const bool {{v[0-9]+}} = [[A:v[0-9]+\.x]] == [[B:v[0-9]+\.y]];
// CHECK-NEXT: const bool {{v[0-9]+}} = [[A]] > [[B]];
// CHECK-NEXT: const bool {{v[0-9]+}} = [[A]] >= [[B]];
// CHECK-NEXT: const bool {{v[0-9]+}} = [[A]] < [[B]];
// CHECK-NEXT: const bool {{v[0-9]+}} = [[A]] <= [[B]];
// CHECK-NEXT: const bool {{v[0-9]+}} = [[A]] < [[B]] || [[A]] > [[B]];
// CHECK-NEXT: const bool {{v[0-9]+}} = !(isnan([[A]]) || isnan([[B]]));
// CHECK-NEXT: const bool {{v[0-9]+}} = !([[A]] < [[B]] || [[A]] > [[B]]);
// CHECK-NEXT: const bool {{v[0-9]+}} = !([[A]] <= [[B]]);
// CHECK-NEXT: const bool {{v[0-9]+}} = !([[A]] < [[B]]);
// CHECK-NEXT: const bool {{v[0-9]+}} = !([[A]] >= [[B]]);
// CHECK-NEXT: const bool {{v[0-9]+}} = !([[A]] > [[B]]);
// CHECK-NEXT: const bool [[UNE:v[0-9]+]] = !([[A]] == [[B]]);
// CHECK-NEXT: const bool {{v[0-9]+}} = isnan([[A]]) || isnan([[B]]);
// CHECK-NEXT: const bool {{v[0-9]+}} = true;
// CHECK-NEXT: const float [[SEL:v[0-9]+]] = [[UNE]] ? [[A]] : [[B]];
gnnk.kernel @float_compare(%x: memref<?xf32> {gnnk.operand = 0 : i64},
                           %out: memref<?xf32> {gnnk.result = 0 : i64},
                           %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 32 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_elements %n {
  ^bb0(%i: index):
    %a, %b = gnnk.load %x[%i] : memref<?xf32> -> f32, f32
    %p0 = arith.cmpf false, %a, %b : f32
    %p1 = arith.cmpf oeq, %a, %b : f32
    %p2 = arith.cmpf ogt, %a, %b : f32
    %p3 = arith.cmpf oge, %a, %b : f32
    %p4 = arith.cmpf olt, %a, %b : f32
    %p5 = arith.cmpf ole, %a, %b : f32
    %p6 = arith.cmpf one, %a, %b : f32
    %p7 = arith.cmpf ord, %a, %b : f32
    %p8 = arith.cmpf ueq, %a, %b : f32
    %p9 = arith.cmpf ugt, %a, %b : f32
    %p10 = arith.cmpf uge, %a, %b : f32
    %p11 = arith.cmpf ult, %a, %b : f32
    %p12 = arith.cmpf ule, %a, %b : f32
    %p13 = arith.cmpf une, %a, %b : f32
    %p14 = arith.cmpf uno, %a, %b : f32
    %p15 = arith.cmpf true, %a, %b : f32
    %s = arith.select %p13, %a, %b : f32
    gnnk.store %s to %out[%i] : f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.return
}

// -----

// Integer arithmetic on index and i32: unsigned operations read their
// operands as unsigned; rounding divisions call the prelude helpers; the
// logical ops of i1 are &&, ||, !=.
// CHECK-LABEL: // int_arith: block 32, grid nodes
// CHECK: const long long [[A:v[0-9]+]] = [[I:i[0-9]+]] + 7LL;
// CHECK-NEXT: const long long [[B:v[0-9]+]] = [[A]] - (-3LL);
// CHECK-NEXT: const long long {{v[0-9]+}} = [[A]] * [[B]];
// CHECK-NEXT: const long long {{v[0-9]+}} = [[A]] / [[B]];
// CHECK-NEXT: const long long {{v[0-9]+}} = [[A]] % [[B]];
// CHECK-NEXT: const long long {{v[0-9]+}} = (long long)((unsigned long long)[[A]] / 7ull);
// CHECK-NEXT: const long long {{v[0-9]+}} = (long long)((unsigned long long)[[A]] % (unsigned long long)[[B]]);
// CHECK-NEXT: const long long {{v[0-9]+}} = gnn_ceildivsi([[A]], [[B]]);
// CHECK-NEXT: const long long {{v[0-9]+}} = gnn_floordivsi([[A]], (-3LL));
// CHECK-NEXT: const long long {{v[0-9]+}} = (long long)gnn_ceildivui((unsigned long long)[[A]], 7ull);
// CHECK-NEXT: const long long {{v[0-9]+}} = [[A]] > [[B]] ? [[A]] : [[B]];
// CHECK-NEXT: const long long {{v[0-9]+}} = [[A]] < [[B]] ? [[A]] : [[B]];
// CHECK-NEXT: const long long {{v[0-9]+}} = (unsigned long long)[[A]] > (unsigned long long)[[B]] ? [[A]] : [[B]];
// CHECK-NEXT: const long long {{v[0-9]+}} = (unsigned long long)[[A]] < 18446744073709551613ull ? [[A]] : (-3LL);
// CHECK-NEXT: const long long {{v[0-9]+}} = (long long)((unsigned long long)[[A]] << 7LL);
// CHECK-NEXT: const long long {{v[0-9]+}} = [[A]] >> 7LL;
// CHECK-NEXT: const long long {{v[0-9]+}} = (long long)((unsigned long long)[[A]] >> 7LL);
// CHECK-NEXT: const long long {{v[0-9]+}} = [[A]] & [[B]];
// CHECK-NEXT: const long long {{v[0-9]+}} = [[A]] | [[B]];
// CHECK-NEXT: const long long {{v[0-9]+}} = [[A]] ^ [[B]];
// CHECK-NEXT: const int [[C:v[0-9]+]] = (int)[[A]];
// CHECK-NEXT: const int {{v[0-9]+}} = (int)((unsigned)[[C]] / 3u);
// CHECK-NEXT: const int {{v[0-9]+}} = gnn_ceildivsi([[C]], (-2147483647 - 1));
// CHECK-NEXT: const int {{v[0-9]+}} = (int)gnn_ceildivui((unsigned)[[C]], 3u);
// CHECK-NEXT: const bool [[P:v[0-9]+]] = [[A]] == [[B]];
// CHECK-NEXT: const bool {{v[0-9]+}} = [[A]] != [[B]];
// CHECK-NEXT: const bool {{v[0-9]+}} = [[A]] < [[B]];
// CHECK-NEXT: const bool {{v[0-9]+}} = [[A]] >= [[B]];
// CHECK-NEXT: const bool {{v[0-9]+}} = (unsigned long long)[[A]] < (unsigned long long)[[B]];
// CHECK-NEXT: const bool [[Q:v[0-9]+]] = (unsigned)[[C]] >= 3u;
// CHECK-NEXT: const bool {{v[0-9]+}} = [[P]] && [[Q]];
// CHECK-NEXT: const bool {{v[0-9]+}} = [[P]] || [[Q]];
// CHECK-NEXT: const bool {{v[0-9]+}} = [[P]] != [[Q]];
// CHECK-NEXT: const bool {{v[0-9]+}} = [[P]] > [[Q]];
// CHECK-NEXT: const bool {{v[0-9]+}} = [[P]] != true;
// CHECK-NEXT: const int {{v[0-9]+}} = [[C]] & 3;
gnnk.kernel @int_arith(%out: memref<?xf32> {gnnk.result = 0 : i64},
                       %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 32 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_elements %n {
  ^bb0(%i: index):
    %c7 = arith.constant 7 : index
    %cm3 = arith.constant -3 : index
    %a = arith.addi %i, %c7 : index
    %b = arith.subi %a, %cm3 : index
    %0 = arith.muli %a, %b : index
    %1 = arith.divsi %a, %b : index
    %2 = arith.remsi %a, %b : index
    %3 = arith.divui %a, %c7 : index
    %4 = arith.remui %a, %b : index
    %5 = arith.ceildivsi %a, %b : index
    %6 = arith.floordivsi %a, %cm3 : index
    %7 = arith.ceildivui %a, %c7 : index
    %8 = arith.maxsi %a, %b : index
    %9 = arith.minsi %a, %b : index
    %10 = arith.maxui %a, %b : index
    %11 = arith.minui %a, %cm3 : index
    %12 = arith.shli %a, %c7 : index
    %13 = arith.shrsi %a, %c7 : index
    %14 = arith.shrui %a, %c7 : index
    %15 = arith.andi %a, %b : index
    %16 = arith.ori %a, %b : index
    %17 = arith.xori %a, %b : index
    %c = arith.index_cast %a : index to i32
    %c3 = arith.constant 3 : i32
    %cmin = arith.constant -2147483648 : i32
    %18 = arith.divui %c, %c3 : i32
    %19 = arith.ceildivsi %c, %cmin : i32
    %20 = arith.ceildivui %c, %c3 : i32
    %p = arith.cmpi eq, %a, %b : index
    %21 = arith.cmpi ne, %a, %b : index
    %22 = arith.cmpi slt, %a, %b : index
    %23 = arith.cmpi sge, %a, %b : index
    %24 = arith.cmpi ult, %a, %b : index
    %q = arith.cmpi uge, %c, %c3 : i32
    %25 = arith.andi %p, %q : i1
    %26 = arith.ori %p, %q : i1
    %27 = arith.xori %p, %q : i1
    %28 = arith.cmpi slt, %p, %q : i1
    %true = arith.constant true
    %29 = arith.xori %p, %true : i1
    %30 = arith.andi %c, %c3 : i32
    gnnk.yield
  }
  gnnk.return
}

// -----

// Casts between integers, indices and floats.
// CHECK-LABEL: // casts: block 32, grid nodes
// CHECK: const int [[C:v[0-9]+]] = (int)[[I:i[0-9]+]];
// CHECK-NEXT: const long long {{v[0-9]+}} = (long long)(unsigned)[[C]];
// CHECK-NEXT: const long long {{v[0-9]+}} = (long long)[[C]];
// CHECK-NEXT: const long long {{v[0-9]+}} = (long long)(unsigned)[[C]];
// CHECK-NEXT: const bool [[B:v[0-9]+]] = ([[C]] & 1) != 0;
// CHECK-NEXT: const int {{v[0-9]+}} = (int)([[B]] ? -1 : 0);
// CHECK-NEXT: const int {{v[0-9]+}} = (int)[[B]];
// CHECK-NEXT: const float [[F:v[0-9]+]] = (float)[[C]];
// CHECK-NEXT: const double {{v[0-9]+}} = (double)(unsigned)[[C]];
// CHECK-NEXT: const int {{v[0-9]+}} = (int)[[F]];
// CHECK-NEXT: const long long {{v[0-9]+}} = (long long)(unsigned long long)[[F]];
// CHECK-NEXT: const float {{v[0-9]+}} = (float)([[B]] ? -1 : 0);
gnnk.kernel @casts(%out: memref<?xf32> {gnnk.result = 0 : i64},
                   %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 32 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_elements %n {
  ^bb0(%i: index):
    %c = arith.index_cast %i : index to i32
    %0 = arith.index_castui %c : i32 to index
    %1 = arith.extsi %c : i32 to i64
    %2 = arith.extui %c : i32 to i64
    %b = arith.trunci %c : i32 to i1
    %3 = arith.extsi %b : i1 to i32
    %4 = arith.extui %b : i1 to i32
    %f = arith.sitofp %c : i32 to f32
    %5 = arith.uitofp %c : i32 to f64
    %6 = arith.fptosi %f : f32 to i32
    %7 = arith.fptoui %f : f32 to i64
    %8 = arith.sitofp %b : i1 to f32
    gnnk.store %8 to %out[%i] : f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.return
}

// -----

// math ops: the f32 functions end in f, the f64 ones do not.
// CHECK-LABEL: // math: block 32, grid nodes
// CHECK: = expf([[A:v[0-9]+]]);
// CHECK-NEXT: = exp2f([[A]]);
// CHECK-NEXT: = logf([[A]]);
// CHECK-NEXT: = log2f([[A]]);
// CHECK-NEXT: = log1pf([[A]]);
// CHECK-NEXT: = expm1f([[A]]);
// CHECK-NEXT: = tanhf([[A]]);
// CHECK-NEXT: = sqrtf([[A]]);
// CHECK-NEXT: = rsqrtf([[A]]);
// CHECK-NEXT: = powf([[A]], [[A]]);
// CHECK-NEXT: = fabsf([[A]]);
// CHECK-NEXT: = erff([[A]]);
// CHECK-NEXT: = sinf([[A]]);
// CHECK-NEXT: = cosf([[A]]);
// CHECK-NEXT: = floorf([[A]]);
// CHECK-NEXT: = ceilf([[A]]);
// CHECK-NEXT: = fmaf([[A]], [[A]], [[A]]);
// CHECK-NEXT: const double [[D:v[0-9]+]] = (double)[[A]];
// CHECK-NEXT: const double {{v[0-9]+}} = exp([[D]]);
// CHECK-NEXT: = exp2([[D]]);
// CHECK-NEXT: = log([[D]]);
// CHECK-NEXT: = log2([[D]]);
// CHECK-NEXT: = log1p([[D]]);
// CHECK-NEXT: = expm1([[D]]);
// CHECK-NEXT: = tanh([[D]]);
// CHECK-NEXT: = sqrt([[D]]);
// CHECK-NEXT: = rsqrt([[D]]);
// CHECK-NEXT: = pow([[D]], [[D]]);
// CHECK-NEXT: = fabs([[D]]);
// CHECK-NEXT: = erf([[D]]);
// CHECK-NEXT: = sin([[D]]);
// CHECK-NEXT: = cos([[D]]);
// CHECK-NEXT: = floor([[D]]);
// CHECK-NEXT: = ceil([[D]]);
// CHECK-NEXT: = fma([[D]], [[D]], [[D]]);
gnnk.kernel @math(%x: memref<?xf32> {gnnk.operand = 0 : i64},
                  %out: memref<?xf32> {gnnk.result = 0 : i64},
                  %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 32 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_elements %n {
  ^bb0(%i: index):
    %a = gnnk.load %x[%i] : memref<?xf32> -> f32
    %0 = math.exp %a : f32
    %1 = math.exp2 %a : f32
    %2 = math.log %a : f32
    %3 = math.log2 %a : f32
    %4 = math.log1p %a : f32
    %5 = math.expm1 %a : f32
    %6 = math.tanh %a : f32
    %7 = math.sqrt %a : f32
    %8 = math.rsqrt %a : f32
    %9 = math.powf %a, %a : f32
    %10 = math.absf %a : f32
    %11 = math.erf %a : f32
    %12 = math.sin %a : f32
    %13 = math.cos %a : f32
    %14 = math.floor %a : f32
    %15 = math.ceil %a : f32
    %16 = math.fma %a, %a, %a : f32
    %d = arith.extf %a : f32 to f64
    %20 = math.exp %d : f64
    %21 = math.exp2 %d : f64
    %22 = math.log %d : f64
    %23 = math.log2 %d : f64
    %24 = math.log1p %d : f64
    %25 = math.expm1 %d : f64
    %26 = math.tanh %d : f64
    %27 = math.sqrt %d : f64
    %28 = math.rsqrt %d : f64
    %29 = math.powf %d, %d : f64
    %30 = math.absf %d : f64
    %31 = math.erf %d : f64
    %32 = math.sin %d : f64
    %33 = math.cos %d : f64
    %34 = math.floor %d : f64
    %35 = math.ceil %d : f64
    %36 = math.fma %d, %d, %d : f64
    %r = arith.truncf %36 : f64 to f32
    gnnk.store %r to %out[%i] : f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.return
}

// -----

// scf.for: constant bounds with at most 32 trips are unrolled; carried values
// are mutable locals, a swap goes through temporaries; i32 bounds give an int
// induction variable. scf.if results are mutable locals declared before.
// CHECK-LABEL: // loops: block 32, grid nodes
// CHECK: float [[X:acc[0-9]+]] = 0.0f;
// CHECK-NEXT: float [[Y:acc[0-9]+]] = 1.0f;
// CHECK-NEXT: #pragma unroll
// CHECK-NEXT: for (long long [[K:iv[0-9]+]] = 0LL; [[K]] < 8LL; [[K]] += 1LL) {
// CHECK-NEXT: const int [[KI:v[0-9]+]] = (int)[[K]];
// CHECK-NEXT: const float [[KF:v[0-9]+]] = (float)[[KI]];
// CHECK-NEXT: const float [[S:v[0-9]+]] = [[X]] + [[KF]];
// CHECK-NEXT: const float [[T0:t[0-9]+]] = [[Y]];
// CHECK-NEXT: const float [[T1:t[0-9]+]] = [[S]];
// CHECK-NEXT: [[X]] = [[T0]];
// CHECK-NEXT: [[Y]] = [[T1]];
// CHECK-NEXT: }
// CHECK-NEXT: float [[Z:acc[0-9]+]] = [[X]];
// CHECK-NOT: #pragma
// CHECK-NEXT: for (long long [[J:iv[0-9]+]] = 0LL; [[J]] < 33LL; [[J]] += 1LL) {
// CHECK: float [[W:acc[0-9]+]] = [[Z]];
// CHECK-NEXT: for (int [[L:iv[0-9]+]] = 0; [[L]] < [[M:v[0-9]+]]; [[L]] += 2) {
// CHECK: const bool [[C:v[0-9]+]] = [[W]] > 1.0f;
// CHECK-NEXT: float [[R:v[0-9]+]];
// CHECK-NEXT: if ([[C]]) {
// CHECK-NEXT: const float [[H:v[0-9]+]] = [[W]] * 0.5f;
// CHECK-NEXT: [[R]] = [[H]];
// CHECK-NEXT: } else {
// CHECK-NEXT: [[R]] = [[W]];
// CHECK-NEXT: }
// CHECK-NEXT: const float [[U:v[0-9]+]] = [[R]] + [[Y]];
// CHECK-NEXT: out0[[[I:i[0-9]+]]] = [[U]];
gnnk.kernel @loops(%out: memref<?xf32> {gnnk.result = 0 : i64},
                   %nodes: i64 {gnnk.size = "nodes"})
    attributes {block = 32 : i64, grid = affine_map<()[s0, s1, s2, s3, s4] -> (s0)>} {
  %n = arith.index_cast %nodes : i64 to index
  gnnk.for_elements %n {
  ^bb0(%i: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c33 = arith.constant 33 : index
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %half = arith.constant 0.5 : f32
    %x, %y = scf.for %k = %c0 to %c8 step %c1 iter_args(%a = %zero, %b = %one) -> (f32, f32) {
      %kf = arith.index_cast %k : index to i32
      %kff = arith.sitofp %kf : i32 to f32
      %s = arith.addf %a, %kff : f32
      scf.yield %b, %s : f32, f32
    }
    %z = scf.for %j = %c0 to %c33 step %c1 iter_args(%a = %x) -> (f32) {
      %s = arith.mulf %a, %half : f32
      scf.yield %s : f32
    }
    %i0 = arith.constant 0 : i32
    %i2 = arith.constant 2 : i32
    %m = arith.index_cast %i : index to i32
    %w = scf.for %l = %i0 to %m step %i2 iter_args(%a = %z) -> (f32) : i32 {
      %lf = arith.sitofp %l : i32 to f32
      %s = arith.addf %a, %lf : f32
      scf.yield %s : f32
    }
    %c = arith.cmpf ogt, %w, %one : f32
    %r = scf.if %c -> (f32) {
      %h = arith.mulf %w, %half : f32
      scf.yield %h : f32
    } else {
      scf.yield %w : f32
    }
    %u = arith.addf %r, %y : f32
    gnnk.store %u to %out[%i] : f32 into memref<?xf32>
    gnnk.yield
  }
  gnnk.return
}
