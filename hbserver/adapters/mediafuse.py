"""MediaFuse: served by PBS-Go's appnexus adapter (its builder is registered under this code too)."""

from hbserver.adapters.appnexus import build  # noqa: F401
