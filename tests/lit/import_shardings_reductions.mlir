// RUN: %if sdy-reduction-kinds %{ shardy-convert opt %s -p import-shardings --split-input-file | filecheck %s %}
// RUN: %if !sdy-reduction-kinds %{ not shardy-convert opt %s -p import-shardings --split-input-file 2>&1 | filecheck %s --check-prefix=OLD %}

// How unreduced axes are reduced: V3 writes `unreduced=max{...}`, V2 an OpMetadata entry
// `{op_type="sdy::reduction_op" op_name="MAX"}` (what XLA's V3-to-V2 writes). Shardy says
// `unreduced=max{...}` where the jaxlib's sdy dialect has reduction kinds; where it has none,
// each such sharding is an error that names the jaxlib.
// CHECK-LABEL: module @v3_max
// CHECK{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}], unreduced=max{"b"}>
// OLD: import_shardings_reductions.mlir:[[# @LINE + 2]]:19: arg 0 of @main: error: sharding "{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced=max{'b'}}" reduces its unreduced axes with max: Shardy writes that `unreduced=max{...}`, which the sdy dialect of jaxlib {{[0-9.]+}} cannot
module @v3_max {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced=max{'b'}}"}) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}

// -----

// CHECK-LABEL: module @v2_min
// CHECK{LITERAL}: sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0"}, {}], unreduced=min{"_axis_1"}>
// OLD: import_shardings_reductions.mlir:[[# @LINE + 2]]:19: arg 0 of @main: error: sharding "{devices=[2,1,4]<=[8] last_tile_dims={unreduced} metadata={op_type="sdy::reduction_op" op_name="MIN"}}" reduces its unreduced axes with min
module @v2_min {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dims={unreduced} metadata={op_type=\"sdy::reduction_op\" op_name=\"MIN\"}}"}) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}

// -----

// Every axis unreduced (the keyword form), on an op; a sum is Shardy's default, not written.
// CHECK-LABEL: module @keyword_and_sum
// CHECK{LITERAL}: sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced=max{"a", "b"}>]>
// CHECK{LITERAL}: sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}], unreduced={"b"}>]>
// OLD: import_shardings_reductions.mlir:[[# @LINE + 3]]:10: stablehlo.add: error: sharding "{mesh['a'=2,'b'=4], unreduced=max}" reduces its unreduced axes with max
module @keyword_and_sum {
  func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.add %arg0, %arg0 {mhlo.sharding = "{mesh['a'=2,'b'=4], unreduced=max}"} : tensor<8x8xf32>
    %1 = stablehlo.add %0, %0 {mhlo.sharding = "{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced=sum{'b'}}"} : tensor<8x8xf32>
    return %1 : tensor<8x8xf32>
  }
}
