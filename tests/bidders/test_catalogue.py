"""The README's bidder table is the one the definitions give."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbserver.bidders.catalogue import END, START, replace_table, table

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_bidders_table_is_generated_from_the_definitions() -> None:
    documented = README.read_text().partition(START)[2].partition(END)[0].strip()
    assert documented == table(), "run: python -m hbserver.bidders.catalogue README.md"


def test_table_rows(tmp_path: Path) -> None:
    for code, body in {
        "alpha": "code: alpha\ndisabled: false\ngvl_vendor_id: 7\nmedia_types:\n  site: [banner]\n  app: [video]\n",
        "beta": "code: beta\nalias_of: alpha\ndisabled: false\n",
        "gamma": "code: Gamma\ndisabled: true\ngvl_vendor_id: 0\nmedia_types: {}\n",
        "generic": "code: generic\ndisabled: false\n",
    }.items():
        (tmp_path / f"{code}.yaml").write_text(body)
    assert table(tmp_path).splitlines()[2:] == [
        "| `alpha` | `beta` | 7 | site: banner; app: video | enabled |",
        "| `Gamma` | — | — | — | disabled |",
        "",
        "3 bidder codes: 2 adapters and 1 catalogue aliases.",
    ]


def test_replace_table_needs_the_markers() -> None:
    assert replace_table(f"a\n{START}\nold\n{END}\nb", "new") == f"a\n{START}\nnew\n{END}\nb"
    with pytest.raises(ValueError):
        replace_table("no markers", "new")
