module @IrToHlo.852 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<4x16xi64> {mhlo.sharding = "{devices=[2,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}"}, %arg1: tensor<128x32xf32> {mhlo.sharding = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg2: tensor<f32> {mhlo.sharding = "{replicated}"}, %arg3: tensor<32x64xf32> {mhlo.sharding = "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg4: tensor<64x32xf32> {mhlo.sharding = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg5: tensor<32x32xf32> {mhlo.sharding = "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg6: tensor<16x32xf32> {mhlo.sharding = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg7: tensor<128x32xf32> {mhlo.sharding = "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg8: tensor<32xf32> {mhlo.sharding = "{replicated}"}, %arg9: tensor<f32> {mhlo.sharding = "{replicated}"}, %arg10: tensor<f32> {mhlo.sharding = "{replicated}"}, %arg11: tensor<4xf32> {mhlo.sharding = "{replicated}"}, %arg12: tensor<16x32xf32> {mhlo.sharding = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg13: tensor<32x32xf32> {mhlo.sharding = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg14: tensor<32xf32> {mhlo.sharding = "{replicated}"}, %arg15: tensor<64x32xf32> {mhlo.sharding = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg16: tensor<32xf32> {mhlo.sharding = "{replicated}"}, %arg17: tensor<f32> {mhlo.sharding = "{replicated}"}, %arg18: tensor<f32> {mhlo.sharding = "{replicated}"}, %arg19: tensor<f32> {mhlo.sharding = "{replicated}"}, %arg20: tensor<i64> {mhlo.sharding = "{replicated}"}) -> (tensor<f32>, tensor<128x32xf32>, tensor<32x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<32x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<32x64xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<128x32xf32>) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<64x32xf32>
    %c = stablehlo.constant dense<"0x0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F"> : tensor<4x4x16x8xi1>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<4x4x16x8xf32>
    %c_1 = stablehlo.constant dense<"0xF0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0"> : tensor<4x4x16x8xi1>
    %c_2 = stablehlo.constant dense<"0x0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F"> : tensor<4x2x16x8xi1>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<4x2x16x8xf32>
    %c_4 = stablehlo.constant dense<"0xF0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0"> : tensor<4x2x16x8xi1>
    %cst_5 = stablehlo.constant dense<1.000000e+00> : tensor<4x16x64xf32>
    %cst_6 = stablehlo.constant dense<1.000000e+00> : tensor<4x16x32xf32>
    %cst_7 = stablehlo.constant dense<3.000000e+00> : tensor<4x16x1xf32>
    %c_8 = stablehlo.constant dense<-1> : tensor<64xi64>
    %c_9 = stablehlo.constant dense<0> : tensor<64xi64>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<128x32xf32>
    %c_11 = stablehlo.constant dense<-100> : tensor<64xi64>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<4x4x16x16xf32>
    %cst_13 = stablehlo.constant dense<0xFF800000> : tensor<4x4x16x16xf32>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<16x16xf32>
    %c_15 = stablehlo.constant dense<false> : tensor<16x16xi1>
    %c_16 = stablehlo.constant dense<true> : tensor<16x16xi1>
    %cst_17 = stablehlo.constant dense<[[[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00, 9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01, 1.300000e+01, 1.400000e+01, 1.500000e+01]]]> : tensor<1x1x16xf32>
    %cst_18 = stablehlo.constant dense<3.125000e-02> : tensor<4x16xf32>
    %cst_19 = stablehlo.constant dense<2.000000e+00> : tensor<4x16x32xf32>
    %cst_20 = stablehlo.constant dense<0.000000e+00> : tensor<64x128xf32>
    %cst_21 = stablehlo.constant dense<1.000000e+00> : tensor<64x128xf32>
    %cst_22 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %c_23 = stablehlo.constant dense<false> : tensor<i1>
    %c_24 = stablehlo.constant dense<true> : tensor<i1>
    %cst_25 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %cst_26 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %c_27 = stablehlo.constant dense<-100> : tensor<i64>
    %0 = stablehlo.pad %arg0, %c_27, low = [0, 0], high = [0, 1], interior = [0, 0] : (tensor<4x16xi64>, tensor<i64>) -> tensor<4x17xi64>
    %1 = stablehlo.slice %0 [0:4, 1:17] : (tensor<4x17xi64>) -> tensor<4x16xi64>
    %2 = stablehlo.reshape %1 : (tensor<4x16xi64>) -> tensor<64xi64>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<64xi64>) -> tensor<64x128xi64>
    %4 = stablehlo.iota dim = 0 : tensor<128xi64>
    %5 = stablehlo.broadcast_in_dim %4, dims = [1] : (tensor<128xi64>) -> tensor<64x128xi64>
    %6 = stablehlo.compare  EQ, %3, %5 : (tensor<64x128xi64>, tensor<64x128xi64>) -> tensor<64x128xi1>
    %7 = stablehlo.select %6, %cst_21, %cst_20 : tensor<64x128xi1>, tensor<64x128xf32>
    %8 = stablehlo.compare  NE, %7, %cst_21 : (tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<64x128xi1>
    %9 = stablehlo.negate %7 : tensor<64x128xf32>
    %10 = stablehlo.broadcast_in_dim %arg16, dims = [2] : (tensor<32xf32>) -> tensor<4x16x32xf32>
    %11 = stablehlo.reshape %arg0 : (tensor<4x16xi64>) -> tensor<64xi64>
    %12 = stablehlo.convert %11 : (tensor<64xi64>) -> tensor<64xui32>
    %13 = "stablehlo.gather"(%arg7, %12) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 32>}> : (tensor<128x32xf32>, tensor<64xui32>) -> tensor<64x32xf32>
    %14 = stablehlo.reshape %13 : (tensor<64x32xf32>) -> tensor<4x16x32xf32>
    %15 = stablehlo.broadcast_in_dim %arg8, dims = [2] : (tensor<32xf32>) -> tensor<4x16x32xf32>
    %16 = stablehlo.power %14, %cst_19 : tensor<4x16x32xf32>
    %17 = stablehlo.reduce(%16 init: %cst_25) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %18 = stablehlo.multiply %17, %cst_18 : tensor<4x16xf32>
    %19 = stablehlo.reshape %18 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %20 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %21 = stablehlo.add %19, %20 : tensor<4x16x1xf32>
    %22 = stablehlo.rsqrt %21 : tensor<4x16x1xf32>
    %23 = stablehlo.reshape %22 : (tensor<4x16x1xf32>) -> tensor<4x16xf32>
    %24 = stablehlo.broadcast_in_dim %23, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
    %25 = stablehlo.multiply %14, %24 : tensor<4x16x32xf32>
    %26 = stablehlo.multiply %15, %25 : tensor<4x16x32xf32>
    %27 = stablehlo.reshape %26 : (tensor<4x16x32xf32>) -> tensor<64x32xf32>
    %28 = stablehlo.transpose %arg13, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %29 = stablehlo.dot_general %27, %28, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
    %30 = stablehlo.reshape %29 : (tensor<64x32xf32>) -> tensor<4x16x4x8xf32>
    %31 = stablehlo.transpose %30, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,4,16,8]{3,1,2,0}"} : (tensor<4x16x4x8xf32>) -> tensor<4x4x16x8xf32>
    %32 = stablehlo.reshape %arg11 : (tensor<4xf32>) -> tensor<1x4x1xf32>
    %33 = stablehlo.dot_general %32, %cst_17, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<1x4x1xf32>, tensor<1x1x16xf32>) -> tensor<1x4x16xf32>
    %34 = stablehlo.transpose %33, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[1,16,4]{1,2,0}"} : (tensor<1x4x16xf32>) -> tensor<1x16x4xf32>
    %35 = stablehlo.concatenate %34, %34, dim = 2 : (tensor<1x16x4xf32>, tensor<1x16x4xf32>) -> tensor<1x16x8xf32>
    %36 = stablehlo.cosine %35 : tensor<1x16x8xf32>
    %37 = stablehlo.reshape %36 : (tensor<1x16x8xf32>) -> tensor<16x8xf32>
    %38 = stablehlo.broadcast_in_dim %37, dims = [2, 3] : (tensor<16x8xf32>) -> tensor<4x4x16x8xf32>
    %39 = stablehlo.multiply %31, %38 : tensor<4x4x16x8xf32>
    %40 = stablehlo.slice %31 [0:4, 0:4, 0:16, 4:8] : (tensor<4x4x16x8xf32>) -> tensor<4x4x16x4xf32>
    %41 = stablehlo.negate %40 : tensor<4x4x16x4xf32>
    %42 = stablehlo.slice %31 [0:4, 0:4, 0:16, 0:4] : (tensor<4x4x16x8xf32>) -> tensor<4x4x16x4xf32>
    %43 = stablehlo.concatenate %41, %42, dim = 3 : (tensor<4x4x16x4xf32>, tensor<4x4x16x4xf32>) -> tensor<4x4x16x8xf32>
    %44 = stablehlo.sine %35 : tensor<1x16x8xf32>
    %45 = stablehlo.reshape %44 : (tensor<1x16x8xf32>) -> tensor<16x8xf32>
    %46 = stablehlo.broadcast_in_dim %45, dims = [2, 3] : (tensor<16x8xf32>) -> tensor<4x4x16x8xf32>
    %47 = stablehlo.multiply %43, %46 : tensor<4x4x16x8xf32>
    %48 = stablehlo.add %39, %47 : tensor<4x4x16x8xf32>
    %49 = stablehlo.broadcast_in_dim %arg10, dims = [] : (tensor<f32>) -> tensor<4x4x16x8xf32>
    %50 = stablehlo.multiply %48, %49 : tensor<4x4x16x8xf32>
    %51 = stablehlo.reshape %50 : (tensor<4x4x16x8xf32>) -> tensor<16x16x8xf32>
    %52 = stablehlo.transpose %arg12, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,16]{0,1}"} : (tensor<16x32xf32>) -> tensor<32x16xf32>
    %53 = stablehlo.dot_general %27, %52, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
    %54 = stablehlo.reshape %53 : (tensor<64x16xf32>) -> tensor<4x16x2x8xf32>
    %55 = stablehlo.transpose %54, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,2,16,8]{3,1,2,0}"} : (tensor<4x16x2x8xf32>) -> tensor<4x2x16x8xf32>
    %56 = stablehlo.broadcast_in_dim %37, dims = [2, 3] : (tensor<16x8xf32>) -> tensor<4x2x16x8xf32>
    %57 = stablehlo.multiply %55, %56 : tensor<4x2x16x8xf32>
    %58 = stablehlo.slice %55 [0:4, 0:2, 0:16, 4:8] : (tensor<4x2x16x8xf32>) -> tensor<4x2x16x4xf32>
    %59 = stablehlo.negate %58 : tensor<4x2x16x4xf32>
    %60 = stablehlo.slice %55 [0:4, 0:2, 0:16, 0:4] : (tensor<4x2x16x8xf32>) -> tensor<4x2x16x4xf32>
    %61 = stablehlo.concatenate %59, %60, dim = 3 : (tensor<4x2x16x4xf32>, tensor<4x2x16x4xf32>) -> tensor<4x2x16x8xf32>
    %62 = stablehlo.broadcast_in_dim %45, dims = [2, 3] : (tensor<16x8xf32>) -> tensor<4x2x16x8xf32>
    %63 = stablehlo.multiply %61, %62 : tensor<4x2x16x8xf32>
    %64 = stablehlo.add %57, %63 : tensor<4x2x16x8xf32>
    %65 = stablehlo.broadcast_in_dim %64, dims = [0, 1, 3, 4] : (tensor<4x2x16x8xf32>) -> tensor<4x2x2x16x8xf32>
    %66 = stablehlo.reshape %65 : (tensor<4x2x2x16x8xf32>) -> tensor<4x4x16x8xf32>
    %67 = stablehlo.transpose %66, dims = [0, 1, 3, 2] {result_layout = dense<[2, 3, 1, 0]> : tensor<4xindex>, xla_shape = "f32[4,4,8,16]{2,3,1,0}"} : (tensor<4x4x16x8xf32>) -> tensor<4x4x8x16xf32>
    %68 = stablehlo.broadcast_in_dim %arg10, dims = [] : (tensor<f32>) -> tensor<4x4x8x16xf32>
    %69 = stablehlo.multiply %67, %68 : tensor<4x4x8x16xf32>
    %70 = stablehlo.reshape %69 : (tensor<4x4x8x16xf32>) -> tensor<16x8x16xf32>
    %71 = stablehlo.dot_general %51, %70, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x16x8xf32>, tensor<16x8x16xf32>) -> tensor<16x16x16xf32>
    %72 = stablehlo.reshape %71 : (tensor<16x16x16xf32>) -> tensor<4x4x16x16xf32>
    %73 = stablehlo.iota dim = 0 : tensor<16xi32>
    %74 = stablehlo.broadcast_in_dim %73, dims = [0] : (tensor<16xi32>) -> tensor<16x16xi32>
    %75 = stablehlo.broadcast_in_dim %73, dims = [1] : (tensor<16xi32>) -> tensor<16x16xi32>
    %76 = stablehlo.compare  GE, %74, %75 : (tensor<16x16xi32>, tensor<16x16xi32>) -> tensor<16x16xi1>
    %77 = stablehlo.select %76, %c_16, %c_15 : tensor<16x16xi1>, tensor<16x16xi1>
    %78 = stablehlo.broadcast_in_dim %arg9, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %79 = stablehlo.select %77, %cst_14, %78 : tensor<16x16xi1>, tensor<16x16xf32>
    %80 = stablehlo.broadcast_in_dim %79, dims = [2, 3] : (tensor<16x16xf32>) -> tensor<4x4x16x16xf32>
    %81 = stablehlo.add %72, %80 : tensor<4x4x16x16xf32>
    %82 = stablehlo.compare  EQ, %81, %cst_13 : (tensor<4x4x16x16xf32>, tensor<4x4x16x16xf32>) -> tensor<4x4x16x16xi1>
    %83 = stablehlo.reduce(%82 init: %c_24) across dimensions = [3] : (tensor<4x4x16x16xi1>, tensor<i1>) -> tensor<4x4x16xi1>
     reducer(%arg21: tensor<i1>, %arg22: tensor<i1>)  {
      %346 = stablehlo.and %arg21, %arg22 : tensor<i1>
      %347 = stablehlo.select %346, %c_24, %c_23 : tensor<i1>, tensor<i1>
      stablehlo.return %347 : tensor<i1>
    }
    %84 = stablehlo.broadcast_in_dim %83, dims = [0, 1, 2] : (tensor<4x4x16xi1>) -> tensor<4x4x16x16xi1>
    %85 = stablehlo.reduce(%81 init: %cst_22) applies stablehlo.maximum across dimensions = [3] : (tensor<4x4x16x16xf32>, tensor<f32>) -> tensor<4x4x16xf32>
    %86 = stablehlo.broadcast_in_dim %85, dims = [0, 1, 2] : (tensor<4x4x16xf32>) -> tensor<4x4x16x16xf32>
    %87 = stablehlo.subtract %81, %86 : tensor<4x4x16x16xf32>
    %88 = stablehlo.exponential %87 : tensor<4x4x16x16xf32>
    %89 = stablehlo.reduce(%88 init: %cst_25) applies stablehlo.add across dimensions = [3] : (tensor<4x4x16x16xf32>, tensor<f32>) -> tensor<4x4x16xf32>
    %90 = stablehlo.broadcast_in_dim %89, dims = [0, 1, 2] : (tensor<4x4x16xf32>) -> tensor<4x4x16x16xf32>
    %91 = stablehlo.divide %88, %90 : tensor<4x4x16x16xf32>
    %92 = stablehlo.select %84, %cst_12, %91 : tensor<4x4x16x16xi1>, tensor<4x4x16x16xf32>
    %93 = stablehlo.reshape %92 : (tensor<4x4x16x16xf32>) -> tensor<16x16x16xf32>
    %94 = stablehlo.transpose %arg6, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,16]{0,1}"} : (tensor<16x32xf32>) -> tensor<32x16xf32>
    %95 = stablehlo.dot_general %27, %94, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
    %96 = stablehlo.reshape %95 : (tensor<64x16xf32>) -> tensor<4x16x2x8xf32>
    %97 = stablehlo.transpose %96, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,2,16,8]{3,1,2,0}"} : (tensor<4x16x2x8xf32>) -> tensor<4x2x16x8xf32>
    %98 = stablehlo.broadcast_in_dim %97, dims = [0, 1, 3, 4] : (tensor<4x2x16x8xf32>) -> tensor<4x2x2x16x8xf32>
    %99 = stablehlo.reshape %98 : (tensor<4x2x2x16x8xf32>) -> tensor<16x16x8xf32>
    %100 = stablehlo.dot_general %93, %99, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x16x16xf32>, tensor<16x16x8xf32>) -> tensor<16x16x8xf32>
    %101 = stablehlo.reshape %100 : (tensor<16x16x8xf32>) -> tensor<4x4x16x8xf32>
    %102 = stablehlo.transpose %101, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,16,4,8]{3,1,2,0}"} : (tensor<4x4x16x8xf32>) -> tensor<4x16x4x8xf32>
    %103 = stablehlo.reshape %102 : (tensor<4x16x4x8xf32>) -> tensor<64x32xf32>
    %104 = stablehlo.transpose %arg5, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %105 = stablehlo.dot_general %103, %104, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
    %106 = stablehlo.reshape %105 : (tensor<64x32xf32>) -> tensor<4x16x32xf32>
    %107 = stablehlo.add %14, %106 : tensor<4x16x32xf32>
    %108 = stablehlo.broadcast_in_dim %arg14, dims = [2] : (tensor<32xf32>) -> tensor<4x16x32xf32>
    %109 = stablehlo.power %107, %cst_19 : tensor<4x16x32xf32>
    %110 = stablehlo.reduce(%109 init: %cst_25) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %111 = stablehlo.multiply %110, %cst_18 : tensor<4x16xf32>
    %112 = stablehlo.reshape %111 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %113 = stablehlo.add %112, %20 : tensor<4x16x1xf32>
    %114 = stablehlo.rsqrt %113 : tensor<4x16x1xf32>
    %115 = stablehlo.reshape %114 : (tensor<4x16x1xf32>) -> tensor<4x16xf32>
    %116 = stablehlo.broadcast_in_dim %115, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
    %117 = stablehlo.multiply %107, %116 : tensor<4x16x32xf32>
    %118 = stablehlo.multiply %108, %117 : tensor<4x16x32xf32>
    %119 = stablehlo.reshape %118 : (tensor<4x16x32xf32>) -> tensor<64x32xf32>
    %120 = stablehlo.transpose %arg15, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,64]{0,1}"} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %121 = stablehlo.dot_general %119, %120, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
    %122 = stablehlo.reshape %121 : (tensor<64x64xf32>) -> tensor<4x16x64xf32>
    %123 = stablehlo.logistic %122 : tensor<4x16x64xf32>
    %124 = stablehlo.multiply %122, %123 : tensor<4x16x64xf32>
    %125 = stablehlo.transpose %arg4, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,64]{0,1}"} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %126 = stablehlo.dot_general %119, %125, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
    %127 = stablehlo.reshape %126 : (tensor<64x64xf32>) -> tensor<4x16x64xf32>
    %128 = stablehlo.multiply %124, %127 : tensor<4x16x64xf32>
    %129 = stablehlo.reshape %128 : (tensor<4x16x64xf32>) -> tensor<64x64xf32>
    %130 = stablehlo.transpose %arg3, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,32]{0,1}"} : (tensor<32x64xf32>) -> tensor<64x32xf32>
    %131 = stablehlo.dot_general %129, %130, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x64xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
    %132 = stablehlo.reshape %131 : (tensor<64x32xf32>) -> tensor<4x16x32xf32>
    %133 = stablehlo.add %107, %132 : tensor<4x16x32xf32>
    %134 = stablehlo.power %133, %cst_19 : tensor<4x16x32xf32>
    %135 = stablehlo.reduce(%134 init: %cst_25) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %136 = stablehlo.multiply %135, %cst_18 : tensor<4x16xf32>
    %137 = stablehlo.reshape %136 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %138 = stablehlo.add %137, %20 : tensor<4x16x1xf32>
    %139 = stablehlo.rsqrt %138 : tensor<4x16x1xf32>
    %140 = stablehlo.reshape %139 : (tensor<4x16x1xf32>) -> tensor<4x16xf32>
    %141 = stablehlo.broadcast_in_dim %140, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
    %142 = stablehlo.multiply %133, %141 : tensor<4x16x32xf32>
    %143 = stablehlo.multiply %10, %142 : tensor<4x16x32xf32>
    %144 = stablehlo.reshape %143 : (tensor<4x16x32xf32>) -> tensor<64x32xf32>
    %145 = stablehlo.transpose %arg1, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,128]{0,1}"} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %146 = stablehlo.dot_general %144, %145, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x128xf32>) -> tensor<64x128xf32>
    %147 = stablehlo.reduce(%146 init: %cst_22) applies stablehlo.maximum across dimensions = [1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
    %148 = stablehlo.broadcast_in_dim %147, dims = [0] : (tensor<64xf32>) -> tensor<64x128xf32>
    %149 = stablehlo.subtract %146, %148 : tensor<64x128xf32>
    %150 = stablehlo.exponential %149 : tensor<64x128xf32>
    %151 = stablehlo.reduce(%150 init: %cst_25) applies stablehlo.add across dimensions = [1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
    %152 = stablehlo.log %151 : tensor<64xf32>
    %153 = stablehlo.broadcast_in_dim %152, dims = [0] : (tensor<64xf32>) -> tensor<64x128xf32>
    %154 = stablehlo.subtract %149, %153 : tensor<64x128xf32>
    %155 = stablehlo.multiply %9, %154 : tensor<64x128xf32>
    %156 = stablehlo.select %8, %cst_20, %155 : tensor<64x128xi1>, tensor<64x128xf32>
    %157 = stablehlo.compare  NE, %2, %c_11 : (tensor<64xi64>, tensor<64xi64>) -> tensor<64xi1>
    %158 = stablehlo.broadcast_in_dim %157, dims = [0] : (tensor<64xi1>) -> tensor<64x128xi1>
    %159 = stablehlo.select %158, %cst_21, %cst_20 : tensor<64x128xi1>, tensor<64x128xf32>
    %160 = stablehlo.multiply %159, %7 : tensor<64x128xf32>
    %161 = stablehlo.multiply %156, %160 : tensor<64x128xf32>
    %162 = stablehlo.reduce(%161 init: %cst_25) applies stablehlo.add across dimensions = [0, 1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<f32>
    %163 = stablehlo.reduce(%160 init: %cst_25) applies stablehlo.add across dimensions = [0, 1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<f32>
    %164 = stablehlo.divide %162, %163 : tensor<f32>
    %165 = stablehlo.compare  LT, %11, %c_9 : (tensor<64xi64>, tensor<64xi64>) -> tensor<64xi1>
    %166 = stablehlo.broadcast_in_dim %arg20, dims = [] : (tensor<i64>) -> tensor<64xi64>
    %167 = stablehlo.add %11, %166 : tensor<64xi64>
    %168 = stablehlo.select %165, %167, %11 : tensor<64xi1>, tensor<64xi64>
    %169 = stablehlo.reshape %168 : (tensor<64xi64>) -> tensor<64x1xi64>
    %170 = stablehlo.compare  NE, %11, %c_8 : (tensor<64xi64>, tensor<64xi64>) -> tensor<64xi1>
    %171 = stablehlo.broadcast_in_dim %170, dims = [0] : (tensor<64xi1>) -> tensor<64x32xi1>
    %172 = stablehlo.multiply %9, %160 : tensor<64x128xf32>
    %173 = stablehlo.compare  NE, %163, %cst_25 : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %174 = stablehlo.select %173, %163, %cst_26 : tensor<i1>, tensor<f32>
    %175 = stablehlo.broadcast_in_dim %174, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
    %176 = stablehlo.divide %172, %175 : tensor<64x128xf32>
    %177 = stablehlo.exponential %154 : tensor<64x128xf32>
    %178 = stablehlo.reduce(%176 init: %cst_25) applies stablehlo.add across dimensions = [1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
    %179 = stablehlo.broadcast_in_dim %178, dims = [0] : (tensor<64xf32>) -> tensor<64x128xf32>
    %180 = stablehlo.multiply %177, %179 : tensor<64x128xf32>
    %181 = stablehlo.subtract %176, %180 : tensor<64x128xf32>
    %182 = stablehlo.dot_general %181, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x128xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
    %183 = stablehlo.reshape %182 : (tensor<64x32xf32>) -> tensor<4x16x32xf32>
    %184 = stablehlo.multiply %183, %10 : tensor<4x16x32xf32>
    %185 = stablehlo.multiply %184, %141 : tensor<4x16x32xf32>
    %186 = stablehlo.multiply %184, %133 : tensor<4x16x32xf32>
    %187 = stablehlo.reduce(%186 init: %cst_25) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %188 = stablehlo.reshape %187 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %189 = stablehlo.broadcast_in_dim %arg19, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %190 = stablehlo.multiply %188, %189 : tensor<4x16x1xf32>
    %191 = stablehlo.power %139, %cst_7 : tensor<4x16x1xf32>
    %192 = stablehlo.multiply %190, %191 : tensor<4x16x1xf32>
    %193 = stablehlo.reshape %192 : (tensor<4x16x1xf32>) -> tensor<4x16xf32>
    %194 = stablehlo.broadcast_in_dim %193, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
    %195 = stablehlo.broadcast_in_dim %arg18, dims = [] : (tensor<f32>) -> tensor<4x16x32xf32>
    %196 = stablehlo.divide %194, %195 : tensor<4x16x32xf32>
    %197 = stablehlo.power %133, %cst_6 : tensor<4x16x32xf32>
    %198 = stablehlo.broadcast_in_dim %arg17, dims = [] : (tensor<f32>) -> tensor<4x16x32xf32>
    %199 = stablehlo.multiply %197, %198 : tensor<4x16x32xf32>
    %200 = stablehlo.multiply %196, %199 : tensor<4x16x32xf32>
    %201 = stablehlo.add %185, %200 : tensor<4x16x32xf32>
    %202 = stablehlo.reshape %201 : (tensor<4x16x32xf32>) -> tensor<64x32xf32>
    %203 = stablehlo.dot_general %202, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
    %204 = stablehlo.reshape %203 : (tensor<64x64xf32>) -> tensor<4x16x64xf32>
    %205 = stablehlo.multiply %204, %124 : tensor<4x16x64xf32>
    %206 = stablehlo.reshape %205 : (tensor<4x16x64xf32>) -> tensor<64x64xf32>
    %207 = stablehlo.dot_general %206, %arg4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x64xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
    %208 = stablehlo.reshape %207 : (tensor<64x32xf32>) -> tensor<4x16x32xf32>
    %209 = stablehlo.multiply %204, %127 : tensor<4x16x64xf32>
    %210 = stablehlo.subtract %cst_5, %123 : tensor<4x16x64xf32>
    %211 = stablehlo.multiply %122, %210 : tensor<4x16x64xf32>
    %212 = stablehlo.add %211, %cst_5 : tensor<4x16x64xf32>
    %213 = stablehlo.multiply %123, %212 : tensor<4x16x64xf32>
    %214 = stablehlo.multiply %209, %213 : tensor<4x16x64xf32>
    %215 = stablehlo.reshape %214 : (tensor<4x16x64xf32>) -> tensor<64x64xf32>
    %216 = stablehlo.dot_general %215, %arg15, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x64xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
    %217 = stablehlo.reshape %216 : (tensor<64x32xf32>) -> tensor<4x16x32xf32>
    %218 = stablehlo.add %208, %217 : tensor<4x16x32xf32>
    %219 = stablehlo.multiply %218, %108 : tensor<4x16x32xf32>
    %220 = stablehlo.multiply %219, %116 : tensor<4x16x32xf32>
    %221 = stablehlo.add %201, %220 : tensor<4x16x32xf32>
    %222 = stablehlo.multiply %219, %107 : tensor<4x16x32xf32>
    %223 = stablehlo.reduce(%222 init: %cst_25) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %224 = stablehlo.reshape %223 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %225 = stablehlo.multiply %224, %189 : tensor<4x16x1xf32>
    %226 = stablehlo.power %114, %cst_7 : tensor<4x16x1xf32>
    %227 = stablehlo.multiply %225, %226 : tensor<4x16x1xf32>
    %228 = stablehlo.reshape %227 : (tensor<4x16x1xf32>) -> tensor<4x16xf32>
    %229 = stablehlo.broadcast_in_dim %228, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
    %230 = stablehlo.divide %229, %195 : tensor<4x16x32xf32>
    %231 = stablehlo.power %107, %cst_6 : tensor<4x16x32xf32>
    %232 = stablehlo.multiply %231, %198 : tensor<4x16x32xf32>
    %233 = stablehlo.multiply %230, %232 : tensor<4x16x32xf32>
    %234 = stablehlo.add %221, %233 : tensor<4x16x32xf32>
    %235 = stablehlo.transpose %93, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[16,16,16]{1,2,0}"} : (tensor<16x16x16xf32>) -> tensor<16x16x16xf32>
    %236 = stablehlo.reshape %234 : (tensor<4x16x32xf32>) -> tensor<64x32xf32>
    %237 = stablehlo.dot_general %236, %arg5, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
    %238 = stablehlo.reshape %237 : (tensor<64x32xf32>) -> tensor<4x16x4x8xf32>
    %239 = stablehlo.transpose %238, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,4,16,8]{3,1,2,0}"} : (tensor<4x16x4x8xf32>) -> tensor<4x4x16x8xf32>
    %240 = stablehlo.reshape %239 : (tensor<4x4x16x8xf32>) -> tensor<16x16x8xf32>
    %241 = stablehlo.dot_general %235, %240, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x16x16xf32>, tensor<16x16x8xf32>) -> tensor<16x16x8xf32>
    %242 = stablehlo.reshape %241 : (tensor<16x16x8xf32>) -> tensor<4x2x2x16x8xf32>
    %243 = stablehlo.reduce(%242 init: %cst_25) applies stablehlo.add across dimensions = [2] : (tensor<4x2x2x16x8xf32>, tensor<f32>) -> tensor<4x2x16x8xf32>
    %244 = stablehlo.transpose %243, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,16,2,8]{3,1,2,0}"} : (tensor<4x2x16x8xf32>) -> tensor<4x16x2x8xf32>
    %245 = stablehlo.reshape %244 : (tensor<4x16x2x8xf32>) -> tensor<64x16xf32>
    %246 = stablehlo.dot_general %245, %arg6, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x16xf32>, tensor<16x32xf32>) -> tensor<64x32xf32>
    %247 = stablehlo.reshape %246 : (tensor<64x32xf32>) -> tensor<4x16x32xf32>
    %248 = stablehlo.transpose %51, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[16,8,16]{1,2,0}"} : (tensor<16x16x8xf32>) -> tensor<16x8x16xf32>
    %249 = stablehlo.transpose %99, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[16,8,16]{1,2,0}"} : (tensor<16x16x8xf32>) -> tensor<16x8x16xf32>
    %250 = stablehlo.dot_general %240, %249, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x16x8xf32>, tensor<16x8x16xf32>) -> tensor<16x16x16xf32>
    %251 = stablehlo.reshape %250 : (tensor<16x16x16xf32>) -> tensor<4x4x16x16xf32>
    %252 = stablehlo.multiply %251, %92 : tensor<4x4x16x16xf32>
    %253 = stablehlo.reduce(%252 init: %cst_25) applies stablehlo.add across dimensions = [3] : (tensor<4x4x16x16xf32>, tensor<f32>) -> tensor<4x4x16xf32>
    %254 = stablehlo.broadcast_in_dim %253, dims = [0, 1, 2] : (tensor<4x4x16xf32>) -> tensor<4x4x16x16xf32>
    %255 = stablehlo.subtract %251, %254 : tensor<4x4x16x16xf32>
    %256 = stablehlo.multiply %92, %255 : tensor<4x4x16x16xf32>
    %257 = stablehlo.reshape %256 : (tensor<4x4x16x16xf32>) -> tensor<16x16x16xf32>
    %258 = stablehlo.dot_general %248, %257, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x8x16xf32>, tensor<16x16x16xf32>) -> tensor<16x8x16xf32>
    %259 = stablehlo.reshape %258 : (tensor<16x8x16xf32>) -> tensor<4x4x8x16xf32>
    %260 = stablehlo.multiply %259, %68 : tensor<4x4x8x16xf32>
    %261 = stablehlo.transpose %260, dims = [0, 1, 3, 2] {result_layout = dense<[2, 3, 1, 0]> : tensor<4xindex>, xla_shape = "f32[4,4,16,8]{2,3,1,0}"} : (tensor<4x4x8x16xf32>) -> tensor<4x4x16x8xf32>
    %262 = stablehlo.reshape %261 : (tensor<4x4x16x8xf32>) -> tensor<4x2x2x16x8xf32>
    %263 = stablehlo.reduce(%262 init: %cst_25) applies stablehlo.add across dimensions = [2] : (tensor<4x2x2x16x8xf32>, tensor<f32>) -> tensor<4x2x16x8xf32>
    %264 = stablehlo.multiply %263, %62 : tensor<4x2x16x8xf32>
    %265 = stablehlo.slice %264 [0:4, 0:2, 0:16, 0:4] : (tensor<4x2x16x8xf32>) -> tensor<4x2x16x4xf32>
    %266 = stablehlo.negate %265 : tensor<4x2x16x4xf32>
    %267 = stablehlo.pad %266, %cst_25, low = [0, 0, 0, 4], high = [0, 0, 0, 0], interior = [0, 0, 0, 0] : (tensor<4x2x16x4xf32>, tensor<f32>) -> tensor<4x2x16x8xf32>
    %268 = stablehlo.select %c_4, %267, %cst_3 : tensor<4x2x16x8xi1>, tensor<4x2x16x8xf32>
    %269 = stablehlo.slice %264 [0:4, 0:2, 0:16, 4:8] : (tensor<4x2x16x8xf32>) -> tensor<4x2x16x4xf32>
    %270 = stablehlo.pad %269, %cst_25, low = [0, 0, 0, 0], high = [0, 0, 0, 4], interior = [0, 0, 0, 0] : (tensor<4x2x16x4xf32>, tensor<f32>) -> tensor<4x2x16x8xf32>
    %271 = stablehlo.select %c_2, %270, %cst_3 : tensor<4x2x16x8xi1>, tensor<4x2x16x8xf32>
    %272 = stablehlo.add %268, %271 : tensor<4x2x16x8xf32>
    %273 = stablehlo.multiply %263, %56 : tensor<4x2x16x8xf32>
    %274 = stablehlo.add %272, %273 : tensor<4x2x16x8xf32>
    %275 = stablehlo.transpose %274, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,16,2,8]{3,1,2,0}"} : (tensor<4x2x16x8xf32>) -> tensor<4x16x2x8xf32>
    %276 = stablehlo.reshape %275 : (tensor<4x16x2x8xf32>) -> tensor<64x16xf32>
    %277 = stablehlo.dot_general %276, %arg12, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x16xf32>, tensor<16x32xf32>) -> tensor<64x32xf32>
    %278 = stablehlo.reshape %277 : (tensor<64x32xf32>) -> tensor<4x16x32xf32>
    %279 = stablehlo.add %247, %278 : tensor<4x16x32xf32>
    %280 = stablehlo.transpose %70, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[16,16,8]{1,2,0}"} : (tensor<16x8x16xf32>) -> tensor<16x16x8xf32>
    %281 = stablehlo.dot_general %257, %280, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x16x16xf32>, tensor<16x16x8xf32>) -> tensor<16x16x8xf32>
    %282 = stablehlo.reshape %281 : (tensor<16x16x8xf32>) -> tensor<4x4x16x8xf32>
    %283 = stablehlo.multiply %282, %49 : tensor<4x4x16x8xf32>
    %284 = stablehlo.multiply %283, %46 : tensor<4x4x16x8xf32>
    %285 = stablehlo.slice %284 [0:4, 0:4, 0:16, 0:4] : (tensor<4x4x16x8xf32>) -> tensor<4x4x16x4xf32>
    %286 = stablehlo.negate %285 : tensor<4x4x16x4xf32>
    %287 = stablehlo.pad %286, %cst_25, low = [0, 0, 0, 4], high = [0, 0, 0, 0], interior = [0, 0, 0, 0] : (tensor<4x4x16x4xf32>, tensor<f32>) -> tensor<4x4x16x8xf32>
    %288 = stablehlo.select %c_1, %287, %cst_0 : tensor<4x4x16x8xi1>, tensor<4x4x16x8xf32>
    %289 = stablehlo.slice %284 [0:4, 0:4, 0:16, 4:8] : (tensor<4x4x16x8xf32>) -> tensor<4x4x16x4xf32>
    %290 = stablehlo.pad %289, %cst_25, low = [0, 0, 0, 0], high = [0, 0, 0, 4], interior = [0, 0, 0, 0] : (tensor<4x4x16x4xf32>, tensor<f32>) -> tensor<4x4x16x8xf32>
    %291 = stablehlo.select %c, %290, %cst_0 : tensor<4x4x16x8xi1>, tensor<4x4x16x8xf32>
    %292 = stablehlo.add %288, %291 : tensor<4x4x16x8xf32>
    %293 = stablehlo.multiply %283, %38 : tensor<4x4x16x8xf32>
    %294 = stablehlo.add %292, %293 : tensor<4x4x16x8xf32>
    %295 = stablehlo.transpose %294, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,16,4,8]{3,1,2,0}"} : (tensor<4x4x16x8xf32>) -> tensor<4x16x4x8xf32>
    %296 = stablehlo.reshape %295 : (tensor<4x16x4x8xf32>) -> tensor<64x32xf32>
    %297 = stablehlo.dot_general %296, %arg13, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
    %298 = stablehlo.reshape %297 : (tensor<64x32xf32>) -> tensor<4x16x32xf32>
    %299 = stablehlo.add %279, %298 : tensor<4x16x32xf32>
    %300 = stablehlo.multiply %299, %15 : tensor<4x16x32xf32>
    %301 = stablehlo.multiply %300, %24 : tensor<4x16x32xf32>
    %302 = stablehlo.add %234, %301 : tensor<4x16x32xf32>
    %303 = stablehlo.multiply %300, %14 : tensor<4x16x32xf32>
    %304 = stablehlo.reduce(%303 init: %cst_25) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %305 = stablehlo.reshape %304 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %306 = stablehlo.multiply %305, %189 : tensor<4x16x1xf32>
    %307 = stablehlo.power %22, %cst_7 : tensor<4x16x1xf32>
    %308 = stablehlo.multiply %306, %307 : tensor<4x16x1xf32>
    %309 = stablehlo.reshape %308 : (tensor<4x16x1xf32>) -> tensor<4x16xf32>
    %310 = stablehlo.broadcast_in_dim %309, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
    %311 = stablehlo.divide %310, %195 : tensor<4x16x32xf32>
    %312 = stablehlo.power %14, %cst_6 : tensor<4x16x32xf32>
    %313 = stablehlo.multiply %312, %198 : tensor<4x16x32xf32>
    %314 = stablehlo.multiply %311, %313 : tensor<4x16x32xf32>
    %315 = stablehlo.add %302, %314 : tensor<4x16x32xf32>
    %316 = stablehlo.reshape %315 : (tensor<4x16x32xf32>) -> tensor<64x32xf32>
    %317 = stablehlo.select %171, %316, %cst : tensor<64x32xi1>, tensor<64x32xf32>
    %318 = "stablehlo.scatter"(%cst_10, %169, %317) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg21: tensor<f32>, %arg22: tensor<f32>):
      %346 = stablehlo.add %arg21, %arg22 : tensor<f32>
      stablehlo.return %346 : tensor<f32>
    }) : (tensor<128x32xf32>, tensor<64x1xi64>, tensor<64x32xf32>) -> tensor<128x32xf32>
    %319 = stablehlo.transpose %27, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,64]{0,1}"} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %320 = stablehlo.dot_general %319, %296, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x64xf32>, tensor<64x32xf32>) -> tensor<32x32xf32>
    %321 = stablehlo.transpose %320, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %322 = stablehlo.dot_general %319, %276, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x64xf32>, tensor<64x16xf32>) -> tensor<32x16xf32>
    %323 = stablehlo.transpose %322, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[16,32]{0,1}"} : (tensor<32x16xf32>) -> tensor<16x32xf32>
    %324 = stablehlo.dot_general %319, %245, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x64xf32>, tensor<64x16xf32>) -> tensor<32x16xf32>
    %325 = stablehlo.transpose %324, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[16,32]{0,1}"} : (tensor<32x16xf32>) -> tensor<16x32xf32>
    %326 = stablehlo.transpose %103, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,64]{0,1}"} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %327 = stablehlo.dot_general %326, %236, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x64xf32>, tensor<64x32xf32>) -> tensor<32x32xf32>
    %328 = stablehlo.transpose %327, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %329 = stablehlo.transpose %119, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,64]{0,1}"} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %330 = stablehlo.dot_general %329, %215, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
    %331 = stablehlo.transpose %330, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,32]{0,1}"} : (tensor<32x64xf32>) -> tensor<64x32xf32>
    %332 = stablehlo.dot_general %329, %206, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
    %333 = stablehlo.transpose %332, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,32]{0,1}"} : (tensor<32x64xf32>) -> tensor<64x32xf32>
    %334 = stablehlo.transpose %129, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,64]{0,1}"} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %335 = stablehlo.dot_general %334, %202, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x64xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
    %336 = stablehlo.transpose %335, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,64]{0,1}"} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %337 = stablehlo.multiply %299, %25 : tensor<4x16x32xf32>
    %338 = stablehlo.reduce(%337 init: %cst_25) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<32xf32>
    %339 = stablehlo.multiply %218, %117 : tensor<4x16x32xf32>
    %340 = stablehlo.reduce(%339 init: %cst_25) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<32xf32>
    %341 = stablehlo.multiply %183, %142 : tensor<4x16x32xf32>
    %342 = stablehlo.reduce(%341 init: %cst_25) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<32xf32>
    %343 = stablehlo.transpose %144, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,64]{0,1}"} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %344 = stablehlo.dot_general %343, %181, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32>
    %345 = stablehlo.transpose %344, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[128,32]{0,1}"} : (tensor<32x128xf32>) -> tensor<128x32xf32>
    return %164, %318, %321, %323, %325, %328, %331, %333, %336, %338, %340, %342, %345 : tensor<f32>, tensor<128x32xf32>, tensor<32x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<32x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<32x64xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<128x32xf32>
  }
}
