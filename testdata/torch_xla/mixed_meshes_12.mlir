module @IrToHlo.15 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<12x12xf32> {mhlo.sharding = "{devices=[1,4,3]0,1,2,3,4,5,6,7,8,9,10,11 last_tile_dim_replicate}"}, %arg1: tensor<24x12xf32> {mhlo.sharding = "{devices=[4,3]0,1,2,3,4,5,6,7,8,9,10,11}"}, %arg2: tensor<12x24xf32> {mhlo.sharding = "{devices=[3,4]0,1,2,3,4,5,6,7,8,9,10,11}"}) -> (tensor<12x12xf32>, tensor<12x12xf32>) {
    %0 = stablehlo.dot_general %arg2, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<12x24xf32>, tensor<24x12xf32>) -> tensor<12x12xf32>
    %1 = stablehlo.tanh %0 : tensor<12x12xf32>
    %2 = stablehlo.custom_call @Sharding(%1) {backend_config = "", mhlo.sharding = "{devices=[4,1,3]0,4,8,1,5,9,2,6,10,3,7,11 last_tile_dim_replicate}"} : (tensor<12x12xf32>) -> tensor<12x12xf32>
    %3 = stablehlo.add %2, %arg0 : tensor<12x12xf32>
    %4 = stablehlo.transpose %arg0, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[12,12]{0,1}"} : (tensor<12x12xf32>) -> tensor<12x12xf32>
    %5 = stablehlo.dot_general %3, %4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<12x12xf32>, tensor<12x12xf32>) -> tensor<12x12xf32>
    %6 = stablehlo.custom_call @Sharding(%5) {backend_config = "", mhlo.sharding = "{devices=[3,1,4]0,3,6,9,1,4,7,10,2,5,8,11 last_tile_dim_replicate}"} : (tensor<12x12xf32>) -> tensor<12x12xf32>
    return %3, %6 : tensor<12x12xf32>, tensor<12x12xf32>
  }
}
