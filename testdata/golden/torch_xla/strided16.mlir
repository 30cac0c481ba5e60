module @IrToHlo.11 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["_axis_0"=4, "_axis_1"=4]> {stablehlo.mesh = {axes = [{name = "_axis_0", size = 4 : i64}, {name = "_axis_1", size = 4 : i64}]}}
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"_axis_1"}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0"}, {}]>}, %arg2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_1"}, {"_axis_0"}]>}, %arg3: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_1", "_axis_0"}, {}]>}) -> (tensor<8x8xf32>, tensor<16x8xf32>) {
    %0 = stablehlo.dot_general %arg2, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.multiply %0, %arg0 : tensor<8x8xf32>
    %2 = stablehlo.transpose %1, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[8,8]{0,1}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %3 = stablehlo.dot_general %arg3, %2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x8xf32>, tensor<8x8xf32>) -> tensor<16x8xf32>
    %4 = sdy.sharding_constraint %3 <@mesh, [{"_axis_0"}, {"_axis_1"}]> : tensor<16x8xf32>
    return %1, %4 : tensor<8x8xf32>, tensor<16x8xf32>
  }
}
