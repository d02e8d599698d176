"""Which keys of an account hbserver applies, which are Prebid Server's, and what to say about the rest.

An account file is built into :class:`~hbserver.config.AccountSettings` leniently (keys hbserver
does not know are dropped), so nothing would tell an operator coming from Prebid Server which of
their settings have no effect. :func:`report_account_keys` walks an account's JSON beside two
trees and returns one warning per key hbserver does not apply:

- the *applied* tree, derived from the ``AccountSettings`` dataclasses (a key added there is
  applied from then on, nothing to update here);
- the *Prebid Server* tree: PBS-Go's ``config.Account`` (json and mapstructure names) and
  PBS-Java's ``settings.model.Account*`` (snake_case names and their kebab-case aliases), merged.

A key in neither is reported as unknown, with the closest known key when one is close (a typo).
The walk runs once per account load (the store caches accounts), never per request.

The same classification words the ``account_defaults`` problems of the configuration
(:func:`account_defaults_problem`), and :func:`settings_table` makes the README's list of applied
keys (``python -m hbserver.stores.account_keys README.md`` rewrites it between its markers).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import sys
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Union

import orjson

from hbserver.config import AccountSettings
from hbserver.stores.account_refusals import refusal

# A tree is {key: subtree}; OPEN below a key means "anything goes under it" (a scalar, a list, a
# free-form map); WILDCARD as a key stands for any key of a map whose values have a shape.
Tree = dict[str, Any]
OPEN: None = None
WILDCARD = "*"
_ABSENT = object()


def _keys(*names: str) -> Tree:
    return dict.fromkeys(names, OPEN)


def _numbered(stem: str, count: int, subtree: Tree) -> Tree:
    return {f"{stem}{n}": subtree for n in range(1, count + 1)}


# --- Prebid Server's account keys ---------------------------------------------------------------

# PBS-Go config/account.go (Account and what it holds). Where the mapstructure name (account_defaults
# in YAML) differs from the JSON one (account files), both are listed.
_GO_CHANNELS = _keys("amp", "app", "video", "web", "dooh")
_GO_FLOORS_FETCH = _keys("enabled", "url", "timeout_ms", "max_file_size_kb", "max_rules", "max_age_sec",
                         "period_sec", "max_schema_dims", "accountID")
PBS_GO: Tree = {
    **_keys("id", "disabled", "debug_allow", "default_integration", "truncate_target_attr", "default_bid_limit",
            "bid_rounding", "preferredmediatype", "targeting_prefix"),
    "cache_ttl": _keys("banner", "video", "native", "audio"),
    "ccpa": {"enabled": OPEN, "channel_enabled": _GO_CHANNELS},
    "gdpr": {
        "enabled": OPEN,
        "channel_enabled": _GO_CHANNELS,
        "basic_enforcement_vendors": OPEN,
        **_numbered("purpose", 10, _keys("enforce_algo", "enforce_purpose", "enforce_vendors", "vendor_exceptions")),
        # no json tags on AccountGDPRPurposeOneTreatment: JSON matches the field name, AccessAllowed
        "purpose_one_treatment": _keys("enabled", "access_allowed", "accessallowed"),
        "special_feature1": _keys("enforce", "vendor_exceptions"),
        "eea_countries": OPEN,
    },
    "cookie_sync": _keys("default_limit", "max_limit", "default_coop_sync", "priority_groups", "priority_groups_only",
                         "disabled_iframe_bidders"),
    "events": _keys("enabled", "default_url", "vast_events"),
    "alternatebiddercodes": {"enabled": OPEN, "bidders": {WILDCARD: _keys("enabled", "allowedbiddercodes")}},
    "hooks": _keys("modules", "execution_plan"),
    "price_floors": {
        **_keys("enabled", "enforce_floors_rate", "adjust_for_bid_adjustment", "enforce_deal_floors",
                "use_dynamic_data", "max_rules", "max_schema_dims"),
        "fetch": _GO_FLOORS_FETCH,
    },
    "validations": _keys("banner_creative_max_size", "secure_markup", "max_creative_width", "max_creative_height"),
    "bidadjustments": _keys("mediatype"),
    "privacy": {
        "allowactivities": OPEN,
        "dsa": _keys("default", "gdpr_only"),
        "ipv6": _keys("anon_keep_bits"),
        "ipv4": _keys("anon_keep_bits"),
        # no json tags on PrivacySandbox/CookieDeprecation either: TTLSec is "ttlsec" in JSON
        "privacysandbox": {"topicsdomain": OPEN, "cookiedeprecation": _keys("enabled", "ttl_sec", "ttlsec")},
    },
}

# PBS-Java settings/model/Account*.java, written with Jackson's snake_case names; every name with
# an underscore also has its kebab-case @JsonAlias there (added by _with_kebab_aliases).
_JAVA_CHANNELS = _keys("pbjs", "web", "amp", "app", "video", "dooh")
_JAVA_FLOORS = {
    **_keys("enabled", "enforce_floors_rate", "adjust_for_bid_adjustment", "enforce_deal_floors", "use_dynamic_data",
            "max_rules", "max_schema_dims"),
    "fetch": _keys("enabled", "url", "timeout_ms", "max_file_size_kb", "max_rules", "max_schema_dims", "max_age_sec",
                   "period_sec"),
}
_JAVA_PURPOSE = {
    **_keys("enforce_purpose", "enforce_vendors", "vendor_exceptions"),
    "eid": _keys("activity_transition", "require_consent", "exceptions"),
}
PBS_JAVA: Tree = {
    **_keys("id", "status"),
    "auction": {
        **_keys("price_granularity", "banner_cache_ttl", "video_cache_ttl", "truncate_target_attr",
                "default_integration", "debug_allow", "bidadjustments", "bid_rounding", "preferredmediatype",
                "impression_limit", "secondary_bidders"),
        "bid_validations": _keys("banner_creative_max_size"),
        "events": _keys("enabled"),
        "price_floors": _JAVA_FLOORS,
        "targeting": _keys("includewinners", "includebidderkeys", "includeformat", "preferdeals",
                           "alwaysincludedeals", "prefix"),
        "privacysandbox": {"cookiedeprecation": _keys("enabled", "ttlsec")},
        "cache": _keys("enabled"),
        "ranking": _keys("enabled"),
        "profiles": _keys("limit", "fail_on_unknown"),
    },
    "privacy": {
        "gdpr": {
            **_keys("enabled", "eea_countries", "purpose_one_treatment_interpretation", "basic_enforcement_vendors"),
            "channel_enabled": _JAVA_CHANNELS,
            "purposes": {f"p{n}": _JAVA_PURPOSE for n in range(1, 11)},
            "special_features": {f"sf{n}": _keys("enforce", "vendor_exceptions") for n in (1, 2)},
        },
        "ccpa": {"enabled": OPEN, "channel_enabled": _JAVA_CHANNELS},
        "dsa": _keys("default", "gdpr_only"),
        **_keys("allowactivities", "modules"),
    },
    "analytics": _keys("allow_client_details", "auction_events", "modules"),
    "metrics": _keys("verbosity_level"),
    "cookie_sync": {**_keys("default_limit", "max_limit", "pri"), "coop_sync": _keys("default")},
    "hooks": {**_keys("execution_plan", "modules"), "admin": _keys("module_execution")},
    "settings": _keys("geo_lookup"),
    "alternate_bidder_codes": {"enabled": OPEN, "bidders": {WILDCARD: _keys("enabled", "allowed_bidder_codes")}},
    "vtrack": _keys("ttl"),
}


def _with_kebab_aliases(tree: Tree) -> Tree:
    out: Tree = {}
    for key, sub in tree.items():
        sub = _with_kebab_aliases(sub) if isinstance(sub, dict) else sub
        out[key] = sub
        if "_" in key:
            out[key.replace("_", "-")] = sub
    return out


def _union(a: Any, b: Any) -> Any:
    """Both trees' keys; where one side is open (a scalar in one server, an object in the other), open."""
    if a is OPEN or b is OPEN:
        return OPEN
    out = dict(a)
    for key, sub in b.items():
        out[key] = _union(out[key], sub) if key in out else sub
    return out


PBS_KEYS: Tree = _union(PBS_GO, _with_kebab_aliases(PBS_JAVA))

# Prebid Server keys whose setting hbserver reads under another name: (pattern, replacement) on the
# path with '-' read as '_'; the result is named only when hbserver applies it.
_SAME_AS = tuple((re.compile(pattern), replacement) for pattern, replacement in (
    (r"^privacy\.(gdpr|ccpa)(\.|$)", r"\1\2"),
    (r"^auction\.privacysandbox\.", "privacy.privacysandbox."),
    (r"^auction\.bid_validations\.", "validations."),
    (r"^auction\.", ""),
    (r"\.purposes\.p(\d+)\.", r".purpose\1."),
    (r"\.special_features\.sf(\d+)\.", r".special_feature\1."),
    (r"\.channel_enabled\.pbjs$", ".channel_enabled.web"),
    (r"\.accessallowed$", ".access_allowed"),
    (r"^cookie_sync\.coop_sync\.default$", "cookie_sync.default_coop_sync"),
    (r"^status$", "disabled"),
))


# --- the applied tree, from the dataclasses ---------------------------------------------------------

def _unwrap_optional(tp: Any) -> Any:
    if typing.get_origin(tp) in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return tp


@cache
def applied_tree(cls: type = AccountSettings) -> Tree:
    """The keys of dataclass ``cls`` (recursively): a nested dataclass is a subtree, anything else open."""
    hints = typing.get_type_hints(cls)
    tree: Tree = {}
    for fld in dataclasses.fields(cls):
        tp = _unwrap_optional(hints[fld.name])
        if dataclasses.is_dataclass(tp):
            tree[fld.name] = applied_tree(tp)
        elif typing.get_origin(tp) is dict and dataclasses.is_dataclass(typing.get_args(tp)[1]):
            tree[fld.name] = {WILDCARD: applied_tree(typing.get_args(tp)[1])}
        else:
            tree[fld.name] = OPEN
    return tree


def _child(tree: Any, key: str) -> Any:
    if tree is _ABSENT:
        return _ABSENT
    if tree is OPEN:
        return OPEN
    return tree.get(key, tree.get(WILDCARD, _ABSENT))


def _paths(tree: Tree, prefix: str = "") -> list[str]:
    out = []
    for key, sub in tree.items():
        if key == WILDCARD:
            continue
        path = f"{prefix}{key}"
        out.append(path)
        if isinstance(sub, dict):
            out.extend(_paths(sub, path + "."))
    return out


@cache
def _elsewhere(applied: type) -> dict[str, str]:
    """Key name -> the one applied path ending in it (for a key written at the wrong level); names
    found at several places (``enabled``) are left out, they would point at a guess."""
    found: dict[str, list[str]] = {}
    for path in _paths(applied_tree(applied)):
        found.setdefault(path.rpartition(".")[2], []).append(path)
    return {name: paths[0] for name, paths in found.items() if len(paths) == 1}


def _is_applied(path: str, applied: type) -> bool:
    node: Any = applied_tree(applied)
    for part in path.split("."):
        node = _child(node, part)
        if node is _ABSENT:
            return False
    return True


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# --- classifying one key ----------------------------------------------------------------------------

def _counterpart(path: str, applied: type) -> str:
    """The applied key a PBS key is another spelling of (snake_case, PBS-Go's place), or ''."""
    snake = path.replace("-", "_")
    if snake != path and _is_applied(snake, applied):
        return snake
    same = snake
    for pattern, replacement in _SAME_AS:
        same = pattern.sub(replacement, same)
    return same if same != path and _is_applied(same, applied) else ""


def _pbs_note(path: str, applied: type) -> str:
    """' (hbserver reads X)' when a PBS key has an hbserver counterpart under another name, else ''."""
    same = _counterpart(path, applied)
    return f" (hbserver reads {same})" if same else ""


def _suggestion(path: str, key: str, applied_node: Any, pbs_node: Any, applied: type) -> str:
    """The known key ``key`` probably means, as a full path, or '': an applied key of that name at
    another level, else the closest key at this level."""
    elsewhere = _elsewhere(applied).get(key)
    if elsewhere and elsewhere != _join(path, key):
        return elsewhere
    candidates = [k for node in (applied_node, pbs_node) if isinstance(node, dict) for k in node if k != WILDCARD]
    close = difflib.get_close_matches(key, candidates, n=1, cutoff=0.7)
    return _join(path, close[0]) if close else ""


def _spelling_text(account_id: str, path: str, same: str) -> str:
    return f'account "{account_id}": {path} is another spelling of {same}, which the account also sets and which wins'


def _unknown_text(account_id: str, path: str, suggestion: str) -> str:
    hint = f" (did you mean {suggestion}?)" if suggestion else ""
    return f'account "{account_id}": {path} is an unknown key; ignored{hint}'


@dataclass(frozen=True, slots=True)
class KeyReport:
    warnings: list[str]  # unknown keys, a second spelling of a key: logged, the account is loaded
    refused: list[str]  # "<key>: why": Prebid Server values hbserver cannot honour, the account is refused


def _walk(account_id: str, raw: Mapping[Any, Any], applied_node: Any, pbs_node: Any, path: str, applied: type,
          out: KeyReport) -> None:
    for raw_key, value in raw.items():
        key = str(raw_key)
        full = _join(path, key)
        mine = _child(applied_node, key)
        theirs = _child(pbs_node, key)
        if mine is not _ABSENT:
            # Applied. A wrong type is build()'s problem (the account is refused); a mapping where the
            # dataclass has one is walked for the keys below it.
            if isinstance(mine, dict) and isinstance(value, Mapping):
                _walk(account_id, value, mine, theirs, full, applied, out)
        elif theirs is not _ABSENT:
            if isinstance(theirs, dict) and isinstance(value, Mapping) and value:
                _walk(account_id, value, _ABSENT, theirs, full, applied, out)
            elif same := _counterpart(full, applied):
                out.warnings.append(_spelling_text(account_id, full, same))
            elif why := refusal(full, value):
                out.refused.append(f"{full}: {why}")
        else:
            suggestion = _suggestion(path, key, applied_node, pbs_node, applied)
            out.warnings.append(_unknown_text(account_id, full, suggestion))


def check_account_keys(account_id: str, raw: Mapping[str, Any], applied: type = AccountSettings) -> KeyReport:
    """The keys of the account JSON ``raw`` (PBS-Java's spellings already rewritten) hbserver does not
    apply: warnings for unknown keys and second spellings, refusals for Prebid Server values it
    cannot honour (:mod:`hbserver.stores.account_refusals`).

    ``id`` is Prebid Server's: fine when it names the account, reported when it names another one.
    """
    out = KeyReport([], [])
    stored_id = raw.get("id")
    if stored_id is not None and not (isinstance(stored_id, (str, int)) and str(stored_id) == account_id):
        shown = orjson.dumps(stored_id, default=str).decode()
        out.warnings.append(f'account "{account_id}": id is {shown}, not the id the account is stored under; ignored')
    rest = {k: v for k, v in raw.items() if k != "id"} if "id" in raw else raw
    _walk(account_id, rest, applied_tree(applied), PBS_KEYS, "", applied, out)
    return out


def report_account_keys(account_id: str, raw: Mapping[str, Any], applied: type = AccountSettings) -> list[str]:
    """The warnings of :func:`check_account_keys` (empty: every key applied or accepted)."""
    return check_account_keys(account_id, raw, applied).warnings


def account_defaults_problem(path: str, key: str, value: Any = _ABSENT, applied: type = AccountSettings) -> str:
    """The problem text for key ``key`` (set to ``value``) under ``account_defaults.<path>`` that
    ``applied`` does not have; '' when it is a Prebid Server key whose value hbserver accepts.

    The configuration is strict: another spelling of an applied key is named with the key to write,
    a Prebid Server value hbserver cannot honour is refused as in an account file, anything else is
    an unknown key (with the closest known key when one is close).
    """
    applied_node: Any = applied_tree(applied)
    pbs_node: Any = PBS_KEYS
    for part in path.split(".") if path else ():
        applied_node, pbs_node = _child(applied_node, part), _child(pbs_node, part)
    full = _join(path, key)
    if _child(pbs_node, key) is not _ABSENT:
        same = _counterpart(full, applied)
        if same:
            return f"a Prebid Server spelling hbserver reads as {same}; write that"
        report = KeyReport([], [])
        _walk("", {key: None if value is _ABSENT else value}, _ABSENT, pbs_node, path, applied, report)
        lines = report.refused + [line.removeprefix('account "": ') for line in report.warnings]
        return "; ".join(line.removeprefix(f"{full}: ").removeprefix(f"{full}.") for line in lines)
    suggestion = _suggestion(path, key, applied_node, pbs_node, applied)
    return f"unknown key (did you mean account_defaults.{suggestion}?)" if suggestion else "unknown key"


# Made once, at import: a load only walks them.
_elsewhere(AccountSettings)


# --- the README's list of applied keys --------------------------------------------------------------

START = "<!-- account-settings:start (python -m hbserver.stores.account_keys README.md) -->"
END = "<!-- account-settings:end -->"

# What each applied key does; a row without one is a test failure (tests/stores/test_account_keys.py).
MEANINGS: dict[str, str] = {
    "disabled": "`true` refuses the account's requests (503)",
    "events.enabled": "win/imp event URLs (`/event`) in bids and cached bids; `false` also makes `/event` "
                      "refuse the account's analytics events (401)",
    "events.default_url": "PBS-Go's VAST tracker URL template: accepted, no effect (PBS-Go does not use it yet)",
    "events.vast_events": "PBS-Go's VAST trackers to inject: accepted, no effect (PBS-Go does not use them yet)",
    "cache_ttl.{banner,video,native,audio}": "cached bids' TTL by media type when neither `exp` nor the request's "
                                             "`ttlseconds` sets one, plus a minute (0 = the host's default); "
                                             "PBS-Java's `auction.banner_cache_ttl`/`video_cache_ttl` too",
    "vtrack.ttl": "PBS-Java's: caps each `/vtrack` put's TTL, or sets it when the put has none (0 = no cap)",
    "analytics.auction_events": "PBS-Java's: `{channel: bool}` (`pbjs` = `web`); when set, a request without "
                                "`ext.prebid.events` gets event URLs only if its channel is `true` here",
    "analytics.http.url": "hbserver's own: the account's analytics collector; its records (auction, amp, "
                          "notification) are POSTed there as JSON arrays (`\"\"` = none; only `http`/`https`, "
                          "else the account is malformed; used when the host's `analytics.account_http.enabled`); "
                          "see Per-account analytics",
    "analytics.http.headers": "hbserver's own: headers sent with each POST to the collector (at most 16; not "
                              "`Content-Type`, `Content-Length`, `Content-Encoding`, `Host`)",
    "analytics.http.batch_size": "hbserver's own: records per POST (at most the host's "
                                 "`analytics.account_http.max_batch_size`)",
    "analytics.http.flush_interval_ms": "hbserver's own: a batch under way leaves at least this often (>= 100)",
    "analytics.http.sampling_rate": "hbserver's own: the share of the account's records sent (0-1)",
    "analytics.http.gvl_vendor_id": "hbserver's own: the collector's TCF vendor id, checked for purpose 7 "
                                    "(measure ad performance) when GDPR applies (0 = none: only a "
                                    "`gdpr.purpose7` that enforces nothing, or a `vendor_exceptions` entry "
                                    "`account_http`, lets records go)",
    "debug_allow": "`false` ignores a request's debug flag (no `ext.debug` in the answer)",
    "auction.impression_limit": "PBS-Java's: only the first N imps of a request go to auction, with a warning "
                                "(0 = all)",
    "auction.secondary_bidders": "PBS-Java's: bidders the answer does not wait for once the others have answered "
                                 "(`ext.prebid.secondarybidders` overrides)",
    "auction.profiles": "PBS-Java's profiles: `limit` (profiles a request may name, 4) and `fail_on_unknown` or "
                        "`fail-on-unknown` (a missing profile refuses the request, `true`); `timeout_ms` or "
                        "`timeout-ms`, the fetch's wait without a `tmax` (PBS-Java's host key, here per account "
                        "too; `null` = the host's `auction.profiles.timeout_ms`); see Profiles",
    "auction.price_granularity": "PBS-Java's: the price granularity name (`low`, `medium`, `high`, `auto`, "
                                 "`dense`; unknown = `medium`) for targeting requests naming none",
    "auction.targeting.includewinners": "PBS-Java's: `ext.prebid.targeting.includewinners` where a targeting "
                                        "request leaves it out (`null` = not set)",
    "auction.targeting.includebidderkeys": "PBS-Java's: `includebidderkeys` where a targeting request leaves it out",
    "auction.targeting.includeformat": "PBS-Java's: `includeformat` where a targeting request leaves it out",
    "auction.targeting.preferdeals": "PBS-Java's: `preferdeals` where a targeting request leaves it out",
    "auction.targeting.alwaysincludedeals": "PBS-Java's: `alwaysincludedeals` where a targeting request leaves it out",
    "auction.targeting.prefix": "PBS-Java's spelling of `targeting_prefix`; the PBS-Go key wins if both are set",
    "auction.truncate_target_attr": "PBS-Java's spelling of `truncate_target_attr`; the PBS-Go key wins if both "
                                    "are set",
    "auction.default_integration": "PBS-Java's spelling of `default_integration`; the PBS-Go key wins if both are set",
    "auction.bid_rounding": "PBS-Java's spelling of `bid_rounding`; the PBS-Go key wins if both are set",
    "auction.preferredmediatype": "PBS-Java's spelling of `preferredmediatype`; the PBS-Go key wins per bidder",
    "cookie_sync.default_limit": "`/cookie_sync`: how many syncs when the request names no limit (0 = no limit)",
    "cookie_sync.max_limit": "`/cookie_sync`: the largest limit a request may ask for (0 = no cap)",
    "cookie_sync.default_coop_sync": "`/cookie_sync`: cooperative sync when the request does not say; `null` = "
                                     "the host's `user_sync.coop_sync.default`",
    "cookie_sync.priority_groups": "`/cookie_sync`: bidder groups tried first in a cooperative sync, in order "
                                   "(used when `default_coop_sync` is set, else the host's "
                                   "`user_sync.priority_groups`)",
    "cookie_sync.priority_groups_only": "`/cookie_sync`: a cooperative sync adds only the priority groups' "
                                        "bidders, not every bidder",
    "cookie_sync.disabled_iframe_bidders": "`/cookie_sync`: bidders never offered an iframe sync (`[\"*\"]` = "
                                           "all), narrowing the request's `filterSettings` (PBS-Go)",
    "cookie_sync.pri": "PBS-Java's prioritized bidders: first in a cooperative sync (one shuffled priority "
                       "group), over the host's groups; the account's `priority_groups` win when both are set",
    "privacy.allowactivities": "activity controls (`syncUser`, `fetchBids`, `transmitUfpd`, ... each with "
                               "`default` and `rules`), as in Prebid Server",
    "privacy.dsa.default": "the `regs.ext.dsa` a request without one gets, as a JSON string (PBS-Go; PBS-Java's "
                           "object is read too), e.g. `\"{\\\"dsarequired\\\":3}\"`; bids are checked against it",
    "privacy.dsa.gdpr_only": "`true`: the default only when GDPR is enforced for the request",
    "privacy.geo.precise_geo_blocked_states": "US states (`CA`, ...) whose requests reach bidders without lat/lon "
    "and with masked IPs (hbserver's own)",
    "privacy.ipv4.anon_keep_bits": "bits of an IPv4 address kept when the address must be masked",
    "privacy.ipv6.anon_keep_bits": "bits of an IPv6 address kept when the address must be masked",
    "privacy.modules": "PBS-Java's privacy modules (`code`, `enabled`, `config`), e.g. `iab.usgeneral`",
    "settings.geo_lookup": "PBS-Java's (`geo-lookup` too): `false` = no `device.geo` lookup for the account, "
                           "`true` = a lookup; `null` = the host's `geolocation.database` decides (PBS-Java's "
                           "default is off: set `false` in `account_defaults` for that); see Geo lookup",
    "privacy.privacysandbox.topicsdomain": "the `user.data` name `Sec-Browsing-Topics` topics go under (PBS-Go); "
                                           "empty: the header is not read",
    "privacy.privacysandbox.cookiedeprecation.enabled": "`Sec-Cookie-Deprecation` into `device.ext.cdep` (PBS-Go)",
    "privacy.privacysandbox.cookiedeprecation.ttl_sec": "lifetime of the `receive-cookie-deprecation` cookie, seconds",
    "privacy.privacysandbox.cookiedeprecation.ttlsec": "the same, as PBS-Go account files spell it; wins when set",
    "gdpr.enabled": "TCF enforcement for the account's requests; `null` = the host's `gdpr.tcf2.enabled`",
    "gdpr.integration_enabled.{amp,app,video,web,dooh}": "TCF enforcement per channel, PBS-Go's former name, "
                                                         "read after `channel_enabled`; `null` = `gdpr.enabled`",
    "gdpr.channel_enabled.{amp,app,video,web,dooh}": "TCF enforcement per channel; `null` = "
                                                     "`integration_enabled`, then `gdpr.enabled`",
    "gdpr.basic_enforcement_vendors": "bidders checked with basic enforcement (no vendor consent needed)",
    "gdpr.purpose{1-10}.enforce_purpose": "enforce the purpose's consent or legitimate interest; `null` = host's",
    "gdpr.purpose{1-10}.enforce_vendors": "enforce the vendor's consent for the purpose; `null` = host's",
    "gdpr.purpose{1-10}.enforce_algo": "`full` or `basic`; `\"\"` = host's",
    "gdpr.purpose{1-10}.eid.activity_transition": "PBS-Java's `privacy.gdpr.purposes.p4.eid.activity_transition` "
                                                  "(read for purpose 4 only): `true` gives an account whose "
                                                  "`allowactivities` has `transmitUfpd` and no `transmitEids` "
                                                  "`transmitUfpd`'s rules for `transmitEids` too; `null` = host's",
    "gdpr.purpose{1-10}.vendor_exceptions": "bidders the purpose is not enforced for (a list, even empty, "
                                            "replaces the host's); `null` = host's",
    "gdpr.purpose_one_treatment.enabled": "honour the consent string's purpose one treatment; `null` = host's",
    "gdpr.purpose_one_treatment.access_allowed": "with purpose one treatment, purpose 1 counts as allowed; "
                                                 "`null` = host's",
    "gdpr.special_feature1.enforce": "enforce special feature 1 (precise geolocation); `null` = host's",
    "gdpr.special_feature1.vendor_exceptions": "bidders special feature 1 is not enforced for; `null` = host's",
    "gdpr.eea_countries": "countries (alpha-3) where an absent `gdpr` signal means GDPR applies; `null` = host's",
    "ccpa.enabled": "US Privacy opt-out enforcement; `null` = the host's `ccpa.enforce`",
    "ccpa.integration_enabled.{amp,app,video,web,dooh}": "US Privacy enforcement per channel, PBS-Go's former "
                                                         "name, read after `channel_enabled`; `null` = "
                                                         "`ccpa.enabled`",
    "ccpa.channel_enabled.{amp,app,video,web,dooh}": "US Privacy enforcement per channel; `null` = "
                                                     "`integration_enabled`, then `ccpa.enabled`",
    "price_floors.enabled": "price floors (`imp.bidfloor`, `ext.prebid.floors`, fetched data) for the account; "
                            "the host's `price_floors.enabled` must be on too",
    "price_floors.enforce_floors_rate": "percent of auctions whose floors are enforced (bids below rejected)",
    "price_floors.adjust_for_bid_adjustment": "compare the floor with the bid before bid adjustments "
                                              "(the adjusted price is still what wins)",
    "price_floors.enforce_deal_floors": "enforce floors on deal bids too (with the request's `floordeals`)",
    "price_floors.use_dynamic_data": "use the floors fetched from `fetch.url` (over the request's)",
    "price_floors.max_rules": "most rules a request's floors data may hold (0 = no limit)",
    "price_floors.max_schema_dims": "most schema fields a request's floors data may use (0 = no limit)",
    "price_floors.fetch.enabled": "fetch floors data for the account from `fetch.url`",
    "price_floors.fetch.url": "the floors provider's URL (Prebid's floors-data format)",
    "price_floors.fetch.timeout_ms": "time one fetch may take (10-10000 ms)",
    "price_floors.fetch.max_file_size_kb": "largest provider answer (0 = the host's `price_floors.fetcher` bound)",
    "price_floors.fetch.max_rules": "most rules a fetched file may hold (0 = no limit)",
    "price_floors.fetch.max_age_sec": "fetched data older than this is dropped (>= 600)",
    "price_floors.fetch.period_sec": "time between fetches (>= 300, at most `max_age_sec`)",
    "price_floors.fetch.max_schema_dims": "most schema fields a fetched file may use (0 = no limit)",
    "alternatebiddercodes.enabled": "bidders may answer under other seat codes (the request's "
                                    "`ext.prebid.alternatebiddercodes` replaces this block)",
    "alternatebiddercodes.bidders": "per bidder: `enabled` and `allowedbiddercodes` (`[\"*\"]` = any seat)",
    "bidadjustments": "bid adjustment rules (`mediatype` -> bidder -> deal id -> `[{adjtype, value, currency}]`), "
                      "used where the request has none for the same key",
    "default_bid_limit": "multibid: bids kept per bidder and imp where `ext.prebid.multibid` names no "
                         "`maxbids` (0 = one)",
    "hooks.modules": "account-level settings of the hooks modules, `{vendor: {module: {...}}}` (PBS-Java's "
                     "modules by their code); see Hooks and modules",
    "hooks.admin.module_execution": "PBS-Java's: module code -> `false` leaves the module's hooks out for the "
                                    "account (the host's plan's too); `true` changes nothing",
    "auction.cache.enabled": "PBS-Java's: `false` caches no bids for the account (no `hb_cache_id`, creatives "
                             "kept in the response), whatever the request's `ext.prebid.cache` asks",
    "hooks.execution_plan": "the account's hooks execution plan (PBS-Go's shape; replaces "
                            "`hooks.default_account_execution_plan` when it names endpoints)",
    "validations.banner_creative_max_size": "`skip`, `warn` or `enforce`: banner bids larger than the max creative "
                                            "size (`null` = the host's `validations` key; see Bid validation "
                                            "in Money in the auction)",
    "validations.secure_markup": "`skip`, `warn` or `enforce`: banner and video bids whose `adm` has `http:` "
                                 "and no `https:` (`null` = the host's; PBS-Go reads this one only from the host)",
    "validations.max_creative_width": "widest banner bid allowed (0 = the imp's largest banner size; `null` = "
                                      "the host's)",
    "validations.max_creative_height": "highest banner bid allowed (0 = the imp's largest banner size; `null` = "
                                       "the host's)",
    "validations.adm_or_nurl": "hbserver's own: `skip`, `warn` or `enforce` bids with neither `adm` nor `nurl` "
                               "(`null` = the host's)",
    "validations.media_type": "hbserver's own: `skip`, `warn` or `enforce` bids of a media type their imp does "
                              "not offer (`null` = the host's)",
    "validations.vast_protocol": "hbserver's own: `skip`, `warn` or `enforce` video/audio bids whose VAST "
                                 "protocol is not in the imp's `protocols` (`null` = the host's)",
    "targeting_prefix": "targeting key prefix where `ext.prebid.targeting.prefix` names none (`\"\"` = `hb`); "
                        "one longer than the key length less 12 gives `hb` and warning 10015",
    "truncate_target_attr": "targeting key length (`null` or <= 0 = 20), also for ad server targeting; under 12 "
                            "gives prefix `hb` and warning 10016",
    "bid_rounding": "price bucket rounding: `down`, `up`, `true` (nearest) or `timesplit` (either, at random); "
                    "`\"\"` or unknown = `down`",
    "preferredmediatype": "bidder -> `banner`, `video`, `audio` or `native`: what a bidder without multi-format "
                          "support keeps of a multi-format imp (`biddercontrols.<bidder>.prefmtype` wins)",
    "default_integration": "`ext.prebid.integration` of `/openrtb2/auction` requests without one (bidders and "
                           "event URLs see it)",
}

_NUMBERED = re.compile(r"(\D+)(\d+)")


def _default_text(value: Any) -> str:
    return f"`{orjson.dumps(value).decode()}`"


def _rows(cls: type, plain: Mapping[str, Any], prefix: str) -> list[tuple[str, str]]:
    """(key, default) rows of dataclass ``cls``; numbered twins (purpose1..10) and small all-alike
    dataclasses (the channel switches) are one row each."""
    hints = typing.get_type_hints(cls)
    fields = dataclasses.fields(cls)
    rows: list[tuple[str, str]] = []
    numbered: dict[tuple[str, Any], list[int]] = {}
    for fld in fields:
        match = _NUMBERED.fullmatch(fld.name)
        if match:
            numbered.setdefault((match[1], hints[fld.name]), []).append(int(match[2]))
    done: set[tuple[str, Any]] = set()
    for fld in fields:
        tp = _unwrap_optional(hints[fld.name])
        name, value = fld.name, plain[fld.name]
        if value is None and dataclasses.is_dataclass(tp):  # an optional block: its defaults once set
            value = dataclasses.asdict(tp())
        match = _NUMBERED.fullmatch(name)
        group = (match[1], hints[name]) if match else None
        if group is not None and len(numbered[group]) > 1:
            if group in done:
                continue
            done.add(group)
            numbers = numbered[group]
            name = f"{match[1]}{{{min(numbers)}-{max(numbers)}}}"  # type: ignore[index]
        if dataclasses.is_dataclass(tp):
            inner = dataclasses.fields(tp)
            inner_hints = typing.get_type_hints(tp)
            alike = {(str(inner_hints[f.name]), orjson.dumps(value[f.name])) for f in inner}
            if len(inner) >= 3 and len(alike) == 1 and not any(
                dataclasses.is_dataclass(_unwrap_optional(inner_hints[f.name])) for f in inner
            ):
                names = ",".join(f.name for f in inner)
                rows.append((f"{prefix}{name}.{{{names}}}", _default_text(value[inner[0].name])))
            else:
                rows.extend(_rows(tp, value, f"{prefix}{name}."))
        else:
            rows.append((f"{prefix}{name}", _default_text(value)))
    return rows


def settings_rows(cls: type = AccountSettings) -> list[tuple[str, str]]:
    """(key, default) for every applied account key, in the dataclasses' order."""
    return _rows(cls, dataclasses.asdict(cls()), "")


def settings_table(cls: type = AccountSettings) -> str:
    """Every applied key, then every Prebid Server key hbserver does not apply (with the values it
    accepts): key, default, which server defines it, meaning."""
    from hbserver.stores.account_table import defined_by, refusal_rows  # it reads account_aliases

    lines = ["| key | default | defined by | meaning |", "|---|---|---|---|"]
    rows = [(key, default, defined_by(key), MEANINGS.get(key, "")) for key, default in settings_rows(cls)]
    rows += [(key, _default_text(default), server, why) for key, default, server, why in refusal_rows()]
    for key, default, server, meaning in rows:
        lines.append(f"| `{key}` | {default} | {server} | {meaning.replace('|', chr(92) + '|')} |")
    return "\n".join(lines)


def replace_table(text: str, new_table: str) -> str:
    head, start, rest = text.partition(START)
    _old, end, tail = rest.partition(END)
    if not start or not end:
        raise ValueError("the README has no account-settings table markers")
    return f"{head}{START}\n{new_table}\n{END}{tail}"


def main(argv: list[str]) -> int:
    path = Path(argv[0] if argv else "README.md")
    path.write_text(replace_table(path.read_text(), settings_table()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
