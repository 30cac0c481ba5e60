module @reduction_max attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{mesh['data'=2,'model'=4], [{'data'}, {}], unreduced=max{'model'}}"}) -> (tensor<8x16xf32> {mhlo.sharding = "{mesh['data'=2,'model'=4], [{'data'}, {}]}"}) {
    %0 = stablehlo.tanh %arg0 : tensor<8x16xf32>
    return %0 : tensor<8x16xf32>
  }
}
