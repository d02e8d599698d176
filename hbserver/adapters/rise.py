"""Rise adapter: the request, unchanged, in one OpenRTB call to ``<endpoint>?publisher_id=<org>``.

The org is the first imp's ``org`` param, else its ``publisher_id``, with surrounding white space
trimmed; an imp with neither passes the choice on to the next imp. The value is appended to the
endpoint as given (PBS-Go does not escape it). Any imp before the one that decides whose ``imp.ext``
or params do not decode fails the whole request, as does a request where no imp names an org. The
call carries only ``Content-Type``. The answer and bid typing are the recipe ``recipes/rise.yaml``'s.
"""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo
from hbserver.adapters.common import JsonShapeError, expect_string, imp_ids, json_call
from hbserver.adapters.golike import (
    GO_SPACE,
    ImpExtError,
    go_media_objects,
    go_members,
    go_request_top,
    imp_bidder_params,
)
from hbserver.adapters.recipe import RecipeAdapter

_HEADERS = {"Content-Type": "application/json;charset=utf-8"}
# openrtb_ext.ImpExtRise: JSON name -> Go field name (for json-iterator's wording)
_PARAMS = {"publisher_id": "PublisherID", "org": "Org", "placementId": "PlacementID"}


class _NoOrg(ValueError):
    """No org for the request (the message is the bidder error's)."""


def _imp_org(imp: dict[str, Any]) -> tuple[str, str]:
    """The imp's ``org`` and ``publisher_id`` params ("" when absent). Every field is decoded, so a
    value of the wrong type fails even when another field would decide."""
    try:
        params = imp_bidder_params(imp, null_is_absent=True)
    except ImpExtError as exc:
        raise _NoOrg(f"extractOrg: unmarshal bidderExt: {exc}") from None
    except JsonShapeError as exc:
        raise _NoOrg(f"extractOrg: unmarshal ImpExtRise: {exc}") from None
    values = {"org": "", "publisher_id": ""}
    try:
        for name, value in go_members(params, *_PARAMS):
            values[name] = expect_string(value, f"openrtb_ext.ImpExtRise.{_PARAMS[name]}")
    except JsonShapeError as exc:
        raise _NoOrg(f"extractOrg: unmarshal ImpExtRise: {exc}") from None
    return values["org"], values["publisher_id"]


def _org(imps: list[dict[str, Any]]) -> str:
    """The first imp's org, else its publisher id, trimmed; a value of white space only decides
    (trimmed to "") because PBS-Go tests it before trimming."""
    for imp in imps:
        org, publisher = _imp_org(imp)
        if org or publisher:
            return (org or publisher).strip(GO_SPACE)
    raise _NoOrg("extractOrg: no org or publisher_id supplied")


class RiseAdapter(RecipeAdapter):
    """The recipe ``recipes/rise.yaml`` (the answer and bid typing), the call Rise's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        try:
            org = _org(imps)
        except _NoOrg as exc:
            return [], [BidderError(str(exc))]
        body = go_request_top(request)
        body["imp"] = [go_media_objects(imp) for imp in imps]
        return [json_call(f"{self.endpoint}?publisher_id={org}", body, imp_ids(imps), _HEADERS)], []


def build(config: AdapterConfig) -> RiseAdapter:
    return RiseAdapter.of_code("rise", config)
