"""VideoByte's own rule over its recipe: the endpoint's query from the imp's params."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.videobyte import build, query

ADAPTER = build(AdapterConfig("videobyte", "https://v.example"))


@pytest.mark.parametrize(
    ("params", "text"),
    [
        ({"pubId": "p"}, "pid=p&source=pbs"),
        ({"pubId": "p 1", "placementId": "a&b", "nid": "n"}, "nid=n&pid=p+1&placementId=a%26b&source=pbs"),
        ({"pubId": "", "placementId": "", "nid": ""}, "pid=&source=pbs"),
    ],
)
def test_query(params, text):
    assert query(params) == text


def test_one_call_per_imp_with_its_query():
    imps = [{"id": str(n), "video": {"mimes": []}, "ext": {"bidder": {"pubId": f"p{n}"}}} for n in (1, 2)]
    calls, errors = ADAPTER.make_requests({"imp": imps, "site": {"domain": "d"}}, RequestInfo("videobyte"))
    assert not errors and [call.uri for call in calls] == [f"https://v.example?pid=p{n}&source=pbs" for n in (1, 2)]
    assert calls[0].headers["Origin"] == "d"
