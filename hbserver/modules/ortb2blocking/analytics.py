"""The analytics tags of the raw_bidder_response hook (PBS-Go's ``analytics.go``): one activity,
``enforce_blocking``, with a result per bid, ``success-allow`` or ``success-block``."""

from __future__ import annotations

from typing import Any

ACTIVITY = "enforce_blocking"
ALLOWED = "success-allow"
CHECKS = ("badv", "bcat", "cattax", "bapp", "battr")  # PBS-Go's order
# the key of a check's blocked values; cattax's shares bcat's and, written after it, replaces it
_VALUE_KEYS = {"badv": "adomain", "bcat": "bcat", "cattax": "bcat", "bapp": "bundle", "battr": "attr"}


def allowed(bidder: str, imp_id: str) -> dict[str, Any]:
    """The result of a bid that passed."""
    return {"status": ALLOWED, "appliedto": applied_to(bidder, imp_id)}


def blocked(bidder: str, imp_id: str, failed: list[str], values_by_check: dict[str, Any]) -> dict[str, Any]:
    """The result of a bid that failed the checks ``failed``; ``values_by_check``: check -> the values
    that failed it (``None`` for a bid that had none, blocked as unknown)."""
    values: dict[str, Any] = {"attributes": failed}
    for check in CHECKS:
        if check in values_by_check:
            values[_VALUE_KEYS[check]] = values_by_check[check]
    return {"status": "success-block", "values": values, "appliedto": applied_to(bidder, imp_id)}


def applied_to(bidder: str, imp_id: str) -> dict[str, Any]:
    if bidder:
        return {"bidder": bidder, "impids": [imp_id]}
    return {"impids": [imp_id]}
