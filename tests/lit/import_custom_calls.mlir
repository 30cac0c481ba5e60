// RUN: shardy-convert opt %s -p import-shardings,import-custom-calls --split-input-file | filecheck %s

// CHECK-LABEL: func @sharding_becomes_constraint_with_open_dims
// CHECK-NEXT{LITERAL}: %0 = sdy.sharding_constraint %arg0 <@mesh, [{"_axis_0"}, {}]>
// CHECK-NEXT{LITERAL}: %1 = sdy.sharding_constraint %0 <@mesh, [{?}, {"_axis_0", ?}]>
// CHECK-NEXT: return %1
func.func @sharding_becomes_constraint_with_open_dims(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[4,1]<=[4]}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = stablehlo.custom_call @Sharding(%0) {backend_config = "unspecified_dims=[0,1]", mhlo.sharding = "{devices=[1,4]<=[4]}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}

// -----

// JAX's shard_map over 'y' only (partial manual): @Sharding -> full-to-shard -> call -> @Sharding ->
// shard-to-full becomes one manual_computation around the call.
// CHECK-LABEL: func @main
// CHECK-NEXT{LITERAL}: %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{?}, {"_axis_1", ?}]>] out_shardings=[<@mesh, [{?}, {?}]>] manual_axes={"_axis_1"} (%arg1: tensor<8x2xf32>) {
// CHECK-NEXT: %1 = func.call @shmap_body(%arg1)
// CHECK-NEXT: sdy.return %1
// CHECK-NEXT: } : (tensor<8x8xf32>) -> tensor<8x2xf32>
// CHECK-NEXT: return %0
func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"}) -> tensor<8x2xf32> {
  %0 = stablehlo.custom_call @Sharding(%arg0) {backend_config = "unspecified_dims=[0,1]", mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {backend_config = "unspecified_dims=[0,1]", mhlo.sharding = "{devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}"} : (tensor<8x8xf32>) -> tensor<8x2xf32>
  %2 = call @shmap_body(%1) : (tensor<8x2xf32>) -> tensor<8x2xf32>
  %3 = stablehlo.custom_call @Sharding(%2) {backend_config = "unspecified_dims=[0,1]", mhlo.sharding = "{devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}"} : (tensor<8x2xf32>) -> tensor<8x2xf32>
  %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {backend_config = "unspecified_dims=[0,1]", mhlo.sharding = "{replicated}"} : (tensor<8x2xf32>) -> tensor<8x2xf32>
  return %4 : tensor<8x2xf32>
}
func.func private @shmap_body(%arg0: tensor<8x2xf32>) -> tensor<8x2xf32> {
  return %arg0 : tensor<8x2xf32>
}

// -----

// torch_xla's inline region: full-to-shard straight on an argument, a replicated parameter and a
// constant from outside used inside: the parameter comes in as a replicated operand, the
// constant is cloned in.
// CHECK-LABEL: func @torch_xla_inline_region
// CHECK: %0 = stablehlo.broadcast_in_dim %arg1
// CHECK-NEXT{LITERAL}: %1 = sdy.manual_computation(%arg0, %0) in_shardings=[<@mesh, [{"_axis_0"}, {}]>, <@mesh, [{}, {}]>] out_shardings=[<@mesh, [{"_axis_0"}, {}]>] manual_axes={"_axis_0"} (%arg2: tensor<2x8xf32>, %arg3: tensor<2x8xf32>) {
// CHECK-NEXT: %cst = stablehlo.constant dense<2.000000e+00> : tensor<2x8xf32>
// CHECK-NEXT: %3 = stablehlo.multiply %arg2, %arg3
// CHECK-NEXT: %4 = stablehlo.add %3, %cst
// CHECK-NEXT: sdy.return %4
// CHECK: %2 = stablehlo.add %1, %1
func.func @torch_xla_inline_region(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[4,1]0,1,2,3}"}, %arg1: tensor<f32> {mhlo.sharding = "{replicated}"}) -> tensor<8x8xf32> {
  %cst = stablehlo.constant dense<2.000000e+00> : tensor<2x8xf32>
  %0 = stablehlo.custom_call @SPMDFullToShardShape(%arg0) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<8x8xf32>) -> tensor<2x8xf32>
  %1 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<2x8xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<2x8xf32>
  %3 = stablehlo.add %2, %cst : tensor<2x8xf32>
  %4 = stablehlo.custom_call @Sharding(%3) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %5 = stablehlo.custom_call @SPMDShardToFullShape(%4) {backend_config = "", mhlo.sharding = "{devices=[4,1]0,1,2,3}"} : (tensor<2x8xf32>) -> tensor<8x8xf32>
  %6 = stablehlo.add %5, %5 : tensor<8x8xf32>
  return %6 : tensor<8x8xf32>
}
