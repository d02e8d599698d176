"""Cache stores (memory, Redis, remote Prebid Cache) behind one interface, and the cache client."""
