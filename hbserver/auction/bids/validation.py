"""Bid validation: the creative checks of the host's and the account's ``validations``.

Prebid Server's two (each ``skip``, ``warn`` or ``enforce``):

- ``banner_creative_max_size``: a banner bid wider than ``max_creative_width`` or higher than
  ``max_creative_height`` (PBS-Go ``exchange/exchange.go`` ``validateBannerCreativeSize``: ``W > max ||
  H > max``). Where a max is 0 (the default) the imp's largest banner size stands for it, as PBS-Java's
  ``ResponseBidValidator.validateBannerFields`` (``maxSizeForBanner``) compares every bid (PBS-Go
  would then reject every sized banner); a dimension with no limit at all, or a bid without ``w``/``h``
  (PBS-Go's 0), passes. Seat-non-bid 351.
- ``secure_markup``: a banner or video bid whose ``adm`` holds ``http:`` or ``http%3A`` and neither
  ``https:`` nor ``https%3A`` (PBS-Go ``validateBidAdM``, case-sensitive, whatever ``imp.secure`` says;
  PBS-Java checks only ``imp.secure`` 1 imps and also calls markup with no ``https:`` insecure).
  Seat-non-bid 352.

A finding is PBS-Go's error under the bid's seat (``ext.errors.<seat>``, code 3 BadServerResponse) with
PBS-Go's texts (``setErrorMessageCreativeSize`` / ``setErrorMessageSecureMarkup``, "WxH" as written);
``enforce`` also drops the bid (PBS-Go ``makeBid``: DSA first, then size, then secure markup).

hbserver's own (Prebid Server issue #2685; same modes, default ``skip``), seat-non-bid 350 (PBS-Java's
``RESPONSE_REJECTED_INVALID_CREATIVE``):

- ``adm_or_nurl``: a bid with neither ``adm`` nor ``nurl`` (PBS-Java refuses such a video bid always);
- ``media_type``: a bid of a media type its imp does not offer (a video bid for an imp without video);
- ``vast_protocol``: a video or audio bid whose protocol (``bid.protocol``, else its ``adm``'s VAST
  version, a ``<Wrapper>`` or not) is not in its imp's ``protocols`` (AdCOM's list); an imp without
  ``protocols`` or markup whose version is unknown passes.

The account's keys override the host's one by one (PBS-Go and PBS-Java let an account set only
``banner_creative_max_size``). :class:`RulesCache` keeps the effective rules per account settings
object; ``None`` (every rule ``skip``, the default) means no bid is looked at.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hbserver.adapters.base import ErrorCode
from hbserver.auction.bids.accept import AuctionBid
from hbserver.metrics import Metrics, PendingCounter

SKIP, WARN, ENFORCE = "skip", "warn", "enforce"
SIZE_NOT_ALLOWED = 351  # PBS-Go ResponseRejectedCreativeSizeNotAllowed
NOT_SECURE = 352  # PBS-Go ResponseRejectedCreativeNotSecure
INVALID_CREATIVE = 350  # PBS-Java RESPONSE_REJECTED_INVALID_CREATIVE
CODE = int(ErrorCode.BAD_SERVER_RESPONSE)  # PBS-Go's errortypes.BadServerResponseErrorCode

# PBS-Go's texts (exchange/exchange.go setErrorMessageCreativeSize / setErrorMessageSecureMarkup)
SIZE_TEXTS = {
    ENFORCE: "bidResponse rejected: size WxH",
    WARN: "bidResponse creative size warning: size WxH larger than AdUnit sizes",
}
SECURE_TEXTS = {
    ENFORCE: "bidResponse rejected: insecure creative in secure context",
    WARN: "bidResponse secure markup warning: insecure creative in secure contexts",
}
# hbserver's own, worded alike: the prefix by mode, then what is wrong
OWN_PREFIX = {
    "adm_or_nurl": {ENFORCE: "bidResponse rejected: ", WARN: "bidResponse markup warning: "},
    "media_type": {ENFORCE: "bidResponse rejected: ", WARN: "bidResponse media type warning: "},
    "vast_protocol": {ENFORCE: "bidResponse rejected: ", WARN: "bidResponse VAST protocol warning: "},
}
_INSECURE = ("http:", "http%3A")
_SECURE = ("https:", "https%3A")
# AdCOM "Creative Subtypes - Audio/Video": VAST version -> (inline, wrapper) protocol numbers
VAST_PROTOCOLS = {
    "1.0": (1, 4), "2.0": (2, 5), "3.0": (3, 6), "4.0": (7, 8), "4.1": (11, 12), "4.2": (13, 14), "4.3": (15, 16),
}
_VAST_VERSION = re.compile(r"<VAST\b[^>]*?\bversion\s*=\s*[\"']\s*(\d+(?:\.\d+)?)", re.IGNORECASE)
_WRAPPER = re.compile(r"<Wrapper\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Rules:
    """The effective ``validations`` of an auction (host's, overridden by the account's)."""

    banner_creative_max_size: str = SKIP
    secure_markup: str = SKIP
    max_creative_width: int = 0
    max_creative_height: int = 0
    adm_or_nurl: str = SKIP
    media_type: str = SKIP
    vast_protocol: str = SKIP

    def any_on(self) -> bool:
        return any(
            mode != SKIP
            for mode in (self.banner_creative_max_size, self.secure_markup, self.adm_or_nurl, self.media_type,
                         self.vast_protocol)
        )


_KEYS = ("banner_creative_max_size", "secure_markup", "max_creative_width", "max_creative_height",
         "adm_or_nurl", "media_type", "vast_protocol")


def effective(host: Any, account: Any | None) -> Rules | None:
    """The rules of ``host`` (:class:`hbserver.config.Validations`) with each key ``account``
    (:class:`hbserver.config.AccountValidations`) sets in its place; None when every rule is ``skip``."""
    values = {}
    for key in _KEYS:
        own = getattr(account, key, None) if account is not None else None
        values[key] = own if own is not None else getattr(host, key)
    rules = Rules(**values)
    return rules if rules.any_on() else None


class RulesCache:
    """The effective rules per account settings object (``AccountSettings.validations``; the account
    store keeps one per account), so an auction pays a dictionary lookup."""

    MAX_ENTRIES = 4096

    def __init__(self, host: Any) -> None:
        self.host = host
        self._by_id: dict[int, tuple[Any, Rules | None]] = {}

    def of(self, account: Any) -> Rules | None:
        hit = self._by_id.get(id(account))
        if hit is not None and hit[0] is account:
            return hit[1]
        rules = effective(self.host, account)
        if len(self._by_id) >= self.MAX_ENTRIES:
            self._by_id.clear()
        self._by_id[id(account)] = (account, rules)  # the object is kept: its id cannot be reused
        return rules


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule a bid fails: ``mode`` warn (kept) or enforce (dropped), the error under its seat."""

    bid: AuctionBid
    rule: str  # banner_creative_max_size | secure_markup | adm_or_nurl | media_type | vast_protocol
    mode: str
    message: str
    non_bid_code: int

    def as_json(self) -> dict[str, Any]:
        return {"code": CODE, "message": self.message}


def _int(value: Any) -> int:
    """A size as PBS-Go reads it: an integer (a whole float too), else 0."""
    if type(value) is int:
        return value
    return int(value) if type(value) is float and value.is_integer() else 0


def imp_max_size(imp: Mapping[str, Any] | None) -> tuple[int, int]:
    """The imp's largest banner width and height (``banner.format`` and ``banner.w``/``h``); 0 = none."""
    banner = imp.get("banner") if imp is not None else None
    if type(banner) is not dict:
        return 0, 0
    width, height = _int(banner.get("w")), _int(banner.get("h"))
    formats = banner.get("format")
    for size in formats if type(formats) is list else ():
        if type(size) is dict:
            width, height = max(width, _int(size.get("w"))), max(height, _int(size.get("h")))
    return width, height


def size_too_large(bid: Mapping[str, Any], imp: Mapping[str, Any] | None, rules: Rules) -> bool:
    """PBS-Go's ``validateBannerCreativeSize`` (false = valid); a 0 max is the imp's size (PBS-Java)."""
    max_w, max_h = rules.max_creative_width, rules.max_creative_height
    if not (max_w and max_h):
        imp_w, imp_h = imp_max_size(imp)
        max_w, max_h = max_w or imp_w, max_h or imp_h
    width, height = _int(bid.get("w")), _int(bid.get("h"))
    return bool((max_w and width > max_w) or (max_h and height > max_h))


def markup_insecure(adm: Any) -> bool:
    """PBS-Go's ``validateBidAdM`` (false = valid): an insecure marker and no secure one."""
    if type(adm) is not str or not adm:
        return False
    return any(mark in adm for mark in _INSECURE) and not any(mark in adm for mark in _SECURE)


def lacks_markup(bid: Mapping[str, Any]) -> bool:
    return not (bid.get("adm") or bid.get("nurl"))


def vast_protocol(bid: Mapping[str, Any]) -> tuple[int, str] | None:
    """The bid's protocol and how it is named: ``bid.protocol``, else its VAST markup's version
    (a wrapper or inline); None when neither tells."""
    own = bid.get("protocol")
    if type(own) is int:
        return own, f"protocol {own}"
    adm = bid.get("adm")
    if type(adm) is not str:
        return None
    match = _VAST_VERSION.search(adm, 0, 4096)
    if match is None:
        return None
    version = match[1] if "." in match[1] else f"{match[1]}.0"
    numbers = VAST_PROTOCOLS.get(version)
    if numbers is None:
        return None
    wrapper = _WRAPPER.search(adm) is not None
    return numbers[wrapper], f"VAST {version}{' Wrapper' if wrapper else ''} (protocol {numbers[wrapper]})"


def imp_protocols(imp: Mapping[str, Any] | None, media_type: str) -> list[int] | None:
    """The imp's ``<media type>.protocols`` (or the 2.5 ``protocol``); None when it names none."""
    media = imp.get(media_type) if imp is not None else None
    if type(media) is not dict:
        return None
    protocols = media.get("protocols")
    if type(protocols) is list and protocols:
        return [p for p in protocols if type(p) is int]
    single = media.get("protocol")
    return [single] if type(single) is int else None


def _pbs_findings(auction_bid: AuctionBid, imp: Mapping[str, Any] | None, rules: Rules) -> list[Finding]:
    """Prebid Server's two rules, in PBS-Go's order; stops at an enforced one."""
    bid, bid_type, out = auction_bid.bid, auction_bid.bid_type, []
    mode = rules.banner_creative_max_size
    if mode != SKIP and bid_type == "banner" and size_too_large(bid, imp, rules):
        out.append(Finding(auction_bid, "banner_creative_max_size", mode, SIZE_TEXTS[mode], SIZE_NOT_ALLOWED))
        if mode == ENFORCE:
            return out
    mode = rules.secure_markup
    if mode != SKIP and bid_type in ("banner", "video") and markup_insecure(bid.get("adm")):
        out.append(Finding(auction_bid, "secure_markup", mode, SECURE_TEXTS[mode], NOT_SECURE))
    return out


def _own_problems(auction_bid: AuctionBid, imp: Mapping[str, Any] | None, rules: Rules) -> Iterable[tuple[str, str]]:
    """hbserver's rules: (rule, what is wrong) for each one ``auction_bid`` fails, lazily."""
    bid, bid_type, bid_id = auction_bid.bid, auction_bid.bid_type, auction_bid.bid.get("id")
    if rules.adm_or_nurl != SKIP and lacks_markup(bid):
        yield "adm_or_nurl", f'bid "{bid_id}" has neither adm nor nurl'
    if imp is None:
        return
    if rules.media_type != SKIP and type(imp.get(bid_type)) is not dict:
        yield "media_type", f'{bid_type} bid "{bid_id}" for imp "{auction_bid.imp_id}", which offers no {bid_type}'
    if rules.vast_protocol != SKIP and bid_type in ("video", "audio"):
        allowed = imp_protocols(imp, bid_type)
        found = vast_protocol(bid) if allowed else None
        if allowed and found is not None and found[0] not in allowed:
            yield "vast_protocol", (f'bid "{bid_id}" is {found[1]}, not in imp "{auction_bid.imp_id}" '
                                    f"{bid_type}.protocols {allowed}")


def check_bid(auction_bid: AuctionBid, imp: Mapping[str, Any] | None, rules: Rules) -> list[Finding]:
    """Every rule ``auction_bid`` fails, up to the first enforced one (the bid is then dropped)."""
    findings = _pbs_findings(auction_bid, imp, rules)
    if findings and findings[-1].mode == ENFORCE:
        return findings
    for rule, problem in _own_problems(auction_bid, imp, rules):
        mode = getattr(rules, rule)
        findings.append(Finding(auction_bid, rule, mode, OWN_PREFIX[rule][mode] + problem, INVALID_CREATIVE))
        if mode == ENFORCE:
            break
    return findings


def validate(
    bids: list[AuctionBid], imps: Mapping[str, Mapping[str, Any]], rules: Rules
) -> tuple[list[AuctionBid], list[Finding]]:
    """The bids no enforced rule drops (the same list when none is), and every finding in bid order."""
    findings: list[Finding] = []
    dropped: set[int] = set()
    for bid in bids:
        found = check_bid(bid, imps.get(bid.imp_id), rules)
        if found:
            findings.extend(found)
            if found[-1].mode == ENFORCE:
                dropped.add(id(bid))
    if not dropped:
        return bids, findings
    return [bid for bid in bids if id(bid) not in dropped], findings


def imps_by_id(request: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {imp["id"]: imp for imp in request.get("imp") or () if type(imp) is dict and "id" in imp}


# PBS-Go's families (metrics/prometheus/prometheus.go) by rule: Metrics.bid_validation's key part
_PBS_RULES = {"banner_creative_max_size": "size", "secure_markup": "secure"}
_OUTCOME = {ENFORCE: "err", WARN: "warn"}
SUCCESS = "success"  # PBS-Go writes its successLabel constant as these families' label value


class ValidationCounts:
    """A finding counted: PBS-Go's ``RecordBidValidationCreativeSize*`` / ``SecureMarkup*`` (adapter, and
    account unless unknown), err or warn by mode (PBS-Go counts err for both, PBS-Java splits them as
    here); hbserver's own rules in ``adapter_response_validation_bids`` by adapter, rule and outcome."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self._handles: dict[tuple[str, ...], PendingCounter] = {}

    def _counter(self, key: tuple[str, ...], family: Any, *labels: str) -> PendingCounter:
        handle = self._handles.get(key)
        if handle is None:
            handle = self._handles[key] = self.metrics.counter(family, *labels)
        return handle

    def record(self, finding: Finding, account: str) -> None:
        metrics, adapter, outcome = self.metrics, finding.bid.adapter.lower(), _OUTCOME[finding.mode]
        rule = _PBS_RULES.get(finding.rule)
        if rule is None:
            key = ("own", adapter, finding.rule, outcome)
            self._counter(key, metrics.adapter_validation_own, adapter, finding.rule, outcome).inc()
            return
        family = metrics.bid_validation["adapter", rule, outcome]
        self._counter(("adapter", adapter, rule, outcome), family, adapter, SUCCESS).inc()
        label = metrics.account_label(account)
        if label is not None:
            family = metrics.bid_validation["account", rule, outcome]
            self._counter(("account", label, rule, outcome), family, label, SUCCESS).inc()
