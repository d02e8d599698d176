"""AJA's own rule over its recipe: bids of no imp are let go silently; a bid whose imp has neither a
banner nor a video is dropped with its error."""

from __future__ import annotations

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig
from tests.adapters.helpers import bids_for


def test_bids_typed_by_their_imp() -> None:
    adapter = build_adapter("aja", AdapterConfig("aja", "https://example.com/bid"))
    imps = [{"id": "a", "banner": {}}, {"id": "v", "video": {}}, {"id": "n", "native": {"request": ""}}]
    bids = [{"id": name, "impid": name, "price": 1} for name in ("a", "v", "n", "x")]
    answer, errors = bids_for(adapter, {"id": "r", "imp": imps}, {"seatbid": [{"bid": bids}], "cur": "JPY"})
    assert answer is not None and answer.currency == "JPY"
    assert [(typed.bid["id"], typed.bid_type) for typed in answer.bids] == [("a", "banner"), ("v", "video")]
    assert [error.message for error in errors] == ["Response received for unexpected type of bid bidID: n"]
