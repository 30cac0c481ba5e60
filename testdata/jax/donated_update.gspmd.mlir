module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16x8xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}", tf.aliasing_output = 0 : i32}, %arg1: tensor<16x8xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}) -> (tensor<16x8xf32> {jax.result_info = "result[0]", mhlo.sharding = "{devices=[2,4]<=[8]}"}, tensor<f32> {jax.result_info = "result[1]", mhlo.sharding = "{replicated}"}) {
    %cst = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16x8xf32>
    %1 = stablehlo.multiply %0, %arg1 : tensor<16x8xf32>
    %2 = stablehlo.subtract %arg0, %1 : tensor<16x8xf32>
    %3 = stablehlo.multiply %2, %2 : tensor<16x8xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst_0) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x8xf32>, tensor<f32>) -> tensor<f32>
    return %2, %4 : tensor<16x8xf32>, tensor<f32>
  }
}
