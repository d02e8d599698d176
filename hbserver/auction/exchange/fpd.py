"""First-party data per bidder, EID permissions and supply chains per bidder (PBS-Go ``firstpartydata``,
``schain``, ``exchange.removeUnpermissionedEids`` and ``applyFPD``).

Worked out once per auction by :meth:`BidderData.from_request`, then applied to each bidder's own
copy of the request by :meth:`BidderData.apply`, in PBS-Go's order:

1. **Supply chain** (``ext.prebid.schains``): the entry naming the bidder (exact spelling), else the
   ``"*"`` entry, becomes its ``source.schain``; the host's ``host_schain_node`` is appended to it.
   With a host node but no entry for the bidder, the node is appended to the request's own
   ``source.schain`` (PBS-Java; PBS-Go replaces that chain), or makes a new chain
   ``{"complete": 0, "nodes": [host], "ver": "1.0"}``.
2. **EIDs** (``ext.prebid.data.eidpermissions``): a ``user.eids`` entry whose ``source`` has a rule
   reaches only the bidders the rule names (case-insensitively, ``"*"`` = all); other sources reach all.
3. **First-party data**. Without ``ext.prebid.data.bidders`` each bidder named in
   ``ext.prebid.bidderconfig`` gets the request's ``site``/``app``/``user``/``device`` with its
   ``config.ortb2`` merged in; the others get the request as it is. With that list (even an empty
   one) the global FPD - ``site``/``app``/``user`` ``.ext.data``, ``user.data`` and
   ``site``/``app`` ``.content.data`` - reaches only the bidders listed, who also get their
   ``bidderconfig`` merged in; a bidder not listed gets neither, even when a ``bidderconfig`` names it.
   ``"*"`` is no wildcard in either list (PBS-Go). Names of known bidders match case-insensitively,
   request aliases exactly.

The merge of ``config.ortb2`` is PBS-Go's ``MergeClone``: fields replace, objects merge field by
field, arrays are replaced whole, ``null`` removes a field, and every ``ext`` is merged as an RFC 7386
merge patch (a ``null`` ``ext`` keeps the existing one). After the merge a bidder keeps its own
``buyeruid`` and its permitted EIDs unless its ``config.ortb2.user`` brings EIDs of its own.

:func:`validate_bidder_data` gives PBS-Go's 400 texts for what would make any of this fail.
``enrichUfpd`` (an activity PBS-Go and PBS-Java define but never consult in the auction) changes nothing here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from hbserver.auction.common.mergepatch import merge_patch
from hbserver.config import SChainNode

if TYPE_CHECKING:
    from hbserver.bidders.registry import Registry
    from hbserver.privacy.activity import ActivityControl

WILDCARD = "*"
FPD_OBJECTS = ("site", "app", "user", "device")

_EMPTY: dict[str, Any] = {}
_PREBID = "request.ext.prebid"

Normalizer = Callable[[str], str]


@lru_cache(maxsize=8)
def _host_node(node: SChainNode) -> dict[str, Any] | None:
    """The host's node as OpenRTB (``asi`` and ``sid`` always, the rest when set); None when off."""
    if not node.asi:
        return None
    out: dict[str, Any] = {"asi": node.asi, "sid": node.sid}
    for key in ("rid", "name", "domain"):
        value = getattr(node, key)
        if value:
            out[key] = value
    out["hp"] = node.hp
    return out


def _normalizer(registry: Registry | None, aliases: Mapping[str, str]) -> Normalizer:
    """PBS-Go's ``NormalizeBidderNameOrUnchanged``: a known bidder's code, any other name unchanged.

    Without a registry every name that is not a request alias counts as known (lower-cased)."""
    if registry is None:
        return lambda name: name if name in aliases else name.lower()
    lookup = registry.lookup

    def normalize(name: str) -> str:
        bidder = lookup(name)
        return name if bidder is None else bidder.code

    return normalize


def _strings(value: Any) -> list[str] | None:
    """``value`` when it is a list of strings, else None."""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    return None


def merge_clone(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """PBS-Go ``jsonutil.MergeClone`` of an OpenRTB object: ``patch`` over a copy of ``target``.

    Fields replace, objects merge, arrays are replaced whole, ``null`` removes a field; ``ext``
    objects are RFC 7386 merge patches (``null`` keeps the existing ``ext``). Neither input is
    mutated; untouched parts are shared."""
    result = dict(target)
    pending = [(result, patch)]
    while pending:
        out, changes = pending.pop()
        for key, value in changes.items():
            if key == "ext":
                if value is None:
                    continue
                existing = out.get("ext")
                out["ext"] = merge_patch(existing, value) if isinstance(existing, dict) else value
            elif value is None:
                out.pop(key, None)
            elif isinstance(value, dict):
                below = out.get(key)
                child = dict(below) if isinstance(below, dict) else {}
                out[key] = child
                pending.append((child, value))
            else:
                out[key] = value
    return result


def _with_node(chain: dict[str, Any], host: dict[str, Any] | None) -> dict[str, Any]:
    if host is None:
        return chain
    nodes = chain.get("nodes")
    return {**chain, "nodes": [*nodes, host] if isinstance(nodes, list) else [host]}


def _without_global_data(obj: dict[str, Any], list_key: str) -> dict[str, Any]:
    """``obj`` without ``ext.data`` and without ``<list_key>.data`` (``user.data`` when ``list_key`` is
    empty): PBS-Go's ``ExtractGlobalFPD`` + ``ExtractOpenRtbGlobalFPD``. ``obj`` itself when it has neither."""
    out = obj
    ext = obj.get("ext")
    if isinstance(ext, dict) and "data" in ext:
        out = dict(obj)
        rest = {k: v for k, v in ext.items() if k != "data"}
        if rest:
            out["ext"] = rest
        else:
            del out["ext"]
    if list_key:
        holder = obj.get(list_key)
        if isinstance(holder, dict) and holder.get("data"):
            if out is obj:
                out = dict(obj)
            out[list_key] = {k: v for k, v in holder.items() if k != "data"}  # an empty content stays (PBS-Go)
    elif obj.get("data"):
        if out is obj:
            out = dict(obj)
        del out["data"]
    return out


class _BidderFpd:
    """One bidder's ``config.ortb2`` resolved against the request (None = the request's object stays)."""

    __slots__ = ("app", "device", "site", "user", "user_eids")

    def __init__(self, request: dict[str, Any], ortb2: dict[str, Any]) -> None:
        self.site = self._resolved(request.get("site"), ortb2.get("site"), needs_base=True)
        self.app = self._resolved(request.get("app"), ortb2.get("app"), needs_base=True)
        self.device = self._resolved(request.get("device"), ortb2.get("device"), needs_base=False)
        user = ortb2.get("user")
        self.user: dict[str, Any] | None = user if isinstance(user, dict) else None
        eids = self.user.get("eids") if self.user is not None else None
        self.user_eids = isinstance(eids, list) and bool(eids)  # PBS-Go's fpdUserEIDsPresent

    @staticmethod
    def _resolved(base: Any, patch: Any, needs_base: bool) -> dict[str, Any] | None:
        if not isinstance(patch, dict):
            return None
        if not isinstance(base, dict):
            if needs_base:  # refused by validate_bidder_data; never reached for a validated request
                return None
            base = _EMPTY
        return merge_clone(base, patch)

    def apply(self, own: dict[str, Any]) -> None:
        if self.site is not None:
            own["site"] = self.site
        if self.app is not None:
            own["app"] = self.app
        if self.device is not None:
            own["device"] = self.device
        if self.user is None:
            return
        current = own.get("user")
        current = current if isinstance(current, dict) else None
        user = merge_clone(current or _EMPTY, self.user)
        if current is not None:
            buyeruid = current.get("buyeruid")
            if buyeruid:
                user["buyeruid"] = buyeruid
            if not self.user_eids:
                if "eids" in current:
                    user["eids"] = current["eids"]
                else:
                    user.pop("eids", None)
        own["user"] = user


class BidderData:
    """One auction's per-bidder FPD, EID and supply-chain rules, worked out once per request."""

    __slots__ = (
        "_aliases",
        "_chains",
        "_default_chain",
        "_eid_rules",
        "_fpd",
        "_listed",
        "_normalize",
        "_strip_user",
        "_stripped_app",
        "_stripped_site",
        "_wildcard_chain",
    )

    def __init__(self) -> None:
        self._aliases: Mapping[str, str] = _EMPTY
        self._normalize: Normalizer = str.lower
        self._chains: dict[str, dict[str, Any]] | None = None  # None: no schains, no host node
        self._wildcard_chain: dict[str, Any] | None = None
        self._default_chain: dict[str, Any] | None = None
        self._eid_rules: dict[str, tuple[bool, frozenset[str]]] = {}
        self._listed: frozenset[str] | None = None  # ext.prebid.data.bidders, normalised; None = absent
        self._fpd: dict[str, _BidderFpd] = {}
        self._stripped_site: dict[str, Any] | None = None  # for bidders not listed; None = unchanged
        self._stripped_app: dict[str, Any] | None = None
        self._strip_user = False

    @classmethod
    def from_request(
        cls,
        request: dict[str, Any],
        aliases: Mapping[str, str],
        host_node: SChainNode,
        activities: ActivityControl | None = None,
        *,
        registry: Registry | None = None,
    ) -> BidderData | None:
        """The rules of ``request`` (validated by :func:`validate_bidder_data`), or None when there is
        nothing to do: no ``data``, ``bidderconfig`` or ``schains`` and no host node.

        ``registry`` gives known bidders' codes (case-insensitive names); without it every name that
        is not a request alias is compared lower-cased. ``activities`` is accepted for the
        ``enrichUfpd`` activity, which Prebid Server does not enforce in the auction."""
        ext = request.get("ext")
        prebid = ext.get("prebid") if isinstance(ext, dict) else None
        if not isinstance(prebid, dict):
            prebid = _EMPTY
        data = prebid.get("data")
        configs = prebid.get("bidderconfig")
        schains = prebid.get("schains")
        host = _host_node(host_node) if host_node.asi else None
        if data is None and not configs and not schains and host is None:
            return None  # the usual request
        out = cls()
        out._aliases = aliases
        out._normalize = _normalizer(registry, aliases)
        data = data if isinstance(data, dict) else _EMPTY
        busy = out._read_schains(request, schains, host)
        busy = out._read_eid_permissions(data.get("eidpermissions")) or busy
        busy = out._read_fpd(request, data.get("bidders"), configs) or busy
        return out if busy else None

    def _read_schains(self, request: dict[str, Any], schains: Any, host: dict[str, Any] | None) -> bool:
        chains: dict[str, dict[str, Any]] = {}
        for entry in schains if isinstance(schains, list) else ():
            if not isinstance(entry, dict):
                continue
            chain = entry.get("schain")
            # an entry without a chain is Go's zero SupplyChain
            final = _with_node(chain if isinstance(chain, dict) else {"complete": 0, "nodes": None, "ver": ""}, host)
            for name in entry.get("bidders") or ():
                if isinstance(name, str):
                    chains.setdefault(name, final)  # duplicates are refused by validation
        if not chains and host is None:
            return False
        self._chains = chains
        self._wildcard_chain = chains.get(WILDCARD)
        if host is not None:
            source = request.get("source")
            own = source.get("schain") if isinstance(source, dict) else None
            self._default_chain = (
                _with_node(own, host) if isinstance(own, dict) else {"complete": 0, "nodes": [host], "ver": "1.0"}
            )
        return True

    def _read_eid_permissions(self, permissions: Any) -> bool:
        rules = self._eid_rules
        for rule in permissions if isinstance(permissions, list) else ():
            if not isinstance(rule, dict) or not isinstance(rule.get("source"), str):
                continue
            names = [name for name in rule.get("bidders") or () if isinstance(name, str)]
            rules[rule["source"]] = (WILDCARD in names, frozenset(name.lower() for name in names))
        return bool(rules)

    def _read_fpd(self, request: dict[str, Any], listed: Any, configs: Any) -> bool:
        normalize = self._normalize
        ortb2_by_key = _bidder_configs(configs, normalize)
        if isinstance(listed, list):
            self._listed = frozenset(normalize(name) for name in listed if isinstance(name, str))
            targets = [key for key in ortb2_by_key if key in self._listed]
            site, app, user = request.get("site"), request.get("app"), request.get("user")
            if isinstance(site, dict):
                stripped = _without_global_data(site, "content")
                self._stripped_site = stripped if stripped is not site else None
            if isinstance(app, dict):
                stripped = _without_global_data(app, "content")
                self._stripped_app = stripped if stripped is not app else None
            self._strip_user = isinstance(user, dict) and _without_global_data(user, "") is not user
        else:
            targets = list(ortb2_by_key)
        for key in targets:
            self._fpd[key] = _BidderFpd(request, ortb2_by_key[key])
        return self._listed is not None or bool(self._fpd)

    def apply(self, own: dict[str, Any], bidder: str) -> None:
        """Apply the rules for ``bidder`` (as spelled in the request) to its own shallow copy ``own``;
        every nested object changed is copied first, so other bidders and the request are untouched."""
        if self._chains is not None:
            chain = self._chains.get(bidder)
            if chain is None:
                chain = self._wildcard_chain if self._wildcard_chain is not None else self._default_chain
            if chain is not None:
                source = own.get("source")
                own["source"] = {**source, "schain": chain} if isinstance(source, dict) else {"schain": chain}
        if self._eid_rules:
            self._filter_eids(own, bidder)
        if self._listed is None and not self._fpd:
            return
        key = bidder if bidder in self._aliases else self._normalize(bidder)
        if self._listed is not None and key not in self._listed:
            if self._stripped_site is not None:
                own["site"] = self._stripped_site
            if self._stripped_app is not None:
                own["app"] = self._stripped_app
            user = own.get("user")
            if self._strip_user and isinstance(user, dict):
                own["user"] = _without_global_data(user, "")
            return
        fpd = self._fpd.get(key)
        if fpd is not None:
            fpd.apply(own)

    def _filter_eids(self, own: dict[str, Any], bidder: str) -> None:
        user = own.get("user")
        if not isinstance(user, dict):
            return
        eids = user.get("eids")
        if not isinstance(eids, list) or not eids:
            return
        rules = self._eid_rules
        name = bidder.lower()
        kept = []
        for eid in eids:
            source = eid.get("source") if isinstance(eid, dict) else None
            rule = rules.get(source) if isinstance(source, str) else None
            if rule is None or rule[0] or name in rule[1]:
                kept.append(eid)
        if len(kept) == len(eids):
            return
        new_user = dict(user)
        if kept:
            new_user["eids"] = kept
        else:
            del new_user["eids"]
        own["user"] = new_user


def _bidder_configs(configs: Any, normalize: Normalizer) -> dict[str, dict[str, Any]]:
    """``ext.prebid.bidderconfig`` as normalised bidder name -> ``config.ortb2`` (``{}`` when null)."""
    out: dict[str, dict[str, Any]] = {}
    for entry in configs if isinstance(configs, list) else ():
        if not isinstance(entry, dict):
            continue
        config = entry.get("config")
        ortb2 = config.get("ortb2") if isinstance(config, dict) else None
        ortb2 = ortb2 if isinstance(ortb2, dict) else _EMPTY
        for name in entry.get("bidders") or ():
            if isinstance(name, str):
                out.setdefault(normalize(name), ortb2)  # duplicates are refused by validation
    return out


# --- validation -------------------------------------------------------------------------------


def validate_bidder_data(
    request: dict[str, Any], registry: Registry | None = None, aliases: Mapping[str, str] | None = None
) -> list[str]:
    """PBS-Go's 400 texts for ``ext.prebid.schains``, ``ext.prebid.data`` (``bidders``,
    ``eidpermissions``) and ``ext.prebid.bidderconfig``, in PBS-Go's order (one per part, its first
    problem); the FPD conflicts of all bidders come as one text joined by ``,`` (PBS-Go).

    ``registry`` (with the request's ``aliases``) names the known bidders: without it
    ``eidpermissions`` bidders are not checked and names are compared as :meth:`BidderData.from_request` does."""
    found = (request_data_problem(request, registry, aliases), validate_bidder_config(request, registry, aliases))
    return [problem for problem in found if problem is not None]


def _prebid_of(request: dict[str, Any]) -> dict[str, Any] | None:
    ext = request.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    return prebid if isinstance(prebid, dict) else None


def request_data_problem(
    request: dict[str, Any], registry: Registry | None = None, aliases: Mapping[str, str] | None = None
) -> str | None:
    """The first problem with ``ext.prebid.schains`` or ``ext.prebid.data`` (PBS-Go's ``validateRequest``
    checks them early: ``validateSChains``, ``validateEidPermissions``)."""
    prebid = _prebid_of(request)
    if prebid is None:
        return None
    schains, data = prebid.get("schains"), prebid.get("data")
    if schains is None and data is None:
        return None
    return _schains_problem(schains) or _data_problem(data, registry, aliases if aliases is not None else _EMPTY)


def validate_bidder_config(
    request: dict[str, Any], registry: Registry | None = None, aliases: Mapping[str, str] | None = None
) -> str | None:
    """The problem with ``ext.prebid.bidderconfig``, else the FPD conflicts of all bidders joined by ``,``
    (PBS-Go finds these later than validation, when the exchange extracts each bidder's FPD)."""
    prebid = _prebid_of(request)
    configs = prebid.get("bidderconfig") if prebid is not None else None
    if configs is None:
        return None
    aliases = aliases if aliases is not None else _EMPTY
    normalize = _normalizer(registry, aliases)
    problem = _bidderconfig_problem(configs, normalize)
    if problem is not None or not configs:
        return problem
    conflicts = _fpd_conflicts(request, prebid.get("data"), configs, normalize)
    return ",".join(conflicts) if conflicts else None


def _schains_problem(schains: Any) -> str | None:
    if schains is None:
        return None
    where = f"{_PREBID}.schains"
    if not isinstance(schains, list):
        return f"{where} must be an array"
    seen: set[str] = set()
    for index, entry in enumerate(schains):
        if not isinstance(entry, dict):
            return f"{where}[{index}] must be an object"
        bidders = entry.get("bidders")
        if bidders is not None and _strings(bidders) is None:
            return f"{where}[{index}].bidders must be an array of strings"
        chain = entry.get("schain")
        if chain is not None:
            if not isinstance(chain, dict):
                return f"{where}[{index}].schain must be an object"
            nodes = chain.get("nodes")
            if nodes is not None and not (isinstance(nodes, list) and all(isinstance(n, dict) for n in nodes)):
                return f"{where}[{index}].schain.nodes must be an array of objects"
        for name in bidders or ():
            if name in seen:
                return (
                    f"{where} contains multiple schains for bidder {name}; "
                    "it must contain no more than one per bidder."
                )
            seen.add(name)
    return None


def _data_problem(data: Any, registry: Registry | None, aliases: Mapping[str, str]) -> str | None:
    if data is None:
        return None
    where = f"{_PREBID}.data"
    if not isinstance(data, dict):
        return f"{where} must be an object"
    bidders = data.get("bidders")
    if bidders is not None and _strings(bidders) is None:
        return f"{where}.bidders must be an array of strings"
    permissions = data.get("eidpermissions")
    if permissions is None:
        return None
    if not isinstance(permissions, list):
        return f"{where}.eidpermissions must be an array"
    sources: set[str] = set()
    for index, rule in enumerate(permissions):
        at = f"{where}.eidpermissions[{index}]"
        if not isinstance(rule, dict):
            return f"{at} must be an object"
        source = rule.get("source")
        if source is not None and not isinstance(source, str):
            return f"{at}.source must be a string"
        if not source:
            return f'{at} missing required field: "source"'
        if source in sources:
            return f'{at} duplicate entry with field: "source"'
        sources.add(source)
        names = rule.get("bidders")
        if names is not None and _strings(names) is None:
            return f"{at}.bidders must be an array of strings"
        if not names:
            return f'{at} missing or empty required field: "bidders"'
        for name in names:
            if name == WILDCARD:
                if len(names) > 1:
                    return f'{at} contains bidder wildcard "*" mixed with specific bidders'
            elif registry is not None and name not in aliases and registry.lookup(name) is None:
                return f'{at} contains unrecognized bidder "{name}"'
    return None


def _bidderconfig_problem(configs: Any, normalize: Normalizer) -> str | None:
    if configs is None:
        return None
    where = f"{_PREBID}.bidderconfig"
    if not isinstance(configs, list):
        return f"{where} must be an array"
    seen: set[str] = set()
    for index, entry in enumerate(configs):
        at = f"{where}[{index}]"
        if not isinstance(entry, dict):
            return f"{at} must be an object"
        bidders = entry.get("bidders")
        if bidders is not None and _strings(bidders) is None:
            return f"{at}.bidders must be an array of strings"
        config = entry.get("config")
        if config is not None:
            if not isinstance(config, dict):
                return f"{at}.config must be an object"
            ortb2 = config.get("ortb2")
            if ortb2 is not None:
                if not isinstance(ortb2, dict):
                    return f"{at}.config.ortb2 must be an object"
                for name in FPD_OBJECTS:
                    if ortb2.get(name) is not None and not isinstance(ortb2[name], dict):
                        return f"{at}.config.ortb2.{name} must be an object"
        for name in bidders or ():
            key = normalize(name)
            if key in seen:
                return f"multiple First Party Data bidder configs provided for bidder: {name}"
            seen.add(key)
    return None


def _fpd_conflicts(request: dict[str, Any], data: Any, configs: Any, normalize: Normalizer) -> list[str]:
    """PBS-Go's ``ResolveFPD`` errors: what a bidder's ``config.ortb2`` cannot be merged into."""
    ortb2_by_key = _bidder_configs(configs, normalize)
    listed = data.get("bidders") if isinstance(data, dict) else None
    if isinstance(listed, list):
        keys = dict.fromkeys(normalize(name) for name in listed)
        targets = [key for key in keys if key in ortb2_by_key]
    else:
        targets = list(ortb2_by_key)
    site, app, device = request.get("site"), request.get("app"), request.get("device")
    conflicts: list[str] = []
    for key in targets:
        ortb2 = ortb2_by_key[key]
        fpd_app, fpd_site, fpd_device = ortb2.get("app"), ortb2.get("site"), ortb2.get("device")
        if isinstance(fpd_app, dict) and not isinstance(app, dict):
            conflicts.append(
                f"incorrect First Party Data for bidder {key}: App object is not defined in request, "
                "but defined in FPD config"
            )
        if isinstance(fpd_site, dict):
            if not isinstance(site, dict):
                conflicts.append(
                    f"incorrect First Party Data for bidder {key}: Site object is not defined in request, "
                    "but defined in FPD config"
                )
            elif not _merged(site, fpd_site, "id") and not _merged(site, fpd_site, "page"):
                conflicts.append(
                    f"incorrect First Party Data for bidder {key}: Site object cannot set empty page "
                    "if req.site.id is empty"
                )
        if isinstance(fpd_device, dict):
            problem = _device_problem(device if isinstance(device, dict) else _EMPTY, fpd_device)
            if problem is not None:
                conflicts.append(problem)
    return conflicts


def _merged(base: dict[str, Any], patch: dict[str, Any], key: str) -> Any:
    """``base[key]`` after :func:`merge_clone` with ``patch`` (one scalar field)."""
    return patch[key] if key in patch else base.get(key)


def _negative(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0


def _device_problem(device: dict[str, Any], patch: dict[str, Any]) -> str | None:
    """PBS-Go's ``validateDevice`` of the merged device."""
    for key in ("w", "h", "ppi"):
        if _negative(_merged(device, patch, key)):
            return f"request.device.{key} must be a positive number"
    geo = device.get("geo")
    geo = geo if isinstance(geo, dict) else _EMPTY
    if "geo" in patch:
        patch_geo = patch["geo"]
        geo = _EMPTY if patch_geo is None else {**geo, **patch_geo} if isinstance(patch_geo, dict) else _EMPTY
    if _negative(geo.get("accuracy")):
        return "request.device.geo.accuracy must be a positive number"
    return None
