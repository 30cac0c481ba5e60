module @IrToHlo.6 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["_axis_0"=2, "_axis_1"=4], device_ids=[6, 2, 1, 7, 3, 0, 5, 4]> {stablehlo.mesh = {axes = [{name = "_axis_0", size = 2 : i64}, {name = "_axis_1", size = 4 : i64}], device_ids = dense<[6, 2, 1, 7, 3, 0, 5, 4]> : tensor<8xi64>}}
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0"}, {"_axis_1"}]>}, %arg1: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"_axis_0"}]>}) -> tensor<4x16xf32> {
    %0 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %1 = stablehlo.tanh %0 : tensor<4x16xf32>
    return %1 : tensor<4x16xf32>
  }
}
