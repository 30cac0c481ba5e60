// RUN: not shardy-convert opt %s -p 'import-shardings{strict=true}' 2>&1 | filecheck %s --check-prefix=STRICT
// RUN: not shardy-convert opt %s -p 'import-shardings{strict=1}' 2>&1 | filecheck %s --check-prefix=STRICT
// RUN: shardy-convert opt %s -p 'import-shardings{strict=false}' 2>&1 | filecheck %s --check-prefix=WARN
// RUN: shardy-convert opt %s -p 'import-shardings{strict=0}' 2>&1 | filecheck %s --check-prefix=WARN
// RUN: not shardy-convert opt %s -p 'import-shardings{strict=yes}' 2>&1 | filecheck %s --check-prefix=BAD

// A dim its shard count does not divide: GSPMD pads it, Shardy keeps fewer axes (another
// program). strict=true (what the plugin path runs) refuses it; by default it is a warning.
// STRICT: import_shardings_strict.mlir:[[# @LINE + 8]]:19: arg 0 of @main: error: dim 0 of size 1 is split 8 ways
// STRICT-NOT: sdy.mesh
// WARN: import_shardings_strict.mlir:[[# @LINE + 6]]:19: arg 0 of @main: warning: dim 0 of size 1 is split 8 ways
// WARN: sdy.mesh @mesh = <["_axis_0"=8]>
// WARN: func.func @main
// WARN-SAME{LITERAL}: #sdy.sharding<@mesh, [{"_axis_0"}, {}]>
// BAD: Error: pass import-shardings: option strict must be true or false (or 1, 0), not "yes"
module @uneven {
  func.func @main(%arg0: tensor<1x128xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) -> tensor<1x128xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<1x128xf32>
    return %0 : tensor<1x128xf32>
  }
}
