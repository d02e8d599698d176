"""Conformance runner: our adapters against Prebid Server's (Go) adapter JSON fixtures.

The fixtures are read at test time from ``<repo>/../shared/fixtures/pbs-adapters`` (or the
directory named by ``HBSERVER_PBS_FIXTURES``); nothing of them is copied into this repository.
"""
