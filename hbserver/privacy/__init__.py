"""Privacy primitives for user syncing and the auction: pure functions over plain data, fast enough per request.

- ``tcf2``: IAB TCF v2 consent string (TC string) decoder.
- ``gvl``: IAB Global Vendor List parser and file loader.
- ``vendorlists``: the lists by version each consent string names, fetched in the background.
- ``tcf_policy``: an account's TCF v2 settings (host ``gdpr.tcf2`` + account ``gdpr``), the EEA default.
- ``permissions``: TCF v2 decisions per request: host cookie, bidder sync, auction activities.
- ``enforcement``: the purpose-1 sync checks as plain functions (wrappers over ``permissions``).
- ``gpp``: GPP header and section split, ``gpp_sid`` parsing.
- ``gpp_us``: the US sections of a GPP string (7 usnat, 8-12 the states).
- ``regs``: an auction request's privacy signals (GPP first, as PBS-Go) and their conflict warnings.
- ``usnat``: PBS-Java's ``iab.usgeneral`` privacy module (US sections -> activity answers).
- ``ccpa``: US Privacy (``us_privacy``) string.
- ``activity``: account ``privacy.allowactivities`` rules (with ``gppSid``/``geo``/``gpc``
  conditions and ``privacyreg`` rules over ``privacy.modules``).
"""
