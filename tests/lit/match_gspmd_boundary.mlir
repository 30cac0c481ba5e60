// RUN: shardy-convert opt %s -p 'match-gspmd-boundary{num-devices=8}' --split-input-file | filecheck %s
// RUN: shardy-convert opt %s -p 'match-gspmd-boundary{num-devices=8 allow-spmd-sharding-propagation-to-parameters=true}' --split-input-file | filecheck %s --check-prefix=PARAMS
// RUN: shardy-convert opt %s -p 'match-gspmd-boundary{num-devices=8 allow-spmd-sharding-propagation-to-output=false}' --split-input-file | filecheck %s --check-prefix=CLOSED

// match-gspmd-boundary compiles the module with GSPMD on jaxlib's CPU client and pins the
// sharding GSPMD chose for each open @main value as its mhlo.sharding. Open: unannotated and
// reachable by propagation (XLA's allow_spmd_sharding_propagation_to_*; torch_xla's defaults:
// results yes, arguments no). What it did is the module attribute shardy_convert.gspmd_boundary.

// The result of a matmul whose lhs rows are split 4 ways and contracting dim 2 ways: GSPMD
// gives it the rows' 4 ways, replicated over the other 2. The unannotated rhs is not open
// (propagation to parameters is off: import-shardings closes it replicated), so it is left alone.
// CHECK-LABEL: module @matmul attributes {shardy_convert.gspmd_boundary = "1 of 1 open values pinned; {{[0-9.]+}} s"}
// CHECK: func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}, %arg1: tensor<16x8xf32>)
// CHECK-SAME: -> (tensor<8x8xf32> {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"})
// With propagation to parameters the rhs is open too: GSPMD splits its rows (the contracting
// dim) as the lhs splits its columns.
// PARAMS-LABEL: module @matmul attributes {shardy_convert.gspmd_boundary = "2 of 2 open values pinned; {{[0-9.]+}} s"}
// PARAMS: %arg1: tensor<16x8xf32> {mhlo.sharding = "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}
// PARAMS-SAME: -> (tensor<8x8xf32> {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"})
// Without propagation to the output nothing is open: nothing is compiled, nothing written.
// CLOSED-LABEL: module @matmul attributes {shardy_convert.gspmd_boundary = "0 of 0 open values pinned; 0.000 s"}
// CLOSED: func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}, %arg1: tensor<16x8xf32>) -> tensor<8x8xf32>
module @matmul {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}, %arg1: tensor<16x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}

// -----

// A transpose: GSPMD transposes the tile grid with the value (devices in a transposed order).
// CHECK-LABEL: module @transpose attributes {shardy_convert.gspmd_boundary = "1 of 1 open values pinned; {{[0-9.]+}} s"}
// CHECK: -> (tensor<16x8xf32> {mhlo.sharding = "{devices=[4,2]<=[2,4]T(1,0)}"})
module @transpose {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"}) -> tensor<16x8xf32> {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<8x16xf32>) -> tensor<16x8xf32>
    return %0 : tensor<16x8xf32>
  }
}

// -----

// Every value annotated: nothing open, GSPMD is not asked, the module is left as it was.
// CHECK-LABEL: module @annotated attributes {shardy_convert.gspmd_boundary = "0 of 0 open values pinned; 0.000 s"}
// CHECK: func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[8]<=[8]}"}) -> (tensor<8xf32> {mhlo.sharding = "{replicated}"})
module @annotated {
  func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[8]<=[8]}"}) -> (tensor<8xf32> {mhlo.sharding = "{replicated}"}) {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// GSPMD's choice has no faithful Shardy form (a manual result): the value stays open (for
// Shardy's propagation to decide) and the attribute says why; the pass never fails on it.
// CHECK-LABEL: module @manual_result attributes {shardy_convert.gspmd_boundary = "0 of 1 open values pinned; {{[0-9.]+}} s; result 0 of @main: GSPMD's '{manual}' is manual"}
// CHECK: func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[8]<=[8]}"}) -> tensor<8xf32>
module @manual_result {
  func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[8]<=[8]}"}) -> tensor<8xf32> {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{manual}"} : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

// XLA does not compile the module (a custom call it has no implementation of): the values
// stay open and the attribute quotes XLA.
// CHECK-LABEL: module @xla_refuses attributes {shardy_convert.gspmd_boundary = "0 of 1 open values pinned; 0.000 s; GSPMD does not compile the program: {{.+}}no_such_target{{.*}}"}
// CHECK: func.func @main(%arg0: tensor<8x4xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) -> tensor<8x4xf32>
module @xla_refuses {
  func.func @main(%arg0: tensor<8x4xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) -> tensor<8x4xf32> {
    %0 = stablehlo.custom_call @no_such_target(%arg0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
}
