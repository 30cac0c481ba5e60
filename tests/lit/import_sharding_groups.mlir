// RUN: shardy-convert opt %s -p import-sharding-groups,import-shardings,import-custom-calls --split-input-file | filecheck %s

// torch_xla's xs.shard_as(x, y) (JAX's shard_alike): one @Sharding per tensor, placement
// unknown, group 0. Both values join one Shardy group; the constraints stay open.
// CHECK-LABEL: func private @shard_as_pair
// CHECK-NEXT{LITERAL}: %0 = sdy.sharding_constraint %arg0 <@mesh, [{?}]> : tensor<8xf32>
// CHECK-NEXT: sdy.sharding_group %0 group_id=0 : tensor<8xf32>
// CHECK-NEXT{LITERAL}: %1 = sdy.sharding_constraint %arg1 <@mesh, [{?}]> : tensor<8xf32>
// CHECK-NEXT: sdy.sharding_group %1 group_id=0 : tensor<8xf32>
// CHECK-NEXT: stablehlo.tuple %0, %1
func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{replicated}"}, %arg1: tensor<8xf32> {mhlo.sharding = "{devices=[8]0,1,2,3,4,5,6,7}"}) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = call @shard_as_pair(%arg1, %arg0) : (tensor<8xf32>, tensor<8xf32>) -> tuple<tensor<8xf32>, tensor<8xf32>>
  %1 = stablehlo.get_tuple_element %0[0] : (tuple<tensor<8xf32>, tensor<8xf32>>) -> tensor<8xf32>
  %2 = stablehlo.get_tuple_element %0[1] : (tuple<tensor<8xf32>, tensor<8xf32>>) -> tensor<8xf32>
  return %1, %2 : tensor<8xf32>, tensor<8xf32>
}
func.func private @shard_as_pair(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> tuple<tensor<8xf32>, tensor<8xf32>> {
  %0 = stablehlo.custom_call @Sharding(%arg0) {backend_config = "", has_side_effect = true, mhlo.sharding = "{unknown shard_as 0}"} : (tensor<8xf32>) -> tensor<8xf32>
  %1 = stablehlo.custom_call @Sharding(%arg1) {backend_config = "", has_side_effect = true, mhlo.sharding = "{unknown shard_as 0}"} : (tensor<8xf32>) -> tensor<8xf32>
  %2 = stablehlo.tuple %0, %1 : tuple<tensor<8xf32>, tensor<8xf32>>
  return %2 : tuple<tensor<8xf32>, tensor<8xf32>>
}

// -----

// shard_as 0 and shard_like 0 are two groups in GSPMD (two id spaces): two Shardy groups,
// numbered in the order first met. A group on an argument goes first in the body; a group
// with a placement keeps it (the constraint) and groups the constrained value.
// CHECK-LABEL: func @two_kinds_two_groups
// CHECK-SAME{LITERAL}: %arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0"}, {}]>}
// CHECK-NEXT: sdy.sharding_group %arg0 group_id=0 : tensor<8x4xf32>
// CHECK-NEXT: sdy.sharding_group %arg1 group_id=1 : tensor<8x4xf32>
// CHECK-NEXT{LITERAL}: %0 = sdy.sharding_constraint %arg2 <@mesh, [{"_axis_0"}, {}]> : tensor<8x4xf32>
// CHECK-NEXT: sdy.sharding_group %0 group_id=0 : tensor<8x4xf32>
// CHECK-NEXT{LITERAL}: %1 = sdy.sharding_constraint %arg2 <@mesh, [{?}, {?}]> : tensor<8x4xf32>
// CHECK-NEXT: sdy.sharding_group %1 group_id=1 : tensor<8x4xf32>
func.func @two_kinds_two_groups(%arg0: tensor<8x4xf32> {mhlo.sharding = "{devices=[4,1]<=[4] shard_as 0}"}, %arg1: tensor<8x4xf32> {mhlo.sharding = "{unknown shard_like 0}"}, %arg2: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %0 = stablehlo.custom_call @Sharding(%arg2) {mhlo.sharding = "{devices=[4,1]<=[4] shard_as 0}"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = stablehlo.custom_call @Sharding(%arg2) {mhlo.sharding = "{unknown shard_like 0}"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0, %1 : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// A group on a result groups the value returned, right where it is made.
// CHECK-LABEL: func @result_group
// CHECK-NEXT: sdy.sharding_group %arg0 group_id=0 : tensor<8xf32>
// CHECK-NEXT: %0 = stablehlo.negate %arg0
// CHECK-NEXT: sdy.sharding_group %0 group_id=0 : tensor<8xf32>
// CHECK-NEXT: return %0
func.func @result_group(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[4]<=[4] shard_as 7}"}) -> (tensor<8xf32> {mhlo.sharding = "{unknown shard_as 7}"}) {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
