"""Native asset types filled into a bid's markup (PBS-Go ``addNativeTypes``, exchange/bidder.go).

For an app request only, each native bid's ``adm`` (a Native 1.1+ response: ``assets`` at the top)
gets, for every image and data asset, the ``type`` its request asset (same ``id``, in the bidder's
own ``imp.native.request``) declares, when that is not 0. Markup that is not such a response (not
JSON, no assets, the 1.0 ``{"native": ...}`` wrapper, values of the wrong kind) is left as it is,
without an error, as PBS-Go leaves what it cannot decode. A bid whose imp has no native object in the
request gets PBS-Go's error and keeps its markup. An asset PBS-Go cannot match gives its error text;
the others are still filled and the markup rewritten.
"""

from __future__ import annotations

from typing import Any

import orjson

from hbserver.adapters.base import BidderError, BidderResponse

NO_NATIVE_IMP = "Could not find native imp"
_KINDS = (("img", "Image", "an Image"), ("data", "Data", "a Data"))


def add_native_types(response: BidderResponse, request: dict[str, Any], errors: list[BidderError]) -> None:
    """Fill the asset types of ``response``'s native bids (the caller checks the request is an app's)."""
    for typed in response.bids:
        if typed.bid_type != "native":
            continue
        bid = typed.bid
        markup = _markup(bid.get("adm"))
        if markup is None:
            continue
        native = _native_of(request, bid.get("impid"))
        if native is None:
            errors.append(BidderError(NO_NATIVE_IMP))
            continue
        payload = _payload(native.get("request"), errors)
        markup["assets"] = [_typed_asset(asset, payload, errors) for asset in markup["assets"]]
        typed.bid = {**bid, "adm": orjson.dumps(markup).decode()}


def _markup(adm: Any) -> dict[str, Any] | None:
    """The bid's native response when PBS-Go could decode it and it has assets."""
    if not isinstance(adm, str) or not adm.lstrip().startswith("{"):
        return None
    try:
        markup = orjson.loads(adm)
    except orjson.JSONDecodeError:
        return None
    assets = markup.get("assets") if isinstance(markup, dict) else None
    if not isinstance(assets, list) or not assets or not all(_decodable(asset) for asset in assets):
        return None
    return markup


def _decodable(asset: Any) -> bool:
    if not isinstance(asset, dict):
        return False
    asset_id = asset.get("id")
    if asset_id is not None and (not isinstance(asset_id, int) or isinstance(asset_id, bool)):
        return False
    return all(asset.get(key) is None or isinstance(asset.get(key), dict) for key, _, _ in _KINDS)


def _native_of(request: dict[str, Any], imp_id: Any) -> dict[str, Any] | None:
    """PBS-Go's getNativeImpByImpID: the first imp with that id and a native object."""
    for imp in request.get("imp") or ():
        if isinstance(imp, dict) and imp.get("id") == imp_id and isinstance(imp.get("native"), dict):
            return imp["native"]
    return None


def _payload(text: Any, errors: list[BidderError]) -> list[Any]:
    """The request's native assets; PBS-Go goes on with none when its payload does not decode."""
    try:
        payload = orjson.loads(text) if isinstance(text, str) else None
    except orjson.JSONDecodeError:
        payload = None
    if not isinstance(payload, dict):
        errors.append(BidderError("the native request of the bid's imp could not be read"))
        return []
    assets = payload.get("assets")
    return assets if isinstance(assets, list) else []


def _typed_asset(asset: dict[str, Any], assets: list[Any], errors: list[BidderError]) -> dict[str, Any]:
    """PBS-Go's setAssetTypes: the image part first, then the data part; the first problem stops it."""
    for key, name, article in _KINDS:
        part = asset.get(key)
        if part is None:
            continue
        asset_id = asset.get("id")
        if asset_id is None:
            errors.append(BidderError(f"Response {name} asset doesn't have an ID"))
            return asset
        wanted = next((item for item in assets if isinstance(item, dict) and item.get("id", 0) == asset_id), None)
        if wanted is None:
            errors.append(BidderError(f"Unable to find asset with ID:{asset_id} in the request"))
            return asset
        requested = wanted.get(key)
        if not isinstance(requested, dict):
            errors.append(
                BidderError(
                    f"Response has {article} asset with ID:{asset_id} present that doesn't exist in the request"
                )
            )
            return asset
        kind = requested.get("type")
        if kind:
            filled = {"type": kind}  # first, where Go's Image and Data structs put it
            filled.update(part)
            filled["type"] = kind
            asset = {**asset, key: filled}
    return asset
