module @reversed_order attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]7,6,5,4,3,2,1,0}"}, %arg1: tensor<8x8xf32> {mhlo.sharding = "{devices=[8,1]7,6,5,4,3,2,1,0}"}) -> (tensor<8x8xf32> {mhlo.sharding = "{devices=[4,2]7,3,6,2,5,1,4,0}"}) {
    %0 = stablehlo.subtract %arg0, %arg1 : tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
