"""DSA transparency (issue 39): the bid check, the account default and the end-to-end answer.

Each row names the rule's source: PBS-Go ``dsa/validate.go`` (``Validate``), ``dsa/writer.go``
(``Writer.Write``), ``config/config.go`` (``UnpackDSADefault``), ``exchange/exchange.go``
(``makeBid``: warning 10010 "bid rejected: ...", seat-non-bid 300); PBS-Java
``auction/DsaEnforcer.java``, ``auction/requestfactory/Ortb2RequestFactory.java`` (``enrichRegs``).
Rows marked "Java differs" are where PBS-Java would decide otherwise and PBS-Go is followed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hbserver.auction.bids import dsa
from hbserver.auction.core import AuctionService
from hbserver.config import AccountDsa, AccountSettings, build
from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.auction.test_auction_endpoint import auction_request, post
from tests.conftest import write_account

LONG = "x" * 101
EXACT = "x" * 100
WIDE = "é" * 51  # 51 characters, 102 UTF-8 bytes: Go's len counts bytes

# (name, request regs.ext.dsa, bid ext.dsa (None: no ext.dsa), expected problem)
BID_ROWS: list[tuple[str, dict[str, Any] | None, Any, str | None]] = [
    ("go validate.go: dsarequired 2, no bid dsa -> missing", {"dsarequired": 2}, None, dsa.MISSING),
    ("go validate.go: dsarequired 3, no bid dsa -> missing", {"dsarequired": 3}, None, dsa.MISSING),
    ("go validate.go: dsarequired 1 (supported), no bid dsa -> kept", {"dsarequired": 1}, None, None),
    ("go validate.go: dsarequired 0, no bid dsa -> kept", {"dsarequired": 0}, None, None),
    ("go validate.go: no regs.ext.dsa, no bid dsa -> kept", None, None, None),
    ("go validate.go: regs.ext.dsa without dsarequired -> kept", {"pubrender": 0}, None, None),
    ("go validate.go: dsarequired 3, bid dsa {} -> kept", {"dsarequired": 3}, {}, None),
    ("go validate.go getBidDSA: undecodable bid dsa counts as missing", {"dsarequired": 2}, {"adrender": "1"},
     dsa.MISSING),
    ("go validate.go getBidDSA: bid dsa not an object counts as missing", {"dsarequired": 2}, [1], dsa.MISSING),
    ("go validate.go: behalf over 100 -> rejected even when not required", None, {"behalf": LONG},
     dsa.BEHALF_TOO_LONG),
    ("go validate.go: behalf of exactly 100 -> kept", {"dsarequired": 3}, {"behalf": EXACT}, None),
    ("go validate.go: paid over 100 -> rejected", {"dsarequired": 3}, {"paid": LONG}, dsa.PAID_TOO_LONG),
    ("go validate.go: behalf checked before paid", None, {"behalf": LONG, "paid": LONG}, dsa.BEHALF_TOO_LONG),
    ("go validate.go: 51 two-byte characters are 102 bytes (Java differs: UTF-16 units)", None,
     {"behalf": WIDE}, dsa.BEHALF_TOO_LONG),
    ("go validate.go: pubrender 0, adrender 0 -> neither renders", {"pubrender": 0}, {"adrender": 0},
     dsa.NEITHER_WILL_RENDER),
    ("go validate.go: pubrender 0, adrender 2 (not 1) -> neither renders", {"pubrender": 0}, {"adrender": 2},
     dsa.NEITHER_WILL_RENDER),
    ("go validate.go: pubrender 0, adrender 1 -> kept", {"pubrender": 0}, {"adrender": 1}, None),
    ("go validate.go: pubrender 0, no adrender -> kept (Java differs: rejects when required)",
     {"dsarequired": 3, "pubrender": 0}, {"behalf": "b"}, None),
    ("go validate.go: pubrender 2, adrender 1 -> both render", {"pubrender": 2}, {"adrender": 1},
     dsa.BOTH_WILL_RENDER),
    ("go validate.go: pubrender 2, adrender 0 -> kept", {"pubrender": 2}, {"adrender": 0}, None),
    ("go validate.go: pubrender 1 (may render), any adrender -> kept", {"pubrender": 1}, {"adrender": 1}, None),
    ("go validate.go: render rules apply when not required (Java differs: only when required)",
     {"dsarequired": 1, "pubrender": 2}, {"adrender": 1}, dsa.BOTH_WILL_RENDER),
    ("java DsaEnforcer: required and rendering agreed -> kept", {"dsarequired": 3, "pubrender": 2},
     {"adrender": 0, "behalf": "Advertiser", "paid": "Advertiser"}, None),
]


@pytest.mark.parametrize(("req_dsa", "bid_dsa", "expected"), [row[1:] for row in BID_ROWS],
                         ids=[row[0] for row in BID_ROWS])
def test_bid_rule(req_dsa: dict[str, Any] | None, bid_dsa: Any, expected: str | None) -> None:
    one = bid("imp-1", 1.0) if bid_dsa is None else bid("imp-1", 1.0, ext={"dsa": bid_dsa})
    assert dsa.bid_problem(req_dsa, one) == expected


DEFAULT = {"dsarequired": 3, "pubrender": 0, "datatopub": 2,
           "transparency": [{"domain": "platform.example", "dsaparams": [1, 2]}]}

# (name, request regs, account privacy.dsa, GDPR enforced, regs.ext.dsa the bidders get)
WRITER_ROWS: list[tuple[str, dict[str, Any] | None, dict[str, Any], bool, Any]] = [
    ("go writer.go: no regs.ext.dsa -> the account default", None, {"default": json.dumps(DEFAULT)}, False,
     DEFAULT),
    ("go writer.go: the request's own dsa wins", {"ext": {"dsa": {"dsarequired": 1}}},
     {"default": json.dumps(DEFAULT)}, False, {"dsarequired": 1}),
    ("go writer.go: other regs.ext keys kept", {"gdpr": 0, "ext": {"us_privacy": "1---"}},
     {"default": json.dumps(DEFAULT)}, False, DEFAULT),
    ("go writer.go: gdpr_only and GDPR enforced -> default", None,
     {"default": json.dumps(DEFAULT), "gdpr_only": True}, True, DEFAULT),
    ("go writer.go: gdpr_only without GDPR -> nothing", None,
     {"default": json.dumps(DEFAULT), "gdpr_only": True}, False, None),
    ("go writer.go: no default -> nothing", None, {"gdpr_only": False}, True, None),
    ("go config.go: the JSON string null is no default", None, {"default": "null"}, False, None),
    ("java AccountDsaConfig: the default as an object", None, {"default": DEFAULT}, False, DEFAULT),
]


@pytest.mark.parametrize(("regs", "account", "gdpr", "expected"), [row[1:] for row in WRITER_ROWS],
                         ids=[row[0] for row in WRITER_ROWS])
def test_account_default(regs: dict[str, Any] | None, account: dict[str, Any], gdpr: bool, expected: Any) -> None:
    problems: list[str] = []
    settings = build(AccountDsa, account, "privacy.dsa", problems, strict=False)
    assert problems == []
    request: dict[str, Any] = {"id": "r"} if regs is None else {"id": "r", "regs": regs}
    before = json.dumps(request)
    written = dsa.with_default(request, settings, gdpr)
    assert dsa.request_dsa(written) == expected
    assert dsa.effective(request, settings, gdpr) == expected
    assert json.dumps(request) == before  # the caller's request is not changed
    if regs is not None and "gdpr" in regs:
        assert written["regs"]["gdpr"] == 0 and written["regs"]["ext"]["us_privacy"] == "1---"


@pytest.mark.parametrize(("default", "problem"), [
    ('{"dsarequired": 3}', None),
    ("", None),
    ('{"dsarequired": "three"}', "privacy.dsa.default: not a regs.ext.dsa object: "),
    ('{"dsarequired": 300}', "privacy.dsa.default: not a regs.ext.dsa object: "),  # *int8
    ("{not json", "privacy.dsa.default: must be a JSON object of regs.ext.dsa: "),
    (5, "privacy.dsa.default: must be a JSON string (PBS-Go) or an object (PBS-Java) of regs.ext.dsa"),
], ids=["go config.go: valid", "go config.go: empty is none", "go config.go: wrong type",
        "go config.go: out of int8", "go config.go: not JSON", "neither string nor object"])
def test_default_is_checked(default: Any, problem: str | None) -> None:
    problems: list[str] = []
    build(AccountSettings, {"privacy": {"dsa": {"default": default}}}, "", problems, strict=False)
    if problem is None:
        assert problems == []
    else:
        assert len(problems) == 1 and problems[0].startswith(problem), problems


def _seat_bids(data: dict[str, Any]) -> dict[str, list[str]]:
    return {seat["seat"]: [b["id"] for b in seat["bid"]] for seat in data.get("seatbid", [])}


async def test_auction_rejects_bid_without_dsa_when_required(make_client, bidders) -> None:
    """go exchange.go makeBid: warning 10010 under the seat, seat-non-bid 300; the metric is hbserver's."""
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]  # no ext.dsa
    bidders.bids["beta"] = [bid("imp-1", 1.0, "b1", ext={"dsa": {"behalf": "Adv", "paid": "Adv", "adrender": 1}})]
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    regs_dsa = {"dsarequired": 3, "pubrender": 0, "transparency": [{"domain": "p.example", "dsaparams": [1]}]}
    body = auction_request(banner_imp("imp-1", alpha={"p": 1}, beta={"p": 2}), regs={"ext": {"dsa": regs_dsa}})
    body["ext"]["prebid"]["returnallbidstatus"] = True
    response = await post(client, body)
    assert response.status == 200, await response.text()
    data = await response.json()
    assert _seat_bids(data) == {"beta": ["b1"]}  # beta wins: the check runs before the auction
    assert data["seatbid"][0]["bid"][0]["ext"]["prebid"]["targeting"]["hb_bidder"] == "beta"
    assert data["ext"]["warnings"]["alpha"] == [
        {"code": 10010, "message": "bid rejected: DSA object missing when required"}
    ]
    nonbids = {entry["seat"]: entry["nonbid"] for entry in data["ext"]["prebid"]["seatnonbid"]}
    assert [(n["impid"], n["statuscode"], n["ext"]["prebid"]["bid"]["price"]) for n in nonbids["alpha"]] == [
        ("imp-1", 300, 2.0)
    ]
    for name in ("alpha", "beta"):  # the request's dsa reaches the bidders unchanged
        assert bidders.received[name][0]["regs"]["ext"]["dsa"] == regs_dsa
    metrics = await (await client.get("/metrics")).text()
    assert 'hbserver_adapter_dsa_rejected_bids{adapter="alpha"} 1' in metrics
    assert 'adapter_dsa_rejected_bids{adapter="beta"}' not in metrics


@pytest.mark.parametrize(("account", "regs", "sent", "kept"), [
    ({"privacy": {"dsa": {"default": json.dumps(DEFAULT)}}}, None, DEFAULT, False),
    ({"privacy": {"dsa": {"default": json.dumps(DEFAULT), "gdpr_only": True}}}, {"gdpr": 0}, None, True),
    ({"privacy": {"dsa": {"default": json.dumps(DEFAULT)}}}, {"ext": {"dsa": {"dsarequired": 1}}},
     {"dsarequired": 1}, True),
], ids=["go writer.go: default written and enforced", "go writer.go: gdpr_only and no GDPR",
        "go writer.go: the request's own dsa is kept"])
async def test_auction_account_default(account, regs, sent, kept, make_client, bidders, data_dir: Path) -> None:
    write_account(data_dir, "1001", account)
    bidders.bids["alpha"] = [bid("imp-1", 2.0, "a1")]  # no ext.dsa
    client = await make_client(bidder_config(bidders, "alpha"))
    body = auction_request(banner_imp("imp-1", alpha={"p": 1}))
    if regs is not None:
        body["regs"] = regs
    response = await post(client, body)
    assert response.status == 200, await response.text()
    data = await response.json()
    received = bidders.received["alpha"][0]
    assert received.get("regs", {}).get("ext", {}).get("dsa") == sent
    assert _seat_bids(data) == ({"alpha": ["a1"]} if kept else {})
    warned = data.get("ext", {}).get("warnings", {}).get("alpha", [])
    assert [w["code"] for w in warned] == ([] if kept else [10010])


async def test_malformed_account_default_refuses_the_account(make_client, bidders, data_dir: Path) -> None:
    """go account/account.go GetAccount: a DSA default that does not unpack makes the account malformed
    (PBS-Go's own text names the DSA; hbserver's is its usual malformed-account answer)."""
    write_account(data_dir, "1001", {"privacy": {"dsa": {"default": '{"dsarequired": "x"}'}}})
    client = await make_client(bidder_config(bidders, "alpha"))
    response = await post(client, auction_request(banner_imp("imp-1", alpha={"p": 1})))
    assert response.status == 500  # PBS-Go: MalformedAcct is an internal error
    assert "is malformed" in await response.text()


async def test_amp_prepared_path_writes_and_enforces_the_default(make_client, bidders, data_dir: Path,
                                                                 monkeypatch) -> None:
    """go writer.go + validate.go on /openrtb2/amp: the same on the full path and on a prepared call plan
    (the second and third visits of one variant)."""
    plans: list[Any] = []
    build_plan = AuctionService._build_plan

    def spy(self: AuctionService, *args: Any) -> Any:
        plans.append(build_plan(self, *args))
        return plans[-1]

    monkeypatch.setattr(AuctionService, "_build_plan", spy)
    write_account(data_dir, "1001", {"privacy": {"dsa": {"default": json.dumps(DEFAULT)}}})
    imp = {"id": "slot-1", "banner": {"format": [{"w": 300, "h": 250}]},
           "ext": {"prebid": {"bidder": {"alpha": {"p": 1}, "beta": {"p": 2}}}}}
    stored = {"id": "amp-req", "site": {"page": "https://pub.example/a"}, "imp": [imp]}
    (data_dir / "stored_requests" / "t1.json").write_text(json.dumps(stored))
    bidders.bids["alpha"] = [bid("slot-1", 2.0, "a1")]  # no ext.dsa
    bidders.bids["beta"] = [bid("slot-1", 1.0, "b1", ext={"dsa": {"adrender": 1, "behalf": "A", "paid": "A"}})]
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    headers = {"User-Agent": "ua-one", "X-Forwarded-For": "203.0.113.1"}
    for _ in range(3):
        response = await client.get("/openrtb2/amp?tag_id=t1&account=1001", headers=headers)
        assert response.status == 200, await response.text()
        assert (await response.json())["targeting"]["hb_bidder"] == "beta"
    assert [sent["regs"]["ext"]["dsa"] for sent in bidders.received["alpha"]] == [DEFAULT] * 3
    assert len(plans) == 1 and plans[0] is not None  # visits two and three ran on the call plan
