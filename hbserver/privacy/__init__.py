"""Privacy primitives for user syncing: pure functions over plain data, fast enough per request.

- ``tcf2``: IAB TCF v2 consent string (TC string) decoder.
- ``gvl``: optional IAB Global Vendor List loader.
- ``enforcement``: Prebid Server's purpose-1 decision for host cookies and bidder syncs.
- ``gpp``: GPP header and section split, ``gpp_sid`` parsing.
- ``ccpa``: US Privacy (``us_privacy``) string.
- ``activity``: account ``privacy.allowactivities`` rules.
"""
