"""Tests for hbserver.vast: PBS-Java compatible impression insertion and tracking URLs."""

from __future__ import annotations

import time

import pytest

from hbserver.vast import carries_impression, insert_impression, tracking_url

U = "http://x/event?t=imp&b=b&a=a&bidder=b&f=b"
TAG = "<Impression><![CDATA[" + U + "]]></Impression>"

_V10_HEAD = (
    '<VAST version="3.0"><Ad><Wrapper><AdSystem>prebid.org wrapper</AdSystem>'
    "<VASTAdTagURI><![CDATA[adm2]]></VASTAdTagURI><Impression></Impression>"
)
_V18_AD = "<Ad><InLine><Impression>x</Impression></InLine></Ad>"

CASES = [
    pytest.param(
        "<Wrapper><Impression>http:/test.com</Impression></Wrapper>",
        "<Wrapper><Impression>http:/test.com</Impression>" + TAG + "</Wrapper>",
        id="V1-wrapper-after-impression",
    ),
    pytest.param(
        "<Wrapper><  impreSSion garbage >http:/test.com<  /ImPression  garbage ></Wrapper>",
        "<Wrapper><  impreSSion garbage >http:/test.com<  /ImPression  garbage >" + TAG + "</Wrapper>",
        id="V2-spaces-case-attributes",
    ),
    pytest.param(
        "<InLine><Impression>http:/test.com</Impression><Impression>http:/test2.com</Impression>"
        "<Creatives></Creatives></InLine>",
        "<InLine><Impression>http:/test.com</Impression><Impression>http:/test2.com</Impression>"
        + TAG
        + "<Creatives></Creatives></InLine>",
        id="V3-after-last-impression",
    ),
    pytest.param("<InLine></InLine>", "<InLine>" + TAG + "</InLine>", id="V4-before-inline-close"),
    pytest.param("<InLine></SomeTag>", "<InLine></SomeTag>", id="V5-no-close-unchanged"),
    pytest.param(
        "<  wraPPer garbage>< / wrapPer  garbage>",
        "<  wraPPer garbage>" + TAG + "< / wrapPer  garbage>",
        id="V6-wrapper-close-garbage",
    ),
    pytest.param("<wrapper><someTag>", "<wrapper><someTag>", id="V7-wrapper-no-close-unchanged"),
    pytest.param("<Impression>http:/test.com</Impression>", None, id="V8-no-container"),
    pytest.param("<wrappergarbage></wrapper>", None, id="V9a-wrappergarbage"),
    pytest.param("<inlinegarbage></inline>", None, id="V9b-inlinegarbage"),
    pytest.param(
        _V10_HEAD + "<Creatives></Creatives></Wrapper></Ad></VAST>",
        _V10_HEAD + TAG + "<Creatives></Creatives></Wrapper></Ad></VAST>",
        id="V10-empty-impression-not-filled",
    ),
    pytest.param(
        '<VAST version="3.0"><Ad><InLine><Impression>a</Impression><Impression>b</Impression>'
        "<Creatives/></InLine></Ad></VAST>",
        '<VAST version="3.0"><Ad><InLine><Impression>a</Impression><Impression>b</Impression>'
        + TAG
        + "<Creatives/></InLine></Ad></VAST>",
        id="V13-two-impressions",
    ),
    pytest.param(
        '<VAST version="3.0"><Ad><InLine><AdSystem>x</AdSystem><Creatives/></InLine></Ad></VAST>',
        '<VAST version="3.0"><Ad><InLine><AdSystem>x</AdSystem><Creatives/>' + TAG + "</InLine></Ad></VAST>",
        id="V14-inline-no-impression",
    ),
    pytest.param(
        '<VAST version="3.0"><Ad><Wrapper><VASTAdTagURI><![CDATA[u]]></VASTAdTagURI></Wrapper></Ad></VAST>',
        '<VAST version="3.0"><Ad><Wrapper><VASTAdTagURI><![CDATA[u]]></VASTAdTagURI>' + TAG + "</Wrapper></Ad></VAST>",
        id="V15-wrapper-no-impression",
    ),
    pytest.param(
        '<VAST version="3.0"><Ad><InLine><impression>a</impression></InLine></Ad></VAST>',
        '<VAST version="3.0"><Ad><InLine><impression>a</impression>' + TAG + "</InLine></Ad></VAST>",
        id="V16-lowercase-impression",
    ),
    pytest.param(
        '<VAST version="4.0"><Ad><InLine><Impression id="i1">a</Impression></InLine></Ad></VAST>',
        '<VAST version="4.0"><Ad><InLine><Impression id="i1">a</Impression>' + TAG + "</InLine></Ad></VAST>",
        id="V17-impression-with-id",
    ),
    pytest.param(
        "<VAST>" + _V18_AD + _V18_AD + "</VAST>",
        "<VAST>" + _V18_AD + "<Ad><InLine><Impression>x</Impression>" + TAG + "</InLine></Ad></VAST>",
        id="V18-two-ads-last-impression",
    ),
    pytest.param(
        "<Wrapper><Impression></Impression><Impression>b</Impression></Wrapper>",
        "<Wrapper><Impression></Impression><Impression>b</Impression>" + TAG + "</Wrapper>",
        id="V19-wrapper-two-impressions",
    ),
    pytest.param("<Impression>a</Impression>", None, id="V20-impression-only"),
    pytest.param(
        '<InLine\n id="1"><Impression>a</Impression\n></InLine>',
        '<InLine\n id="1"><Impression>a</Impression\n>' + TAG + "</InLine>",
        id="newline-as-tag-whitespace",
    ),
    pytest.param(
        '<InLine id="1\n"><Impression>a</Impression></InLine>',
        None,
        id="line-terminator-before-gt-not-a-tag",
    ),
    pytest.param(
        '<InLine id="1\u2028"><Impression>a</Impression></InLine><Wrapper></Wrapper>',
        '<InLine id="1\u2028"><Impression>a</Impression></InLine><Wrapper>' + TAG + "</Wrapper>",
        id="unicode-line-terminator-falls-back-to-wrapper",
    ),
    pytest.param(
        "<InLine><Impression>a</Impression x\u2029></InLine>",
        "<InLine><Impression>a</Impression x\u2029>" + TAG + "</InLine>",
        id="broken-impression-close-uses-inline-close",
    ),
    pytest.param(
        "<inlinex><Wrapper>\n<Impression>a</Impression></Wrapper>",
        "<inlinex><Wrapper>\n<Impression>a</Impression>" + TAG + "</Wrapper>",
        id="inline-prefix-not-a-tag-wrapper-used",
    ),
    pytest.param(
        "<InLine>\u212a<Impression>a</Impression></InLine>",
        "<InLine>\u212a<Impression>a</Impression>" + TAG + "</InLine>",
        id="non-ascii-passthrough",
    ),
]


@pytest.mark.parametrize(("xml", "expected"), CASES)
def test_insert_impression(xml: str, expected: str | None) -> None:
    out = insert_impression(xml, U)
    assert out == expected
    if out is not None and out != xml:
        assert out.count(TAG) == 1
        assert out.replace(TAG, "", 1) == xml


def test_inline_without_close_does_not_try_wrapper() -> None:
    xml = "<InLine><Wrapper></Wrapper>"
    assert insert_impression(xml, U) == xml


def test_impressions_after_inline_element_count() -> None:
    # Impression close tags are searched to the end of the document, not only inside InLine.
    xml = "<InLine></InLine><Impression>z</Impression>"
    assert insert_impression(xml, U) == xml + TAG


def test_non_ascii_case_folding_is_not_applied() -> None:
    # Java CASE_INSENSITIVE is ASCII-only: dotless i is not "i", long s is not "s".
    assert insert_impression("<\u0131nline></inline>", U) is None
    xml = "<InLine><Impression>a</Impre\u017f\u017fion></InLine>"
    assert insert_impression(xml, U) == "<InLine><Impression>a</Impre\u017f\u017fion>" + TAG + "</InLine>"


# --- tracking_url -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(
            ("http://localhost:8000", "bid]]>1", "acc 1", "appnexus", "auc-1", "1000", None),
            "http://localhost:8000/event?t=imp&b=bid%5D%5D%3E1&a=acc%201&aid=auc-1&ts=1000&bidder=appnexus&f=b",
            id="example",
        ),
        pytest.param(
            ("http://localhost:8000/", "b1", "a1", "rubicon", "auc-1", "1000", "pbjs"),
            "http://localhost:8000/event?t=imp&b=b1&a=a1&aid=auc-1&ts=1000&bidder=rubicon&f=b&int=pbjs",
            id="integration-trailing-slash",
        ),
        pytest.param(
            ("http://h", "b1", "a1", "appnexus", None, None, None),
            "http://h/event?t=imp&b=b1&a=a1&bidder=appnexus&f=b",
            id="no-aid-no-ts",
        ),
        pytest.param(
            ("http://h", "b1", "a1", "appnexus", "", "", ""),
            "http://h/event?t=imp&b=b1&a=a1&bidder=appnexus&f=b",
            id="empty-strings-omitted",
        ),
        pytest.param(
            ("http://h", "b&x=1", "a\"'", "bid der", "a/b", "1 2", "i&j"),
            "http://h/event?t=imp&b=b%26x%3D1&a=a%22%27&aid=a%2Fb&ts=1%202&bidder=bid%20der&f=b&int=i%26j",
            id="all-values-encoded",
        ),
    ],
)
def test_tracking_url(args: tuple[str, str, str, str, str | None, str | None, str | None], expected: str) -> None:
    assert tracking_url(*args) == expected


def test_tracking_url_cannot_break_cdata() -> None:
    url = tracking_url("http://h", "x]]><script>", "a", "b", None, None, None)
    assert url == "http://h/event?t=imp&b=x%5D%5D%3E%3Cscript%3E&a=a&bidder=b&f=b"
    assert "]]>" not in url
    assert "<" not in url
    out = insert_impression("<InLine></InLine>", url)
    assert out == "<InLine><Impression><![CDATA[" + url + "]]></Impression></InLine>"
    assert out is not None and out.count("]]>") == 1


# --- hostile input ------------------------------------------------------------------------------

BUDGET_S = 1.0


def _timed(xml: str) -> tuple[str | None, float]:
    start = time.perf_counter()
    out = insert_impression(xml, U)
    return out, time.perf_counter() - start


def test_hostile_unterminated_impression_closes_is_linear() -> None:
    xml = "<VAST><InLine>" + "</impression " * 20000
    assert len(xml) > 256_000
    out, elapsed = _timed(xml)
    assert elapsed < BUDGET_S
    assert out == xml  # InLine found, no valid Impression/InLine close: unchanged


def test_hostile_impression_closes_ending_in_one_gt_is_linear() -> None:
    xml = "<VAST><InLine>" + "</impression " * 20000 + ">"
    out, elapsed = _timed(xml)
    assert elapsed < BUDGET_S
    assert out == xml + TAG  # the first tag spans to the only '>', as Java's lazy match does


def test_hostile_unterminated_inline_opens_is_linear() -> None:
    xml = "<VAST>" + "<InLine " * 32000
    assert len(xml) > 256_000
    out, elapsed = _timed(xml)
    assert elapsed < BUDGET_S
    assert out is None


def test_hostile_unterminated_closes_then_wrapper_is_linear() -> None:
    body = "</inline x" * 13000 + "\n" + "<wrapper " * 13000
    xml = "<wrapper>" + body
    out, elapsed = _timed(xml)
    assert elapsed < BUDGET_S
    assert out == xml


def test_billion_laughs_not_expanded() -> None:
    entities = ['<!ENTITY lol "lol">']
    for i in range(2, 10):
        prev = "lol" if i == 2 else f"lol{i - 1}"
        entities.append(f'<!ENTITY lol{i} "' + f"&{prev};" * 10 + '">')
    head = '<?xml version="1.0"?><!DOCTYPE lolz [' + "".join(entities) + "]>"
    xml = head + "<VAST><Ad><InLine><Impression>&lol9;</Impression></InLine></Ad></VAST>"
    out, elapsed = _timed(xml)
    assert elapsed < BUDGET_S
    assert out == head + "<VAST><Ad><InLine><Impression>&lol9;</Impression>" + TAG + "</InLine></Ad></VAST>"
    assert "&lol9;" in out
    assert "lollollol" not in out


def test_external_entity_not_resolved() -> None:
    head = '<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
    xml = head + "<VAST><Ad><InLine><Impression>&xxe;</Impression></InLine></Ad></VAST>"
    out, elapsed = _timed(xml)
    assert elapsed < BUDGET_S
    assert out == head + "<VAST><Ad><InLine><Impression>&xxe;</Impression>" + TAG + "</InLine></Ad></VAST>"
    assert "&xxe;" in out
    assert "root:" not in out


OWN = "http://pbs.example/event?t=imp"
OWN_TAG = "<Impression><![CDATA[" + OWN + "&b=v1&a=1001&ts=1000&bidder=alpha&f=b]]></Impression>"


@pytest.mark.parametrize(
    ("xml", "expected"),
    [
        pytest.param("<VAST><Ad><InLine>" + OWN_TAG + "</InLine></Ad></VAST>", True, id="own-tracker"),
        pytest.param("<VAST><Ad><InLine><Impression>a</Impression>" + OWN_TAG + "</InLine></Ad></VAST>", True,
                     id="own-tracker-after-another"),
        pytest.param("<VAST><Ad><InLine>< impression id='x'>" + OWN + "&amp;b=1</ IMPRESSION></InLine></Ad></VAST>",
                     True, id="escaped-text-spaces-attributes-case"),
        pytest.param("<VAST><Ad><InLine><Impression>a</Impression></InLine></Ad></VAST>", False, id="none"),
        pytest.param("<VAST><Ad><InLine><Impression><![CDATA[http://other.example/event?t=imp&b=1]]></Impression>"
                     "</InLine></Ad></VAST>", False, id="another-servers-tracker"),
        pytest.param("<VAST><Ad><InLine><Impression>a</Impression><Tracking>" + OWN + "</Tracking></InLine>"
                     "</Ad></VAST>", False, id="in-a-tracking-element"),
        pytest.param("<VAST><Ad><InLine><Impressions>" + OWN + "</Impressions></InLine></Ad></VAST>", False,
                     id="longer-tag-name"),
        pytest.param("<VAST><Ad><InLine><Error>" + OWN + "</Error>" + OWN_TAG + "</InLine></Ad></VAST>", True,
                     id="second-occurrence-counts"),
        pytest.param("<VAST><Ad><InLine><Impression>" + OWN, True, id="unclosed-impression"),
        pytest.param("<VAST><Ad><InLine><Impression>http://pbs.example/event?t=win&b=1</Impression></InLine>"
                     "</Ad></VAST>", False, id="win-url-is-not-an-impression"),
    ],
)
def test_carries_impression(xml: str, expected: bool) -> None:
    assert carries_impression(xml, OWN) is expected


def test_carries_impression_is_linear() -> None:
    xml = ("<Impression></Impression>" + OWN) * 20000
    started = time.perf_counter()
    assert carries_impression(xml, OWN) is False
    assert time.perf_counter() - started < 2
