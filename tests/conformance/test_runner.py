"""The conformance runner's own rules, on small synthetic fixtures (no shared fixtures needed)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from hbserver.adapters.base import BidderError, BidderResponse, RequestData, ResponseData, TypedBid
from tests.conformance.compare import (
    compare_bid_responses,
    compare_errors,
    compare_requests,
    error_matches,
    json_diff,
    object_diff,
)
from tests.conformance.exceptions import read_exceptions
from tests.conformance.harness import rates_converter, run_fixture
from tests.conformance.loader import ExpectedBid, ExpectedBidResponse, ExpectedError, HttpCall, load_fixture

FIXTURE = """{
  "//": "a comment key Go ignores",
  "mockBidRequest": {"id": "r", "imp": [{"id": "i1", "ext": {"bidder": {}}}]},
  "httpcalls": [
    {"expectedRequest": {"uri": "http://x", "body": {"id": "r", "n": 1.0}, "impIDs": ["i1"]},
     "MockResponse": {"status": 200, "body": {
        "seatbid": [{"bid": [{"id": "b", "impid": "i1", "price": 0.500000}]}]
     }}}
  ],
  "expectedBidResponses": [{"currency": "USD", "bids": [{"bid": {"id": "b", "impid": "i1", "price": 0.5},
                                                         "type": "banner"}]}],
  "expectedMakeBidsErrors": [{"value": "odd", "comparison": "startswith"}]
}"""


@pytest.fixture
def fixture_file(tmp_path: Path) -> Path:
    path = tmp_path / "bidder" / "supplemental" / "case.json"
    path.parent.mkdir(parents=True)
    path.write_text(FIXTURE)
    return path


def test_loader_is_case_insensitive_and_keeps_raw_bodies(fixture_file: Path):
    fixture = load_fixture(fixture_file, "bidder", "supplemental")
    assert fixture.key == "bidder/supplemental/case.json"
    assert len(fixture.calls) == 1
    call = fixture.calls[0]
    assert (call.uri, call.imp_ids, call.status) == ("http://x", ["i1"], 200)
    assert call.body_raw == b'{"id": "r", "n": 1.0}'
    assert call.response_body.startswith(b'{\n        "seatbid"') and b"0.500000" in call.response_body
    assert fixture.make_bids_errors == [ExpectedError("odd", "startswith")]
    assert fixture.errors_allowed and fixture.entry_point == "openrtb2-auction"


def test_loader_matches_keys_as_go_does(tmp_path: Path):
    """Each key goes to the field it names (any case); a later key for the same field wins."""
    path = tmp_path / "x.json"
    path.write_text('{"mockBidRequest": {"id": "a"}, "MOCKBIDREQUEST": {"id": "b"}, "httpCALLS": null}')
    fixture = load_fixture(path, "b", "exemplary")
    assert (fixture.request, fixture.calls) == ({"id": "b"}, [])
    path.write_text('{"MOCKBIDREQUEST": {"id": "b"}, "mockBidRequest": {"id": "a"}, "unknown": 1}')
    assert load_fixture(path, "b", "exemplary").request == {"id": "a"}


def test_loader_keeps_the_text_of_ext_objects(tmp_path: Path):
    """Go's ext fields are raw messages: the adapter may write one back exactly as the file has it."""
    path = tmp_path / "x.json"
    path.write_text('{"mockBidRequest": {"user": {"ext": { "eids": [{"uids": [{"ext": { "a": 1 }}]}] }},'
                    ' "ext": {"x": 1}, "ext": { "y" : 2 }, "imp": [{"ext": 5}]}}')
    request = load_fixture(path, "b", "exemplary").request
    user_ext = request["user"]["ext"]
    assert user_ext.raw_json == '{ "eids": [{"uids": [{"ext": { "a": 1 }}]}] }'
    assert user_ext["eids"][0]["uids"][0]["ext"].raw_json == '{ "a": 1 }'
    assert (request["ext"], request["ext"].raw_json) == ({"y": 2}, '{ "y" : 2 }')  # the last one wins
    assert request["imp"][0]["ext"] == 5


@pytest.mark.parametrize(("expected", "actual", "equal"), [
    ({"a": 1}, {"a": 1.0}, True),
    ({"a": [1, 2]}, {"a": [2, 1]}, False),
    ({"a": 1}, {"a": "1"}, False),
    ({"a": True}, {"a": 1}, False),
    ({"a": None}, {}, False),
    ({"a": {}}, {}, False),
    ({"b": 1, "a": 2}, {"a": 2, "b": 1}, True),
    ({"n": 8189378542222915032}, {"n": 8189378542222915000}, True),
    ("x", "x", True),
])
def test_json_meaning(expected, actual, equal):
    assert (json_diff(expected, actual) is None) == equal


def test_bodies_must_be_objects():
    assert object_diff([1], [1]) is not None
    assert object_diff({"a": 1}, {"a": 1}) is None


@pytest.mark.parametrize(("actual", "value", "comparison", "match"), [
    ("exact", "exact", "", True),
    ("exact", "exact", "literal", True),
    ("exact text", "exact", "literal", False),
    ("exact text", "exact", "startswith", True),
    ("an error 42 here", r"error \d+", "regex", True),
    ("nothing", r"^x", "regex", False),
])
def test_error_comparisons(actual, value, comparison, match):
    assert error_matches(actual, ExpectedError(value, comparison)) is match


def test_unknown_comparison_is_fatal():
    with pytest.raises(ValueError, match="unknown error comparison"):
        error_matches("x", ExpectedError("x", "contains"))


def test_error_counts_and_wording():
    expected = [ExpectedError("a"), ExpectedError("b")]
    assert compare_errors("S", expected, [BidderError("a"), BidderError("b")]) == []
    assert compare_errors("S", expected, [BidderError("a")])
    assert compare_errors("S", expected, [BidderError("a"), BidderError("c")])
    assert compare_errors("S", expected, [BidderError("a"), BidderError("c")], check_text=False) == []


def call(uri: str, ids: list[str], body: dict | None) -> HttpCall:
    return HttpCall(uri=uri, body=body, imp_ids=ids)


def sent(uri: str, ids: list[str], body: dict) -> RequestData:
    return RequestData("POST", uri, orjson.dumps(body), imp_ids=ids)


def test_request_matching_is_order_free_but_exact():
    expected = [call("u", ["a"], {"x": 1}), call("u", ["b", "c"], {"x": 2})]
    assert compare_requests(expected, [sent("u", ["c", "b"], {"x": 2}), sent("u", ["a"], {"x": 1})]) == []
    assert compare_requests(expected, [sent("u", ["a"], {"x": 1})])  # count
    assert compare_requests(expected, [sent("u", ["a"], {"x": 1}), sent("v", ["b", "c"], {"x": 2})])  # uri
    assert compare_requests([call("u", [], {})], [sent("u", [], {})])  # no impIDs never matches


@pytest.mark.parametrize(
    ("want_body", "sent_body", "matches"),
    [
        (None, None, True),  # a GET without a body, a fixture without one: diffJson's two empty bodies
        (None, b"", True),
        (None, b"{}", False),
        ({}, None, False),
        ({}, b"{}", True),
    ],
)
def test_requests_without_a_body(want_body, sent_body, matches):
    problems = compare_requests([call("u", ["a"], want_body)], [RequestData("GET", "u", sent_body, imp_ids=["a"])])
    assert (problems == []) is matches, problems


@pytest.mark.parametrize(
    ("want", "got", "matches"),
    [
        (["2001:db8::1", "1.2.3.4"], "2001:db8::1, 1.2.3.4", True),  # Go's Add twice: one joined value here
        (["1.2.3.4", "2001:db8::1"], "2001:db8::1, 1.2.3.4", False),  # order matters
        (["1.2.3.4"], "1.2.3.4", True),
        (["1.2.3.4"], "1.2.3.4, 5.6.7.8", False),
    ],
)
def test_a_header_go_sends_twice(want, got, matches):
    expected = HttpCall(uri="u", body={}, imp_ids=["a"], headers={"X-Forwarded-For": want})
    actual = RequestData("POST", "u", b"{}", {"X-Forwarded-For": got}, imp_ids=["a"])
    assert (compare_requests([expected], [actual]) == []) is matches


def test_bid_responses():
    want = [ExpectedBidResponse("USD", [ExpectedBid({"id": "b", "price": 1}, "video", "",
                                                    {"duration": 30, "primary_category": ""})])]
    good = BidderResponse([TypedBid({"id": "b", "price": 1.0}, "video", bid_video={"duration": 30})])
    assert compare_bid_responses(want, [good]) == []
    assert compare_bid_responses(want, [])
    assert compare_bid_responses(want, [BidderResponse([TypedBid({"id": "b", "price": 1}, "banner")])])
    assert compare_bid_responses(want, [BidderResponse([TypedBid({"id": "b", "price": 1}, "video")])])
    assert compare_bid_responses(want, [BidderResponse(good.bids, "EUR")])
    assert compare_bid_responses(want, [BidderResponse(good.bids, fledge_auction_configs=[])])
    fledge = [ExpectedBidResponse("", [], [{"impid": "i", "config": {}}])]
    assert compare_bid_responses(fledge, [BidderResponse()])
    assert compare_bid_responses(fledge, [BidderResponse(fledge_auction_configs=[{"impid": "i", "config": {}}])]) == []


def test_rates_converter():
    assert rates_converter({"ext": {}}) is None
    convert = rates_converter({"ext": {"prebid": {"currency": {"rates": {"EUR": {"USD": 2.0}}}}}})
    assert convert(1.0, "EUR", "USD") == 2.0
    assert convert(1.0, "usd", "EUR") == 0.5
    assert convert(3.0, "JPY", "JPY") == 3.0
    with pytest.raises(ValueError, match="'JPY' => 'USD'"):
        convert(1.0, "JPY", "USD")


class _Echo:
    """A tiny adapter for the harness: one call with the request, bids typed banner."""

    def __init__(self, mutate: bool = False, bid_errors: tuple[str, ...] = ()) -> None:
        self.mutate, self.bid_errors = mutate, bid_errors

    def make_requests(self, request, info):
        if self.mutate:
            request["imp"][0]["ext"]["bidder"]["x"] = 1
        return [sent("http://x", ["i1"], {"id": "r", "n": 1})], []

    def make_bids(self, request, call, response: ResponseData):
        bids = orjson.loads(response.body)["seatbid"][0]["bid"]
        return BidderResponse([TypedBid(bid, "banner") for bid in bids]), [BidderError(m) for m in self.bid_errors]


def test_run_fixture(fixture_file: Path):
    fixture = load_fixture(fixture_file, "bidder", "supplemental")
    assert run_fixture(fixture, _Echo(bid_errors=("odd one",))) == []
    assert run_fixture(fixture, _Echo()) != []  # a missing error
    assert "MakeRequests changed the request it was given" in run_fixture(fixture, _Echo(True, ("odd",)))
    fixture.folder = "exemplary"
    assert run_fixture(fixture, _Echo(bid_errors=("odd one",))) == ["exemplary fixtures may not expect errors"]


def test_exceptions_table(tmp_path: Path):
    path = tmp_path / "EXCEPTIONS.md"
    path.write_text("| fixture | reason |\n|---|---|\n| `ix/supplemental/a.json` | Go wording |\n| not a row |\n")
    assert read_exceptions(path) == {"ix/supplemental/a.json": "Go wording"}
    assert isinstance(read_exceptions(), dict)


@pytest.mark.parametrize(
    ("literal", "value"),
    [('`{"a":"b"}`', '{"a":"b"}'), ('"http://x/y"', "http://x/y"), ('"a\\"b"', 'a"b'), ("plain", "plain"), ("", "")],
)
def test_go_string(literal, value):
    from tests.conformance.harness import go_string

    assert go_string(literal) == value


def test_read_setup(tmp_path: Path):
    """The JSON test's endpoint, extra_adapter_info and server config; the Go test's own facts on top."""
    from tests.conformance.harness import GoTestFacts, read_setup

    path = tmp_path / "go-test-setup.yaml"
    path.write_text(
        "- test: TestOther\n  endpoint: ['http://other']\n"
        "- test: TestJsonSamples\n  folder: ['xtest']\n  endpoint: ['http://json/{{.Host}}']\n"
        "  extra_adapter_info: ['`{\"k\":1}`']\n"
        "  server: {external_url: ['http://hosturl.com'], gvl_id: ['7'], datacenter: ['2']}\n"
    )
    setup = read_setup(path, GoTestFacts({"xapi": {"username": "u"}}))
    assert setup.endpoint == "http://json/{{.Host}}"
    assert setup.extra == {"external_url": "http://hosturl.com", "gvl_id": 7, "datacenter": "2",
                           "extra_info": '{"k":1}', "pbs_version": "", "xapi": {"username": "u"}}


BARE = '{"id": "r", "imp": [{"id": "1", "ext": {"b": {"p": "x"}, "gpid": "g"}}, {"id": "2", "ext": {"bidder": {}}}]}'


class _OneCall:
    """A stand-in adapter: the calls and errors it is told to give, recording the request it got."""

    def __init__(self, calls: list[RequestData], errors: list[BidderError] | None = None) -> None:
        self.calls, self.errors, self.seen = calls, errors or [], None

    def make_requests(self, request, info):
        self.seen = request
        return self.calls, self.errors


def _sent_call(uri: str, ids: list[str]) -> RequestData:
    return RequestData("POST", uri, b"{}", imp_ids=ids)


@pytest.mark.parametrize(
    ("calls", "errors", "problems"),
    [
        ([_sent_call("http://u", ["1", "2"])], [], []),
        ([_sent_call("http://u", ["2", "1"])], [], []),  # imp ids in any order
        ([_sent_call("http://v", ["1", "2"])], [], ["uri: expected 'http://u', got 'http://v'"]),
        ([_sent_call("http://u", ["1"])], [], ["impIDs: expected ['1', '2'], got ['1']"]),
        ([_sent_call("http://u", ["1", "2"])], [BidderError("no")], ["MakeRequests error: 'no'"]),
        ([], [], ["expected 1 call, got 0"]),
        ([_sent_call("http://u", ["1", "2"])] * 2, [], ["expected 1 call, got 2"]),
    ],
    ids=["conforms", "ids-any-order", "wrong-uri", "missing-imp", "an-error", "no-call", "two-calls"],
)
def test_run_bare_request(tmp_path: Path, calls, errors, problems):
    """A bidder PBS-Go runs no JSON test for: its file is the request, fed as an auction gives it
    (imp.ext.<code> becoming imp.ext.bidder), and must give one call to the named URI, every imp id
    and no error."""
    from tests.conformance.harness import GoTestFacts, run_bare_request
    from tests.conformance.loader import load_bare_request

    path = tmp_path / "b" / "exemplary" / "bare.json"
    path.parent.mkdir(parents=True)
    path.write_text(BARE)
    fixture = load_bare_request(path, "b", "exemplary")
    facts = GoTestFacts(no_json_test="no JSON test", bare_request_uris={"bare.json": "http://u"})
    adapter = _OneCall(calls, errors)
    assert run_bare_request(fixture, adapter, facts) == problems  # type: ignore[arg-type]
    imps = adapter.seen["imp"]
    assert imps[0]["ext"] == {"bidder": {"p": "x"}, "gpid": "g"} and imps[1]["ext"] == {"bidder": {}}
    assert fixture.request["imp"][0]["ext"].raw_json == '{"b": {"p": "x"}, "gpid": "g"}'  # the file's text kept
    unnamed = GoTestFacts(no_json_test="no JSON test")
    assert run_bare_request(fixture, adapter, unnamed) == [
        "b/exemplary/bare.json: no URI in GO_TEST_FACTS.bare_request_uris for this bare request"
    ]


def test_go_test_facts_name_a_uri_for_every_bare_request():
    """Each bidder flagged no_json_test says why and names the URI of each of its JSON files."""
    from tests.conformance.harness import GO_TEST_FACTS, fixtures_root
    from tests.conformance.loader import fixture_paths

    flagged = {code: facts for code, facts in GO_TEST_FACTS.items() if facts.no_json_test}
    assert "ucfunnel" in flagged
    for code, facts in flagged.items():
        names = {path.name for _, path in fixture_paths(fixtures_root(), code)}
        assert set(facts.bare_request_uris) >= names, code
