"""The analytics tags of the raw_bidder_response hook (PBS-Go's ``analytics.go``): one activity,
``enforce_blocking``, with a result per bid, ``success-allow`` or ``success-block``."""

from __future__ import annotations

from typing import Any

ACTIVITY = "enforce_blocking"
CHECKS = ("badv", "bcat", "cattax", "bapp", "battr")  # PBS-Go's order
# the key of a check's blocked values; cattax's shares bcat's and, written after it, replaces it
_VALUE_KEYS = {"badv": "adomain", "bcat": "bcat", "cattax": "bcat", "bapp": "bundle", "battr": "attr"}


def new_tags() -> dict[str, Any]:
    return {"activities": [{"name": ACTIVITY, "status": "success"}]}


def mark_failed(tags: dict[str, Any]) -> None:
    tags["activities"][0]["status"] = "error"


def _add(tags: dict[str, Any], result: dict[str, Any]) -> None:
    tags["activities"][0].setdefault("results", []).append(result)


def add_allowed(tags: dict[str, Any], bidder: str, imp_id: str) -> None:
    _add(tags, {"status": "success-allow", "appliedto": _applied_to(bidder, imp_id)})


def add_blocked(tags: dict[str, Any], bidder: str, imp_id: str, failed: list[str], blocked: dict[str, Any]) -> None:
    """``blocked``: check -> the values that failed it (``None`` for a bid that had none, blocked as
    unknown)."""
    values: dict[str, Any] = {"attributes": failed}
    for check in CHECKS:
        if check in blocked:
            values[_VALUE_KEYS[check]] = blocked[check]
    _add(tags, {"status": "success-block", "values": values, "appliedto": _applied_to(bidder, imp_id)})


def _applied_to(bidder: str, imp_id: str) -> dict[str, Any]:
    applied: dict[str, Any] = {"impids": [imp_id]}
    if bidder:
        applied = {"bidder": bidder, "impids": [imp_id]}
    return applied
