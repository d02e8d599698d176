"""Benchmark harness: hbserver against a bare aiohttp + uvloop hello-world, driven by wrk.

Run with ``make bench`` or ``python -m bench.run``; see :mod:`bench.run` for the knobs and
:mod:`bench.scenarios` for adding a scenario.
"""
