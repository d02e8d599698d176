"""Every built-in adapter (enumerated from the registry) given hostile numbers in its params (any
field its schema names, several at once: Unicode digits, thousands of digits, past int64/uint64) and
hostile bidder answers (an OpenRTB answer with fields replaced by such numbers or by any JSON): each
call answers with calls, bids or bidder errors, never an exception nor a logged traceback.
tests/adapters/test_sweep.py runs the fixed cross product of the same inputs; this adds combinations.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hbserver.adapters.base import RequestData, RequestInfo, ResponseData
from tests.adapters.hostile import (
    ANSWER_PATHS,
    BASE_ANSWER,
    ENDPOINT,
    BuiltIn,
    Records,
    auction_request,
    built_in_adapters,
    make_bids,
    make_requests,
    param_fields,
    put,
    valid_params,
    with_value,
)
from tests.fuzz.harness import encode
from tests.fuzz.strategies import NUMERIC, json_values

ADAPTERS = built_in_adapters()
# Per adapter and test: a tenth of the profile's examples (make test: 15; make fuzz: 2,000).
EXAMPLES = max(15, settings.default.max_examples // 10)


def _as_parsed(value: object) -> object:
    """``value`` as an adapter can get it: through JSON text and orjson (an integer past 64 bits
    becomes a float; what orjson refuses, such as a lone surrogate, becomes null)."""
    try:
        return orjson.loads(encode(value))
    except orjson.JSONDecodeError:
        return None


VALUE = st.one_of(NUMERIC, NUMERIC, json_values(max_leaves=6)).map(_as_parsed)


@pytest.fixture(scope="module")
def records() -> Iterator[list[logging.LogRecord]]:
    handler = Records()
    logging.getLogger().addHandler(handler)
    try:
        yield handler.records
    finally:
        logging.getLogger().removeHandler(handler)


@pytest.mark.parametrize("built", ADAPTERS, ids=[b.code for b in ADAPTERS])
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_adapter_params(records, built: BuiltIn, data):
    params = valid_params(built.code) or {}
    fields = st.sampled_from(param_fields(built.code))
    changes = data.draw(st.lists(st.tuples(fields, VALUE), min_size=1, max_size=3), label="params changes")
    for path, value in changes:
        params = with_value(params, path, value)
    info = RequestInfo(bidder=built.code, adapter_code=built.code)
    make_requests(built.build(), auction_request(built.code, params), info, f"{built.code} {params!r:.200}", records)


def _answer(changes: list[tuple[tuple, object]]) -> bytes:
    answer: object = BASE_ANSWER
    for path, value in changes:
        answer = put(answer, path, value)
    return encode(answer)


# BASE_ANSWER with one to three of its fields (seatbid, bid, price, impid, mtype, ...) replaced
ANSWERS = st.lists(st.tuples(st.sampled_from(ANSWER_PATHS), VALUE), min_size=1, max_size=3).map(_answer)


@pytest.mark.parametrize("built", ADAPTERS, ids=[b.code for b in ADAPTERS])
@settings(max_examples=EXAMPLES)
@given(answer=ANSWERS, status=st.sampled_from([200, 200, 204, 400, 500]))
def test_adapter_answers(records, built: BuiltIn, answer, status):
    adapter = built.build()
    request = auction_request(built.code, valid_params(built.code) or {})
    info = RequestInfo(bidder=built.code, adapter_code=built.code)
    calls = make_requests(adapter, request, info, f"{built.code} base request", records)
    for call in calls[:1] or [RequestData("POST", ENDPOINT, orjson.dumps(request))]:
        answer_data = ResponseData(status, answer, {"Content-Type": "application/json"})
        make_bids(adapter, request, call, answer_data, f"{built.code} {status} {answer[:200]!r}", records)
