module @device_ids attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[2,4]3,6,0,5,1,7,2,4}"}, %arg1: tensor<16x8xf32> {mhlo.sharding = "{devices=[4,1,2]1,3,6,7,0,2,4,5 last_tile_dim_replicate}"}) -> (tensor<8x8xf32> {mhlo.sharding = "{devices=[8,1]3,6,0,5,1,7,2,4}"}) {
    %0 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {backend_config = "", mhlo.sharding = "{devices=[2,2,2]1,3,6,7,0,2,4,5 last_tile_dim_replicate}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %2 = stablehlo.tanh %1 : tensor<8x8xf32>
    return %2 : tensor<8x8xf32>
  }
}
