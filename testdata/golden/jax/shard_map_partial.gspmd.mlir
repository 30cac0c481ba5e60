module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["_axis_0"=2, "_axis_1"=4]> {stablehlo.mesh = {axes = [{name = "_axis_0", size = 2 : i64}, {name = "_axis_1", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0"}, {"_axis_1"}]>}) -> (tensor<4x16xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}, {"_axis_1"}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"_axis_0", ?}, {?}]>] out_shardings=[<@mesh, [{?}, {?}], replicated={"_axis_0"}>] manual_axes={"_axis_0"} (%arg1: tensor<4x16xf32>) {
      %3 = func.call @shmap_body(%arg1) : (tensor<4x16xf32>) -> tensor<4x16xf32>
      sdy.return %3 : tensor<4x16xf32>
    } : (tensor<8x16xf32>) -> tensor<4x16xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x16xf32>
    %2 = stablehlo.add %0, %1 : tensor<4x16xf32>
    return %2 : tensor<4x16xf32>
  }
  func.func private @shmap_body(%arg0: tensor<4x16xf32>) -> (tensor<4x16xf32> {jax.result_info = "[None, None]"}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x16xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{?}, {?}]> : tensor<4x16xf32>
    %2 = stablehlo.multiply %arg0, %1 : tensor<4x16xf32>
    %3 = sdy.sharding_constraint %2 <@mesh, [{?}, {?}]> : tensor<4x16xf32>
    %4 = sdy.sharding_constraint %3 <@mesh, [{}, {"_axis_1"}]> : tensor<4x16xf32>
    %5 = "stablehlo.all_reduce"(%4) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 4], [1, 5], [2, 6], [3, 7]]> : tensor<4x2xi64>, use_global_device_ids}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %6 = stablehlo.add %arg1, %arg2 : tensor<f32>
      %7 = sdy.sharding_constraint %6 <@mesh, []> : tensor<f32>
      stablehlo.return %7 : tensor<f32>
    }) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    return %5 : tensor<4x16xf32>
  }
}
