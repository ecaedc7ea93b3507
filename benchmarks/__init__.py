"""Benchmarks run by hand (not timed tests): synthetic data and speed/memory comparisons."""
