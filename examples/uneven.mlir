module @IrToHlo.7 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<1x128xf32> {mhlo.sharding = "{devices=[8,1]0,1,2,3,4,5,6,7}"}) -> tensor<1x128xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<1x128xf32>
    return %0 : tensor<1x128xf32>
  }
}
