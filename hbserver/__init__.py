"""hbserver: a server-side header bidding server compatible with Prebid Server."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("hbserver")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0"

SERVER_HEADER_VALUE = f"hbserver/{__version__}"
