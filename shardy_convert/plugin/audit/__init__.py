"""The sharding audit of a live torch_xla program: `report` (`audit()`: every parameter and
state by name with its marked and compiled sharding), `rules` (what each rule finds in a
row) and `policy` (which rules run, at what severity, from a TOML file or defaults)."""
