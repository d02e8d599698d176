"""Prebid Server account keys hbserver does not apply: the values it accepts, and why the others are refused.

Every key of PBS-Go's and PBS-Java's account trees (:data:`~hbserver.stores.account_keys.PBS_KEYS`) is
either applied (a field of :class:`~hbserver.config.AccountSettings`, or a PBS-Java spelling
:mod:`hbserver.stores.account_aliases` rewrites to one) or named here. A key named here is accepted
with a value that changes nothing in Prebid Server either (its default, or any value where Prebid
Server itself does nothing with the key); any other value refuses the account, naming the key, since
hbserver would silently behave differently from the server the file was written for.

A Prebid Server key that is neither applied nor named here is refused unless its value is empty
(``null``, ``false``, ``0``, ``""``, ``[]``, ``{}``); tests/stores/test_account_refusals.py checks that
no key is left to that rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson


def _empty(value: Any) -> bool:
    return value is None or value is False or value == 0 or value in ("", [], {})


def _anything(_value: Any) -> bool:
    return True


def _no_verbosity(value: Any) -> bool:
    return _empty(value) or value == "none"


@dataclass(frozen=True, slots=True)
class Rule:
    pattern: str  # the key path in the account as the store reads it (PBS-Java's kebab-case as snake_case)
    accepts: Callable[[Any], bool]
    default: Any  # Prebid Server's default, for the README
    server: str  # which Prebid Server defines the key
    why: str  # what hbserver does with it (accepted values) and why other values are refused

    def matches(self, path: str) -> bool:
        return _compiled(self.pattern).fullmatch(path.replace("-", "_")) is not None


def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(re.escape(pattern).replace(r"\*", r"[^.]+"))


RULES: tuple[Rule, ...] = (
    Rule(
        "price_floors.fetch.accountID",
        _anything,
        "",
        "PBS-Go",
        "accepted, no effect: PBS-Go overwrites it with the account's id before a fetch",
    ),
    Rule(
        "privacy.gdpr.special_features.sf2.*",
        _anything,
        None,
        "PBS-Java",
        "accepted, no effect: PBS-Java reads it but enforces special feature 1 only",
    ),
    Rule(
        "privacy.gdpr.purposes.p4.eid.require_consent",
        _empty,
        False,
        "PBS-Java",
        "dropping user ids without purpose 4 consent: not in hbserver, so only `false` is accepted",
    ),
    Rule(
        "privacy.gdpr.purposes.p4.eid.exceptions",
        _anything,
        None,
        "PBS-Java",
        "accepted, no effect: read only with `require_consent`, which hbserver refuses",
    ),
    Rule(
        "privacy.gdpr.purposes.*.eid.*",
        _anything,
        None,
        "PBS-Java",
        "accepted, no effect: PBS-Java reads the `eid` block of purpose 4 only",
    ),
    Rule(
        "auction.ranking.enabled",
        _empty,
        False,
        "PBS-Java",
        "`ext.prebid.rank` on bids: not in hbserver, so only `false` is accepted",
    ),
    Rule(
        "analytics.allow_client_details",
        _empty,
        False,
        "PBS-Java",
        "modules' analytics tags in the response (`ext.prebid.analytics`): not in hbserver, so only `false` "
        "is accepted",
    ),
    Rule(
        "analytics.modules",
        _empty,
        None,
        "PBS-Java",
        "per-account settings of PBS-Java's analytics modules: hbserver has none of them, so only `{}` is accepted",
    ),
    Rule(
        "metrics.verbosity_level",
        _no_verbosity,
        "none",
        "PBS-Java",
        "per-account metrics: hbserver keeps none, so only `none` is accepted",
    ),
)


def rule_for(path: str) -> Rule | None:
    """The first rule naming ``path`` (the specific ones come first)."""
    for rule in RULES:
        if rule.matches(path):
            return rule
    return None


def refusal(path: str, value: Any) -> str:
    """Why ``value`` at the Prebid Server key ``path`` refuses the account (the key not named), or ''
    when it is accepted."""
    rule = rule_for(path)
    if rule is not None:
        return "" if rule.accepts(value) else f"{rule.why}; got {_shown(value)}"
    if _empty(value):
        return ""
    return f"a Prebid Server setting hbserver cannot honour (only an empty value is accepted); got {_shown(value)}"


def _shown(value: Any) -> str:
    text = orjson.dumps(value, default=str).decode()
    return text if len(text) <= 80 else text[:77] + "..."
