module @jit_transposed_specs attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[4,2]<=[2,4]T(1,0)}"}, %arg1: tensor<8x8xf32> {mhlo.sharding = "{devices=[1,8]<=[2,4]T(1,0)}"}) -> (tensor<8x8xf32> {mhlo.sharding = "{devices=[1,8]<=[8]}"}) {
    %0 = stablehlo.transpose %arg1, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[8,8]{0,1}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<8x8xf32>
    %cst = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
    %3 = stablehlo.multiply %1, %2 : tensor<8x8xf32>
    return %3 : tensor<8x8xf32>
  }
}
