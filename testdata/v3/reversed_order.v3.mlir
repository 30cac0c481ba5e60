module @reversed_order attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{mesh['p'=2,'q'=4], device_ids=(7,6,5,4,3,2,1,0), [{'p'}, {'q'}]}"}, %arg1: tensor<8x8xf32> {mhlo.sharding = "{mesh['p'=2,'q'=4], device_ids=(7,6,5,4,3,2,1,0), [{'p', 'q'}, {}]}"}) -> (tensor<8x8xf32> {mhlo.sharding = "{mesh['p'=2,'q'=4], device_ids=(7,6,5,4,3,2,1,0), [{'q'}, {'p'}]}"}) {
    %0 = stablehlo.subtract %arg0, %arg1 : tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
