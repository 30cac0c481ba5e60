"""The MLIR boundary: the only folder that imports `jaxlib.mlir` (contexts, parsing and printing,
the pass manager and its analyses, the walker, finding and cloning ops, `#sdy` attribute
readers and builders, manual regions, jaxlib compat, legacy i1).
May use: errors, options, sharding."""
