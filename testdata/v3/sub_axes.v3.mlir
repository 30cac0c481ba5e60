module @sub_axes attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{mesh['x'=8], [{'x':(1)2}, {'x':(2)4}]}"}, %arg1: tensor<8x8xf32> {mhlo.sharding = "{mesh['x'=8], [{'x':(1)4}, {'x':(4)2}]}"}) -> (tensor<8x8xf32> {mhlo.sharding = "{mesh['x'=8], [{'x'}, {}]}"}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
    %1 = stablehlo.multiply %0, %arg0 : tensor<8x8xf32>
    return %1 : tensor<8x8xf32>
  }
}
