module @IrToHlo.361 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<128x32xf32> {mhlo.sharding = "{replicated}"}, %arg1: tensor<f32> {mhlo.sharding = "{replicated}"}, %arg2: tensor<32x64xf32> {mhlo.sharding = "{replicated}"}, %arg3: tensor<64x32xf32> {mhlo.sharding = "{replicated}"}, %arg4: tensor<32x32xf32> {mhlo.sharding = "{replicated}"}, %arg5: tensor<16x32xf32> {mhlo.sharding = "{replicated}"}, %arg6: tensor<4x16xi64> {mhlo.sharding = "{devices=[2,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}"}, %arg7: tensor<128x32xf32> {mhlo.sharding = "{replicated}"}, %arg8: tensor<32xf32> {mhlo.sharding = "{replicated}"}, %arg9: tensor<f32> {mhlo.sharding = "{replicated}"}, %arg10: tensor<f32> {mhlo.sharding = "{replicated}"}, %arg11: tensor<4xf32> {mhlo.sharding = "{replicated}"}, %arg12: tensor<16x32xf32> {mhlo.sharding = "{replicated}"}, %arg13: tensor<32x32xf32> {mhlo.sharding = "{replicated}"}, %arg14: tensor<32xf32> {mhlo.sharding = "{replicated}"}, %arg15: tensor<64x32xf32> {mhlo.sharding = "{replicated}"}, %arg16: tensor<32xf32> {mhlo.sharding = "{replicated}"}) -> tensor<4x16x128xf32> {
    %cst = stablehlo.constant dense<3.125000e-02> : tensor<2x16xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<2x16x32xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<4x4x16x16xf32>
    %cst_2 = stablehlo.constant dense<0xFF800000> : tensor<4x4x16x16xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<16x16xf32>
    %c = stablehlo.constant dense<false> : tensor<16x16xi1>
    %c_4 = stablehlo.constant dense<true> : tensor<16x16xi1>
    %cst_5 = stablehlo.constant dense<[[[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00, 9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01, 1.300000e+01, 1.400000e+01, 1.500000e+01]]]> : tensor<1x1x16xf32>
    %cst_6 = stablehlo.constant dense<3.125000e-02> : tensor<4x16xf32>
    %cst_7 = stablehlo.constant dense<2.000000e+00> : tensor<4x16x32xf32>
    %cst_8 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %c_9 = stablehlo.constant dense<false> : tensor<i1>
    %c_10 = stablehlo.constant dense<true> : tensor<i1>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %arg16, dims = [2] : (tensor<32xf32>) -> tensor<4x16x32xf32>
    %1 = stablehlo.reshape %arg6 : (tensor<4x16xi64>) -> tensor<64xi64>
    %2 = stablehlo.convert %1 : (tensor<64xi64>) -> tensor<64xui32>
    %3 = "stablehlo.gather"(%arg7, %2) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 32>}> : (tensor<128x32xf32>, tensor<64xui32>) -> tensor<64x32xf32>
    %4 = stablehlo.reshape %3 : (tensor<64x32xf32>) -> tensor<4x16x32xf32>
    %5 = stablehlo.broadcast_in_dim %arg8, dims = [2] : (tensor<32xf32>) -> tensor<4x16x32xf32>
    %6 = stablehlo.power %4, %cst_7 : tensor<4x16x32xf32>
    %7 = stablehlo.reduce(%6 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %8 = stablehlo.multiply %7, %cst_6 : tensor<4x16xf32>
    %9 = stablehlo.reshape %8 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %10 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %11 = stablehlo.add %9, %10 : tensor<4x16x1xf32>
    %12 = stablehlo.rsqrt %11 : tensor<4x16x1xf32>
    %13 = stablehlo.reshape %12 : (tensor<4x16x1xf32>) -> tensor<4x16xf32>
    %14 = stablehlo.broadcast_in_dim %13, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
    %15 = stablehlo.multiply %4, %14 : tensor<4x16x32xf32>
    %16 = stablehlo.multiply %5, %15 : tensor<4x16x32xf32>
    %17 = stablehlo.reshape %16 : (tensor<4x16x32xf32>) -> tensor<64x32xf32>
    %18 = stablehlo.transpose %arg13, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %19 = stablehlo.dot_general %17, %18, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
    %20 = stablehlo.reshape %19 : (tensor<64x32xf32>) -> tensor<4x16x4x8xf32>
    %21 = stablehlo.transpose %20, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,4,16,8]{3,1,2,0}"} : (tensor<4x16x4x8xf32>) -> tensor<4x4x16x8xf32>
    %22 = stablehlo.reshape %arg11 : (tensor<4xf32>) -> tensor<1x4x1xf32>
    %23 = stablehlo.dot_general %22, %cst_5, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<1x4x1xf32>, tensor<1x1x16xf32>) -> tensor<1x4x16xf32>
    %24 = stablehlo.transpose %23, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[1,16,4]{1,2,0}"} : (tensor<1x4x16xf32>) -> tensor<1x16x4xf32>
    %25 = stablehlo.concatenate %24, %24, dim = 2 : (tensor<1x16x4xf32>, tensor<1x16x4xf32>) -> tensor<1x16x8xf32>
    %26 = stablehlo.cosine %25 : tensor<1x16x8xf32>
    %27 = stablehlo.reshape %26 : (tensor<1x16x8xf32>) -> tensor<16x8xf32>
    %28 = stablehlo.broadcast_in_dim %27, dims = [2, 3] : (tensor<16x8xf32>) -> tensor<4x4x16x8xf32>
    %29 = stablehlo.multiply %21, %28 : tensor<4x4x16x8xf32>
    %30 = stablehlo.slice %21 [0:4, 0:4, 0:16, 4:8] : (tensor<4x4x16x8xf32>) -> tensor<4x4x16x4xf32>
    %31 = stablehlo.negate %30 : tensor<4x4x16x4xf32>
    %32 = stablehlo.slice %21 [0:4, 0:4, 0:16, 0:4] : (tensor<4x4x16x8xf32>) -> tensor<4x4x16x4xf32>
    %33 = stablehlo.concatenate %31, %32, dim = 3 : (tensor<4x4x16x4xf32>, tensor<4x4x16x4xf32>) -> tensor<4x4x16x8xf32>
    %34 = stablehlo.sine %25 : tensor<1x16x8xf32>
    %35 = stablehlo.reshape %34 : (tensor<1x16x8xf32>) -> tensor<16x8xf32>
    %36 = stablehlo.broadcast_in_dim %35, dims = [2, 3] : (tensor<16x8xf32>) -> tensor<4x4x16x8xf32>
    %37 = stablehlo.multiply %33, %36 : tensor<4x4x16x8xf32>
    %38 = stablehlo.add %29, %37 : tensor<4x4x16x8xf32>
    %39 = stablehlo.broadcast_in_dim %arg10, dims = [] : (tensor<f32>) -> tensor<4x4x16x8xf32>
    %40 = stablehlo.multiply %38, %39 : tensor<4x4x16x8xf32>
    %41 = stablehlo.reshape %40 : (tensor<4x4x16x8xf32>) -> tensor<16x16x8xf32>
    %42 = stablehlo.transpose %arg12, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,16]{0,1}"} : (tensor<16x32xf32>) -> tensor<32x16xf32>
    %43 = stablehlo.dot_general %17, %42, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
    %44 = stablehlo.reshape %43 : (tensor<64x16xf32>) -> tensor<4x16x2x8xf32>
    %45 = stablehlo.transpose %44, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,2,16,8]{3,1,2,0}"} : (tensor<4x16x2x8xf32>) -> tensor<4x2x16x8xf32>
    %46 = stablehlo.broadcast_in_dim %27, dims = [2, 3] : (tensor<16x8xf32>) -> tensor<4x2x16x8xf32>
    %47 = stablehlo.multiply %45, %46 : tensor<4x2x16x8xf32>
    %48 = stablehlo.slice %45 [0:4, 0:2, 0:16, 4:8] : (tensor<4x2x16x8xf32>) -> tensor<4x2x16x4xf32>
    %49 = stablehlo.negate %48 : tensor<4x2x16x4xf32>
    %50 = stablehlo.slice %45 [0:4, 0:2, 0:16, 0:4] : (tensor<4x2x16x8xf32>) -> tensor<4x2x16x4xf32>
    %51 = stablehlo.concatenate %49, %50, dim = 3 : (tensor<4x2x16x4xf32>, tensor<4x2x16x4xf32>) -> tensor<4x2x16x8xf32>
    %52 = stablehlo.broadcast_in_dim %35, dims = [2, 3] : (tensor<16x8xf32>) -> tensor<4x2x16x8xf32>
    %53 = stablehlo.multiply %51, %52 : tensor<4x2x16x8xf32>
    %54 = stablehlo.add %47, %53 : tensor<4x2x16x8xf32>
    %55 = stablehlo.broadcast_in_dim %54, dims = [0, 1, 3, 4] : (tensor<4x2x16x8xf32>) -> tensor<4x2x2x16x8xf32>
    %56 = stablehlo.reshape %55 : (tensor<4x2x2x16x8xf32>) -> tensor<4x4x16x8xf32>
    %57 = stablehlo.transpose %56, dims = [0, 1, 3, 2] {result_layout = dense<[2, 3, 1, 0]> : tensor<4xindex>, xla_shape = "f32[4,4,8,16]{2,3,1,0}"} : (tensor<4x4x16x8xf32>) -> tensor<4x4x8x16xf32>
    %58 = stablehlo.broadcast_in_dim %arg10, dims = [] : (tensor<f32>) -> tensor<4x4x8x16xf32>
    %59 = stablehlo.multiply %57, %58 : tensor<4x4x8x16xf32>
    %60 = stablehlo.reshape %59 : (tensor<4x4x8x16xf32>) -> tensor<16x8x16xf32>
    %61 = stablehlo.dot_general %41, %60, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x16x8xf32>, tensor<16x8x16xf32>) -> tensor<16x16x16xf32>
    %62 = stablehlo.reshape %61 : (tensor<16x16x16xf32>) -> tensor<4x4x16x16xf32>
    %63 = stablehlo.iota dim = 0 : tensor<16xi32>
    %64 = stablehlo.broadcast_in_dim %63, dims = [0] : (tensor<16xi32>) -> tensor<16x16xi32>
    %65 = stablehlo.broadcast_in_dim %63, dims = [1] : (tensor<16xi32>) -> tensor<16x16xi32>
    %66 = stablehlo.compare  GE, %64, %65 : (tensor<16x16xi32>, tensor<16x16xi32>) -> tensor<16x16xi1>
    %67 = stablehlo.select %66, %c_4, %c : tensor<16x16xi1>, tensor<16x16xi1>
    %68 = stablehlo.broadcast_in_dim %arg9, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %69 = stablehlo.select %67, %cst_3, %68 : tensor<16x16xi1>, tensor<16x16xf32>
    %70 = stablehlo.broadcast_in_dim %69, dims = [2, 3] : (tensor<16x16xf32>) -> tensor<4x4x16x16xf32>
    %71 = stablehlo.add %62, %70 : tensor<4x4x16x16xf32>
    %72 = stablehlo.compare  EQ, %71, %cst_2 : (tensor<4x4x16x16xf32>, tensor<4x4x16x16xf32>) -> tensor<4x4x16x16xi1>
    %73 = stablehlo.reduce(%72 init: %c_10) across dimensions = [3] : (tensor<4x4x16x16xi1>, tensor<i1>) -> tensor<4x4x16xi1>
     reducer(%arg17: tensor<i1>, %arg18: tensor<i1>)  {
      %152 = stablehlo.and %arg17, %arg18 : tensor<i1>
      %153 = stablehlo.select %152, %c_10, %c_9 : tensor<i1>, tensor<i1>
      stablehlo.return %153 : tensor<i1>
    }
    %74 = stablehlo.broadcast_in_dim %73, dims = [0, 1, 2] : (tensor<4x4x16xi1>) -> tensor<4x4x16x16xi1>
    %75 = stablehlo.reduce(%71 init: %cst_8) applies stablehlo.maximum across dimensions = [3] : (tensor<4x4x16x16xf32>, tensor<f32>) -> tensor<4x4x16xf32>
    %76 = stablehlo.broadcast_in_dim %75, dims = [0, 1, 2] : (tensor<4x4x16xf32>) -> tensor<4x4x16x16xf32>
    %77 = stablehlo.subtract %71, %76 : tensor<4x4x16x16xf32>
    %78 = stablehlo.exponential %77 : tensor<4x4x16x16xf32>
    %79 = stablehlo.reduce(%78 init: %cst_11) applies stablehlo.add across dimensions = [3] : (tensor<4x4x16x16xf32>, tensor<f32>) -> tensor<4x4x16xf32>
    %80 = stablehlo.broadcast_in_dim %79, dims = [0, 1, 2] : (tensor<4x4x16xf32>) -> tensor<4x4x16x16xf32>
    %81 = stablehlo.divide %78, %80 : tensor<4x4x16x16xf32>
    %82 = stablehlo.select %74, %cst_1, %81 : tensor<4x4x16x16xi1>, tensor<4x4x16x16xf32>
    %83 = stablehlo.reshape %82 : (tensor<4x4x16x16xf32>) -> tensor<16x16x16xf32>
    %84 = stablehlo.transpose %arg5, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,16]{0,1}"} : (tensor<16x32xf32>) -> tensor<32x16xf32>
    %85 = stablehlo.dot_general %17, %84, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
    %86 = stablehlo.reshape %85 : (tensor<64x16xf32>) -> tensor<4x16x2x8xf32>
    %87 = stablehlo.transpose %86, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,2,16,8]{3,1,2,0}"} : (tensor<4x16x2x8xf32>) -> tensor<4x2x16x8xf32>
    %88 = stablehlo.broadcast_in_dim %87, dims = [0, 1, 3, 4] : (tensor<4x2x16x8xf32>) -> tensor<4x2x2x16x8xf32>
    %89 = stablehlo.reshape %88 : (tensor<4x2x2x16x8xf32>) -> tensor<16x16x8xf32>
    %90 = stablehlo.dot_general %83, %89, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x16x16xf32>, tensor<16x16x8xf32>) -> tensor<16x16x8xf32>
    %91 = stablehlo.reshape %90 : (tensor<16x16x8xf32>) -> tensor<4x4x16x8xf32>
    %92 = stablehlo.transpose %91, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,16,4,8]{3,1,2,0}"} : (tensor<4x4x16x8xf32>) -> tensor<4x16x4x8xf32>
    %93 = stablehlo.reshape %92 : (tensor<4x16x4x8xf32>) -> tensor<64x32xf32>
    %94 = stablehlo.transpose %arg4, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %95 = stablehlo.dot_general %93, %94, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
    %96 = stablehlo.reshape %95 : (tensor<64x32xf32>) -> tensor<4x16x32xf32>
    %97 = stablehlo.add %4, %96 : tensor<4x16x32xf32>
    %98 = stablehlo.broadcast_in_dim %arg14, dims = [2] : (tensor<32xf32>) -> tensor<4x16x32xf32>
    %99 = stablehlo.power %97, %cst_7 : tensor<4x16x32xf32>
    %100 = stablehlo.reduce(%99 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %101 = stablehlo.multiply %100, %cst_6 : tensor<4x16xf32>
    %102 = stablehlo.reshape %101 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %103 = stablehlo.add %102, %10 : tensor<4x16x1xf32>
    %104 = stablehlo.rsqrt %103 : tensor<4x16x1xf32>
    %105 = stablehlo.reshape %104 : (tensor<4x16x1xf32>) -> tensor<4x16xf32>
    %106 = stablehlo.broadcast_in_dim %105, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
    %107 = stablehlo.multiply %97, %106 : tensor<4x16x32xf32>
    %108 = stablehlo.multiply %98, %107 : tensor<4x16x32xf32>
    %109 = stablehlo.reshape %108 : (tensor<4x16x32xf32>) -> tensor<64x32xf32>
    %110 = stablehlo.transpose %arg15, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,64]{0,1}"} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %111 = stablehlo.dot_general %109, %110, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
    %112 = stablehlo.reshape %111 : (tensor<64x64xf32>) -> tensor<4x16x64xf32>
    %113 = stablehlo.logistic %112 : tensor<4x16x64xf32>
    %114 = stablehlo.multiply %112, %113 : tensor<4x16x64xf32>
    %115 = stablehlo.transpose %arg3, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,64]{0,1}"} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %116 = stablehlo.dot_general %109, %115, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
    %117 = stablehlo.reshape %116 : (tensor<64x64xf32>) -> tensor<4x16x64xf32>
    %118 = stablehlo.multiply %114, %117 : tensor<4x16x64xf32>
    %119 = stablehlo.reshape %118 : (tensor<4x16x64xf32>) -> tensor<64x64xf32>
    %120 = stablehlo.transpose %arg2, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,32]{0,1}"} : (tensor<32x64xf32>) -> tensor<64x32xf32>
    %121 = stablehlo.dot_general %119, %120, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x64xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
    %122 = stablehlo.reshape %121 : (tensor<64x32xf32>) -> tensor<4x16x32xf32>
    %123 = stablehlo.custom_call @Sharding(%122) {backend_config = "", mhlo.sharding = "{devices=[2,1,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}"} : (tensor<4x16x32xf32>) -> tensor<4x16x32xf32>
    %124 = stablehlo.custom_call @SPMDFullToShardShape(%123) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<4x16x32xf32>) -> tensor<2x16x32xf32>
    %125 = stablehlo.power %124, %cst_0 : tensor<2x16x32xf32>
    %126 = stablehlo.reduce(%125 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<2x16x32xf32>, tensor<f32>) -> tensor<2x16xf32>
    %127 = stablehlo.multiply %126, %cst : tensor<2x16xf32>
    %128 = stablehlo.reshape %127 : (tensor<2x16xf32>) -> tensor<2x16x1xf32>
    %129 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<2x16x1xf32>
    %130 = stablehlo.add %128, %129 : tensor<2x16x1xf32>
    %131 = stablehlo.rsqrt %130 : tensor<2x16x1xf32>
    %132 = stablehlo.reshape %131 : (tensor<2x16x1xf32>) -> tensor<2x16xf32>
    %133 = stablehlo.broadcast_in_dim %132, dims = [0, 1] : (tensor<2x16xf32>) -> tensor<2x16x32xf32>
    %134 = stablehlo.multiply %124, %133 : tensor<2x16x32xf32>
    %135 = stablehlo.custom_call @Sharding(%134) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
    %136 = stablehlo.custom_call @SPMDShardToFullShape(%135) {backend_config = "", mhlo.sharding = "{devices=[2,1,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}"} : (tensor<2x16x32xf32>) -> tensor<4x16x32xf32>
    %137 = stablehlo.add %97, %136 : tensor<4x16x32xf32>
    %138 = stablehlo.power %137, %cst_7 : tensor<4x16x32xf32>
    %139 = stablehlo.reduce(%138 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %140 = stablehlo.multiply %139, %cst_6 : tensor<4x16xf32>
    %141 = stablehlo.reshape %140 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %142 = stablehlo.add %141, %10 : tensor<4x16x1xf32>
    %143 = stablehlo.rsqrt %142 : tensor<4x16x1xf32>
    %144 = stablehlo.reshape %143 : (tensor<4x16x1xf32>) -> tensor<4x16xf32>
    %145 = stablehlo.broadcast_in_dim %144, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
    %146 = stablehlo.multiply %137, %145 : tensor<4x16x32xf32>
    %147 = stablehlo.multiply %0, %146 : tensor<4x16x32xf32>
    %148 = stablehlo.reshape %147 : (tensor<4x16x32xf32>) -> tensor<64x32xf32>
    %149 = stablehlo.transpose %arg0, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,128]{0,1}"} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %150 = stablehlo.dot_general %148, %149, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x128xf32>) -> tensor<64x128xf32>
    %151 = stablehlo.reshape %150 : (tensor<64x128xf32>) -> tensor<4x16x128xf32>
    return %151 : tensor<4x16x128xf32>
  }
}
