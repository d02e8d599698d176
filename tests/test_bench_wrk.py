"""bench/wrk.py: parsing real ``wrk --latency`` reports (wrk 4.1.0, captured on loopback)."""

from __future__ import annotations

import pytest

from bench.wrk import SocketErrors, WrkCommand, WrkError, parse_wrk_output, to_ms

# hbserver GET /event: all successful, milliseconds.
MILLISECONDS = """\
Running 2s test @ http://127.0.0.1:18555/event?t=win&b=bid-123&a=acc-1&bidder=appnexus&f=b&ts=1000
  1 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     6.18ms    4.09ms  49.90ms   92.36%
    Req/Sec     2.72k   479.05     3.44k    65.00%
  Latency Distribution
     50%    5.52ms
     75%    6.64ms
     90%    8.59ms
     99%   27.23ms
  5443 requests in 2.01s, 728.21KB read
Requests/sec:   2703.08
Transfer/sec:    361.64KB
"""

# hello-world with one connection: microseconds, and a 99th percentile in ms.
MICROSECONDS = """\
Running 2s test @ http://127.0.0.1:18570/hello
  1 threads and 1 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   241.57us  359.47us   5.33ms   95.66%
    Req/Sec     5.29k     0.87k    6.63k    70.00%
  Latency Distribution
     50%  167.00us
     75%  203.00us
     90%  283.00us
     99%    2.25ms
  10535 requests in 2.00s, 1.55MB read
Requests/sec:   5257.57
Transfer/sec:    790.69KB
"""

# A slow server: seconds. wrk pads "s" to the width of "ms", hence the trailing spaces.
SECONDS = """\
Running 3s test @ http://127.0.0.1:18560/slow
  1 threads and 4 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.08s   253.00ms   1.50s    77.78%
    Req/Sec     2.80      1.79     5.00     40.00%
  Latency Distribution
     50%  905.19ms
     75%    1.10s@
     90%    1.50s@
     99%    1.50s@
  9 requests in 3.03s, 1.35KB read
Requests/sec:      2.97
Transfer/sec:     457.34B
""".replace("@", " ")

# An unknown path: every response a 404.
NON_2XX = """\
Running 1s test @ http://127.0.0.1:18555/nope
  1 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    11.07ms   10.26ms  77.81ms   93.24%
    Req/Sec     1.69k   447.20     2.38k    70.00%
  Latency Distribution
     50%    8.25ms
     75%   11.69ms
     90%   17.06ms
     99%   61.69ms
  1691 requests in 1.01s, 330.27KB read
  Non-2xx or 3xx responses: 1691
Requests/sec:   1677.37
Transfer/sec:    327.61KB
"""

# wrk's 1s timeout shorter than the server's answers.
TIMEOUTS = """\
Running 2s test @ http://127.0.0.1:18560/slow
  1 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   907.53ms    2.71ms 909.46ms   84.62%
    Req/Sec    16.00     13.91    40.00     66.67%
  Latency Distribution
     50%  909.01ms
     75%  909.21ms
     90%  909.37ms
     99%  909.46ms
  20 requests in 2.01s, 3.01KB read
  Socket errors: connect 0, read 0, write 0, timeout 7
Requests/sec:      9.94
Transfer/sec:      1.49KB
"""

# A server that drops half the connections and answers 500 to some requests.
SOCKET_AND_NON_2XX = """\
Running 2s test @ http://127.0.0.1:18560/bad
  1 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     6.96ms    3.17ms  26.58ms   76.48%
    Req/Sec     1.01k   174.07     1.34k    75.00%
  Latency Distribution
     50%    6.52ms
     75%    8.52ms
     90%   10.52ms
     99%   18.41ms
  2024 requests in 2.01s, 315.97KB read
  Socket errors: connect 0, read 2083, write 0, timeout 0
  Non-2xx or 3xx responses: 624
Requests/sec:   1006.56
Transfer/sec:    157.13KB
"""

# (output, requests/s, requests, p50 ms, p99 ms, non-2xx, socket errors, ok)
SAMPLES = [
    (MILLISECONDS, 2703.08, 5443, 5.52, 27.23, 0, SocketErrors(), True),
    (MICROSECONDS, 5257.57, 10535, 0.167, 2.25, 0, SocketErrors(), True),
    (SECONDS, 2.97, 9, 905.19, 1500.0, 0, SocketErrors(), True),
    (NON_2XX, 1677.37, 1691, 8.25, 61.69, 1691, SocketErrors(), False),
    (TIMEOUTS, 9.94, 20, 909.01, 909.46, 0, SocketErrors(timeout=7), False),
    (SOCKET_AND_NON_2XX, 1006.56, 2024, 6.52, 18.41, 624, SocketErrors(read=2083), False),
]


@pytest.mark.parametrize(
    ("output", "rps", "requests", "p50", "p99", "non_2xx", "sockets", "ok"),
    SAMPLES,
    ids=["ms", "us", "s", "non-2xx", "timeouts", "socket-and-non-2xx"],
)
def test_parse_wrk_output(output, rps, requests, p50, p99, non_2xx, sockets, ok):
    result = parse_wrk_output(output)
    assert result.requests_per_sec == pytest.approx(rps)
    assert result.requests == requests
    assert result.p50_ms == pytest.approx(p50)
    assert result.p99_ms == pytest.approx(p99)
    assert result.non_2xx_3xx == non_2xx
    assert result.socket_errors == sockets
    assert result.errors == non_2xx + sockets.total
    assert result.ok is ok
    assert set(result.percentiles_ms) == {"50", "75", "90", "99"}


def test_other_lines_are_parsed_too():
    result = parse_wrk_output(SECONDS)
    assert result.latency_avg_ms == pytest.approx(1080.0)
    assert result.latency_max_ms == pytest.approx(1500.0)
    assert result.duration_ms == pytest.approx(3030.0)
    assert result.percentiles_ms["75"] == pytest.approx(1100.0)


def test_zero_requests_is_not_ok():
    output = MILLISECONDS.replace("5443 requests", "0 requests")
    assert parse_wrk_output(output).ok is False


def test_extra_script_output_is_ignored():
    result = parse_wrk_output("custom done() output\n" + MILLISECONDS + "more lines: 12%\n")
    assert result.requests_per_sec == pytest.approx(2703.08)


@pytest.mark.parametrize(
    ("output", "missing"),
    [
        ("unable to connect to 127.0.0.1:1 Connection refused\n", "Requests/sec"),
        (MILLISECONDS.replace("Requests/sec:   2703.08\n", ""), "Requests/sec"),
        (MILLISECONDS.replace("     99%   27.23ms\n", ""), "99%"),
        (MILLISECONDS.replace("  Latency Distribution\n", ""), "50%"),
    ],
)
def test_incomplete_output_raises(output, missing):
    with pytest.raises(WrkError, match=missing) as info:
        parse_wrk_output(output)
    assert info.value.output == output


@pytest.mark.parametrize(
    ("value", "unit", "ms"),
    [("250.5", "us", 0.2505), ("3", "ms", 3.0), ("1.5", "s", 1500.0), ("2", "m", 120_000.0), ("1", "h", 3_600_000.0)],
)
def test_to_ms(value, unit, ms):
    assert to_ms(value, unit) == pytest.approx(ms)


def test_command_pins_wrk_and_passes_script_and_headers(tmp_path):
    script = tmp_path / "request.lua"
    command = WrkCommand(
        url="http://127.0.0.1:9/x", connections=64, script=script, headers=["Content-Type: a/b"], cpu=1
    )
    argv = command.argv(10)
    assert argv[:4] == ["taskset", "-c", "1", "wrk"]
    assert argv[4:8] == ["-t1", "-c64", "-d10s", "--latency"]
    assert argv[8:] == ["-H", "Content-Type: a/b", "-s", str(script), "http://127.0.0.1:9/x"]
