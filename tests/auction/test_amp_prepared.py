"""Prepared AMP requests (hbserver.auction.request.prepared): the request-side work done once per stored request,
query and Origin must give every auction exactly what the full path gives it — the same bidder requests
(but for each auction's own tids, ids and HTTP fields), the same answers and the same refusals."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from hbserver.appkeys import STORED
from hbserver.auction.request.prepared import http_fields_settled, preparable
from hbserver.usersync.cookie import UidsCookie, encode_cookie
from tests.auction.helpers import bid, bidder_config

PAGE = "https://pub.example/a"


def stored_request(**fields: Any) -> dict[str, Any]:
    imp = {
        "id": "slot-1",
        "banner": {"format": [{"w": 300, "h": 250}]},
        "ext": {"prebid": {"bidder": {"alpha": {"p": 1}, "beta": {"p": 2}}}},
    }
    return {"id": "amp-req", "site": {"page": PAGE}, "imp": [imp], **fields}


@pytest.mark.parametrize(
    ("request_", "settled"),
    [
        ({"site": {"page": PAGE}}, True),
        ({"site": {"page": PAGE}, "device": {"ua": "stored-ua", "ip": "1.2.3.4", "dnt": 1}}, True),
        ({"site": {"page": PAGE}, "device": {"w": 300}}, True),
        ({"site": {"page": ""}}, False),  # the referer would fill the page
        ({"site": {"id": "s"}}, False),
        ({"site": {"page": 7}}, False),
        ({}, False),
        ({"app": {"id": "a"}}, False),
        ({"site": {"page": PAGE}, "device": {"ua": 0}}, False),  # falsy, wrong type: replaced on the full path
        ({"site": {"page": PAGE}, "device": {"ip": []}}, False),
        ({"site": {"page": PAGE}, "device": {"ipv6": False}}, False),
        ({"site": {"page": PAGE}, "device": {"ua": None}}, False),
        ({"site": {"page": PAGE}, "device": "x"}, False),
    ],
)
def test_http_fields_settled(request_, settled):
    assert http_fields_settled(request_) is settled


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        (stored_request(), True),
        (stored_request(test=1), False),
        (stored_request(test=0), True),
        (stored_request(ext={"prebid": {"debug": True}}), False),
        (stored_request(ext={"prebid": {"debug": False}}), True),
        (
            {**stored_request(), "imp": [{"id": "i", "ext": {"prebid": {"storedauctionresponse": {"id": "r"}}}}]},
            False,
        ),
        ({**stored_request(), "imp": [{"id": "i", "ext": {"prebid": {"storedbidresponse": []}}}]}, False),
        ({**stored_request(), "imp": "x"}, False),
        ({**stored_request(), "site": {}}, False),
    ],
)
def test_preparable(request_, expected):
    assert preparable(request_) is expected


def _store(data_dir: Path, tag: str, request: Any) -> None:
    (data_dir / "stored_requests" / f"{tag}.json").write_text(
        request if isinstance(request, str) else json.dumps(request)
    )


def _cookie(uid: str) -> str:
    cookie = UidsCookie()
    cookie.set_uid("generic", uid, datetime.now(UTC))
    return f"uids={encode_cookie(cookie)}"


def _without_per_auction_fields(sent: dict[str, Any], fresh_id: bool) -> dict[str, Any]:
    """A bidder request without what differs by design between auctions: tids, tmax, the HTTP fields
    (and the id, when the stored one is the {{UUID}} macro)."""
    copy = json.loads(json.dumps(sent))
    copy.pop("tmax", None)
    if fresh_id:
        copy.pop("id")
    copy.get("source", {}).pop("tid", None)
    for imp in copy["imp"]:
        imp.get("ext", {}).pop("tid", None)
    for key in ("ua", "ip", "ipv6"):
        copy.get("device", {}).pop(key, None)
    copy.get("user", {}).pop("buyeruid", None)
    return copy


def _answer_without_cache_ids(answer: dict[str, Any]) -> dict[str, Any]:
    return {
        **answer,
        "targeting": {k: v for k, v in answer.get("targeting", {}).items() if not k.startswith("hb_cache_id")},
    }


async def amp_visits(make_client: Any, bidders: Any, query: str, visits: list[dict[str, str]]) -> list[tuple[int, str]]:
    """A fresh app with the mock bidders alpha and beta (their records cleared): each visit's answer."""
    bidders.received.clear()
    bidders.headers.clear()
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    answers = []
    for headers in visits:
        response = await client.get(f"/openrtb2/amp?{query}", headers=headers)
        answers.append((response.status, await response.text()))
    await client.close()
    return answers


QUERY = "tag_id=t1&w=300&h=250&slot=%2F1%2Fs&curl=https%3A%2F%2Fpub.example%2Fpage&account=1001"


@pytest.mark.parametrize(
    ("stored", "query"),
    [
        (stored_request(), QUERY),
        (stored_request(device={"ua": "stored-ua", "w": 320}), QUERY),
        (stored_request(id="{{UUID}}"), QUERY),
        (stored_request(regs={"ext": {"us_privacy": "1YNN"}}), QUERY),
        (stored_request(), QUERY + "&consent_type=3&consent_string=bad"),  # a query warning, every time
        (stored_request(), QUERY + "&targeting=%7B%22k%22%3A%22v%22%7D"),
        (stored_request(), QUERY + "&gdpr_applies=true&consent_type=2&consent_string=BOGUS"),
        (stored_request(ext={"prebid": {"aliases": {"gamma2": "alpha"}}}), QUERY),
        ({**stored_request(), "site": {"page": PAGE, "ext": {"amp": 2}}}, QUERY),  # refused
        ({**stored_request(), "imp": [{"id": "slot-1", "banner": {}, "ext": {"prebid": {"bidder": {"alpha": {}}}}}]},
         "tag_id=t1"),  # refused: no sizes
        (stored_request(), "tag_id=t1"),  # no curl: the stored page
        (stored_request(site={"id": "s"}), "tag_id=t1"),  # no page: the full path (referer) every time
        (stored_request(test=1), QUERY),  # debug: the full path every time
    ],
)
async def test_prepared_auctions_match_the_full_path(make_client, bidders, data_dir, monkeypatch, stored, query):
    """Three auctions on the prepared path (a miss, then hits with other HTTP fields) against three with
    preparation off: the same bidder requests but for tids/tmax/HTTP fields, and those are each auction's."""
    bidders.bids["alpha"] = [bid("slot-1", 1.5, "a1")]
    bidders.bids["beta"] = [bid("slot-1", 0.7, "b1")]
    _store(data_dir, "t1", stored)
    visits = [
        {"User-Agent": "ua-one", "X-Forwarded-For": "203.0.113.1", "Cookie": _cookie("uid-1")},
        {"User-Agent": "ua-two", "X-Forwarded-For": "203.0.113.2"},
        {"User-Agent": "ua-three", "X-Forwarded-For": "203.0.113.3", "Referer": "https://ref.example/x",
         "Cookie": _cookie("uid-3")},
    ]
    uids = ["uid-1", None, "uid-3"]
    runs: dict[bool, tuple[list[Any], dict[str, list[dict[str, Any]]]]] = {}
    for prepared_on in (True, False):
        if not prepared_on:
            monkeypatch.setattr("hbserver.endpoints.amp.preparable", lambda request: False)
        answers = [
            (status, _answer_without_cache_ids(json.loads(text)) if status == 200 else text)
            for status, text in await amp_visits(make_client, bidders, query, visits)
        ]
        runs[prepared_on] = (answers, {name: list(sent) for name, sent in bidders.received.items()})
    (prepared_answers, prepared_sent), (full_answers, full_sent) = runs[True], runs[False]
    assert prepared_answers == full_answers
    assert prepared_sent.keys() == full_sent.keys()
    for name, sent in prepared_sent.items():
        fresh_id = stored.get("id") == "{{UUID}}"
        assert [_without_per_auction_fields(r, fresh_id) for r in sent] == [
            _without_per_auction_fields(r, fresh_id) for r in full_sent[name]
        ]
        for visit, request in zip(visits, sent, strict=True):  # each auction's own HTTP fields
            assert request["device"]["ua"] == stored.get("device", {}).get("ua", visit["User-Agent"])
            assert request["device"]["ip"] == visit["X-Forwarded-For"]
            assert request.get("user", {}).get("buyeruid") == uids[visits.index(visit)]
        tids = [r["source"]["tid"] for r in sent]
        assert len(set(tids)) == len(tids)  # every auction its own tid
        if stored.get("id") == "{{UUID}}":
            assert len({r["id"] for r in sent}) == len(sent)  # and its own id


async def test_a_changed_stored_request_is_prepared_again(make_client, bidders, data_dir):
    bidders.bids["alpha"] = [bid("slot-1", 1.5, "a1")]
    bidders.bids["beta"] = [bid("slot-1", 0.7, "b1")]
    _store(data_dir, "t1", stored_request())
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    first = await (await client.get(f"/openrtb2/amp?{QUERY}")).json()
    assert first["targeting"]["hb_bidder"] == "alpha"
    only_beta = stored_request()
    only_beta["imp"][0]["ext"]["prebid"]["bidder"] = {"beta": {"p": 9}}
    _store(data_dir, "t1", only_beta)
    client.app[STORED].invalidate("requests", ["t1"])
    second = await (await client.get(f"/openrtb2/amp?{QUERY}")).json()
    assert second["targeting"]["hb_bidder"] == "beta" and "hb_pb_alpha" not in second["targeting"]
    assert bidders.received["beta"][-1]["imp"][0]["ext"]["bidder"] == {"p": 9}
    _store(data_dir, "t1", "{broken")
    client.app[STORED].invalidate("requests", ["t1"])
    broken = await client.get(f"/openrtb2/amp?{QUERY}")
    assert (broken.status, await broken.text()) == (400, 'Invalid request: expects " or n, but found b\n')


async def test_an_adapter_changing_its_request_changes_no_later_auction(make_client, bidders, data_dir, monkeypatch):
    """Each auction parses its own copy: what one auction's code does to its request stays there."""
    from hbserver.auction.exchange import split

    original = split.split_request

    def vandal(request, *args, **kwargs):
        out = original(request, *args, **kwargs)
        request["imp"][0]["banner"]["format"].append({"w": 1, "h": 1})
        return out

    monkeypatch.setattr("hbserver.auction.core.split_request", vandal)
    bidders.bids["alpha"] = [bid("slot-1", 1.5, "a1")]
    _store(data_dir, "t1", stored_request())
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    for _ in range(3):
        assert (await client.get(f"/openrtb2/amp?{QUERY}")).status == 200
    # each auction sees its own change once (the bidder request shares the request's objects), never an
    # earlier auction's: with a shared prepared request the formats would grow by one per auction
    formats = [r["imp"][0]["banner"]["format"] for r in bidders.received["alpha"]]
    assert formats == [[{"w": 300, "h": 250}, {"w": 1, "h": 1}]] * 3


LONG_A, LONG_B = "averyveryverylongbidderone", "averyveryverylongbiddertwo"  # keys cut to 20 characters collide


@pytest.mark.parametrize(
    ("names", "bids", "status", "stored_ext", "extra_query"),
    [
        (("alpha", "beta"), {"alpha": [bid("slot-1", 1.5, "a1")], "beta": [bid("slot-1", 0.7, "b1")]}, {}, None, ""),
        ((LONG_A, LONG_B), {LONG_A: [bid("slot-1", 1.5, "a1")], LONG_B: [bid("slot-1", 2.5, "b1")]}, {}, None, ""),
        (("alpha", "beta"), {"alpha": [bid("slot-1", 1.5, "a1")]}, {"beta": 500}, None,
         "&consent_type=3&consent_string=bad"),  # an error and a warning
        (("alpha", "beta"), {"alpha": [bid("slot-1", 1.5, "a1"), bid("slot-1", 1.1, "a2")], "beta": []}, {},
         {"prebid": {"multibid": [{"bidder": "alpha", "maxbids": 2, "targetbiddercodeprefix": "alt"}]}}, ""),
        (("alpha",), {}, {}, None, ""),  # no bids at all
    ],
)
async def test_the_amp_answer_without_an_openrtb_response_is_the_same(
    make_client, bidders, data_dir, monkeypatch, names, bids, status, stored_ext, extra_query
):
    """Without debug or ad-server targeting the AMP answer is made from the bids, not from an OpenRTB
    response; forcing the response path (as ad-server targeting does) must give the same answer."""
    bidders.bids.update(bids)
    bidders.status.update(status)
    stored = stored_request()
    stored["imp"][0]["ext"]["prebid"]["bidder"] = {name: {"p": 1} for name in names}
    if stored_ext is not None:
        stored["ext"] = stored_ext
    _store(data_dir, "t1", stored)
    answers = []
    for light in (True, False):
        if not light:
            monkeypatch.setattr("hbserver.auction.core.wants_ad_server_targeting", lambda prebid: True)
            monkeypatch.setattr("hbserver.auction.core.apply_ad_server_targeting", lambda *args: None)
        client = await make_client(bidder_config(bidders, *names))
        response = await client.get(f"/openrtb2/amp?{QUERY}{extra_query}")
        assert response.status == 200
        answer = await response.json()
        assert all(len(key) <= 20 for key in answer["targeting"])
        answers.append(_answer_without_cache_ids(answer))
        await client.close()
    assert answers[0] == answers[1]
    if bids.get(names[0]):
        assert answers[0]["targeting"]["hb_bidder"]
