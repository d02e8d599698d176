"""Errors and warnings as they appear in a response's ``ext.errors`` / ``ext.warnings``.

Error codes are the specification's (§7.1: 1 timeout, 2 bad input, 3 bad server response,
999 unknown; :class:`hbserver.adapters.base.ErrorCode`); warning codes are PBS-Go's.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any


class WarningCode(IntEnum):
    UNKNOWN = 10999
    UNKNOWN_BIDDER = 999  # a bidder code the server does not know (DECISIONS: warned, not refused)
    INVALID_PRIVACY_CONSENT = 10001
    ACCOUNT_DEBUG_DISABLED = 10002
    BIDDER_DEBUG_DISABLED = 10003
    ALTERNATE_BIDDER_CODE = 10005
    MULTIBID = 10006
    AD_SERVER_TARGETING = 10007
    BID_ADJUSTMENT_INVALID = 10008
    FLOOR_BID_REJECTED = 10009
    INVALID_BID_RESPONSE_DSA = 10010  # PBS-Go's InvalidBidResponseDSAWarningCode
    BIDDER_BLOCKED_BY_PRIVACY = 10017


@dataclass(frozen=True, slots=True)
class Message:
    code: int
    message: str

    def as_json(self) -> dict[str, Any]:
        return {"code": int(self.code), "message": self.message}


def messages_json(by_key: dict[str, list[Message]]) -> dict[str, list[dict[str, Any]]]:
    return {key: [m.as_json() for m in items] for key, items in by_key.items() if items}
