"""Sync URL templates in Prebid Server's Go-template syntax (``{{.GDPR}}``), compiled at start-up.

Building a bidder's sync URL follows PBS-Go's ``buildTemplate``:

1. The redirect back to us (``user_sync.redirect_url``) gets the per-bidder values filled in
   now: ``SyncerKey`` and ``BidderName`` (the bidder name), ``SyncType`` (``b``/``i``),
   ``UserMacro`` and ``ExternalURL``.
2. That redirect is query-escaped everywhere outside the macros still left in it.
3. It replaces ``{{.RedirectURL}}`` in the bidder's URL.

The privacy macros (``GDPR``, ``GDPRConsent``, ``USPrivacy``, ``GPP``, ``GPPSID``) are left for
request time, when they are inserted raw, as PBS does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote_plus, urlsplit

MACRO = re.compile(r"{{\s*\.(\w+)\s*}}")
REQUEST_MACROS = frozenset({"GDPR", "GDPRConsent", "USPrivacy", "GPP", "GPPSID"})
BIDDER_MACROS = frozenset({"SyncerKey", "BidderName", "SyncType", "UserMacro", "ExternalURL"})


class TemplateError(ValueError):
    pass


def query_escape(text: str) -> str:
    """Go's ``url.QueryEscape``: unreserved characters stay, space is '+', the rest is %XX."""
    return quote_plus(text, safe="-_.~")


def escape_outside_macros(text: str) -> str:
    """Query-escape every stretch of ``text`` that is not a ``{{ .Macro }}``."""
    out = []
    position = 0
    for match in MACRO.finditer(text):
        out.append(query_escape(text[position:match.start()]))
        out.append(match.group(0))
        position = match.end()
    out.append(query_escape(text[position:]))
    return "".join(out)


def fill(text: str, values: Mapping[str, str]) -> str:
    """Replace the macros named in ``values``; leave the others as they are."""
    return MACRO.sub(lambda m: values.get(m.group(1), m.group(0)), text)


@dataclass(frozen=True, slots=True)
class SyncURLTemplate:
    """A compiled template: literal text and request-time macro names, alternating."""

    parts: tuple[str, ...]  # even indexes: literal text; odd indexes: macro names

    def render(self, values: Mapping[str, str]) -> str:
        """The URL with ``values`` inserted raw; a macro without a value renders empty."""
        out = list(self.parts)  # copying and joining beats str.format here by half
        get = values.get
        for i in range(1, len(out), 2):
            out[i] = get(out[i], "")
        return "".join(out)


def compile_template(text: str) -> SyncURLTemplate:
    """Compile a URL whose only remaining macros are the request-time ones."""
    parts: list[str] = []
    position = 0
    for match in MACRO.finditer(text):
        name = match.group(1)
        if name not in REQUEST_MACROS:
            raise TemplateError(f"unknown macro {{{{.{name}}}}}")
        parts.append(text[position:match.start()])
        parts.append(name)
        position = match.end()
    rest = text[position:]
    if "{{" in rest or any("{{" in p for p in parts[::2]):
        raise TemplateError("'{{' that is not a macro like {{.GDPR}}")
    parts.append(rest)
    return SyncURLTemplate(tuple(parts))


VALIDATION_VALUES = {
    "GDPR": "anyGDPR", "GDPRConsent": "anyGDPRConsent", "USPrivacy": "anyCCPAConsent", "GPP": "anyGPP", "GPPSID": "1",
}


def build_sync_url(
    url: str,
    *,
    redirect_template: str,
    bidder: str,
    sync_type_letter: str,
    user_macro: str,
    external_url: str,
) -> SyncURLTemplate:
    """A bidder endpoint's sync URL template (steps 1-3 above), validated like PBS does."""
    redirect = fill(
        redirect_template,
        {
            "SyncerKey": bidder,
            "BidderName": bidder,
            "SyncType": sync_type_letter,
            "UserMacro": user_macro,
            "ExternalURL": external_url,
        },
    )
    escaped = escape_outside_macros(redirect)
    template = compile_template(fill(url, {"RedirectURL": escaped}))
    sample = template.render(VALIDATION_VALUES)
    parts = urlsplit(sample)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise TemplateError(f"does not give an http(s) URL: {sample!r}")
    return template
