module @IrToHlo.25 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["_axis_0"=2, "_axis_1"=2, "_axis_2"=2]> {stablehlo.mesh = {axes = [{name = "_axis_0", size = 2 : i64}, {name = "_axis_1", size = 2 : i64}, {name = "_axis_2", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<4x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_1"}, {}, {}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_2"}, {"_axis_0"}]>}, %arg2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"_axis_1", "_axis_2"}]>}, %arg3: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0"}, {}]>}) -> (tensor<4x8x8xf32>, tensor<8x8xf32>) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.dot_general %arg3, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"_axis_2"}]> : tensor<8x8xf32>
    %2 = stablehlo.multiply %1, %arg1 : tensor<8x8xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [1, 2] : (tensor<8x8xf32>) -> tensor<4x8x8xf32>
    %4 = stablehlo.add %3, %arg0 : tensor<4x8x8xf32>
    %5 = stablehlo.reduce(%4 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
    %6 = stablehlo.transpose %arg1, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[8,8]{0,1}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %7 = stablehlo.dot_general %5, %6, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    return %4, %7 : tensor<4x8x8xf32>, tensor<8x8xf32>
  }
}
