"""What each CLI command does, without click: `batch` (convert/v2/to-gspmd over many inputs),
`opt`, `diff`, `inspect/`, `check/`. May use every floor below: errors, options, sharding, ir, xla,
formats, passes, converter (never plugin/ or cli/)."""
