"""PBS-Go's ``imp.ext.prebid.options.echovideoattrs`` (issue 42 item 3): a bid for an imp that asks
for it and came from a stored imp carries the stored imp's ``video`` as
``bid.ext.storedrequestattributes`` (PBS-Go endpoints/openrtb2/auction.go processStoredRequests,
exchange/exchange.go makeBidExtJSON). End to end through the real app, mock bidders on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hbserver.auction.request.echo_video import echo_refs
from tests.auction.helpers import bid, bidder_config

STORED_VIDEO = {"w": 640, "h": 480, "mimes": ["video/mp4"], "protocols": [2, 3], "minduration": 5}


def _imp(options: Any = None, stored: str | None = "si-1", **fields: Any) -> dict[str, Any]:
    prebid: dict[str, Any] = {"bidder": {"alpha": {"p": 1}}}
    if stored is not None:
        prebid["storedrequest"] = {"id": stored}
    if options is not None:
        prebid["options"] = options
    return {"id": "imp-1", **fields, "ext": {"prebid": prebid}}


@pytest.mark.parametrize(
    ("imp", "stored_imp", "echoed"),
    [
        pytest.param(_imp({"echovideoattrs": True}), {"video": STORED_VIDEO}, STORED_VIDEO,
                     id="auction.go: asked, from a stored imp with video: echoed"),
        pytest.param(_imp({"echovideoattrs": True}, video={"w": 1, "h": 1, "mimes": ["video/mp4"]}),
                     {"video": STORED_VIDEO}, STORED_VIDEO,
                     id="exchange.go makeBidExtJSON: the stored imp's video, not the merged one"),
        pytest.param(_imp({"echovideoattrs": False}), {"video": STORED_VIDEO}, None, id="not asked"),
        pytest.param(_imp(), {"video": STORED_VIDEO}, None, id="no options"),
        pytest.param(_imp({"echovideoattrs": True}), {"banner": {"w": 300, "h": 250}}, None,
                     id="exchange.go: asked, but the stored imp has no video"),
        pytest.param(_imp({"echovideoattrs": True}, stored=None, video=STORED_VIDEO), None, None,
                     id="auction.go: an imp not from a stored imp echoes nothing"),
    ],
)  # fmt: skip
async def test_echovideoattrs(
    make_client, bidders, data_dir: Path, imp: dict[str, Any], stored_imp: Any, echoed: Any
) -> None:
    if stored_imp is not None:
        (data_dir / "stored_imps" / "si-1.json").write_text(json.dumps(stored_imp))
    bidders.bids["alpha"] = [bid("imp-1", 1.0, adm="<VAST version=\"3.0\"></VAST>")]
    client = await make_client(bidder_config(bidders, "alpha"))
    request = {"id": "r", "tmax": 500, "imp": [imp], "site": {"page": "https://a.example/p"}}
    response = await client.post("/openrtb2/auction", data=json.dumps(request))
    answer = await response.json()
    assert response.status == 200, answer
    [seat] = answer["seatbid"]
    ext = seat["bid"][0]["ext"]
    assert ext.get("storedrequestattributes") == echoed


def test_echo_refs_reads_only_the_incoming_flag() -> None:
    body = {"imp": [_imp({"echovideoattrs": True}), _imp({"echovideoattrs": "yes"}), _imp({"echovideoattrs": True},
                                                                                         stored=None), "junk"]}
    assert echo_refs(body) == [0]
    assert echo_refs({"imp": "x"}) == [] and echo_refs({}) == []


# -- Protected Audience (fledge) configs in the response (PBS-Go exchange.go collectFledgeFromSeatBid) --


@pytest.mark.parametrize(
    ("igi", "expected"),
    [
        pytest.param(
            [{"impid": "imp-1", "igs": [{"config": {"seller": "https://ssp.example", "n": 1}}]}],
            {"auctionconfigs": [{"impid": "imp-1", "bidder": "criteo", "adapter": "criteo",
                                 "config": {"seller": "https://ssp.example", "n": 1}}]},
            id="a config per imp, with the seat's bidder and the adapter's name",
        ),
        pytest.param([], None, id="none given: no ext.prebid.fledge"),
    ],
)  # fmt: skip
async def test_fledge_configs_reach_the_response(make_client, bidders, igi: list[Any], expected: Any) -> None:
    bidders.bids["criteo"] = [bid("imp-1", 1.0, ext={"prebid": {"type": "banner"}})]
    bidders.answer_ext["criteo"] = {"igi": igi}
    client = await make_client({"adapters": {"criteo": {"endpoint": bidders.url("criteo")}}})
    imp = {"id": "imp-1", "banner": {"format": [{"w": 300, "h": 250}]},
           "ext": {"prebid": {"bidder": {"criteo": {"zoneId": 123}}}}}  # fmt: skip
    request = {"id": "r", "tmax": 500, "imp": [imp], "site": {"page": "https://a.example/p"}}
    response = await client.post("/openrtb2/auction", data=json.dumps(request))
    answer = await response.json()
    assert response.status == 200, answer
    assert answer["seatbid"][0]["bid"][0]["price"] == 1.0
    assert answer["ext"]["prebid"].get("fledge") == expected
