"""Speed benchmarks (`make bench` = `python -m benchmarks`); never part of the test suite.

Timings on shared machines are noisy: every benchmark reports a ratio measured in one
process, next to `os.getloadavg()`.
"""
