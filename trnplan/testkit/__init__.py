"""What the tests and the benchmarks share: small catalogs built in code (`builders`), the brute-force
oracle (`oracle`) and the synthetic portfolio generator (`portfolio`). Importable from an installed
trnplan, so neither needs to edit sys.path."""
