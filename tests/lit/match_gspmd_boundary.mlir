// RUN: shardy-convert opt %s -p 'match-gspmd-boundary{num-devices=8}' --split-input-file 2>%t.notes | filecheck %s
// RUN: filecheck %s --check-prefix=NOTE --input-file %t.notes
// RUN: shardy-convert opt %s -p 'match-gspmd-boundary{num-devices=8 allow-spmd-sharding-propagation-to-parameters=true}' --split-input-file 2>%t.params | filecheck %s --check-prefix=PARAMS
// RUN: filecheck %s --check-prefix=PARAMS-NOTE --input-file %t.params
// RUN: shardy-convert opt %s -p 'match-gspmd-boundary{num-devices=8 allow-spmd-sharding-propagation-to-output=false}' --split-input-file 2>%t.closed | filecheck %s --check-prefix=CLOSED
// RUN: filecheck %s --check-prefix=CLOSED-NOTE --input-file %t.closed

// match-gspmd-boundary compiles the module with GSPMD on jaxlib's CPU client and pins the
// sharding GSPMD chose for each open @main value as its mhlo.sharding. Open: unannotated and
// reachable by propagation (XLA's allow_spmd_sharding_propagation_to_*; torch_xla's defaults:
// results yes, arguments no). What it did is a note per module on stderr (NOTE lines, in the
// order of the modules).

// The result of a matmul whose lhs rows are split 4 ways and contracting dim 2 ways: GSPMD
// gives it the rows' 4 ways, replicated over the other 2. The unannotated rhs is not open
// (propagation to parameters is off: import-shardings closes it replicated), so it is left alone.
// NOTE: match_gspmd_boundary.mlir: note: match-gspmd-boundary: 1 of 1 open values pinned; {{[0-9.]+}} s{{$}}
// CHECK-LABEL: module @matmul {
// CHECK: func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}, %arg1: tensor<16x8xf32>)
// CHECK-SAME: -> (tensor<8x8xf32> {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"})
// With propagation to parameters the rhs is open too: GSPMD splits its rows (the contracting
// dim) as the lhs splits its columns.
// PARAMS-NOTE: match_gspmd_boundary.mlir: note: match-gspmd-boundary: 2 of 2 open values pinned; {{[0-9.]+}} s{{$}}
// PARAMS-LABEL: module @matmul {
// PARAMS: %arg1: tensor<16x8xf32> {mhlo.sharding = "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}
// PARAMS-SAME: -> (tensor<8x8xf32> {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"})
// Without propagation to the output nothing is open: nothing is compiled, nothing written.
// CLOSED-NOTE: match_gspmd_boundary.mlir: note: match-gspmd-boundary: 0 of 0 open values pinned; 0.000 s{{$}}
// CLOSED-LABEL: module @matmul {
// CLOSED: func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}, %arg1: tensor<16x8xf32>) -> tensor<8x8xf32>
module @matmul {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}, %arg1: tensor<16x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}

// -----

// A transpose: GSPMD transposes the tile grid with the value (devices in a transposed order).
// NOTE: match_gspmd_boundary.mlir: note: match-gspmd-boundary: 1 of 1 open values pinned; {{[0-9.]+}} s{{$}}
// CHECK-LABEL: module @transpose {
// CHECK: -> (tensor<16x8xf32> {mhlo.sharding = "{devices=[4,2]<=[2,4]T(1,0)}"})
module @transpose {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"}) -> tensor<16x8xf32> {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<8x16xf32>) -> tensor<16x8xf32>
    return %0 : tensor<16x8xf32>
  }
}

// -----

// Every value annotated: nothing open, GSPMD is not asked, the module is left as it was.
// NOTE: match_gspmd_boundary.mlir: note: match-gspmd-boundary: 0 of 0 open values pinned; 0.000 s{{$}}
// CHECK-LABEL: module @annotated {
// CHECK: func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[8]<=[8]}"}) -> (tensor<8xf32> {mhlo.sharding = "{replicated}"})
module @annotated {
  func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[8]<=[8]}"}) -> (tensor<8xf32> {mhlo.sharding = "{replicated}"}) {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// GSPMD's choice has no faithful Shardy form (a manual result): the value stays open (for
// Shardy's propagation to decide) and the note says why; the pass never fails on it.
// NOTE: match_gspmd_boundary.mlir: note: match-gspmd-boundary: 0 of 1 open values pinned; {{[0-9.]+}} s; result 0 of @main: GSPMD's '{manual}' is manual
// CHECK-LABEL: module @manual_result {
// CHECK: func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[8]<=[8]}"}) -> tensor<8xf32>
module @manual_result {
  func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[8]<=[8]}"}) -> tensor<8xf32> {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{manual}"} : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

// XLA does not compile the module (a custom call it has no implementation of): the values
// stay open and the note quotes XLA.
// NOTE: match_gspmd_boundary.mlir: note: match-gspmd-boundary: 0 of 1 open values pinned; 0.000 s; GSPMD does not compile the program: {{.+}}no_such_target
// CHECK-LABEL: module @xla_refuses {
// CHECK: func.func @main(%arg0: tensor<8x4xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) -> tensor<8x4xf32>
module @xla_refuses {
  func.func @main(%arg0: tensor<8x4xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) -> tensor<8x4xf32> {
    %0 = stablehlo.custom_call @no_such_target(%arg0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
}
