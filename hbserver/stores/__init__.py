"""Stored data: accounts, stored requests/imps/responses, and the cache stores."""
