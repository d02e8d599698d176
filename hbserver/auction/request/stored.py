"""Stored data in an auction: stored requests and imps merged under the incoming request, and
stored auction/bid responses (reference §2.3-2.5).

The stored document is the merge-patch *target* and the incoming JSON the *patch*: incoming values
win, arrays are replaced, ``null`` deletes.

Whose fault: an id that is not stored, an id no backend can look up (empty, too long, control
characters) or stored JSON that is malformed or nested deeper than
:data:`~hbserver.web.body.MAX_JSON_DEPTH` is the request's problem (:class:`RequestError`, 400 with
PBS-Go's text where it has one). A backend that failed or did not answer in time is the server's
(:class:`StoredDataUnavailable`, 503); its text names the id, never the backend's host, port or
URL (the stored-data service logs the detail).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from hbserver.auction.common.mergepatch import merge_patch
from hbserver.auction.request.validate import RequestError
from hbserver.stores.stored.base import id_problem
from hbserver.uuids import new_uuid
from hbserver.web.body import loads_json

UUID_MACRO = "{{UUID}}"
_NOT_FETCHED = " could not be fetched"


class StoredDataUnavailable(Exception):
    """Stored data could not be fetched (backend down or slow): a 503 with this text."""


def _client_fault(error: str) -> bool:
    """Is this stored-data error text the request's fault (not stored, id refused) rather than a backend's?"""
    return (
        error.endswith(" not found.")
        or (" is invalid: " in error and _NOT_FETCHED not in error)
        or error.startswith(("No stored ", "Multiple stored "))  # per-account ids (stores.stored.scoped)
    )


def fetch_failure(errors: list[str]) -> StoredDataUnavailable | None:
    """A 503 for the backend failures among ``errors`` (each cut to the id: no backend detail), or None."""
    failures = [error for error in errors if not _client_fault(error)]
    if not failures:
        return None
    lines = []
    for error in failures:
        head, found, _detail = error.partition(_NOT_FETCHED)
        lines.append(f"{head}{_NOT_FETCHED}: stored data is unavailable" if found else "stored data is unavailable")
    return StoredDataUnavailable("\n".join(lines))


class StoredSource(Protocol):
    async def fetch_requests(
        self, request_ids: list[str], imp_ids: list[str], timeout_s: float, *, account: str = ""
    ) -> tuple[dict[str, bytes], dict[str, bytes], list[str]]: ...

    async def fetch_responses(self, ids: list[str], timeout_s: float) -> tuple[dict[str, bytes], list[str]]: ...


def _stored_id(container: Any, path: str, index: int | None = None) -> str | None:
    """``ext.prebid.storedrequest.id`` of the request (or of imp ``index``), None without one."""
    if not isinstance(container, dict):
        return None
    ext = container.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    ref = prebid.get("storedrequest") if isinstance(prebid, dict) else None
    if not isinstance(ref, dict) or "id" not in ref:
        return None
    where = path if index is None else f"{path}[{index}]"
    if not isinstance(ref["id"], str):
        raise RequestError(f"{where}.ext.prebid.storedrequest.id must be a string")
    problem = id_problem(ref["id"])
    if problem is not None:
        raise RequestError(f"{where}.ext.prebid.storedrequest.id is invalid: {problem}")
    return ref["id"]


def _parse(raw: bytes, what: str) -> Any:
    """Stored JSON within the nesting limit; malformed or too deep is a RequestError naming it."""
    try:
        return loads_json(raw)
    except orjson.JSONDecodeError as exc:
        raise RequestError(f"{what} is not valid JSON: {exc}") from None


async def merge_stored(
    request: dict[str, Any],
    source: StoredSource | None,
    timeout_s: float,
    stored_imps_seen: dict[int, Any] | None = None,
) -> dict[str, Any]:
    """``request`` with its stored request and stored imps merged in; raises RequestError, or
    StoredDataUnavailable when a backend failed. ``stored_imps_seen`` (when given) gets each parsed
    stored imp by the index of the imp that named it (for echovideoattrs)."""
    request_id = _stored_id(request, "request")
    imps = request.get("imp")
    imp_refs = []
    if isinstance(imps, list):
        for index, imp in enumerate(imps):
            ref = _stored_id(imp, "request.imp", index)
            if ref is not None:
                imp_refs.append((index, ref))
    if request_id is None and not imp_refs:
        return request
    if source is None:
        raise RequestError("stored requests are referenced but no stored request source is configured")
    from hbserver.auction.request.profiles import request_account  # profiles imports this module

    # PBS-Java's per-account stored ids: the account the incoming request names picks among an id's items
    stored_requests, stored_imps, errors = await source.fetch_requests(
        [request_id] if request_id is not None else [], [ref for _, ref in imp_refs], timeout_s,
        account=request_account(request),
    )
    if errors:
        raise fetch_failure(errors) or RequestError("\n".join(errors))
    merged = request
    if request_id is not None:
        stored = _parse(stored_requests[request_id], f'Stored Request with ID="{request_id}"')
        merged = merge_patch(stored, request)
        if merged.get("id") == UUID_MACRO:
            merged["id"] = new_uuid()
    if imp_refs:
        # stored imps refer to the imps of the incoming request (the merged request keeps them
        # unless the incoming request had none, in which case it has no imp references either)
        merged_imps = list(merged.get("imp") or [])
        for index, ref in imp_refs:
            stored_imp = _parse(stored_imps[ref], f'Stored Imp with ID="{ref}"')
            merged_imps[index] = merge_patch(stored_imp, merged_imps[index])
            if stored_imps_seen is not None:
                stored_imps_seen[index] = stored_imp
        merged = dict(merged)
        merged["imp"] = merged_imps
    return merged


def _check_response_id(item_id: str, where: str) -> None:
    problem = id_problem(item_id)
    if problem is not None:
        raise RequestError(f"{where} is invalid: {problem}")


@dataclass(slots=True)
class StoredBidResponse:
    bidder: str
    imp_id: str
    body: bytes
    replace_imp_id: bool


@dataclass(slots=True)
class StoredResponses:
    auction: dict[str, list[Any]] = field(default_factory=dict)  # imp id -> stored seatbids
    by_bidder: dict[str, list[StoredBidResponse]] = field(default_factory=dict)
    # imp id -> its stored imp's video, for imps asking for echovideoattrs (hbserver.auction.request.echo_video)
    video_attrs: dict[str, Any] | None = None

    @property
    def empty(self) -> bool:
        return not self.auction and not self.by_bidder


def refers_to_stored_responses(request: Mapping[str, Any]) -> bool:
    """Does any imp name a stored auction or bid response? (Most requests: no.) An imp that is not an
    object names none (a request not validated yet may hold one)."""
    for imp in request["imp"]:
        ext = imp.get("ext") if isinstance(imp, dict) else None
        prebid = ext.get("prebid") if isinstance(ext, dict) else None
        if isinstance(prebid, dict) and ("storedauctionresponse" in prebid or "storedbidresponse" in prebid):
            return True
    return False


async def load_stored_responses(
    request: dict[str, Any], imp_bidders: list[dict[str, Any]], source: StoredSource | None, timeout_s: float
) -> StoredResponses:
    """``imp.ext.prebid.storedauctionresponse`` / ``storedbidresponse`` fetched; raises RequestError."""
    auction_refs: list[tuple[str, str]] = []
    bid_refs: list[tuple[str, str, str, bool]] = []
    imps = request["imp"]
    for index, imp in enumerate(imps):
        prebid = (imp.get("ext") or {}).get("prebid")
        if not isinstance(prebid, dict):
            continue
        auction_ref = prebid.get("storedauctionresponse")
        if auction_ref is not None:
            if not isinstance(auction_ref, dict) or not isinstance(auction_ref.get("id"), str) or not auction_ref["id"]:
                raise RequestError(
                    f'request.imp[{index}] has ext.prebid.storedauctionresponse specified, but "id" field is missing '
                )
            _check_response_id(auction_ref["id"], f"request.imp[{index}].ext.prebid.storedauctionresponse.id")
            auction_refs.append((imp["id"], auction_ref["id"]))
        bid_ref = prebid.get("storedbidresponse")
        if bid_ref is not None:
            bid_refs.extend(_bid_refs(bid_ref, index, imp, imp_bidders[index]))
    if auction_refs and len(auction_refs) != len(imps):
        raise RequestError(
            "request validation failed. The StoredAuctionResponse.ID field must be completely present with, "
            "or completely absent from, all impressions in request. No StoredAuctionResponse data found for "
            f"request.imp[{next(i for i, imp in enumerate(imps) if imp['id'] not in dict(auction_refs))}].ext.prebid \n"
        )
    return await _fetch_stored_responses(auction_refs, bid_refs, source, timeout_s)


def _bid_refs(
    bid_ref: Any, index: int, imp: dict[str, Any], bidders: dict[str, Any]
) -> list[tuple[str, str, str, bool]]:
    """One imp's ``storedbidresponse`` entries: (imp id, bidder, response id, replace the imp id)."""
    if not isinstance(bid_ref, list):
        raise RequestError(f"request.imp[{index}].ext.prebid.storedbidresponse must be an array")
    refs = []
    for entry in bid_ref:
        bad = not isinstance(entry, dict) or not isinstance(entry.get("bidder"), str)
        if bad or not isinstance(entry.get("id"), str):
            raise RequestError(
                f"request.imp[{index}] has ext.prebid.storedbidresponse specified, "
                'but "id" or/and "bidder" fields are missing '
            )
        if entry["bidder"] not in bidders:
            raise RequestError(
                f"request validation failed. Stored bid responses are specified for imp {imp['id']}. "
                "Bidders specified in imp.ext should match with bidders specified in "
                "imp.ext.prebid.storedbidresponse"
            )
        _check_response_id(entry["id"], f"request.imp[{index}].ext.prebid.storedbidresponse.id")
        replace = entry.get("replaceimpid", True)
        refs.append((imp["id"], entry["bidder"], entry["id"], replace is not False))
    return refs


async def _fetch_stored_responses(
    auction_refs: list[tuple[str, str]],
    bid_refs: list[tuple[str, str, str, bool]],
    source: StoredSource | None,
    timeout_s: float,
) -> StoredResponses:
    """The referenced responses fetched and checked; raises RequestError."""
    result = StoredResponses()
    if not auction_refs and not bid_refs:
        return result
    if source is None:
        raise RequestError("stored responses are referenced but no stored data source is configured")
    ids = sorted({ref for _, ref in auction_refs} | {ref for _, _, ref, _ in bid_refs})
    found, errors = await source.fetch_responses(ids, timeout_s)
    failure = fetch_failure(errors)
    if failure is not None:
        raise failure
    for imp_id, ref in auction_refs:
        if ref not in found:
            raise RequestError(
                f"failed to fetch stored auction response for impId = {imp_id} and storedAuctionResponse id = {ref}"
            )
        seatbids = _parse(found[ref], f'Stored Response with ID="{ref}"')
        if not isinstance(seatbids, list):
            raise RequestError(f'Stored Response with ID="{ref}" must be an array of seatbid objects')
        result.auction[imp_id] = seatbids
    for imp_id, bidder, ref, replace in bid_refs:
        if ref not in found:
            raise RequestError(
                f"failed to fetch stored bid response for impId = {imp_id}, bidder = {bidder} "
                f"and storedBidResponse id = {ref}"
            )
        result.by_bidder.setdefault(bidder, []).append(StoredBidResponse(bidder, imp_id, found[ref], replace))
    if errors and not found:
        raise RequestError("\n".join(errors))
    return result
