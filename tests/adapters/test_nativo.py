"""Nativo's own rule over its recipe: the NativoRenderer named in ext.prebid.sdk.renderers becomes
every bid's meta (rows from PBS-Go's TestGetRendererMeta)."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig
from tests.adapters.helpers import bids_for

ENDPOINT = "https://foo.io/?src=prebid"


def sdk(*renderers: Any) -> dict[str, Any]:
    return {"prebid": {"sdk": {"renderers": list(renderers)}}}


@pytest.mark.parametrize(
    ("ext", "meta"),
    [
        (None, None),
        ({"prebid": {}}, None),  # no sdk
        (sdk(), None),  # no renderers
        (
            sdk({"name": "NativoRenderer", "version": "1.0"}),
            {"rendererName": "NativoRenderer", "rendererVersion": "1.0"},
        ),
        (
            sdk({"name": "nativorenderer", "version": "2.0"}),
            {"rendererName": "nativorenderer", "rendererVersion": "2.0"},
        ),
        (sdk({"name": "OtherRenderer", "version": "1.0"}), None),
        (
            sdk({"name": "OtherRenderer", "version": "1.0"}, {"name": "NativoRenderer", "version": "3.0"}),
            {"rendererName": "NativoRenderer", "rendererVersion": "3.0"},
        ),
        ({"prebid": {"sdk": {"renderers": "NativoRenderer"}}}, None),  # not Go's shape: no meta
        ("not an object", None),
    ],
)
def test_renderer_meta_on_every_bid(ext, meta):
    adapter = build_adapter("nativo", AdapterConfig("nativo", ENDPOINT))
    request = {"id": "r", "imp": [{"id": "i", "banner": {}}], **({} if ext is None else {"ext": ext})}
    body = {"seatbid": [{"bid": [{"id": "a", "impid": "i", "price": 1}, {"id": "b", "impid": "i", "price": 2}]}]}
    response, errors = bids_for(adapter, request, body)
    assert errors == []
    assert [(b.bid_type, b.bid_meta) for b in response.bids] == [("banner", meta)] * 2
