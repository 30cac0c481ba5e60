"""The forms a module arrives and leaves in: MLIR text and bytecode (`module`), torch_xla dumps
(`dump`), XLA's HLO (`hlo`), portable artifacts (`portable`, `portable_export`), mesh files
(`meshes`), GSPMD's boundary choices and their cache (`boundary_cache`) and whole-write output
files. May use: errors, options, sharding, ir, xla."""
