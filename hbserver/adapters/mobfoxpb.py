"""Mobfox adapter: the request with its first imp alone, in one call. The first imp's
``ext.bidder.key`` (exact names, as jsonparser reads them) picks the direct route (``c=rtb``,
``m=req``, the key in ``__key__``), else its ``ext.bidder.TagID`` the other (``c=o``, ``m=ortb``);
with neither a string the request fails. The answer is the recipe ``recipes/mobfoxpb.yaml``'s."""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo, bad_input
from hbserver.adapters.common import imp_ids, json_call
from hbserver.adapters.golike import go_typed_request, json_path_string
from hbserver.adapters.recipe import RecipeAdapter

NO_KEY = "Invalid or non existing key and tagId, at least one should be present"


def _bidder_string(ext: Any, name: str) -> str | None:
    try:
        return json_path_string(ext, "bidder", name)
    except ValueError:
        return None


def mobfox_uri(template: str, ext: Any) -> str | None:
    """The endpoint for an imp's ext; None when it names neither a key nor a TagID."""
    tag_id, key = _bidder_string(ext, "TagID"), _bidder_string(ext, "key")
    if tag_id is None and key is None:
        return None
    route, method = ("rtb", "req") if key else ("o", "ortb") if tag_id else ("", "")
    if key:
        template = template.replace("__key__", key, 1)
    return template.replace("__route__", route, 1).replace("__method__", method, 1)


class MobfoxpbAdapter(RecipeAdapter):
    """The recipe's answer, the call Mobfox's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:
            return [], []
        uri = mobfox_uri(self.endpoint, imps[0].get("ext"))
        if uri is None:
            return [], [bad_input(NO_KEY)]
        body = go_typed_request({**request, "imp": imps[:1]})
        return [json_call(uri, body, imp_ids(imps[:1]), self.headers(request))], []


def build(config: AdapterConfig) -> MobfoxpbAdapter:
    return MobfoxpbAdapter.of_code("mobfoxpb", config)
