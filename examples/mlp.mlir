module @IrToHlo.10 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<32x16xf32> {mhlo.sharding = "{devices=[4,1,2]1,3,6,7,0,2,4,5 last_tile_dim_replicate}"}, %arg1: tensor<16x32xf32> {mhlo.sharding = "{devices=[1,4,2]1,3,6,7,0,2,4,5 last_tile_dim_replicate}"}, %arg2: tensor<8x16xf32> {mhlo.sharding = "{devices=[2,1,4]0,3,5,6,1,2,4,7 last_tile_dim_replicate}"}) -> tensor<8x16xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<8x32xf32>
    %0 = stablehlo.dot_general %arg2, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %1 = stablehlo.maximum %0, %cst : tensor<8x32xf32>
    %2 = stablehlo.dot_general %1, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
    return %2 : tensor<8x16xf32>
  }
}
