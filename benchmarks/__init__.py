"""The benchmark, paper-table, reference and probe scripts (not installed with the wheel); see
benchmarks/README.md. A package only so that every script can import ``benchmarks.common``."""
