"""The command line (click only): `main` (the group and the conversion commands), `diff`,
`inspect`, `wrapper`; each parses its arguments and calls commands/ or plugin/.
May use every floor (and `__version__` from the package)."""
