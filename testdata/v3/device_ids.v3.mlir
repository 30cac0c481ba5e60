module @device_ids attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{mesh['data'=2,'model'=4], device_ids=(3,6,0,5,1,7,2,4), [{'data'}, {'model'}]}"}, %arg1: tensor<16x8xf32> {mhlo.sharding = "{mesh['data'=2,'model'=4], device_ids=(3,6,0,5,1,7,2,4), [{'model'}, {}], replicated={'data'}}"}) -> (tensor<8x8xf32> {mhlo.sharding = "{mesh['data'=2,'model'=4], device_ids=(3,6,0,5,1,7,2,4), [{'data', 'model'}, {}]}"}) {
    %0 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {backend_config = "", mhlo.sharding = "{mesh['data'=2,'model'=4], device_ids=(3,6,0,5,1,7,2,4), [{'model':(1)2}, {'model':(2)2, ?}]}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %2 = stablehlo.tanh %1 : tensor<8x8xf32>
    return %2 : tensor<8x8xf32>
  }
}
