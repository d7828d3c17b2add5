"""Sweeps: many variants of one scenario, solved in parallel on Dask (`trnplan sweep`).

`grid` turns `--vary` and `--sample` into runs (override sets), `rows` reads and writes the JSON lines a
sweep keeps, `runner` solves runs on a Dask cluster (the only Dask user; imported only by `sweep`), and
`summary` sums the rows up. Nothing here prints.
"""
