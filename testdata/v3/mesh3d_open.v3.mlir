module @jit_mesh3d_open attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  func.func private @region_0.1(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{mesh['x'=2,'y'=2,'z'=2], [{'x', 'y'}, {'z'}]}"}, %arg1: tensor<16x8xf32> {mhlo.sharding = "{mesh['x'=2,'y'=2,'z'=2], [{'z'}, {}]}"}) -> (tensor<8x8xf32> {mhlo.sharding = "{mesh['x'=2,'y'=2,'z'=2], [{'x'}, {'y'}]}"}, tensor<f32> {mhlo.sharding = "{mesh['x'=2,'y'=2,'z'=2], replicated}"}) {
    %0 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {backend_config = "", mhlo.sharding = "{mesh['x'=2,'y'=2,'z'=2], [{'x', 'y'}, {?}]}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %2 = stablehlo.sine %1 : tensor<8x8xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
    %4 = stablehlo.multiply %2, %3 : tensor<8x8xf32>
    %5 = stablehlo.reshape %4 {mhlo.sharding = "{mesh['x'=2,'y'=2,'z'=2], [{'x'}, {'y'}]}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.reduce(%1 init: %cst_0) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8xf32>, tensor<f32>) -> tensor<f32>
    %7 = stablehlo.reshape %6 {mhlo.sharding = "{mesh['x'=2,'y'=2,'z'=2], replicated}"} : (tensor<f32>) -> tensor<f32>
    return %4, %6 : tensor<8x8xf32>, tensor<f32>
  }
}
