// RUN: shardy-convert opt %s -p lift-callee-shardings --split-input-file | filecheck %s

// torch_xla with wrapped parameters: @main passes its arguments to the graph and returns
// elements of its tuple; the shardings sit on the callee. They go on @main's arguments and
// results too (each one the callee gives); an argument used twice, or already annotated,
// keeps what it has.
// CHECK-LABEL: func @main
// CHECK-SAME: %arg0: tensor<i64> {mhlo.sharding = "{replicated}"}
// CHECK-SAME: %arg1: tensor<16xf32> {mhlo.sharding = "{devices=[8]0,1,2,3,4,5,6,7}"}
// CHECK-SAME: %arg2: tensor<16x8xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}
// CHECK-SAME: %arg3: tensor<4x8xf32>)
// CHECK-SAME: -> (tensor<4x16xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}, tensor<16xf32> {mhlo.sharding = "{replicated}"})
func.func @main(%arg0: tensor<i64>, %arg1: tensor<16xf32>, %arg2: tensor<16x8xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}, %arg3: tensor<4x8xf32>) -> (tensor<4x16xf32>, tensor<16xf32>) {
  %0 = call @SyncTensorsGraph.5(%arg0, %arg1, %arg2, %arg3, %arg3) : (tensor<i64>, tensor<16xf32>, tensor<16x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tuple<tensor<4x16xf32>, tensor<16xf32>>
  %1 = stablehlo.get_tuple_element %0[0] : (tuple<tensor<4x16xf32>, tensor<16xf32>>) -> tensor<4x16xf32>
  %2 = stablehlo.get_tuple_element %0[1] : (tuple<tensor<4x16xf32>, tensor<16xf32>>) -> tensor<16xf32>
  return %1, %2 : tensor<4x16xf32>, tensor<16xf32>
}
// CHECK-LABEL: func private @SyncTensorsGraph.5
// CHECK-SAME: %arg1: tensor<16xf32> {mhlo.sharding = "{devices=[8]0,1,2,3,4,5,6,7}"}
func.func private @SyncTensorsGraph.5(%arg0: tensor<i64> {mhlo.sharding = "{replicated}"}, %arg1: tensor<16xf32> {mhlo.sharding = "{devices=[8]0,1,2,3,4,5,6,7}"}, %arg2: tensor<16x8xf32> {mhlo.sharding = "{devices=[8,1]0,1,2,3,4,5,6,7}"}, %arg3: tensor<4x8xf32> {mhlo.sharding = "{devices=[8,1]0,1,2,3,4,5,6,7}"}, %arg4: tensor<4x8xf32>) -> (tuple<tensor<4x16xf32>, tensor<16xf32>> {mhlo.sharding = "{{devices=[8,1]<=[8]}, {replicated}}"}) {
  %0 = stablehlo.transpose %arg2, dims = [1, 0] : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %1 = stablehlo.dot_general %arg3, %0, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %2 = stablehlo.negate %1 : tensor<4x16xf32>
  %3 = stablehlo.tuple %2, %arg1 : tuple<tensor<4x16xf32>, tensor<16xf32>>
  return %3 : tuple<tensor<4x16xf32>, tensor<16xf32>>
}

// -----

// Nothing to lift: @main calls nothing.
// CHECK-LABEL: func @main(%arg0: tensor<8xf32>) -> tensor<8xf32>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
