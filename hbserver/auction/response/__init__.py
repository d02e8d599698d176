"""The response side, auction response: winners and targeting keys (targeting, pricegranularity,
adservertargeting), what to cache (cache_options) and the event URLs of the bids (eventurls)."""
