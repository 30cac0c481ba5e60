// RUN: not shardy-convert opt %s -p import-shardings,import-custom-calls --split-input-file 2>&1 | filecheck %s

// torch_xla returns a live manual tensor: a manual computation's results are global.
// CHECK: import_custom_calls_errors.mlir:9:3: func.return: error: a manual value escapes its manual region
func.func @manual_value_returned(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) -> tensor<2x8xf32> {
  %0 = stablehlo.custom_call @SPMDFullToShardShape(%arg0) {mhlo.sharding = "{manual}"} : (tensor<8x8xf32>) -> tensor<2x8xf32>
  %1 = stablehlo.negate %0 : tensor<2x8xf32>
  %2 = stablehlo.custom_call @Sharding(%1) {mhlo.sharding = "{manual}"} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %2 : tensor<2x8xf32>
}

// -----

// CHECK: import_custom_calls_errors.mlir:15:23: arg 0 of @manual_arg: error: a manual value ("{manual}") crosses the function boundary
func.func @manual_arg(%arg0: tensor<8x8xf32> {mhlo.sharding = "{manual}"}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}

// -----

// The @Sharding before the exit shards a dim over a free axis: more than the region's form
// holds, an error rather than a constraint dropped.
// CHECK: import_custom_calls_errors.mlir:28:8: stablehlo.custom_call: error: the @Sharding before @SPMDShardToFullShape shards a dim
func.func @free_axis_sharding_before_exit(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"}) -> tensor<8x8xf32> {
  %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}"} : (tensor<8x8xf32>) -> tensor<8x2xf32>
  %2 = stablehlo.negate %1 : tensor<8x2xf32>
  %3 = stablehlo.custom_call @Sharding(%2) {mhlo.sharding = "{devices=[2,1,4]<=[2,4]T(1,0) last_tile_dims={manual}}"} : (tensor<8x2xf32>) -> tensor<8x2xf32>
  %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"} : (tensor<8x2xf32>) -> tensor<8x8xf32>
  return %4 : tensor<8x8xf32>
}
