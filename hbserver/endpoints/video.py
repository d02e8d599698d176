"""POST /openrtb2/video: PBS-Go's deprecated long-form video endpoint, off unless the host sets
``video.enable_deprecated_endpoint`` (else 501 with PBS-Go's text).

The body (size-capped like every body) is merged over the stored video request its
``storedrequestid`` names (``stored_video_req``; with ``video_stored_request_required`` the id is a
must), checked (:mod:`hbserver.auction.request.video`), its pods' stored imps fetched from the stored
requests (``configid``), the OpenRTB request built and auctioned by the ordinary auction, and the
answer is ``{"adPods": [...]}`` (:mod:`hbserver.auction.response.adpods`). Every refusal is PBS-Go's
``Critical error while running the video endpoint: <errors>`` (500; 503 for a blocked app or a disabled
account and 400 without a required account, those errors not shown).
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from aiohttp import web

from hbserver.auction.auction_metrics import RequestCounts
from hbserver.auction.common.mergepatch import merge_patch
from hbserver.auction.core import STORED_FETCH_TIMEOUT_S, AuctionRefused, AuctionService
from hbserver.auction.request.stored import fetch_failure
from hbserver.auction.request.video import (
    ACCOUNT_MALFORMED,
    ACCOUNT_REQUIRED,
    BLOCKED,
    PodError,
    VideoError,
    build_request,
    parse_video_request,
    pod_imps,
)
from hbserver.auction.response.adpods import CachingFailed, build_adpods
from hbserver.config import Config
from hbserver.endpoints.auction import http_context, observe_topics
from hbserver.metrics import Metrics
from hbserver.stores.stored import StoredData
from hbserver.stores.stored.base import not_found
from hbserver.stores.stored.filesystem import FilesystemBackend
from hbserver.usersync.service import SyncService
from hbserver.web.body import JsonTooDeep, loads_json, read_body
from hbserver.web.errors import HttpError, text_response
from hbserver.web.response import FastResponse

DISABLED_TEXT = (
    "The video endpoint is deprecated and will be removed in 5.0. You may re-enable it via the host "
    "configuration setting video.enable_deprecated_endpoint"
)
ERROR_PREFIX = "Critical error while running the video endpoint: "
REQUEST_TYPE = "video"  # PBS-Go's metrics.ReqTypeVideo
_INVALID = "Invalid request: "


class VideoRefused(Exception):
    def __init__(self, errors: list[VideoError]) -> None:
        super().__init__(errors)
        self.errors = errors


def refusal(errors: list[VideoError]) -> web.Response:
    """PBS-Go's ``handleError``: each error's text after a space, up to the first one that sets the
    status (blocked 503, account required 400, malformed account 500), which is not shown."""
    status, shown = 500, []
    for error in errors:
        if error.kind:
            status = {BLOCKED: 503, ACCOUNT_REQUIRED: 400}.get(error.kind, 500)
            break
        shown.append(" " + error.text)
    return text_response(status, ERROR_PREFIX + "".join(shown))


def video_stored_requests(config: Config, metrics: Metrics) -> StoredData | None:
    """The stored video requests (PBS-Go's ``stored_video_req``): a filesystem directory, or None."""
    files = config.stored_video_req.filesystem
    if not files.enabled:
        return None
    return StoredData(metrics, filesystem=FilesystemBackend(files.directorypath), cache_size=None)


def _refused_errors(exc: AuctionRefused) -> list[VideoError]:
    """The auction's refusal as video errors: its ``Invalid request:`` lines, or the status it stands for."""
    if exc.metric == "blockedapp":
        return [VideoError(exc.message.strip(), BLOCKED)]
    if exc.metric == "acctconfigerr":
        return [VideoError(exc.message.strip(), ACCOUNT_MALFORMED)]
    if exc.status == 400 and "Account ID" in exc.message:
        return [VideoError(exc.message.strip(), ACCOUNT_REQUIRED)]
    lines = [line.removeprefix(_INVALID) for line in exc.message.splitlines() if line.strip()]
    return [VideoError(line) for line in lines]


class VideoEndpoint:
    def __init__(
        self, service: AuctionService, videos: StoredData | None, sync: SyncService, config: Config, metrics: Metrics
    ) -> None:
        self.enabled = config.video.enable_deprecated_endpoint
        self.service = service
        self.videos = videos
        self.sync = sync
        self.stored_required = config.video_stored_request_required
        self.override_token = config.debug.override_token
        self.counts = RequestCounts(metrics)

    async def handle(self, request: web.Request) -> web.Response:
        if not self.enabled:
            return text_response(501, DISABLED_TEXT)
        loop = asyncio.get_running_loop()
        started = loop.time()
        raw = b""
        try:
            raw = await read_body(request)
            response = await self._answer(request, raw, started)
            status = "ok"
        except HttpError as exc:
            response, status = exc.response(), "badinput"
        except VideoRefused as exc:
            response = refusal(exc.errors)
            status = {503: "blockedapp", 400: "badinput"}.get(response.status, "err")
        self.counts.answered(REQUEST_TYPE, status, loop.time() - started, len(raw))
        observe_topics(request, response)
        return response

    async def _answer(self, request: web.Request, raw: bytes, started: float) -> web.Response:
        body = await self._merged(_decoded(raw))
        video, errors, pod_errors = parse_video_request(
            body,
            request.headers.get("User-Agent", ""),
            stored_required=self.stored_required,
            blocked_apps=self.service.blocked_apps,
        )
        if errors or video is None:
            raise VideoRefused(errors)
        imps, pod_errors = pod_imps(video, await self._stored_imps(video.pods, pod_errors), pod_errors)
        if len(pod_errors) == len(video.pods):
            text = "; ".join(", ".join(e.messages) for e in pod_errors)
            raise VideoRefused([VideoError(f"all pods are incorrect: {text}")])
        debug = request.query.get("debug", "").lower() == "true"
        openrtb = build_request(video, imps, self.service.default_request, debug=debug)
        context = http_context(request, self.sync, self.override_token)
        try:
            result = await self.service.execute(openrtb, context, started)
        except AuctionRefused as exc:
            raise VideoRefused(_refused_errors(exc)) from None
        try:
            answer: dict[str, Any] = {"adPods": build_adpods(result.response, pod_errors)}
        except CachingFailed as exc:
            raise VideoRefused([VideoError(str(exc))]) from None
        if openrtb.get("test") == 1 and result.response.get("ext") is not None:
            answer["ext"] = result.response["ext"]
        return FastResponse(body=orjson.dumps(answer), content_type="application/json")

    async def _merged(self, body: Any) -> Any:
        """The body merged over its stored video request (PBS-Go: JSON merge patch, the body winning)."""
        stored_id = body.get("storedrequestid") if isinstance(body, dict) else None
        if not isinstance(stored_id, str):
            if self.stored_required:
                raise VideoRefused([VideoError("Unable to find required stored request id")])
            return body
        if self.videos is None:
            raise VideoRefused([VideoError(not_found("requests", stored_id))])
        found, _imps, errors = await self.videos.fetch_requests([stored_id], [], STORED_FETCH_TIMEOUT_S)
        if errors:
            failure = fetch_failure(errors)
            raise VideoRefused([VideoError(str(failure) if failure else e) for e in errors])
        try:
            stored = loads_json(found[stored_id])
        except orjson.JSONDecodeError:
            raise VideoRefused([VideoError(f'Stored Request with ID="{stored_id}" is not valid JSON')]) from None
        return merge_patch(stored, body)

    async def _stored_imps(self, pods: list[dict[str, Any]], pod_errors: list[PodError]) -> dict[str, Any]:
        """The pods' stored imps (parsed) by ``configid``; one that is missing or unreadable is left out."""
        failed = {e.index for e in pod_errors}
        wanted = sorted({pod["configid"] for i, pod in enumerate(pods) if i not in failed})
        stored = self.service.stored
        if not wanted or stored is None:
            return {}
        _requests, found, _errors = await stored.fetch_requests([], wanted, STORED_FETCH_TIMEOUT_S)
        parsed = {}
        for imp_id, data in found.items():
            try:
                parsed[imp_id] = loads_json(data)
            except orjson.JSONDecodeError:
                continue
        return parsed


def _decoded(raw: bytes) -> Any:
    """The body as JSON; one that is not is refused as PBS-Go's JSON decoder refuses it."""
    try:
        return loads_json(raw) if raw and not raw.isspace() else None
    except JsonTooDeep as exc:
        raise VideoRefused([VideoError(str(exc))]) from None
    except orjson.JSONDecodeError:
        raise VideoRefused([VideoError("request body is not valid JSON")]) from None
