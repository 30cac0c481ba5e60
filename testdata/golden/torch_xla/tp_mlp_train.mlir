module @IrToHlo.157 attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg2: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg3: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, %arg4: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg5: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg6: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg7: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg8: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg9: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, %arg10: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg11: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<f32>, tensor<32x16xf32>, tensor<32xf32>, tensor<16x32xf32>, tensor<16xf32>) {
    %cst = stablehlo.constant dense<0.398942292> : tensor<8x32xf32>
    %cst_0 = stablehlo.constant dense<-5.000000e-01> : tensor<8x32xf32>
    %cst_1 = stablehlo.constant dense<7.812500e-03> : tensor<8x16xf32>
    %cst_2 = stablehlo.constant dense<2.000000e+00> : tensor<8x16xf32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<8x32xf32>
    %cst_4 = stablehlo.constant dense<0.707106769> : tensor<8x32xf32>
    %cst_5 = stablehlo.constant dense<5.000000e-01> : tensor<8x32xf32>
    %cst_6 = stablehlo.constant dense<7.812500e-03> : tensor<f32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.transpose %arg4, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[16,32]{0,1}"} : (tensor<32x16xf32>) -> tensor<16x32xf32>
    %1 = stablehlo.dot_general %arg5, %0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %2 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<32xf32>) -> tensor<8x32xf32>
    %3 = stablehlo.add %1, %2 : tensor<8x32xf32>
    %4 = stablehlo.multiply %3, %cst_5 : tensor<8x32xf32>
    %5 = stablehlo.multiply %3, %cst_4 : tensor<8x32xf32>
    %6 = stablehlo.custom_call @mhlo.erf(%5) {mhlo.attributes = {}, mhlo.version = 1 : i64} : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %7 = stablehlo.add %6, %cst_3 : tensor<8x32xf32>
    %8 = stablehlo.multiply %4, %7 : tensor<8x32xf32>
    %9 = stablehlo.transpose %arg2, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,16]{0,1}"} : (tensor<16x32xf32>) -> tensor<32x16xf32>
    %10 = stablehlo.dot_general %8, %9, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
    %11 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>
    %12 = stablehlo.add %10, %11 : tensor<8x16xf32>
    %13 = stablehlo.subtract %12, %arg0 : tensor<8x16xf32>
    %14 = stablehlo.multiply %13, %13 : tensor<8x16xf32>
    %15 = stablehlo.reduce(%14 init: %cst_7) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<f32>
    %16 = stablehlo.multiply %15, %cst_6 : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %arg7, dims = [] : (tensor<f32>) -> tensor<32x16xf32>
    %18 = stablehlo.multiply %arg8, %17 : tensor<32x16xf32>
    %19 = sdy.sharding_constraint %18 <@mesh, [{"model"}, {}]> : tensor<32x16xf32>
    %20 = stablehlo.transpose %arg5, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[16,8]{0,1}"} : (tensor<8x16xf32>) -> tensor<16x8xf32>
    %21 = stablehlo.multiply %13, %cst_2 : tensor<8x16xf32>
    %22 = stablehlo.multiply %21, %cst_1 : tensor<8x16xf32>
    %23 = stablehlo.dot_general %22, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %24 = stablehlo.multiply %7, %cst_5 : tensor<8x32xf32>
    %25 = stablehlo.multiply %3, %3 : tensor<8x32xf32>
    %26 = stablehlo.multiply %25, %cst_0 : tensor<8x32xf32>
    %27 = stablehlo.exponential %26 : tensor<8x32xf32>
    %28 = stablehlo.multiply %3, %27 : tensor<8x32xf32>
    %29 = stablehlo.multiply %28, %cst : tensor<8x32xf32>
    %30 = stablehlo.add %24, %29 : tensor<8x32xf32>
    %31 = stablehlo.multiply %23, %30 : tensor<8x32xf32>
    %32 = stablehlo.dot_general %20, %31, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x8xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
    %33 = stablehlo.transpose %32, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,16]{0,1}"} : (tensor<16x32xf32>) -> tensor<32x16xf32>
    %34 = stablehlo.add %19, %33 : tensor<32x16xf32>
    %35 = sdy.sharding_constraint %34 <@mesh, [{"model"}, {}]> : tensor<32x16xf32>
    %36 = stablehlo.broadcast_in_dim %arg6, dims = [] : (tensor<f32>) -> tensor<32x16xf32>
    %37 = stablehlo.multiply %35, %36 : tensor<32x16xf32>
    %38 = stablehlo.add %arg4, %37 : tensor<32x16xf32>
    %39 = sdy.sharding_constraint %38 <@mesh, [{"model"}, {}]> : tensor<32x16xf32>
    %40 = stablehlo.broadcast_in_dim %arg7, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %41 = stablehlo.multiply %arg9, %40 : tensor<32xf32>
    %42 = sdy.sharding_constraint %41 <@mesh, [{"model"}]> : tensor<32xf32>
    %43 = stablehlo.reduce(%31 init: %cst_7) applies stablehlo.add across dimensions = [0] : (tensor<8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %44 = stablehlo.add %42, %43 : tensor<32xf32>
    %45 = sdy.sharding_constraint %44 <@mesh, [{"model"}]> : tensor<32xf32>
    %46 = stablehlo.broadcast_in_dim %arg6, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %47 = stablehlo.multiply %45, %46 : tensor<32xf32>
    %48 = stablehlo.add %arg3, %47 : tensor<32xf32>
    %49 = sdy.sharding_constraint %48 <@mesh, [{"model"}]> : tensor<32xf32>
    %50 = stablehlo.broadcast_in_dim %arg7, dims = [] : (tensor<f32>) -> tensor<16x32xf32>
    %51 = stablehlo.multiply %arg10, %50 : tensor<16x32xf32>
    %52 = sdy.sharding_constraint %51 <@mesh, [{}, {"model"}]> : tensor<16x32xf32>
    %53 = stablehlo.transpose %8, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,8]{0,1}"} : (tensor<8x32xf32>) -> tensor<32x8xf32>
    %54 = stablehlo.dot_general %53, %22, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x8xf32>, tensor<8x16xf32>) -> tensor<32x16xf32>
    %55 = stablehlo.transpose %54, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[16,32]{0,1}"} : (tensor<32x16xf32>) -> tensor<16x32xf32>
    %56 = stablehlo.add %52, %55 : tensor<16x32xf32>
    %57 = sdy.sharding_constraint %56 <@mesh, [{}, {"model"}]> : tensor<16x32xf32>
    %58 = stablehlo.broadcast_in_dim %arg6, dims = [] : (tensor<f32>) -> tensor<16x32xf32>
    %59 = stablehlo.multiply %57, %58 : tensor<16x32xf32>
    %60 = stablehlo.add %arg2, %59 : tensor<16x32xf32>
    %61 = sdy.sharding_constraint %60 <@mesh, [{}, {"model"}]> : tensor<16x32xf32>
    %62 = stablehlo.broadcast_in_dim %arg7, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %63 = stablehlo.multiply %arg11, %62 : tensor<16xf32>
    %64 = sdy.sharding_constraint %63 <@mesh, [{}]> : tensor<16xf32>
    %65 = stablehlo.reduce(%22 init: %cst_7) applies stablehlo.add across dimensions = [0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<16xf32>
    %66 = stablehlo.add %64, %65 : tensor<16xf32>
    %67 = sdy.sharding_constraint %66 <@mesh, [{}]> : tensor<16xf32>
    %68 = stablehlo.broadcast_in_dim %arg6, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %69 = stablehlo.multiply %67, %68 : tensor<16xf32>
    %70 = stablehlo.add %arg1, %69 : tensor<16xf32>
    %71 = sdy.sharding_constraint %70 <@mesh, [{}]> : tensor<16xf32>
    return %16, %39, %49, %61, %71 : tensor<f32>, tensor<32x16xf32>, tensor<32xf32>, tensor<16x32xf32>, tensor<16xf32>
  }
}
