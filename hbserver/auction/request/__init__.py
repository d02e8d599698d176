"""The request side, stages entrypoint to processed auction request: the AMP request built from its
stored request and query (amp), stored requests and imps merged (stored), the request's types and
rules checked (ortb_types, validate*, native, interstitial), PBS-Go's defaults filled (ortb, tids), the
auction's set-up read from it (setup), and an AMP request kept validated for its next visits (prepared)."""
