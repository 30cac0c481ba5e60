// RUN: not shardy-convert opt %s -p import-shardings --split-input-file 2>&1 | filecheck %s

// Malformed named (V3) strings are located errors that quote the string and point at the
// column (XLA's parser aborts the process on most of them).
// CHECK: import_shardings_v3_errors.mlir:[[# @LINE + 2]]:19: arg 0 of @main: error: axis 'c' is not an axis of the mesh (its axes: 'a', 'b') at column 23 of "{mesh['a'=2,'b'=4], [{'c'}, {}]}"
module @unknown_axis {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{mesh['a'=2,'b'=4], [{'c'}, {}]}"}) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}

// -----

// CHECK: import_shardings_v3_errors.mlir:[[# @LINE + 2]]:19: arg 0 of @main: error: 'a' is used twice at column 30
module @axis_used_twice {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{mesh['a'=2,'b'=4], [{'a'}, {'a'}]}"}) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}

// -----

// CHECK: import_shardings_v3_errors.mlir:[[# @LINE + 4]]:10: stablehlo.add: error: expected sum, max or min after 'unreduced=' at column 44
// CHECK-NEXT: "{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced=prod{'b'}}"
module @unknown_reduction {
  func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.add %arg0, %arg0 {mhlo.sharding = "{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced=prod{'b'}}"} : tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}

// -----

// The mesh a V3 string states must be the program's size.
// CHECK: import_shardings_v3_errors.mlir:[[# @LINE + 2]]:19: arg 0 of @main: error: sharding "{mesh['a'=2,'b'=2], [{'a'}, {'b'}]}" spans 4 devices but mhlo.num_partitions says 8
module @mesh_of_another_size attributes {mhlo.num_partitions = 8 : i32} {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{mesh['a'=2,'b'=2], [{'a'}, {'b'}]}"}) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}
