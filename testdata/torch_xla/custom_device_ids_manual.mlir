module @IrToHlo.58 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<16x8xf32> {mhlo.sharding = "{devices=[4,1,2]1,3,6,7,0,2,4,5 last_tile_dim_replicate}"}, %arg1: tensor<f32> {mhlo.sharding = "{replicated}"}, %arg2: tensor<f32> {mhlo.sharding = "{replicated}"}, %arg3: tensor<8x16xf32> {mhlo.sharding = "{devices=[2,4]3,6,0,5,1,7,2,4}"}) -> tensor<8x8xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<8x8xf32>
    %cst_0 = stablehlo.constant dense<1.250000e-01> : tensor<4xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<8x16xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.custom_call @SPMDFullToShardShape(%arg3) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<8x16xf32>) -> tensor<4x4xf32>
    %1 = "stablehlo.reduce_window"(%0, %cst_2) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [3, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 4>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %21 = stablehlo.add %arg4, %arg5 : tensor<f32>
      stablehlo.return %21 : tensor<f32>
    }) : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
    %2 = stablehlo.sine %1 : tensor<4x4xf32>
    %3 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<4x4xf32>
    %4 = stablehlo.multiply %2, %3 : tensor<4x4xf32>
    %5 = stablehlo.custom_call @Sharding(%4) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %6 = stablehlo.custom_call @SPMDShardToFullShape(%5) {backend_config = "", mhlo.sharding = "{devices=[2,4]3,6,0,5,1,7,2,4}"} : (tensor<4x4xf32>) -> tensor<8x16xf32>
    %7 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %8 = stablehlo.multiply %6, %7 : tensor<8x16xf32>
    %9 = stablehlo.add %8, %cst_1 : tensor<8x16xf32>
    %10 = stablehlo.custom_call @Sharding(%9) {backend_config = "", mhlo.sharding = "{devices=[1,4,2]1,3,6,7,0,2,4,5 last_tile_dim_replicate}"} : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %11 = stablehlo.custom_call @SPMDFullToShardShape(%10) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<8x16xf32>) -> tensor<8x4xf32>
    %12 = stablehlo.reduce(%11 init: %cst_2) applies stablehlo.add across dimensions = [0] : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
    %13 = stablehlo.multiply %12, %cst_0 : tensor<4xf32>
    %14 = stablehlo.broadcast_in_dim %13, dims = [1] : (tensor<4xf32>) -> tensor<8x4xf32>
    %15 = stablehlo.subtract %11, %14 : tensor<8x4xf32>
    %16 = stablehlo.custom_call @Sharding(%15) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %17 = stablehlo.custom_call @SPMDShardToFullShape(%16) {backend_config = "", mhlo.sharding = "{devices=[1,4,2]1,3,6,7,0,2,4,5 last_tile_dim_replicate}"} : (tensor<8x4xf32>) -> tensor<8x16xf32>
    %18 = stablehlo.dot_general %17, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %19 = stablehlo.maximum %18, %cst : tensor<8x8xf32>
    %20 = stablehlo.custom_call @Sharding(%19) {backend_config = "", mhlo.sharding = "{devices=[1,2,4]0,3,5,6,1,2,4,7 last_tile_dim_replicate}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %20 : tensor<8x8xf32>
  }
}
