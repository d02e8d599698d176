"""``--check-config`` (and start-up) open ``geolocation.database``: a file that does not open as a
MaxMind database is a configuration problem naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.geo.mmdb import write_db
from tests.test_config import run_cli


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("missing", "geolocation.database: cannot open '{path}' as a MaxMind database: "),
        ("garbage", "geolocation.database: cannot open '{path}' as a MaxMind database: "),
        ("database", None),
    ],
    ids=["missing-file", "not-a-database", "a-database"],
)
def test_check_config_opens_the_database(tmp_path: Path, content: str, problem: str | None) -> None:
    path = tmp_path / "city.mmdb"
    if content == "garbage":
        path.write_bytes(b"\x00" * 64)
    elif content == "database":
        write_db(path)
    done = run_cli("--check-config", env={"HBS_GEOLOCATION__DATABASE": str(path)})
    if problem is None:
        assert done.returncode == 0, done.stderr
    else:
        assert done.returncode == 2
        assert done.stderr.startswith(problem.format(path=path)), done.stderr
