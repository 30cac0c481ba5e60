module @IrToHlo.15 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["_axis_0"=12]> {stablehlo.mesh = {axes = [{name = "_axis_0", size = 12 : i64}]}}
  func.func @main(%arg0: tensor<12x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"_axis_0":(1)4}]>}, %arg1: tensor<24x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0":(1)4}, {"_axis_0":(4)3}]>}, %arg2: tensor<12x24xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0":(1)3}, {"_axis_0":(3)4}]>}) -> (tensor<12x12xf32>, tensor<12x12xf32>) {
    %0 = stablehlo.dot_general %arg2, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<12x24xf32>, tensor<24x12xf32>) -> tensor<12x12xf32>
    %1 = stablehlo.tanh %0 : tensor<12x12xf32>
    %2 = sdy.sharding_constraint %1 <@mesh, [{"_axis_0":(3)4}, {}]> : tensor<12x12xf32>
    %3 = stablehlo.add %2, %arg0 : tensor<12x12xf32>
    %4 = stablehlo.transpose %arg0, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[12,12]{0,1}"} : (tensor<12x12xf32>) -> tensor<12x12xf32>
    %5 = stablehlo.dot_general %3, %4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<12x12xf32>, tensor<12x12xf32>) -> tensor<12x12xf32>
    %6 = sdy.sharding_constraint %5 <@mesh, [{"_axis_0":(4)3}, {}]> : tensor<12x12xf32>
    return %3, %6 : tensor<12x12xf32>, tensor<12x12xf32>
  }
}
