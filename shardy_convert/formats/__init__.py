"""The forms a module arrives and leaves in: MLIR text and bytecode (`module`), torch_xla dumps
(`dump`), portable artifacts (`portable`, `portable_export`) and whole-write output files.
May use: errors, options, sharding, ir."""
