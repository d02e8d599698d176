"""PBS-Go's deprecated ``/openrtb2/video`` request: its pod configuration read and checked, and the
OpenRTB request built from it (PBS-Go's ``parseVideoRequest``, ``validateVideoRequest``,
``mergeData``, ``createBidExtension`` and ``createImpressions``, with their texts).

Pure functions over plain JSON: the endpoint (:mod:`hbserver.endpoints.video`) fetches the stored
video request and the pods' stored imps, then runs the ordinary auction on what :func:`build_request`
returns. A pod with a problem is left out of the auction and answered with its errors; a request
whose every pod has one is refused.

Each pod ``p`` (``adpoddurationsec`` ``D``, durations ``d1..dn``) becomes ``D // min(d)`` imps
``<podid>_0 .. <podid>_<k-1>`` copied from its stored imp (``configid``) with the request's
``video``: with ``requireexactduration`` at least one imp per duration, the imps split evenly over the
durations in order (``minduration = maxduration = d``; the last duration takes any rest); without it
each imp has ``maxduration = max(d)`` and the auction is told the durations
(``ext.prebid.targeting.durationrangesec``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote_plus

DEFAULT_TMAX_MS = 5000  # PBS-Go's defaultRequestTimeout for a video request without tmax
REQUEST_ID = "bid_id"  # PBS-Go names every video auction so

# Why an error answers something other than 500 (PBS-Go's handleError): the error's own text is not shown.
BLOCKED = "blocked"  # blocked app or disabled account: 503
ACCOUNT_REQUIRED = "account_required"  # 400
ACCOUNT_MALFORMED = "account_malformed"  # 500


@dataclass(frozen=True, slots=True)
class VideoError:
    """One error of a refused video request; ``kind`` "" is an ordinary one (500, its text shown)."""

    text: str
    kind: str = ""


@dataclass(slots=True)
class PodError:
    """A pod left out of the auction, answered in ``adPods`` with its errors."""

    pod_id: int
    index: int
    messages: list[str] = field(default_factory=list)


@dataclass(slots=True)
class VideoRequest:
    """A checked video request: the merged JSON and what its pods say."""

    body: dict[str, Any]
    durations: list[int]
    exact: bool
    pods: list[dict[str, Any]]  # each with int podid and adpoddurationsec, str configid


def _int(value: Any) -> int:
    """A Go int field: a JSON integer (bools and floats are not), anything absent is 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _type_problems(body: Mapping[str, Any]) -> list[VideoError]:
    """The fields Go could not decode into BidRequestVideo (json-iterator would fail the request)."""
    problems = []
    objects = ("podconfig", "site", "app", "user", "device", "includebrandcategory", "video", "content", "regs")
    for name in objects:
        if name in body and body[name] is not None and not isinstance(body[name], dict):
            problems.append(VideoError(f"request.{name} must be an object"))
    podconfig = body.get("podconfig")
    if isinstance(podconfig, dict):
        durations = podconfig.get("durationrangesec")
        if durations is not None and (not isinstance(durations, list) or not all(_is_int(d) for d in durations)):
            problems.append(VideoError("request.podconfig.durationrangesec must be an array of integers"))
        pods = podconfig.get("pods")
        if pods is not None and (not isinstance(pods, list) or not all(isinstance(p, dict) for p in pods)):
            problems.append(VideoError("request.podconfig.pods must be an array of objects"))
        elif pods:
            for pod in pods:
                if not all(_is_int(pod.get(k, 0)) for k in ("podid", "adpoddurationsec")) or not isinstance(
                    pod.get("configid", ""), str
                ):
                    problems.append(
                        VideoError(
                            "request.podconfig.pods: podid and adpoddurationsec must be integers, configid a string"
                        )
                    )
                    break
    for name in ("tmax", "test"):
        if name in body and not _is_int(body[name]):
            problems.append(VideoError(f"request.{name} must be an integer"))
    return problems


def _is_int(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def parse_video_request(
    body: Any, user_agent: str, *, stored_required: bool, blocked_apps: frozenset[str]
) -> tuple[VideoRequest | None, list[VideoError], list[PodError]]:
    """The merged request checked as PBS-Go's ``validateVideoRequest`` checks it, in its order and
    words; ``device.ua`` from the ``User-Agent`` header (percent-decoded when it holds ``%``) when the
    body has none. Returns the request (None when it cannot be read), fatal errors and pod errors."""
    if not isinstance(body, dict):
        return None, [VideoError("request body must be a JSON object")], []
    problems = _type_problems(body)
    if problems:
        return None, problems, []
    body = dict(body)
    device = dict(body.get("device") or {})
    if not device.get("ua") and user_agent:
        device["ua"] = _decoded_agent(user_agent)
    body["device"] = device
    podconfig = body.get("podconfig") or {}
    durations = [d for d in podconfig.get("durationrangesec") or [] if d is not None]
    pods = [
        {
            "podid": _int(p.get("podid")),
            "adpoddurationsec": _int(p.get("adpoddurationsec")),
            "configid": p.get("configid") or "",
        }
        for p in podconfig.get("pods") or []
    ]
    errors: list[VideoError] = []
    if stored_required and not body.get("storedrequestid"):
        errors.append(VideoError("request missing required field: storedrequestid"))
    if not durations:
        errors.append(VideoError("request missing required field: PodConfig.DurationRangeSec"))
    if any(d <= 0 for d in durations):
        errors.append(VideoError("duration array cannot contain negative or zero values"))
    if not pods:
        errors.append(VideoError("request missing required field: PodConfig.Pods"))
    pod_errors = _pod_errors(pods)
    site_app = _site_app_errors(body, blocked_apps)
    errors.extend(site_app)
    if site_app and site_app[-1].kind == BLOCKED:  # PBS-Go returns at once
        return None, errors, pod_errors
    errors.extend(_video_errors(body))
    request = VideoRequest(body, durations, podconfig.get("requireexactduration") is True, pods)
    return request, errors, pod_errors


def _decoded_agent(user_agent: str) -> str:
    """PBS-Go reads a ``User-Agent`` holding ``%`` as query-escaped (``+`` is a space then)."""
    if "%" not in user_agent:
        return user_agent
    try:
        return unquote_plus(user_agent, errors="strict")
    except UnicodeDecodeError:
        return user_agent


def _pod_errors(pods: list[dict[str, Any]]) -> list[PodError]:
    found: list[PodError] = []
    seen: set[int] = set()
    for index, pod in enumerate(pods):
        pod_id, duration = pod["podid"], pod["adpoddurationsec"]
        messages = []
        if pod_id in seen:
            messages.append(f"request duplicated required field: PodConfig.Pods.PodId, Pod id: {pod_id}")
        seen.add(pod_id)
        if pod_id <= 0:
            messages.append(f"request missing required field: PodConfig.Pods.PodId, Pod index: {index}")
        if duration == 0:
            messages.append(
                f"request missing or incorrect required field: PodConfig.Pods.AdPodDurationSec, Pod index: {index}"
            )
        if duration < 0:
            messages.append(
                f"request incorrect required field: PodConfig.Pods.AdPodDurationSec is negative, Pod index: {index}"
            )
        if not pod["configid"]:
            messages.append(f"request missing or incorrect required field: PodConfig.Pods.ConfigId, Pod index: {index}")
        if messages:
            found.append(PodError(pod_id, index, messages))
    return found


def _site_app_errors(body: Mapping[str, Any], blocked_apps: frozenset[str]) -> list[VideoError]:
    site, app = body.get("site"), body.get("app")
    if app is None and site is None:
        return [VideoError("request missing required field: site or app")]
    if app is not None and site is not None:
        return [VideoError("request.site or request.app must be defined, but not both")]
    if site is not None:
        if not site.get("id") and not site.get("page"):
            return [VideoError("request.site missing required field: id or page")]
        return []
    app_id = app.get("id") if isinstance(app.get("id"), str) else ""
    if app_id:
        if app_id in blocked_apps:
            return [VideoError(f"Prebid-server does not process requests from App ID: {app_id}", BLOCKED)]
        return []
    if not app.get("bundle"):
        return [VideoError("request.app missing required field: id or bundle")]
    return []


def _video_errors(body: dict[str, Any]) -> list[VideoError]:
    video = body.get("video")
    if video is None:
        return [VideoError("request missing required field: Video")]
    errors = []
    mimes = video.get("mimes")
    if not mimes:
        errors.append(VideoError("request missing required field: Video.Mimes"))
    elif isinstance(mimes, list):
        kept = [m for m in mimes if m != ""]
        if not kept:
            errors.append(
                VideoError("request missing required field: Video.Mimes, mime types contains empty strings only")
            )
        body["video"] = {**video, "mimes": kept}
    if not video.get("protocols"):
        errors.append(VideoError("request missing required field: Video.Protocols"))
    return errors


def bid_request_ext(video: VideoRequest) -> dict[str, Any]:
    """PBS-Go's ``createBidExtension``: VAST cached, bidder keys and brand categories asked for."""
    body = video.body
    brand = body.get("includebrandcategory")
    category: dict[str, Any] = {"withcategory": False}
    if isinstance(brand, dict):
        category = {"withcategory": True}
        if _int(brand.get("primaryadserver")):
            category["primaryadserver"] = _int(brand.get("primaryadserver"))
        if brand.get("publisher"):
            category["publisher"] = brand["publisher"]
        if isinstance(brand.get("translatecategories"), bool):
            category["translatecategories"] = brand["translatecategories"]
    targeting: dict[str, Any] = {}
    if body.get("pricegranularity") is not None:
        targeting["pricegranularity"] = body["pricegranularity"]
    targeting["includebrandcategory"] = category
    if not video.exact and video.durations:
        targeting["durationrangesec"] = list(video.durations)
    targeting["includebidderkeys"] = True
    if body.get("appendbiddernames") is True:
        targeting["appendbiddernames"] = True
    prebid: dict[str, Any] = {"cache": {"vastxml": {}}, "targeting": targeting}
    if body.get("supportdeals") is True:
        prebid["supportdeals"] = True
    return {"prebid": prebid}


def build_request(
    video: VideoRequest, imps: list[dict[str, Any]], default: dict[str, Any] | None, *, debug: bool
) -> dict[str, Any]:
    """PBS-Go's ``mergeData`` over the host's default request (or nothing): ``site``/``app`` with the
    request's ``content``, ``device``, ``user``, ``bcat``/``badv`` when not empty, ``regs``, ``test``
    (1 with ``?debug=true``), ``tmax`` (5000 when 0), the ext of :func:`bid_request_ext`, the imps."""
    body = video.body
    request: dict[str, Any] = copy.deepcopy(default) if default else {}
    content = body.get("content") or {}
    for name in ("site", "app"):
        if body.get(name) is not None:
            request[name] = {**body[name], "content": content}
    request["device"] = body.get("device") or {}
    if body.get("user") is not None:
        request["user"] = body["user"]
    else:
        request.pop("user", None)
    for name in ("bcat", "badv"):
        if body.get(name):
            request[name] = body[name]
    request["ext"] = bid_request_ext(video)
    test = 1 if debug else _int(body.get("test"))
    if test:
        request["test"] = test
    else:
        request.pop("test", None)
    request["tmax"] = _int(body.get("tmax")) or DEFAULT_TMAX_MS
    if body.get("regs") is not None:
        request["regs"] = body["regs"]
    request["imp"] = imps
    request["id"] = REQUEST_ID
    return request


def pod_imps(
    video: VideoRequest, stored_imps: Mapping[str, Any], pod_errors: list[PodError]
) -> tuple[list[dict[str, Any]], list[PodError]]:
    """PBS-Go's ``createImpressions`` over the pods without errors: each pod's imps from its stored
    imp (a JSON object in ``stored_imps`` by ``configid``; a pod whose stored imp is missing gets an
    error and no imps). Returns the imps and every pod error (the ones given first)."""
    durations = video.durations
    shortest, longest = min(durations), max(durations)
    failed = {e.index for e in pod_errors}
    errors = list(pod_errors)
    imps: list[dict[str, Any]] = []
    for index, pod in enumerate(video.pods):
        if index in failed:
            continue
        stored = stored_imps.get(pod["configid"])
        if not isinstance(stored, dict):
            message = f"unable to load configid {pod['configid']}, Pod id: {pod['podid']}"
            errors.append(PodError(pod["podid"], index, [message]))
            continue
        count = pod["adpoddurationsec"] // shortest
        if video.exact:
            count = max(count, len(durations))
        per_duration = count // len(durations) if video.exact else 1
        for slot in range(count):
            imp = copy.deepcopy(stored)
            imp["video"] = slot_video(
                video.body.get("video") or {}, video.exact, durations, slot // per_duration, longest
            )
            imp["id"] = f"{pod['podid']}_{slot}"
            imps.append(imp)
    return imps, errors


def slot_video(video: dict[str, Any], exact: bool, durations: list[int], which: int, longest: int) -> dict[str, Any]:
    """One imp's video: the request's, with its slot's duration (exact) or the longest as max."""
    out = dict(video)
    if exact:
        out["minduration"] = out["maxduration"] = durations[min(which, len(durations) - 1)]
    else:
        out["maxduration"] = longest
    return out
