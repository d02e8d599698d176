"""The auction core: request checks, bidding, currency, price buckets and targeting."""
