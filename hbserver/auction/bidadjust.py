"""Bid adjustments (PBS-Go ``bidadjustment/``): placeholder until the module lands."""

from __future__ import annotations

from typing import Any


def validate_bid_adjustments(raw: Any) -> str | None:
    """What is wrong with an ``ext.prebid.bidadjustments`` object (None when it is valid)."""
    return None if isinstance(raw, dict) else "must be an object"
