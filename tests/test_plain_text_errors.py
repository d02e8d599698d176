"""Every plain-text error answer carries ``X-Content-Type-Options: nosniff`` (issue 38): many echo
what the client sent, and a browser that sniffed such a body as HTML would run its script on this
server's origin. They all come from hbserver.web.errors.text_response."""

from __future__ import annotations

import pytest

SCRIPT = "<script>alert(1)</script>"
SVG = "<svg onload=alert(1)>"  # no slash: a path segment


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "echoed"),
    [
        pytest.param("GET", f"/event?t=win&b=b1&a=acc&f={SCRIPT}", None, 400, SCRIPT, id="event-echoes-a-parameter"),
        pytest.param("GET", "/openrtb2/amp", None, 400, "", id="amp-without-tag_id"),
        pytest.param("GET", f"/openrtb2/amp?tag_id={SCRIPT}", None, 400, "", id="amp-unknown-tag_id"),
        pytest.param("GET", "/info/bidders?enabledonly=maybe", None, 400, "", id="info-bidders-bad-flag"),
        pytest.param("GET", f"/info/bidders/{SVG}", None, 404, SVG, id="info-bidder-echoes-the-name"),
        pytest.param("POST", "/openrtb2/auction", b"{not json", 400, "", id="auction-unreadable-body"),
        pytest.param("POST", "/cookie_sync", b"[", 400, "", id="cookie_sync-unreadable-body"),
        pytest.param("GET", "/setuid?bidder=nobody", None, 400, "", id="setuid-unknown-bidder"),
        pytest.param("GET", f"/no/such/{SCRIPT}", None, 404, "", id="unknown-route"),
        pytest.param("DELETE", "/status", None, 405, "", id="method-not-allowed"),
    ],
)
async def test_plain_text_errors_are_nosniff(make_client, method, path, body, status, echoed):
    client = await make_client({})
    response = await client.request(method, path, data=body)
    text = await response.text()
    assert response.status == status, text
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert echoed in text


async def test_status_unhealthy_and_draining_are_nosniff():
    from hbserver.endpoints.status import Health, StatusEndpoint

    health = Health([])
    endpoint = StatusEndpoint("ok", health)
    health.problems.append("no adapters")
    unhealthy = await endpoint.handle_live(None)  # type: ignore[arg-type]
    health.problems.clear()
    health.draining = True
    draining = await endpoint.handle_ready(None)  # type: ignore[arg-type]
    for response, text in ((unhealthy, b"unhealthy: no adapters"), (draining, b"draining: shutting down")):
        assert (response.status, response.body) == (503, text)
        assert response.headers["X-Content-Type-Options"] == "nosniff"
