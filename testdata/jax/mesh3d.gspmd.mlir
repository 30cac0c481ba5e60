module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0)}"}, %arg1: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}, %arg2: tensor<8x8xf32> {mhlo.sharding = "{devices=[1,2,4]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}"}) -> (tensor<8x8xf32> {jax.result_info = "result[0]", mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0)}"}, tensor<8xf32> {jax.result_info = "result[1]", mhlo.sharding = "{devices=[2,4]<=[8] last_tile_dim_replicate}"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {backend_config = "", mhlo.sharding = "{devices=[2,2,2]<=[2,4]T(1,0) last_tile_dim_replicate}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %2 = stablehlo.add %1, %arg2 : tensor<8x8xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
    return %2, %3 : tensor<8x8xf32>, tensor<8xf32>
  }
}
