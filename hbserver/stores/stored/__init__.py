"""Stored requests, imps, responses and accounts: filesystem, PostgreSQL and HTTP backends behind an LRU."""

from hbserver.stores.stored.base import Kind
from hbserver.stores.stored.service import StoredData, StoredDataError, build_stored_data

__all__ = ["Kind", "StoredData", "StoredDataError", "build_stored_data"]
