module @IrToHlo.810 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["_axis_0"=2, "_axis_1"=4]> {stablehlo.mesh = {axes = [{name = "_axis_0", size = 2 : i64}, {name = "_axis_1", size = 4 : i64}]}}
  func.func @main(%arg0: tensor<4x16xi64> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0"}, {}]>}, %arg1: tensor<128x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg2: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg3: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg4: tensor<128x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_1"}, {}]>}, %arg5: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg6: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg7: tensor<128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg8: tensor<32x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"_axis_1"}]>}, %arg9: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg10: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg11: tensor<128x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"_axis_1"}]>}, %arg12: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg13: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_1"}, {}]>}, %arg14: tensor<96xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg15: tensor<32x96xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"_axis_1"}]>}, %arg16: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg17: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg18: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg19: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg20: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg21: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg22: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg23: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg24: tensor<i64> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg25: tensor<i64> {sdy.sharding = #sdy.sharding<@mesh, []>}) -> (tensor<f32>, tensor<128x32xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x128xf32>, tensor<128xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<128x32xf32>) {
    %c = stablehlo.constant dense<[[0], [1], [2], [3], [4], [5], [6], [7], [8], [9], [10], [11], [12], [13], [14], [15]]> : tensor<16x1xi64>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<32x32xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<64x32xf32>
    %c_1 = stablehlo.constant dense<-1> : tensor<64xi64>
    %c_2 = stablehlo.constant dense<0> : tensor<64xi64>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<128x32xf32>
    %cst_4 = stablehlo.constant dense<2.000000e+00> : tensor<4x16x128xf32>
    %c_5 = stablehlo.constant dense<-100> : tensor<64xi64>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<64x128xf32>
    %cst_7 = stablehlo.constant dense<1.000000e+00> : tensor<64x128xf32>
    %cst_8 = stablehlo.constant dense<9.99999974E-6> : tensor<64xf32>
    %cst_9 = stablehlo.constant dense<1.000000e+00> : tensor<4x16x128xf32>
    %cst_10 = stablehlo.constant dense<3.000000e+00> : tensor<4x16x128xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<4x4x16x16xf32>
    %cst_12 = stablehlo.constant dense<0xFF800000> : tensor<4x4x16x16xf32>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<16x16xf32>
    %c_14 = stablehlo.constant dense<false> : tensor<16x16xi1>
    %c_15 = stablehlo.constant dense<true> : tensor<16x16xi1>
    %cst_16 = stablehlo.constant dense<0.000000e+00> : tensor<64xf32>
    %cst_17 = stablehlo.constant dense<1.000000e+00> : tensor<64xf32>
    %c_18 = stablehlo.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xui32>
    %c_19 = stablehlo.constant dense<-100> : tensor<i64>
    %cst_20 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %c_21 = stablehlo.constant dense<false> : tensor<i1>
    %c_22 = stablehlo.constant dense<true> : tensor<i1>
    %cst_23 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_24 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %arg17, dims = [2] : (tensor<32xf32>) -> tensor<4x16x32xf32>
    %1 = stablehlo.reshape %arg0 : (tensor<4x16xi64>) -> tensor<64xi64>
    %2 = stablehlo.convert %1 : (tensor<64xi64>) -> tensor<64xui32>
    %3 = "stablehlo.gather"(%arg11, %2) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 32>}> : (tensor<128x32xf32>, tensor<64xui32>) -> tensor<64x32xf32>
    %4 = stablehlo.reshape %3 : (tensor<64x32xf32>) -> tensor<4x16x32xf32>
    %5 = "stablehlo.gather"(%arg10, %c_18) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 32>}> : (tensor<32x32xf32>, tensor<16xui32>) -> tensor<16x32xf32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [1, 2] : (tensor<16x32xf32>) -> tensor<4x16x32xf32>
    %7 = stablehlo.add %4, %6 : tensor<4x16x32xf32>
    %8 = stablehlo.reshape %7 : (tensor<4x16x32xf32>) -> tensor<1x64x32xf32>
    %output, %batch_mean, %batch_var = "stablehlo.batch_norm_training"(%8, %cst_17, %cst_16) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x64x32xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<1x64x32xf32>, tensor<64xf32>, tensor<64xf32>)
    %9 = stablehlo.reshape %output : (tensor<1x64x32xf32>) -> tensor<4x16x32xf32>
    %10 = stablehlo.broadcast_in_dim %arg16, dims = [2] : (tensor<32xf32>) -> tensor<4x16x32xf32>
    %11 = stablehlo.multiply %9, %10 : tensor<4x16x32xf32>
    %12 = stablehlo.add %0, %11 : tensor<4x16x32xf32>
    %13 = stablehlo.reshape %12 : (tensor<4x16x32xf32>) -> tensor<64x32xf32>
    %14 = stablehlo.dot_general %13, %arg15, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x96xf32>) -> tensor<64x96xf32>
    %15 = stablehlo.broadcast_in_dim %arg14, dims = [1] : (tensor<96xf32>) -> tensor<64x96xf32>
    %16 = stablehlo.add %14, %15 : tensor<64x96xf32>
    %17 = stablehlo.reshape %16 : (tensor<64x96xf32>) -> tensor<4x16x96xf32>
    %18 = stablehlo.slice %17 [0:4, 0:16, 0:32] : (tensor<4x16x96xf32>) -> tensor<4x16x32xf32>
    %19 = stablehlo.reshape %18 : (tensor<4x16x32xf32>) -> tensor<4x16x4x8xf32>
    %20 = stablehlo.transpose %19, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,4,16,8]{3,1,2,0}"} : (tensor<4x16x4x8xf32>) -> tensor<4x4x16x8xf32>
    %21 = stablehlo.broadcast_in_dim %arg19, dims = [] : (tensor<f32>) -> tensor<4x4x16x8xf32>
    %22 = stablehlo.multiply %20, %21 : tensor<4x4x16x8xf32>
    %23 = stablehlo.reshape %22 : (tensor<4x4x16x8xf32>) -> tensor<16x16x8xf32>
    %24 = stablehlo.slice %17 [0:4, 0:16, 32:64] : (tensor<4x16x96xf32>) -> tensor<4x16x32xf32>
    %25 = stablehlo.reshape %24 : (tensor<4x16x32xf32>) -> tensor<4x16x4x8xf32>
    %26 = stablehlo.transpose %25, dims = [0, 2, 3, 1] : (tensor<4x16x4x8xf32>) -> tensor<4x4x8x16xf32>
    %27 = stablehlo.broadcast_in_dim %arg19, dims = [] : (tensor<f32>) -> tensor<4x4x8x16xf32>
    %28 = stablehlo.multiply %26, %27 : tensor<4x4x8x16xf32>
    %29 = stablehlo.reshape %28 : (tensor<4x4x8x16xf32>) -> tensor<16x8x16xf32>
    %30 = stablehlo.dot_general %23, %29, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x16x8xf32>, tensor<16x8x16xf32>) -> tensor<16x16x16xf32>
    %31 = stablehlo.reshape %30 : (tensor<16x16x16xf32>) -> tensor<4x4x16x16xf32>
    %32 = stablehlo.iota dim = 0 : tensor<16xi32>
    %33 = stablehlo.broadcast_in_dim %32, dims = [0] : (tensor<16xi32>) -> tensor<16x16xi32>
    %34 = stablehlo.broadcast_in_dim %32, dims = [1] : (tensor<16xi32>) -> tensor<16x16xi32>
    %35 = stablehlo.compare GE, %33, %34 : (tensor<16x16xi32>, tensor<16x16xi32>) -> tensor<16x16xi1>
    %36 = stablehlo.select %35, %c_15, %c_14 : tensor<16x16xi1>, tensor<16x16xi1>
    %37 = stablehlo.broadcast_in_dim %arg18, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %38 = stablehlo.select %36, %cst_13, %37 : tensor<16x16xi1>, tensor<16x16xf32>
    %39 = stablehlo.broadcast_in_dim %38, dims = [2, 3] : (tensor<16x16xf32>) -> tensor<4x4x16x16xf32>
    %40 = stablehlo.add %31, %39 : tensor<4x4x16x16xf32>
    %41 = stablehlo.compare EQ, %40, %cst_12 : (tensor<4x4x16x16xf32>, tensor<4x4x16x16xf32>) -> tensor<4x4x16x16xi1>
    %42 = stablehlo.reduce(%41 init: %c_22) across dimensions = [3] : (tensor<4x4x16x16xi1>, tensor<i1>) -> tensor<4x4x16xi1>
     reducer(%arg26: tensor<i1>, %arg27: tensor<i1>)  {
      %264 = stablehlo.and %arg26, %arg27 : tensor<i1>
      %265 = stablehlo.select %264, %c_22, %c_21 : tensor<i1>, tensor<i1>
      stablehlo.return %265 : tensor<i1>
    }
    %43 = stablehlo.broadcast_in_dim %42, dims = [0, 1, 2] : (tensor<4x4x16xi1>) -> tensor<4x4x16x16xi1>
    %44 = stablehlo.reduce(%40 init: %cst_20) applies stablehlo.maximum across dimensions = [3] : (tensor<4x4x16x16xf32>, tensor<f32>) -> tensor<4x4x16xf32>
    %45 = stablehlo.broadcast_in_dim %44, dims = [0, 1, 2] : (tensor<4x4x16xf32>) -> tensor<4x4x16x16xf32>
    %46 = stablehlo.subtract %40, %45 : tensor<4x4x16x16xf32>
    %47 = stablehlo.exponential %46 : tensor<4x4x16x16xf32>
    %48 = stablehlo.reduce(%47 init: %cst_24) applies stablehlo.add across dimensions = [3] : (tensor<4x4x16x16xf32>, tensor<f32>) -> tensor<4x4x16xf32>
    %49 = stablehlo.broadcast_in_dim %48, dims = [0, 1, 2] : (tensor<4x4x16xf32>) -> tensor<4x4x16x16xf32>
    %50 = stablehlo.divide %47, %49 : tensor<4x4x16x16xf32>
    %51 = stablehlo.select %43, %cst_11, %50 : tensor<4x4x16x16xi1>, tensor<4x4x16x16xf32>
    %52 = stablehlo.reshape %51 : (tensor<4x4x16x16xf32>) -> tensor<16x16x16xf32>
    %53 = stablehlo.slice %17 [0:4, 0:16, 64:96] : (tensor<4x16x96xf32>) -> tensor<4x16x32xf32>
    %54 = stablehlo.reshape %53 : (tensor<4x16x32xf32>) -> tensor<4x16x4x8xf32>
    %55 = stablehlo.transpose %54, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,4,16,8]{3,1,2,0}"} : (tensor<4x16x4x8xf32>) -> tensor<4x4x16x8xf32>
    %56 = stablehlo.reshape %55 : (tensor<4x4x16x8xf32>) -> tensor<16x16x8xf32>
    %57 = stablehlo.dot_general %52, %56, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x16x16xf32>, tensor<16x16x8xf32>) -> tensor<16x16x8xf32>
    %58 = stablehlo.reshape %57 : (tensor<16x16x8xf32>) -> tensor<4x4x16x8xf32>
    %59 = stablehlo.transpose %58, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,16,4,8]{3,1,2,0}"} : (tensor<4x4x16x8xf32>) -> tensor<4x16x4x8xf32>
    %60 = stablehlo.reshape %59 : (tensor<4x16x4x8xf32>) -> tensor<64x32xf32>
    %61 = stablehlo.dot_general %60, %arg13, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
    %62 = stablehlo.broadcast_in_dim %arg12, dims = [1] : (tensor<32xf32>) -> tensor<64x32xf32>
    %63 = stablehlo.add %61, %62 : tensor<64x32xf32>
    %64 = stablehlo.reshape %63 : (tensor<64x32xf32>) -> tensor<4x16x32xf32>
    %65 = stablehlo.add %64, %7 : tensor<4x16x32xf32>
    %66 = stablehlo.broadcast_in_dim %arg20, dims = [2] : (tensor<32xf32>) -> tensor<4x16x32xf32>
    %67 = stablehlo.reshape %65 : (tensor<4x16x32xf32>) -> tensor<1x64x32xf32>
    %output_25, %batch_mean_26, %batch_var_27 = "stablehlo.batch_norm_training"(%67, %cst_17, %cst_16) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x64x32xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<1x64x32xf32>, tensor<64xf32>, tensor<64xf32>)
    %68 = stablehlo.reshape %output_25 : (tensor<1x64x32xf32>) -> tensor<4x16x32xf32>
    %69 = stablehlo.broadcast_in_dim %arg9, dims = [2] : (tensor<32xf32>) -> tensor<4x16x32xf32>
    %70 = stablehlo.multiply %68, %69 : tensor<4x16x32xf32>
    %71 = stablehlo.add %66, %70 : tensor<4x16x32xf32>
    %72 = stablehlo.reshape %71 : (tensor<4x16x32xf32>) -> tensor<64x32xf32>
    %73 = stablehlo.dot_general %72, %arg8, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x128xf32>) -> tensor<64x128xf32>
    %74 = stablehlo.broadcast_in_dim %arg7, dims = [1] : (tensor<128xf32>) -> tensor<64x128xf32>
    %75 = stablehlo.add %73, %74 : tensor<64x128xf32>
    %76 = stablehlo.reshape %75 : (tensor<64x128xf32>) -> tensor<4x16x128xf32>
    %77 = stablehlo.broadcast_in_dim %arg21, dims = [] : (tensor<f32>) -> tensor<4x16x128xf32>
    %78 = stablehlo.multiply %76, %77 : tensor<4x16x128xf32>
    %79 = stablehlo.power %76, %cst_10 : tensor<4x16x128xf32>
    %80 = stablehlo.broadcast_in_dim %arg6, dims = [] : (tensor<f32>) -> tensor<4x16x128xf32>
    %81 = stablehlo.multiply %79, %80 : tensor<4x16x128xf32>
    %82 = stablehlo.add %76, %81 : tensor<4x16x128xf32>
    %83 = stablehlo.broadcast_in_dim %arg5, dims = [] : (tensor<f32>) -> tensor<4x16x128xf32>
    %84 = stablehlo.multiply %82, %83 : tensor<4x16x128xf32>
    %85 = stablehlo.tanh %84 : tensor<4x16x128xf32>
    %86 = stablehlo.add %85, %cst_9 : tensor<4x16x128xf32>
    %87 = stablehlo.multiply %78, %86 : tensor<4x16x128xf32>
    %88 = stablehlo.reshape %87 : (tensor<4x16x128xf32>) -> tensor<64x128xf32>
    %89 = stablehlo.dot_general %88, %arg4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x128xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
    %90 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<32xf32>) -> tensor<64x32xf32>
    %91 = stablehlo.add %89, %90 : tensor<64x32xf32>
    %92 = stablehlo.reshape %91 : (tensor<64x32xf32>) -> tensor<4x16x32xf32>
    %93 = stablehlo.add %65, %92 : tensor<4x16x32xf32>
    %94 = stablehlo.reshape %93 : (tensor<4x16x32xf32>) -> tensor<1x64x32xf32>
    %output_28, %batch_mean_29, %batch_var_30 = "stablehlo.batch_norm_training"(%94, %cst_17, %cst_16) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x64x32xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<1x64x32xf32>, tensor<64xf32>, tensor<64xf32>)
    %95 = stablehlo.add %batch_var_30, %cst_8 : tensor<64xf32>
    %96 = stablehlo.rsqrt %95 : tensor<64xf32>
    %97 = stablehlo.divide %cst_17, %96 : tensor<64xf32>
    %98 = stablehlo.multiply %97, %97 : tensor<64xf32>
    %99 = stablehlo.subtract %98, %cst_8 : tensor<64xf32>
    %100 = stablehlo.pad %arg0, %c_19, low = [0, 0], high = [0, 1], interior = [0, 0] : (tensor<4x16xi64>, tensor<i64>) -> tensor<4x17xi64>
    %101 = stablehlo.slice %100 [0:4, 1:17] : (tensor<4x17xi64>) -> tensor<4x16xi64>
    %102 = stablehlo.reshape %101 : (tensor<4x16xi64>) -> tensor<64xi64>
    %103 = stablehlo.broadcast_in_dim %102, dims = [0] : (tensor<64xi64>) -> tensor<64x128xi64>
    %104 = stablehlo.iota dim = 0 : tensor<128xi64>
    %105 = stablehlo.broadcast_in_dim %104, dims = [1] : (tensor<128xi64>) -> tensor<64x128xi64>
    %106 = stablehlo.compare EQ, %103, %105 : (tensor<64x128xi64>, tensor<64x128xi64>) -> tensor<64x128xi1>
    %107 = stablehlo.select %106, %cst_7, %cst_6 : tensor<64x128xi1>, tensor<64x128xf32>
    %108 = stablehlo.negate %107 : tensor<64x128xf32>
    %109 = stablehlo.compare NE, %102, %c_5 : (tensor<64xi64>, tensor<64xi64>) -> tensor<64xi1>
    %110 = stablehlo.broadcast_in_dim %109, dims = [0] : (tensor<64xi1>) -> tensor<64x128xi1>
    %111 = stablehlo.select %110, %cst_7, %cst_6 : tensor<64x128xi1>, tensor<64x128xf32>
    %112 = stablehlo.multiply %111, %107 : tensor<64x128xf32>
    %113 = stablehlo.multiply %108, %112 : tensor<64x128xf32>
    %114 = stablehlo.reduce(%112 init: %cst_24) applies stablehlo.add across dimensions = [0, 1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<f32>
    %115 = stablehlo.compare NE, %114, %cst_24 : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %116 = stablehlo.select %115, %114, %cst_23 : tensor<i1>, tensor<f32>
    %117 = stablehlo.broadcast_in_dim %116, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %118 = stablehlo.divide %113, %117 : tensor<64x128xf32>
    %119 = stablehlo.broadcast_in_dim %arg22, dims = [2] : (tensor<32xf32>) -> tensor<4x16x32xf32>
    %120 = stablehlo.reshape %output_28 : (tensor<1x64x32xf32>) -> tensor<4x16x32xf32>
    %121 = stablehlo.broadcast_in_dim %arg2, dims = [2] : (tensor<32xf32>) -> tensor<4x16x32xf32>
    %122 = stablehlo.multiply %120, %121 : tensor<4x16x32xf32>
    %123 = stablehlo.add %119, %122 : tensor<4x16x32xf32>
    %124 = stablehlo.reshape %123 : (tensor<4x16x32xf32>) -> tensor<64x32xf32>
    %125 = stablehlo.transpose %arg1, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,128]{0,1}"} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %126 = stablehlo.dot_general %124, %125, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x128xf32>) -> tensor<64x128xf32>
    %127 = stablehlo.reduce(%126 init: %cst_20) applies stablehlo.maximum across dimensions = [1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
    %128 = stablehlo.broadcast_in_dim %127, dims = [0] : (tensor<64xf32>) -> tensor<64x128xf32>
    %129 = stablehlo.subtract %126, %128 : tensor<64x128xf32>
    %130 = stablehlo.exponential %129 : tensor<64x128xf32>
    %131 = stablehlo.reduce(%130 init: %cst_24) applies stablehlo.add across dimensions = [1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
    %132 = stablehlo.log %131 : tensor<64xf32>
    %133 = stablehlo.broadcast_in_dim %132, dims = [0] : (tensor<64xf32>) -> tensor<64x128xf32>
    %134 = stablehlo.subtract %129, %133 : tensor<64x128xf32>
    %135 = stablehlo.exponential %134 : tensor<64x128xf32>
    %136 = stablehlo.reduce(%118 init: %cst_24) applies stablehlo.add across dimensions = [1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
    %137 = stablehlo.broadcast_in_dim %136, dims = [0] : (tensor<64xf32>) -> tensor<64x128xf32>
    %138 = stablehlo.multiply %135, %137 : tensor<64x128xf32>
    %139 = stablehlo.subtract %118, %138 : tensor<64x128xf32>
    %140 = stablehlo.dot_general %139, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x128xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
    %141 = stablehlo.reshape %140 : (tensor<64x32xf32>) -> tensor<4x16x32xf32>
    %142 = stablehlo.multiply %141, %121 : tensor<4x16x32xf32>
    %143 = stablehlo.reshape %142 : (tensor<4x16x32xf32>) -> tensor<1x64x32xf32>
    %grad_operand, %grad_scale, %grad_offset = "stablehlo.batch_norm_grad"(%94, %cst_17, %batch_mean_29, %99, %143) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x64x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<1x64x32xf32>) -> (tensor<1x64x32xf32>, tensor<64xf32>, tensor<64xf32>)
    %144 = stablehlo.add %batch_var_27, %cst_8 : tensor<64xf32>
    %145 = stablehlo.rsqrt %144 : tensor<64xf32>
    %146 = stablehlo.divide %cst_17, %145 : tensor<64xf32>
    %147 = stablehlo.multiply %146, %146 : tensor<64xf32>
    %148 = stablehlo.subtract %147, %cst_8 : tensor<64xf32>
    %149 = stablehlo.reshape %grad_operand : (tensor<1x64x32xf32>) -> tensor<4x16x32xf32>
    %150 = stablehlo.reshape %grad_operand : (tensor<1x64x32xf32>) -> tensor<64x32xf32>
    %151 = stablehlo.transpose %arg4, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,128]{0,1}"} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %152 = stablehlo.dot_general %150, %151, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x128xf32>) -> tensor<64x128xf32>
    %153 = stablehlo.reshape %152 : (tensor<64x128xf32>) -> tensor<4x16x128xf32>
    %154 = stablehlo.multiply %153, %78 : tensor<4x16x128xf32>
    %155 = stablehlo.power %85, %cst_4 : tensor<4x16x128xf32>
    %156 = stablehlo.subtract %cst_9, %155 : tensor<4x16x128xf32>
    %157 = stablehlo.multiply %154, %156 : tensor<4x16x128xf32>
    %158 = stablehlo.multiply %157, %83 : tensor<4x16x128xf32>
    %159 = stablehlo.multiply %158, %80 : tensor<4x16x128xf32>
    %160 = stablehlo.power %76, %cst_4 : tensor<4x16x128xf32>
    %161 = stablehlo.broadcast_in_dim %arg23, dims = [] : (tensor<f32>) -> tensor<4x16x128xf32>
    %162 = stablehlo.multiply %160, %161 : tensor<4x16x128xf32>
    %163 = stablehlo.multiply %159, %162 : tensor<4x16x128xf32>
    %164 = stablehlo.add %158, %163 : tensor<4x16x128xf32>
    %165 = stablehlo.multiply %153, %86 : tensor<4x16x128xf32>
    %166 = stablehlo.multiply %165, %77 : tensor<4x16x128xf32>
    %167 = stablehlo.add %164, %166 : tensor<4x16x128xf32>
    %168 = stablehlo.reshape %167 : (tensor<4x16x128xf32>) -> tensor<64x128xf32>
    %169 = stablehlo.transpose %arg8, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[128,32]{0,1}"} : (tensor<32x128xf32>) -> tensor<128x32xf32>
    %170 = stablehlo.dot_general %168, %169, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x128xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
    %171 = stablehlo.reshape %170 : (tensor<64x32xf32>) -> tensor<4x16x32xf32>
    %172 = stablehlo.multiply %171, %69 : tensor<4x16x32xf32>
    %173 = stablehlo.reshape %172 : (tensor<4x16x32xf32>) -> tensor<1x64x32xf32>
    %grad_operand_31, %grad_scale_32, %grad_offset_33 = "stablehlo.batch_norm_grad"(%67, %cst_17, %batch_mean_26, %148, %173) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x64x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<1x64x32xf32>) -> (tensor<1x64x32xf32>, tensor<64xf32>, tensor<64xf32>)
    %174 = stablehlo.add %batch_var, %cst_8 : tensor<64xf32>
    %175 = stablehlo.rsqrt %174 : tensor<64xf32>
    %176 = stablehlo.divide %cst_17, %175 : tensor<64xf32>
    %177 = stablehlo.multiply %176, %176 : tensor<64xf32>
    %178 = stablehlo.subtract %177, %cst_8 : tensor<64xf32>
    %179 = stablehlo.reshape %grad_operand_31 : (tensor<1x64x32xf32>) -> tensor<4x16x32xf32>
    %180 = stablehlo.add %149, %179 : tensor<4x16x32xf32>
    %181 = stablehlo.reshape %180 : (tensor<4x16x32xf32>) -> tensor<64x32xf32>
    %182 = stablehlo.transpose %arg13, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %183 = stablehlo.dot_general %181, %182, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
    %184 = stablehlo.reshape %183 : (tensor<64x32xf32>) -> tensor<4x16x4x8xf32>
    %185 = stablehlo.transpose %184, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,4,16,8]{3,1,2,0}"} : (tensor<4x16x4x8xf32>) -> tensor<4x4x16x8xf32>
    %186 = stablehlo.reshape %185 : (tensor<4x4x16x8xf32>) -> tensor<16x16x8xf32>
    %187 = stablehlo.transpose %56, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[16,8,16]{1,2,0}"} : (tensor<16x16x8xf32>) -> tensor<16x8x16xf32>
    %188 = stablehlo.dot_general %186, %187, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x16x8xf32>, tensor<16x8x16xf32>) -> tensor<16x16x16xf32>
    %189 = stablehlo.reshape %188 : (tensor<16x16x16xf32>) -> tensor<4x4x16x16xf32>
    %190 = stablehlo.multiply %189, %51 : tensor<4x4x16x16xf32>
    %191 = stablehlo.reduce(%190 init: %cst_24) applies stablehlo.add across dimensions = [3] : (tensor<4x4x16x16xf32>, tensor<f32>) -> tensor<4x4x16xf32>
    %192 = stablehlo.broadcast_in_dim %191, dims = [0, 1, 2] : (tensor<4x4x16xf32>) -> tensor<4x4x16x16xf32>
    %193 = stablehlo.subtract %189, %192 : tensor<4x4x16x16xf32>
    %194 = stablehlo.multiply %51, %193 : tensor<4x4x16x16xf32>
    %195 = stablehlo.reshape %194 : (tensor<4x4x16x16xf32>) -> tensor<16x16x16xf32>
    %196 = stablehlo.transpose %29, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[16,16,8]{1,2,0}"} : (tensor<16x8x16xf32>) -> tensor<16x16x8xf32>
    %197 = stablehlo.dot_general %195, %196, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x16x16xf32>, tensor<16x16x8xf32>) -> tensor<16x16x8xf32>
    %198 = stablehlo.reshape %197 : (tensor<16x16x8xf32>) -> tensor<4x4x16x8xf32>
    %199 = stablehlo.multiply %198, %21 : tensor<4x4x16x8xf32>
    %200 = stablehlo.transpose %199, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,16,4,8]{3,1,2,0}"} : (tensor<4x4x16x8xf32>) -> tensor<4x16x4x8xf32>
    %201 = stablehlo.reshape %200 : (tensor<4x16x4x8xf32>) -> tensor<4x16x32xf32>
    %202 = stablehlo.transpose %23, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[16,8,16]{1,2,0}"} : (tensor<16x16x8xf32>) -> tensor<16x8x16xf32>
    %203 = stablehlo.dot_general %202, %195, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x8x16xf32>, tensor<16x16x16xf32>) -> tensor<16x8x16xf32>
    %204 = stablehlo.reshape %203 : (tensor<16x8x16xf32>) -> tensor<4x4x8x16xf32>
    %205 = stablehlo.multiply %204, %27 : tensor<4x4x8x16xf32>
    %206 = stablehlo.transpose %205, dims = [0, 3, 1, 2] : (tensor<4x4x8x16xf32>) -> tensor<4x16x4x8xf32>
    %207 = stablehlo.reshape %206 : (tensor<4x16x4x8xf32>) -> tensor<4x16x32xf32>
    %208 = stablehlo.transpose %52, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[16,16,16]{1,2,0}"} : (tensor<16x16x16xf32>) -> tensor<16x16x16xf32>
    %209 = stablehlo.dot_general %208, %186, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x16x16xf32>, tensor<16x16x8xf32>) -> tensor<16x16x8xf32>
    %210 = stablehlo.reshape %209 : (tensor<16x16x8xf32>) -> tensor<4x4x16x8xf32>
    %211 = stablehlo.transpose %210, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,16,4,8]{3,1,2,0}"} : (tensor<4x4x16x8xf32>) -> tensor<4x16x4x8xf32>
    %212 = stablehlo.reshape %211 : (tensor<4x16x4x8xf32>) -> tensor<4x16x32xf32>
    %213 = stablehlo.concatenate %201, %207, %212, dim = 2 : (tensor<4x16x32xf32>, tensor<4x16x32xf32>, tensor<4x16x32xf32>) -> tensor<4x16x96xf32>
    %214 = stablehlo.reshape %213 : (tensor<4x16x96xf32>) -> tensor<64x96xf32>
    %215 = stablehlo.transpose %arg15, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[96,32]{0,1}"} : (tensor<32x96xf32>) -> tensor<96x32xf32>
    %216 = stablehlo.dot_general %214, %215, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x96xf32>, tensor<96x32xf32>) -> tensor<64x32xf32>
    %217 = stablehlo.reshape %216 : (tensor<64x32xf32>) -> tensor<4x16x32xf32>
    %218 = stablehlo.multiply %217, %10 : tensor<4x16x32xf32>
    %219 = stablehlo.reshape %218 : (tensor<4x16x32xf32>) -> tensor<1x64x32xf32>
    %grad_operand_34, %grad_scale_35, %grad_offset_36 = "stablehlo.batch_norm_grad"(%8, %cst_17, %batch_mean, %178, %219) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x64x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<1x64x32xf32>) -> (tensor<1x64x32xf32>, tensor<64xf32>, tensor<64xf32>)
    %220 = stablehlo.compare NE, %107, %cst_7 : (tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<64x128xi1>
    %221 = stablehlo.multiply %108, %134 : tensor<64x128xf32>
    %222 = stablehlo.select %220, %cst_6, %221 : tensor<64x128xi1>, tensor<64x128xf32>
    %223 = stablehlo.multiply %222, %112 : tensor<64x128xf32>
    %224 = stablehlo.reduce(%223 init: %cst_24) applies stablehlo.add across dimensions = [0, 1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<f32>
    %225 = stablehlo.divide %224, %114 : tensor<f32>
    %226 = stablehlo.compare LT, %1, %c_2 : (tensor<64xi64>, tensor<64xi64>) -> tensor<64xi1>
    %227 = stablehlo.broadcast_in_dim %arg24, dims = [] : (tensor<i64>) -> tensor<64xi64>
    %228 = stablehlo.add %1, %227 : tensor<64xi64>
    %229 = stablehlo.select %226, %228, %1 : tensor<64xi1>, tensor<64xi64>
    %230 = stablehlo.reshape %229 : (tensor<64xi64>) -> tensor<64x1xi64>
    %231 = stablehlo.compare NE, %1, %c_1 : (tensor<64xi64>, tensor<64xi64>) -> tensor<64xi1>
    %232 = stablehlo.broadcast_in_dim %231, dims = [0] : (tensor<64xi1>) -> tensor<64x32xi1>
    %233 = stablehlo.reshape %grad_operand_34 : (tensor<1x64x32xf32>) -> tensor<4x16x32xf32>
    %234 = stablehlo.add %180, %233 : tensor<4x16x32xf32>
    %235 = stablehlo.reshape %234 : (tensor<4x16x32xf32>) -> tensor<64x32xf32>
    %236 = stablehlo.select %232, %235, %cst_0 : tensor<64x32xi1>, tensor<64x32xf32>
    %237 = "stablehlo.scatter"(%cst_3, %230, %236) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg26: tensor<f32>, %arg27: tensor<f32>):
      %264 = stablehlo.add %arg26, %arg27 : tensor<f32>
      stablehlo.return %264 : tensor<f32>
    }) : (tensor<128x32xf32>, tensor<64x1xi64>, tensor<64x32xf32>) -> tensor<128x32xf32>
    %238 = stablehlo.reduce(%234 init: %cst_24) applies stablehlo.add across dimensions = [0] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<16x32xf32>
    %239 = "stablehlo.scatter"(%cst, %c, %238) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg26: tensor<f32>, %arg27: tensor<f32>):
      %264 = stablehlo.add %arg26, %arg27 : tensor<f32>
      stablehlo.return %264 : tensor<f32>
    }) : (tensor<32x32xf32>, tensor<16x1xi64>, tensor<16x32xf32>) -> tensor<32x32xf32>
    %240 = stablehlo.multiply %217, %9 : tensor<4x16x32xf32>
    %241 = stablehlo.reduce(%240 init: %cst_24) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<32xf32>
    %242 = stablehlo.reduce(%217 init: %cst_24) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<32xf32>
    %243 = stablehlo.transpose %13, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,64]{0,1}"} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %244 = stablehlo.dot_general %243, %214, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x64xf32>, tensor<64x96xf32>) -> tensor<32x96xf32>
    %245 = stablehlo.reduce(%214 init: %cst_24) applies stablehlo.add across dimensions = [0] : (tensor<64x96xf32>, tensor<f32>) -> tensor<96xf32>
    %246 = stablehlo.transpose %60, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,64]{0,1}"} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %247 = stablehlo.dot_general %246, %181, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x64xf32>, tensor<64x32xf32>) -> tensor<32x32xf32>
    %248 = stablehlo.reduce(%181 init: %cst_24) applies stablehlo.add across dimensions = [0] : (tensor<64x32xf32>, tensor<f32>) -> tensor<32xf32>
    %249 = stablehlo.multiply %171, %68 : tensor<4x16x32xf32>
    %250 = stablehlo.reduce(%249 init: %cst_24) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<32xf32>
    %251 = stablehlo.reduce(%171 init: %cst_24) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<32xf32>
    %252 = stablehlo.transpose %72, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,64]{0,1}"} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %253 = stablehlo.dot_general %252, %168, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32>
    %254 = stablehlo.reduce(%168 init: %cst_24) applies stablehlo.add across dimensions = [0] : (tensor<64x128xf32>, tensor<f32>) -> tensor<128xf32>
    %255 = stablehlo.transpose %88, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[128,64]{0,1}"} : (tensor<64x128xf32>) -> tensor<128x64xf32>
    %256 = stablehlo.dot_general %255, %150, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<128x64xf32>, tensor<64x32xf32>) -> tensor<128x32xf32>
    %257 = stablehlo.reduce(%150 init: %cst_24) applies stablehlo.add across dimensions = [0] : (tensor<64x32xf32>, tensor<f32>) -> tensor<32xf32>
    %258 = stablehlo.multiply %141, %120 : tensor<4x16x32xf32>
    %259 = stablehlo.reduce(%258 init: %cst_24) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<32xf32>
    %260 = stablehlo.reduce(%141 init: %cst_24) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<32xf32>
    %261 = stablehlo.transpose %124, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,64]{0,1}"} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %262 = stablehlo.dot_general %261, %139, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32>
    %263 = stablehlo.transpose %262, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[128,32]{0,1}"} : (tensor<32x128xf32>) -> tensor<128x32xf32>
    return %225, %237, %239, %241, %242, %244, %245, %247, %248, %250, %251, %253, %254, %256, %257, %259, %260, %263 : tensor<f32>, tensor<128x32xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x128xf32>, tensor<128xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<128x32xf32>
  }
}
