"""The bidder registry: built-in definitions (``definitions/*.yaml``) with the host's
``adapters.<code>`` overrides and aliases applied, validated once at start-up.

A host value replaces a built-in one only where the host wrote the key (``given_keys``): the
configuration's own defaults never silently override a bidder's definition.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from hbserver.bidders import DEFINITIONS
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
    media_types: dict[str, tuple[str, ...]]
    openrtb_version: str
    modifying_vast_xml_allowed: bool
    sync_key: str
    usersync_enabled: bool
    sync_endpoints: dict[str, SyncEndpoint] = field(default_factory=dict)
    sync_options: dict[str, Any] = field(default_factory=dict)  # support_cors, format_override, skipwhen
    syncer: Syncer | None = None


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
    definitions = {}
    for path in sorted(directory.glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        definitions[data["code"]] = data
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
        bidders[code] = _bidder(code, code, definition, config.adapters.get(code), own_sync=True)
    for code, adapter in config.adapters.items():
        if adapter.alias_of and adapter.alias_of in definitions:
            parent = definitions[adapter.alias_of]
            own_sync = bool(adapter.usersync.redirect.url or adapter.usersync.iframe.url)
            bidders[code] = _bidder(code, adapter.alias_of, parent, adapter, own_sync=own_sync)
    bidders = _attach_syncers(bidders, config, problems)
    if problems:
        raise RegistryError(problems)
    return Registry(bidders)


def _bidder(code: str, adapter_code: str, definition: dict[str, Any], host: AdapterConfig | None,
            own_sync: bool) -> Bidder:
    """A bidder from a definition; an alias without sync endpoints of its own shares the parent's key."""
    given = given_keys(host) if host is not None else frozenset()
    sync_def = definition.get("usersync") or {}
    host_sync = host.usersync if host is not None else AdapterUserSync()
    host_sync_given = given_keys(host_sync)

    def pick(key: str, default: Any) -> Any:
        return getattr(host, key) if key in given else definition.get(key, default)

    endpoints: dict[str, SyncEndpoint] = {}
    if own_sync:
        for sync_type in (IFRAME, REDIRECT):
            ours = getattr(host_sync, sync_type)
            if ours.url:
                endpoints[sync_type] = SyncEndpoint(ours.url, ours.user_macro)
            elif sync_type in sync_def and code == adapter_code:
                theirs = sync_def[sync_type]
                endpoints[sync_type] = SyncEndpoint(theirs["url"], theirs.get("user_macro", ""))
    parent_key = sync_def.get("key") or adapter_code
    if host_sync.key:
        sync_key = host_sync.key
    elif code == adapter_code or not own_sync:
        sync_key = parent_key
    else:
        sync_key = code
    return Bidder(
        code=code,
        adapter=adapter_code,
        disabled=pick("disabled", False),
        endpoint=(host.endpoint if host is not None and host.endpoint else definition.get("endpoint", "")),
        gvl_vendor_id=pick("gvl_vendor_id", 0),
        media_types={k: tuple(v) for k, v in (definition.get("media_types") or {}).items()},
        openrtb_version=str(pick("openrtb_version", "2.5")),
        modifying_vast_xml_allowed=pick("modifying_vast_xml_allowed", True),
        sync_key=sync_key,
        usersync_enabled=host_sync.enabled if "enabled" in host_sync_given else sync_def.get("enabled", True),
        sync_endpoints=endpoints,
        sync_options={
            "support_cors": host_sync.support_cors if "support_cors" in host_sync_given else
            bool(sync_def.get("support_cors", False)),
            "format_override": sync_def.get("format_override", ""),
            "skip_when_gdpr": bool((sync_def.get("skipwhen") or {}).get("gdpr", False)),
            "skip_when_gpp_sid": tuple(str(v) for v in (sync_def.get("skipwhen") or {}).get("gpp_sid", ())),
        },
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

