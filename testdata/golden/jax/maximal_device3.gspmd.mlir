module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]> {stablehlo.mesh = {axes = [], device_ids = dense<3> : tensor<1xi64>}}
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@maximal_mesh_3, []>}, %arg1: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@maximal_mesh_3, []>}) -> (tensor<8x8xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@maximal_mesh_3, []>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.tanh %0 : tensor<8x8xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
    %3 = stablehlo.multiply %1, %2 : tensor<8x8xf32>
    return %3 : tensor<8x8xf32>
  }
}
