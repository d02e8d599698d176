"""What every stage of the auction uses: warning and error messages (messages, request_error), JSON
merge patch (mergepatch) and ISO 4217 currency codes (iso4217)."""
