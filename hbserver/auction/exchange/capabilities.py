"""What each bidder may be sent, from its definition's capabilities (PBS-Go's info-aware bidder).

A bidder that does not serve the request's channel (site, app or dooh) gets no call and a warning.
Otherwise each of its imps loses the media types the bidder does not support on that channel (a
warning each); an imp left with none is skipped for that bidder (a warning), and a bidder left
with no imp gets no call (a warning). A bidder that cannot take multi-format imps
(``multiformat_supported: false``) keeps only its preferred media type of each, from
``ext.prebid.biddercontrols.<bidder>.prefmtype``; without one, a multi-format imp is skipped.
Texts are PBS-Go's. Imps are the bidder's own copies (``split``), so changing them is safe.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MEDIA_TYPES = ("banner", "video", "audio", "native")
NO_MEDIA_TYPES_LEFT = "Bid request didn't contain media types supported by the bidder"


def request_channel(request: Mapping[str, Any]) -> str:
    """The channel PBS-Go checks last wins: dooh over app over site; "" for none."""
    for channel in ("dooh", "app", "site"):
        if request.get(channel) is not None:
            return channel
    return ""


def fit_imps(
    imps: list[dict[str, Any]],
    supported: Mapping[str, tuple[str, ...]],
    channel: str,
    multiformat: bool = True,
    preferred: str = "",
) -> tuple[list[dict[str, Any]], list[str]]:
    """The imps a bidder may get (changed in place where a media type goes) and the warnings; []
    imps means no call, and the last warning then says why."""
    allowed = supported.get(channel)
    if allowed is None:
        return [], [f"this bidder does not support {channel or 'site'} requests"]
    warnings: list[str] = []
    kept = []
    for index, imp in enumerate(imps):
        for kind in MEDIA_TYPES:
            if kind not in allowed and imp.get(kind) is not None:
                del imp[kind]
                warnings.append(f"request.imp[{index}] uses {kind}, but this bidder doesn't support it")
        present = [kind for kind in MEDIA_TYPES if imp.get(kind) is not None]
        if not present:
            warnings.append(f"request.imp[{index}] has no supported MediaTypes. It will be ignored")
            continue
        if not multiformat and len(present) > 1 and not _keep_preferred(imp, preferred, warnings):
            continue
        kept.append(imp)
    if not kept:
        warnings.append(NO_MEDIA_TYPES_LEFT)
    return kept, warnings


def _keep_preferred(imp: dict[str, Any], preferred: str, warnings: list[str]) -> bool:
    """Strip a multi-format imp down to ``preferred``; False (with the reason) when it must go."""
    imp_id = imp.get("id")
    if not preferred:
        warnings.append(
            f"Removing the imp {imp_id} as the bidder does not support multi-format and preferred media "
            "type is not defined for the bidder"
        )
        return False
    if preferred not in MEDIA_TYPES:
        warnings.append(f"Imp {imp_id} has an invalid preferred media type: {preferred}. It will be ignored.")
        return False
    if imp.get(preferred) is None:
        warnings.append(f"Imp {imp_id} does not have a preferred {preferred.upper()} media type. It will be ignored.")
        return False
    for kind in MEDIA_TYPES:
        if kind != preferred and imp.get(kind) is not None:
            del imp[kind]
            warnings.append(f"Imp {imp_id} uses {kind}, removing {kind} as the bidder doesn't support multi-format")
    return True


def preferred_media_type(prebid: Mapping[str, Any], name: str) -> str:
    """``ext.prebid.biddercontrols.<name>.prefmtype`` when it is a string, else ""."""
    controls = prebid.get("biddercontrols")
    control = controls.get(name) if isinstance(controls, dict) else None
    value = control.get("prefmtype") if isinstance(control, dict) else None
    return value if isinstance(value, str) else ""
