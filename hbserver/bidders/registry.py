"""The bidder registry: built-in definitions (``definitions/*.yaml``, each written from Prebid
Server's ``bidder-info``; a definition with ``alias_of`` is a catalogue alias run by its parent's
adapter) with the host's ``adapters.<code>`` overrides and aliases applied, validated once at start-up.

A host value replaces a built-in one only where the host wrote the key (``given_keys``): the
configuration's own defaults never silently override a bidder's definition.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from hbserver.bidders import DEFINITIONS, PBS_JAVA_SPELLINGS
from hbserver.config import AdapterConfig, AdapterUserSync, Config, SyncEndpoint, given_keys
from hbserver.usersync.templates import (
    BIDDER_MACROS,
    MACRO,
    REQUEST_MACROS,
    SyncURLTemplate,
    TemplateError,
    build_sync_url,
)

IFRAME = "iframe"
REDIRECT = "redirect"
SYNC_TYPE_LETTER = {IFRAME: "b", REDIRECT: "i"}


class RegistryError(ValueError):
    """Problems found while building the registry, one line each (naming the key)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Syncer:
    """How one bidder syncs: the cookie key and a compiled URL per sync type."""

    key: str
    templates: dict[str, SyncURLTemplate]  # sync type -> template
    default_type: str
    support_cors: bool = False
    format_override: str = ""  # "b" | "i" | ""
    skip_when_gdpr: bool = False
    skip_when_gpp_sid: tuple[str, ...] = ()
    types: tuple[str, ...] = ()  # the sync types it has, iframe first (the order filters use)

    def default_format(self) -> str:
        return self.format_override or SYNC_TYPE_LETTER[self.default_type]


@dataclass(frozen=True)
class Bidder:
    code: str
    adapter: str  # the built-in adapter it runs (itself unless an alias)
    disabled: bool
    endpoint: str
    gvl_vendor_id: int
    media_types: dict[str, tuple[str, ...]]  # channel (site, app, dooh) -> media types; absent = unsupported
    openrtb_version: str
    modifying_vast_xml_allowed: bool
    sync_key: str
    usersync_enabled: bool
    sync_endpoints: dict[str, SyncEndpoint] = field(default_factory=dict)
    sync_options: dict[str, Any] = field(default_factory=dict)  # support_cors, format_override, skipwhen
    syncer: Syncer | None = None
    alias_of: str = ""  # the parent code of an alias (catalogue or host), "" for an adapter of its own
    maintainer: str = ""
    gpp_supported: bool = False
    multiformat_supported: bool = True
    endpoint_compression: str = ""  # "gzip" or ""
    extra_info: str = ""  # PBS's extra_info: adapter-specific text (e.g. a second endpoint)
    platform_id: str = ""
    sync_supports: tuple[str, ...] = ()  # sync types it can do once the host configures them


class Registry:
    def __init__(self, bidders: dict[str, Bidder]) -> None:
        self.bidders = bidders  # every known code, enabled or not
        self._by_lower_name = {code.lower(): bidder for code, bidder in bidders.items()}
        # Enabled bidders that can sync (PBS: "bidders with syncers").
        self.syncable = tuple(b.code for b in bidders.values() if not b.disabled and b.syncer is not None)

    def lookup(self, name: str) -> Bidder | None:
        """The bidder for a case-insensitive name (PBS normalises bidder names)."""
        return self._by_lower_name.get(name.lower())

    def vast_modifiable(self, name: str) -> bool:
        """Whether an impression tracker may be inserted into this bidder's VAST: known and
        willing (``modifying_vast_xml_allowed``), or unknown (PBS's default)."""
        bidder = self.lookup(name)
        return bidder is None or (not bidder.disabled and bidder.modifying_vast_xml_allowed)

    def keys_of(self, codes: list[str]) -> set[str]:
        keys = set()
        for code in codes:
            bidder = self.lookup(code)
            if bidder is not None:
                keys.add(bidder.sync_key)
        return keys


def read_definitions(directory: Path = DEFINITIONS) -> dict[str, dict[str, Any]]:
    """Every definition file's, then each of PBS-Java's spellings (:data:`PBS_JAVA_SPELLINGS`) as an alias
    of the code it names: that code's definition without its user syncs (it shares their cookie key)."""
    definitions = {}
    for path in sorted(directory.glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        definitions[data["code"]] = data
    for spelling, code in PBS_JAVA_SPELLINGS.items():
        served = definitions.get(code)
        if served is not None and spelling not in definitions:
            own = {key: value for key, value in served.items() if key not in ("usersync", "alias_of")}
            definitions[spelling] = {**own, "code": spelling, "alias_of": served.get("alias_of") or code}
    return definitions


def build_registry(config: Config, definitions: dict[str, dict[str, Any]] | None = None) -> Registry:
    """Definitions + host overrides + aliases -> the registry; RegistryError lists every problem."""
    definitions = read_definitions() if definitions is None else definitions
    problems: list[str] = []
    leftover = {m.group(1) for m in MACRO.finditer(config.user_sync.redirect_url)} - REQUEST_MACROS - BIDDER_MACROS
    if leftover:
        names = ", ".join(f"{{{{.{name}}}}}" for name in sorted(leftover))
        raise RegistryError([f"user_sync.redirect_url: unknown macro {names}"])
    bidders: dict[str, Bidder] = {}
    for code, definition in definitions.items():
        parent_code = definition.get("alias_of") or code
        parent = definitions.get(parent_code)
        if parent is None or parent.get("alias_of"):
            problems.append(f"bidders/{code}.yaml: alias_of names no built-in adapter: {parent_code!r}")
            continue
        host = config.adapters.get(code)
        if host is not None and host.alias_of:
            continue  # the host made this code an alias of another adapter (below)
        bidders[code] = _bidder(code, parent_code, definition, host, parent)
    for code, adapter in config.adapters.items():
        if adapter.alias_of and adapter.alias_of in definitions:
            parent = definitions[adapter.alias_of]
            own = {k: v for k, v in parent.items() if k not in ("usersync", "alias_of")}
            bidders[code] = _bidder(code, adapter.alias_of, own, adapter, parent)
    bidders = _attach_syncers(bidders, config, problems)
    if problems:
        raise RegistryError(problems)
    return Registry(bidders)


def _bidder(code: str, adapter_code: str, definition: dict[str, Any], host: AdapterConfig | None,
            parent: dict[str, Any]) -> Bidder:
    """A bidder from its definition (a host alias: its parent's, without the parent's user sync) and
    the host's overrides. An alias with no sync of its own shares its parent's cookie key
    (PBS-Go's rule), one with endpoints or ``supports`` of its own keys by its own code."""
    given = given_keys(host) if host is not None else frozenset()
    sync_def = definition.get("usersync") or {}
    host_sync = host.usersync if host is not None else AdapterUserSync()
    host_sync_given = given_keys(host_sync)

    def pick(key: str, default: Any) -> Any:
        return getattr(host, key) if key in given else definition.get(key, default)

    endpoints: dict[str, SyncEndpoint] = {}
    for sync_type in (IFRAME, REDIRECT):
        ours = getattr(host_sync, sync_type)
        if ours.url:
            endpoints[sync_type] = SyncEndpoint(ours.url, ours.user_macro)
        elif sync_type in sync_def:
            theirs = sync_def[sync_type]
            endpoints[sync_type] = SyncEndpoint(theirs["url"], theirs.get("user_macro", ""))
    parent_sync = parent.get("usersync") or {}
    own_sync = bool(endpoints or sync_def.get("supports"))
    if host_sync.key:
        sync_key = host_sync.key
    elif sync_def.get("key"):
        sync_key = sync_def["key"]
    elif code != adapter_code and not own_sync:
        sync_key = parent_sync.get("key") or adapter_code
    else:
        sync_key = code
    skip_when = sync_def.get("skipwhen") or {}
    return Bidder(
        code=code,
        adapter=adapter_code,
        disabled=pick("disabled", False),
        endpoint=(host.endpoint if host is not None and host.endpoint else definition.get("endpoint", "")),
        gvl_vendor_id=pick("gvl_vendor_id", 0),
        media_types={k: tuple(v) for k, v in (definition.get("media_types") or {}).items()},
        openrtb_version=str(pick("openrtb_version", "2.5")),
        modifying_vast_xml_allowed=pick("modifying_vast_xml_allowed", False),
        sync_key=sync_key,
        usersync_enabled=host_sync.enabled if "enabled" in host_sync_given else sync_def.get("enabled", True),
        sync_endpoints=endpoints,
        sync_options={
            "support_cors": host_sync.support_cors if "support_cors" in host_sync_given else
            bool(sync_def.get("support_cors", False)),
            "format_override": sync_def.get("format_override", ""),
            "skip_when_gdpr": bool(skip_when.get("gdpr", False)),
            "skip_when_gpp_sid": tuple(str(v) for v in skip_when.get("gpp_sid", ())),
        },
        alias_of="" if code == adapter_code else adapter_code,
        maintainer=str(definition.get("maintainer") or ""),
        gpp_supported=bool(definition.get("gpp_supported", False)),
        multiformat_supported=bool(definition.get("multiformat_supported", True)),
        endpoint_compression=str(definition.get("endpoint_compression") or "").lower(),
        extra_info=str(definition.get("extra_info") or ""),
        platform_id=str(definition.get("platform_id") or ""),
        sync_supports=tuple(str(t) for t in sync_def.get("supports") or ()),
    )


def _attach_syncers(bidders: dict[str, Bidder], config: Config, problems: list[str]) -> dict[str, Bidder]:
    """Give every bidder whose key has endpoints a Syncer; bidders sharing a key share endpoints."""
    by_key: dict[str, list[Bidder]] = {}
    for bidder in bidders.values():
        by_key.setdefault(bidder.sync_key, []).append(bidder)
    external = config.user_sync.external_url or config.external_url
    out = dict(bidders)
    for key, group in by_key.items():
        defining = [b for b in group if b.sync_endpoints]
        distinct = {tuple(sorted(b.sync_endpoints.items())) for b in defining}
        if len(distinct) > 1:
            names = ", ".join(sorted(b.code for b in defining))
            problems.append(f"adapters: bidders {names} define different sync endpoints for the same key {key!r}")
            continue
        if not defining:
            continue
        endpoints = defining[0].sync_endpoints
        for bidder in group:
            syncer = _syncer(bidder, key, endpoints, config, external, problems)
            if syncer is not None:
                out[bidder.code] = replace(bidder, syncer=syncer)
    return out


def _syncer(bidder: Bidder, key: str, endpoints: dict[str, SyncEndpoint], config: Config, external: str,
            problems: list[str]) -> Syncer | None:
    templates = {}
    host = config.adapters.get(bidder.code)
    options = bidder.sync_options
    for sync_type, endpoint in endpoints.items():
        try:
            templates[sync_type] = build_sync_url(
                endpoint.url,
                redirect_template=config.user_sync.redirect_url,
                bidder=bidder.code,
                sync_type_letter=SYNC_TYPE_LETTER[sync_type],
                user_macro=endpoint.user_macro,
                external_url=external,
            )
        except TemplateError as exc:
            where = f"adapters.{bidder.code}.usersync.{sync_type}.url" if host else f"bidders/{bidder.adapter}.yaml"
            problems.append(f"{where}: {exc}")
    if not templates:
        return None
    return Syncer(
        key=key,
        templates=templates,
        default_type=IFRAME if IFRAME in templates else REDIRECT,
        support_cors=options.get("support_cors", False),
        format_override=options.get("format_override", ""),
        skip_when_gdpr=options.get("skip_when_gdpr", False),
        skip_when_gpp_sid=options.get("skip_when_gpp_sid", ()),
        types=tuple(t for t in (IFRAME, REDIRECT) if t in templates),
    )

