module @IrToHlo.6 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[2,4]6,2,1,7,3,0,5,4}"}, %arg1: tensor<4x8xf32> {mhlo.sharding = "{devices=[1,2,4]1,2,6,7,0,3,4,5 last_tile_dim_replicate}"}) -> tensor<4x16xf32> {
    %0 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %1 = stablehlo.tanh %0 : tensor<4x16xf32>
    return %1 : tensor<4x16xf32>
  }
}
