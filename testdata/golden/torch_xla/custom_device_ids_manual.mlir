module @IrToHlo.58 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=2, "model"=4], device_ids=[3, 6, 0, 5, 1, 7, 2, 4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}], device_ids = dense<[3, 6, 0, 5, 1, 7, 2, 4]> : tensor<8xi64>}}
  func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg1: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg2: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg3: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> tensor<8x8xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<8x8xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<8x16xf32>
    %0 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<4x4xf32>
    %1 = sdy.manual_computation(%arg3, %0) in_shardings=[<@mesh, [{"data"}, {"model"}]>, <@mesh, [{}, {}], replicated={"data", "model"}>] out_shardings=[<@mesh, [{"data"}, {"model"}]>] manual_axes={"data", "model"} (%arg4: tensor<4x4xf32>, %arg5: tensor<4x4xf32>) {
      %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %9 = "stablehlo.reduce_window"(%arg4, %cst_1) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [3, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 4>, window_strides = array<i64: 1, 1>}> ({
      ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
        %12 = stablehlo.add %arg6, %arg7 : tensor<f32>
        stablehlo.return %12 : tensor<f32>
      }) : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
      %10 = stablehlo.sine %9 : tensor<4x4xf32>
      %11 = stablehlo.multiply %10, %arg5 : tensor<4x4xf32>
      sdy.return %11 : tensor<4x4xf32>
    } : (tensor<8x16xf32>, tensor<4x4xf32>) -> tensor<8x16xf32>
    %2 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %3 = stablehlo.multiply %1, %2 : tensor<8x16xf32>
    %4 = stablehlo.add %3, %cst_0 : tensor<8x16xf32>
    %5 = sdy.manual_computation(%4) in_shardings=[<@mesh, [{}, {"model"}], replicated={"data"}>] out_shardings=[<@mesh, [{}, {"model"}], replicated={"data"}>] manual_axes={"data", "model"} (%arg4: tensor<8x4xf32>) {
      %cst_1 = stablehlo.constant dense<1.250000e-01> : tensor<4xf32>
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %9 = stablehlo.reduce(%arg4 init: %cst_2) applies stablehlo.add across dimensions = [0] : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
      %10 = stablehlo.multiply %9, %cst_1 : tensor<4xf32>
      %11 = stablehlo.broadcast_in_dim %10, dims = [1] : (tensor<4xf32>) -> tensor<8x4xf32>
      %12 = stablehlo.subtract %arg4, %11 : tensor<8x4xf32>
      sdy.return %12 : tensor<8x4xf32>
    } : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %6 = stablehlo.dot_general %5, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %7 = stablehlo.maximum %6, %cst : tensor<8x8xf32>
    %8 = sdy.sharding_constraint %7 <@mesh, [{}, {"data"}]> : tensor<8x8xf32>
    return %8 : tensor<8x8xf32>
  }
}
