"""Benchmarks, run by hand or by `make bench`; each writes its section of BENCHMARKS.md."""
