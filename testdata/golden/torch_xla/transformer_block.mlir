module @IrToHlo.466 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["_axis_0"=2, "_axis_1"=4]> {stablehlo.mesh = {axes = [{name = "_axis_0", size = 2 : i64}, {name = "_axis_1", size = 4 : i64}]}}
  func.func @main(%arg0: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg1: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0"}, {"_axis_1"}]>}, %arg2: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_1"}]>}, %arg3: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_1"}, {"_axis_0"}]>}, %arg4: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg5: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0"}, {"_axis_1"}]>}, %arg6: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_1"}, {"_axis_0"}]>}, %arg7: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg8: tensor<4x8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0"}, {}, {}]>}, %arg9: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg10: tensor<f64> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg11: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg12: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_1"}, {"_axis_0"}]>}, %arg13: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_1"}, {"_axis_0"}]>}, %arg14: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg15: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg16: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}) -> (tensor<f32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32xf32>, tensor<64xf32>, tensor<32x64xf32>, tensor<32xf32>) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<4x4x8x8xf32>
    %cst_0 = stablehlo.constant dense<9.765625E-4> : tensor<f32>
    %cst_1 = stablehlo.constant dense<2.000000e+00> : tensor<4x8x32xf32>
    %cst_2 = stablehlo.constant dense<0.398942292> : tensor<4x8x64xf32>
    %cst_3 = stablehlo.constant dense<-5.000000e-01> : tensor<4x8x64xf32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<4x8x64xf32>
    %cst_5 = stablehlo.constant dense<0.707106769> : tensor<4x8x64xf32>
    %cst_6 = stablehlo.constant dense<5.000000e-01> : tensor<4x8x64xf32>
    %cst_7 = stablehlo.constant dense<1.000000e+00> : tensor<4x8x32xf32>
    %cst_8 = stablehlo.constant dense<9.99999974E-6> : tensor<32xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<8x8xf32>
    %cst_10 = stablehlo.constant dense<1.000000e+00> : tensor<8x8xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<32xf32>
    %cst_12 = stablehlo.constant dense<1.000000e+00> : tensor<32xf32>
    %cst_13 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reshape %arg8 : (tensor<4x8x32xf32>) -> tensor<1x32x32xf32>
    %output, %batch_mean, %batch_var = "stablehlo.batch_norm_training"(%0, %cst_12, %cst_11) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x32x32xf32>, tensor<32xf32>, tensor<32xf32>) -> (tensor<1x32x32xf32>, tensor<32xf32>, tensor<32xf32>)
    %1 = stablehlo.iota dim = 0 : tensor<8xi32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<8xi32>) -> tensor<8x8xi32>
    %3 = stablehlo.broadcast_in_dim %1, dims = [1] : (tensor<8xi32>) -> tensor<8x8xi32>
    %4 = stablehlo.compare GE, %2, %3 : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
    %5 = stablehlo.select %4, %cst_10, %cst_9 : tensor<8x8xi1>, tensor<8x8xf32>
    %6 = stablehlo.compare EQ, %5, %cst_9 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xi1>
    %7 = stablehlo.broadcast_in_dim %6, dims = [2, 3] : (tensor<8x8xi1>) -> tensor<4x4x8x8xi1>
    %8 = stablehlo.convert %arg10 : (tensor<f64>) -> tensor<f32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [] : (tensor<f32>) -> tensor<4x4x8x8xf32>
    %10 = stablehlo.broadcast_in_dim %arg9, dims = [2] : (tensor<32xf32>) -> tensor<4x8x32xf32>
    %11 = stablehlo.reshape %output : (tensor<1x32x32xf32>) -> tensor<4x8x32xf32>
    %12 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<32xf32>) -> tensor<4x8x32xf32>
    %13 = stablehlo.multiply %11, %12 : tensor<4x8x32xf32>
    %14 = stablehlo.add %10, %13 : tensor<4x8x32xf32>
    %15 = stablehlo.reshape %14 : (tensor<4x8x32xf32>) -> tensor<32x32xf32>
    %16 = stablehlo.transpose %arg13, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %17 = stablehlo.dot_general %15, %16, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    %18 = stablehlo.reshape %17 : (tensor<32x32xf32>) -> tensor<4x8x4x8xf32>
    %19 = stablehlo.transpose %18, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,4,8,8]{3,1,2,0}"} : (tensor<4x8x4x8xf32>) -> tensor<4x4x8x8xf32>
    %20 = sdy.sharding_constraint %19 <@mesh, [{"_axis_0"}, {"_axis_1"}, {}, {}]> : tensor<4x4x8x8xf32>
    %21 = stablehlo.reshape %20 : (tensor<4x4x8x8xf32>) -> tensor<16x8x8xf32>
    %22 = stablehlo.transpose %arg12, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %23 = stablehlo.dot_general %15, %22, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    %24 = stablehlo.reshape %23 : (tensor<32x32xf32>) -> tensor<4x8x4x8xf32>
    %25 = stablehlo.transpose %24, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,4,8,8]{3,1,2,0}"} : (tensor<4x8x4x8xf32>) -> tensor<4x4x8x8xf32>
    %26 = sdy.sharding_constraint %25 <@mesh, [{"_axis_0"}, {"_axis_1"}, {}, {}]> : tensor<4x4x8x8xf32>
    %27 = stablehlo.transpose %26, dims = [0, 1, 3, 2] {result_layout = dense<[2, 1, 3, 0]> : tensor<4xindex>, xla_shape = "f32[4,4,8,8]{2,1,3,0}"} : (tensor<4x4x8x8xf32>) -> tensor<4x4x8x8xf32>
    %28 = stablehlo.reshape %27 : (tensor<4x4x8x8xf32>) -> tensor<16x8x8xf32>
    %29 = stablehlo.dot_general %21, %28, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x8x8xf32>, tensor<16x8x8xf32>) -> tensor<16x8x8xf32>
    %30 = stablehlo.reshape %29 : (tensor<16x8x8xf32>) -> tensor<4x4x8x8xf32>
    %31 = stablehlo.broadcast_in_dim %arg11, dims = [] : (tensor<f32>) -> tensor<4x4x8x8xf32>
    %32 = stablehlo.divide %30, %31 : tensor<4x4x8x8xf32>
    %33 = stablehlo.select %7, %9, %32 : tensor<4x4x8x8xi1>, tensor<4x4x8x8xf32>
    %34 = stablehlo.reduce(%33 init: %cst_13) applies stablehlo.maximum across dimensions = [3] : (tensor<4x4x8x8xf32>, tensor<f32>) -> tensor<4x4x8xf32>
    %35 = stablehlo.broadcast_in_dim %34, dims = [0, 1, 2] : (tensor<4x4x8xf32>) -> tensor<4x4x8x8xf32>
    %36 = stablehlo.subtract %33, %35 : tensor<4x4x8x8xf32>
    %37 = stablehlo.exponential %36 : tensor<4x4x8x8xf32>
    %38 = stablehlo.reduce(%37 init: %cst_14) applies stablehlo.add across dimensions = [3] : (tensor<4x4x8x8xf32>, tensor<f32>) -> tensor<4x4x8xf32>
    %39 = stablehlo.broadcast_in_dim %38, dims = [0, 1, 2] : (tensor<4x4x8xf32>) -> tensor<4x4x8x8xf32>
    %40 = stablehlo.divide %37, %39 : tensor<4x4x8x8xf32>
    %41 = stablehlo.reshape %40 : (tensor<4x4x8x8xf32>) -> tensor<16x8x8xf32>
    %42 = stablehlo.transpose %arg6, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %43 = stablehlo.dot_general %15, %42, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    %44 = stablehlo.reshape %43 : (tensor<32x32xf32>) -> tensor<4x8x4x8xf32>
    %45 = stablehlo.transpose %44, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,4,8,8]{3,1,2,0}"} : (tensor<4x8x4x8xf32>) -> tensor<4x4x8x8xf32>
    %46 = sdy.sharding_constraint %45 <@mesh, [{"_axis_0"}, {"_axis_1"}, {}, {}]> : tensor<4x4x8x8xf32>
    %47 = stablehlo.reshape %46 : (tensor<4x4x8x8xf32>) -> tensor<16x8x8xf32>
    %48 = stablehlo.dot_general %41, %47, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x8x8xf32>, tensor<16x8x8xf32>) -> tensor<16x8x8xf32>
    %49 = stablehlo.reshape %48 : (tensor<16x8x8xf32>) -> tensor<4x4x8x8xf32>
    %50 = stablehlo.transpose %49, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,8,4,8]{3,1,2,0}"} : (tensor<4x4x8x8xf32>) -> tensor<4x8x4x8xf32>
    %51 = stablehlo.reshape %50 : (tensor<4x8x4x8xf32>) -> tensor<32x32xf32>
    %52 = stablehlo.transpose %arg5, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %53 = stablehlo.dot_general %51, %52, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    %54 = stablehlo.reshape %53 : (tensor<32x32xf32>) -> tensor<4x8x32xf32>
    %55 = stablehlo.add %arg8, %54 : tensor<4x8x32xf32>
    %56 = stablehlo.reshape %55 : (tensor<4x8x32xf32>) -> tensor<1x32x32xf32>
    %output_15, %batch_mean_16, %batch_var_17 = "stablehlo.batch_norm_training"(%56, %cst_12, %cst_11) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x32x32xf32>, tensor<32xf32>, tensor<32xf32>) -> (tensor<1x32x32xf32>, tensor<32xf32>, tensor<32xf32>)
    %57 = stablehlo.add %batch_var_17, %cst_8 : tensor<32xf32>
    %58 = stablehlo.rsqrt %57 : tensor<32xf32>
    %59 = stablehlo.divide %cst_12, %58 : tensor<32xf32>
    %60 = stablehlo.multiply %59, %59 : tensor<32xf32>
    %61 = stablehlo.subtract %60, %cst_8 : tensor<32xf32>
    %62 = stablehlo.broadcast_in_dim %arg16, dims = [] : (tensor<f32>) -> tensor<4x8x32xf32>
    %63 = stablehlo.divide %cst_7, %62 : tensor<4x8x32xf32>
    %64 = stablehlo.broadcast_in_dim %arg14, dims = [2] : (tensor<32xf32>) -> tensor<4x8x32xf32>
    %65 = stablehlo.reshape %output_15 : (tensor<1x32x32xf32>) -> tensor<4x8x32xf32>
    %66 = stablehlo.broadcast_in_dim %arg4, dims = [2] : (tensor<32xf32>) -> tensor<4x8x32xf32>
    %67 = stablehlo.multiply %65, %66 : tensor<4x8x32xf32>
    %68 = stablehlo.add %64, %67 : tensor<4x8x32xf32>
    %69 = stablehlo.reshape %68 : (tensor<4x8x32xf32>) -> tensor<32x32xf32>
    %70 = stablehlo.transpose %arg3, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,64]{0,1}"} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %71 = stablehlo.dot_general %69, %70, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x32xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
    %72 = stablehlo.reshape %71 : (tensor<32x64xf32>) -> tensor<4x8x64xf32>
    %73 = stablehlo.broadcast_in_dim %arg2, dims = [2] : (tensor<64xf32>) -> tensor<4x8x64xf32>
    %74 = stablehlo.add %72, %73 : tensor<4x8x64xf32>
    %75 = stablehlo.multiply %74, %cst_6 : tensor<4x8x64xf32>
    %76 = stablehlo.multiply %74, %cst_5 : tensor<4x8x64xf32>
    %77 = stablehlo.custom_call @mhlo.erf(%76) {mhlo.attributes = {}, mhlo.version = 1 : i64} : (tensor<4x8x64xf32>) -> tensor<4x8x64xf32>
    %78 = stablehlo.add %77, %cst_4 : tensor<4x8x64xf32>
    %79 = stablehlo.multiply %75, %78 : tensor<4x8x64xf32>
    %80 = stablehlo.reshape %79 : (tensor<4x8x64xf32>) -> tensor<32x64xf32>
    %81 = stablehlo.transpose %arg1, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,32]{0,1}"} : (tensor<32x64xf32>) -> tensor<64x32xf32>
    %82 = stablehlo.dot_general %80, %81, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x64xf32>, tensor<64x32xf32>) -> tensor<32x32xf32>
    %83 = stablehlo.reshape %82 : (tensor<32x32xf32>) -> tensor<4x8x32xf32>
    %84 = stablehlo.broadcast_in_dim %arg0, dims = [2] : (tensor<32xf32>) -> tensor<4x8x32xf32>
    %85 = stablehlo.add %83, %84 : tensor<4x8x32xf32>
    %86 = stablehlo.add %55, %85 : tensor<4x8x32xf32>
    %87 = sdy.sharding_constraint %86 <@mesh, [{"_axis_0"}, {}, {}]> : tensor<4x8x32xf32>
    %88 = stablehlo.power %87, %cst_7 : tensor<4x8x32xf32>
    %89 = stablehlo.broadcast_in_dim %arg15, dims = [] : (tensor<f32>) -> tensor<4x8x32xf32>
    %90 = stablehlo.multiply %88, %89 : tensor<4x8x32xf32>
    %91 = stablehlo.multiply %63, %90 : tensor<4x8x32xf32>
    %92 = stablehlo.reshape %91 : (tensor<4x8x32xf32>) -> tensor<32x32xf32>
    %93 = stablehlo.dot_general %92, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x32xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
    %94 = stablehlo.reshape %93 : (tensor<32x64xf32>) -> tensor<4x8x64xf32>
    %95 = stablehlo.multiply %78, %cst_6 : tensor<4x8x64xf32>
    %96 = stablehlo.multiply %74, %74 : tensor<4x8x64xf32>
    %97 = stablehlo.multiply %96, %cst_3 : tensor<4x8x64xf32>
    %98 = stablehlo.exponential %97 : tensor<4x8x64xf32>
    %99 = stablehlo.multiply %74, %98 : tensor<4x8x64xf32>
    %100 = stablehlo.multiply %99, %cst_2 : tensor<4x8x64xf32>
    %101 = stablehlo.add %95, %100 : tensor<4x8x64xf32>
    %102 = stablehlo.multiply %94, %101 : tensor<4x8x64xf32>
    %103 = stablehlo.reshape %102 : (tensor<4x8x64xf32>) -> tensor<32x64xf32>
    %104 = stablehlo.dot_general %103, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x64xf32>, tensor<64x32xf32>) -> tensor<32x32xf32>
    %105 = stablehlo.reshape %104 : (tensor<32x32xf32>) -> tensor<4x8x32xf32>
    %106 = stablehlo.multiply %105, %66 : tensor<4x8x32xf32>
    %107 = stablehlo.reshape %106 : (tensor<4x8x32xf32>) -> tensor<1x32x32xf32>
    %grad_operand, %grad_scale, %grad_offset = "stablehlo.batch_norm_grad"(%56, %cst_12, %batch_mean_16, %61, %107) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<1x32x32xf32>) -> (tensor<1x32x32xf32>, tensor<32xf32>, tensor<32xf32>)
    %108 = stablehlo.power %87, %cst_1 : tensor<4x8x32xf32>
    %109 = stablehlo.reduce(%108 init: %cst_14) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<4x8x32xf32>, tensor<f32>) -> tensor<f32>
    %110 = stablehlo.multiply %109, %cst_0 : tensor<f32>
    %111 = stablehlo.transpose %41, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[16,8,8]{1,2,0}"} : (tensor<16x8x8xf32>) -> tensor<16x8x8xf32>
    %112 = stablehlo.reshape %grad_operand : (tensor<1x32x32xf32>) -> tensor<4x8x32xf32>
    %113 = stablehlo.add %91, %112 : tensor<4x8x32xf32>
    %114 = stablehlo.reshape %113 : (tensor<4x8x32xf32>) -> tensor<32x32xf32>
    %115 = stablehlo.dot_general %114, %arg5, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    %116 = stablehlo.reshape %115 : (tensor<32x32xf32>) -> tensor<4x8x4x8xf32>
    %117 = stablehlo.transpose %116, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,4,8,8]{3,1,2,0}"} : (tensor<4x8x4x8xf32>) -> tensor<4x4x8x8xf32>
    %118 = stablehlo.reshape %117 : (tensor<4x4x8x8xf32>) -> tensor<16x8x8xf32>
    %119 = stablehlo.dot_general %111, %118, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x8x8xf32>, tensor<16x8x8xf32>) -> tensor<16x8x8xf32>
    %120 = stablehlo.reshape %119 : (tensor<16x8x8xf32>) -> tensor<4x4x8x8xf32>
    %121 = stablehlo.transpose %120, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,8,4,8]{3,1,2,0}"} : (tensor<4x4x8x8xf32>) -> tensor<4x8x4x8xf32>
    %122 = stablehlo.reshape %121 : (tensor<4x8x4x8xf32>) -> tensor<32x32xf32>
    %123 = stablehlo.dot_general %122, %arg6, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    %124 = stablehlo.reshape %123 : (tensor<32x32xf32>) -> tensor<4x8x32xf32>
    %125 = stablehlo.transpose %21, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[16,8,8]{1,2,0}"} : (tensor<16x8x8xf32>) -> tensor<16x8x8xf32>
    %126 = stablehlo.transpose %47, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[16,8,8]{1,2,0}"} : (tensor<16x8x8xf32>) -> tensor<16x8x8xf32>
    %127 = stablehlo.dot_general %118, %126, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x8x8xf32>, tensor<16x8x8xf32>) -> tensor<16x8x8xf32>
    %128 = stablehlo.reshape %127 : (tensor<16x8x8xf32>) -> tensor<4x4x8x8xf32>
    %129 = stablehlo.multiply %128, %40 : tensor<4x4x8x8xf32>
    %130 = stablehlo.reduce(%129 init: %cst_14) applies stablehlo.add across dimensions = [3] : (tensor<4x4x8x8xf32>, tensor<f32>) -> tensor<4x4x8xf32>
    %131 = stablehlo.broadcast_in_dim %130, dims = [0, 1, 2] : (tensor<4x4x8xf32>) -> tensor<4x4x8x8xf32>
    %132 = stablehlo.subtract %128, %131 : tensor<4x4x8x8xf32>
    %133 = stablehlo.multiply %40, %132 : tensor<4x4x8x8xf32>
    %134 = stablehlo.select %7, %cst, %133 : tensor<4x4x8x8xi1>, tensor<4x4x8x8xf32>
    %135 = stablehlo.divide %134, %31 : tensor<4x4x8x8xf32>
    %136 = stablehlo.reshape %135 : (tensor<4x4x8x8xf32>) -> tensor<16x8x8xf32>
    %137 = stablehlo.dot_general %125, %136, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x8x8xf32>, tensor<16x8x8xf32>) -> tensor<16x8x8xf32>
    %138 = stablehlo.reshape %137 : (tensor<16x8x8xf32>) -> tensor<4x4x8x8xf32>
    %139 = stablehlo.transpose %138, dims = [0, 3, 1, 2] : (tensor<4x4x8x8xf32>) -> tensor<4x8x4x8xf32>
    %140 = stablehlo.reshape %139 : (tensor<4x8x4x8xf32>) -> tensor<32x32xf32>
    %141 = stablehlo.dot_general %140, %arg12, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    %142 = stablehlo.reshape %141 : (tensor<32x32xf32>) -> tensor<4x8x32xf32>
    %143 = stablehlo.add %124, %142 : tensor<4x8x32xf32>
    %144 = stablehlo.transpose %28, dims = [0, 2, 1] {result_layout = dense<[1, 2, 0]> : tensor<3xindex>, xla_shape = "f32[16,8,8]{1,2,0}"} : (tensor<16x8x8xf32>) -> tensor<16x8x8xf32>
    %145 = stablehlo.dot_general %136, %144, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x8x8xf32>, tensor<16x8x8xf32>) -> tensor<16x8x8xf32>
    %146 = stablehlo.reshape %145 : (tensor<16x8x8xf32>) -> tensor<4x4x8x8xf32>
    %147 = stablehlo.transpose %146, dims = [0, 2, 1, 3] {result_layout = dense<[3, 1, 2, 0]> : tensor<4xindex>, xla_shape = "f32[4,8,4,8]{3,1,2,0}"} : (tensor<4x4x8x8xf32>) -> tensor<4x8x4x8xf32>
    %148 = stablehlo.reshape %147 : (tensor<4x8x4x8xf32>) -> tensor<32x32xf32>
    %149 = stablehlo.dot_general %148, %arg13, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    %150 = stablehlo.reshape %149 : (tensor<32x32xf32>) -> tensor<4x8x32xf32>
    %151 = stablehlo.add %143, %150 : tensor<4x8x32xf32>
    %152 = stablehlo.multiply %151, %11 : tensor<4x8x32xf32>
    %153 = stablehlo.reduce(%152 init: %cst_14) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %154 = stablehlo.reduce(%151 init: %cst_14) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %155 = stablehlo.transpose %15, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %156 = stablehlo.dot_general %155, %148, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    %157 = stablehlo.transpose %156, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %158 = stablehlo.dot_general %155, %140, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    %159 = stablehlo.transpose %158, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %160 = stablehlo.dot_general %155, %122, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    %161 = stablehlo.transpose %160, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %162 = stablehlo.transpose %51, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %163 = stablehlo.dot_general %162, %114, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    %164 = stablehlo.transpose %163, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %165 = stablehlo.multiply %105, %65 : tensor<4x8x32xf32>
    %166 = stablehlo.reduce(%165 init: %cst_14) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %167 = stablehlo.reduce(%105 init: %cst_14) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %168 = stablehlo.transpose %69, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,32]{0,1}"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %169 = stablehlo.dot_general %168, %103, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x32xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
    %170 = stablehlo.transpose %169, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,32]{0,1}"} : (tensor<32x64xf32>) -> tensor<64x32xf32>
    %171 = stablehlo.reduce(%102 init: %cst_14) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8x64xf32>, tensor<f32>) -> tensor<64xf32>
    %172 = stablehlo.transpose %80, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[64,32]{0,1}"} : (tensor<32x64xf32>) -> tensor<64x32xf32>
    %173 = stablehlo.dot_general %172, %92, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
    %174 = stablehlo.transpose %173, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,64]{0,1}"} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %175 = stablehlo.reduce(%91 init: %cst_14) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    return %110, %153, %154, %157, %159, %161, %164, %166, %167, %170, %171, %174, %175 : tensor<f32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64x32xf32>, tensor<64xf32>, tensor<32x64xf32>, tensor<32xf32>
  }
}
