module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16x8xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}, %arg1: tensor<8x16xf32> {mhlo.sharding = "{devices=[1,8]<=[2,4]T(1,0)}"}) -> (tensor<16x16xf32> {jax.result_info = "result[0]", mhlo.sharding = "{devices=[4,2]<=[2,4]T(1,0)}"}, tensor<8x16xf32> {jax.result_info = "result[1]", mhlo.sharding = "{devices=[1,8]<=[8]}"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
    %1 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<16x8xf32>) -> tensor<8x16xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %3 = stablehlo.multiply %1, %2 : tensor<8x16xf32>
    return %0, %3 : tensor<16x16xf32>, tensor<8x16xf32>
  }
}
