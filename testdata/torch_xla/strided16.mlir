module @IrToHlo.11 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[1,4,4]0,4,8,12,1,5,9,13,2,6,10,14,3,7,11,15 last_tile_dim_replicate}"}, %arg1: tensor<8x8xf32> {mhlo.sharding = "{devices=[4,1,4]0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15 last_tile_dim_replicate}"}, %arg2: tensor<8x8xf32> {mhlo.sharding = "{devices=[4,4]0,4,8,12,1,5,9,13,2,6,10,14,3,7,11,15}"}, %arg3: tensor<16x8xf32> {mhlo.sharding = "{devices=[16,1]0,4,8,12,1,5,9,13,2,6,10,14,3,7,11,15}"}) -> (tensor<8x8xf32>, tensor<16x8xf32>) {
    %0 = stablehlo.dot_general %arg2, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.multiply %0, %arg0 : tensor<8x8xf32>
    %2 = stablehlo.transpose %1, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[8,8]{0,1}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %3 = stablehlo.dot_general %arg3, %2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x8xf32>, tensor<8x8xf32>) -> tensor<16x8xf32>
    %4 = stablehlo.custom_call @Sharding(%3) {backend_config = "", mhlo.sharding = "{devices=[4,4]0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15}"} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    return %1, %4 : tensor<8x8xf32>, tensor<16x8xf32>
  }
}
