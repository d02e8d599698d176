"""The bid side, raw bidder response to all processed bid responses: each answer's bids checked into
the auction (accept), converted (currency, currency_fetch) and adjusted (bidadjust), alternate seat
codes (altcodes), multibid limits (multibid), DSA transparency (dsa), and the bids that could not
enter (nonbid)."""
