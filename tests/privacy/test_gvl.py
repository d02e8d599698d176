from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hbserver.privacy import gvl as gvl_module
from hbserver.privacy.gvl import GVLError, VendorInfo, load_gvl, parse_gvl

# The shape of a v3 list (vendor-list.json), trimmed to two vendors; 32 has a deletedDate.
SAMPLE: dict[str, Any] = {
    "gvlSpecificationVersion": 3,
    "vendorListVersion": 126,
    "tcfPolicyVersion": 4,
    "lastUpdated": "2024-01-04T16:05:26Z",
    "purposes": {"1": {"id": 1, "name": "Store and/or access information on a device"}},
    "vendors": {
        "32": {
            "id": 32,
            "name": "Xandr, Inc.",
            "purposes": [1, 2, 7],
            "legIntPurposes": [10],
            "flexiblePurposes": [2, 7, 10],
            "specialPurposes": [1, 2],
            "features": [3],
            "specialFeatures": [],
            "deletedDate": "2024-06-01T00:00:00Z",
        },
        "755": {"id": 755, "name": "Google Advertising Products", "purposes": [1], "legIntPurposes": [2]},
    },
}


def write(tmp_path: Path, document: object) -> str:
    path = tmp_path / "vendor-list.json"
    path.write_text(json.dumps(document))
    return str(path)


def test_load_sample(tmp_path: Path) -> None:
    gvl = load_gvl(write(tmp_path, SAMPLE))
    assert gvl.version == 126 and gvl.spec_version == 3 and len(gvl) == 2
    assert gvl.vendor(32) == VendorInfo(
        purposes=frozenset({1, 2, 7}),
        leg_int_purposes=frozenset({10}),
        flexible_purposes=frozenset({2, 7, 10}),
        special_purposes=frozenset({1, 2}),
        deleted_date="2024-06-01T00:00:00Z",
    )
    google = gvl.vendor(755)
    assert google is not None and google.flexible_purposes == frozenset() and google.deleted_date is None
    assert gvl.vendor(1) is None and gvl.vendor(0) is None


def vendors(**vendor: Any) -> dict[str, Any]:
    return {"vendorListVersion": 3, "vendors": {"5": {"id": 5, **vendor}}}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], "top level must be a JSON object"),
        ({"vendors": {}}, "vendorListVersion must be a positive integer"),
        ({"vendorListVersion": 0, "vendors": {}}, "vendorListVersion must be a positive integer"),
        ({"vendorListVersion": "3", "vendors": {}}, "vendorListVersion must be a positive integer"),
        ({"vendorListVersion": True, "vendors": {}}, "vendorListVersion must be a positive integer"),
        ({"vendorListVersion": 3, "gvlSpecificationVersion": "3", "vendors": {}}, "gvlSpecificationVersion"),
        ({"vendorListVersion": 3}, "vendors must be a JSON object keyed by vendor id"),
        ({"vendorListVersion": 3, "vendors": []}, "vendors must be a JSON object keyed by vendor id"),
        ({"vendorListVersion": 3, "vendors": {"5": 5}}, "vendors.5 must be a JSON object"),
        ({"vendorListVersion": 3, "vendors": {"5": {}}}, "vendors.5.id must be an integer from 1 to 65535"),
        ({"vendorListVersion": 3, "vendors": {"5": {"id": 0}}}, "vendors.5.id must be an integer from 1 to 65535"),
        ({"vendorListVersion": 3, "vendors": {"5": {"id": 6}}}, "vendors.5.id is 6, not the key"),
        (vendors(purposes=1), "vendors.5.purposes must be a list of integers"),
        (vendors(legIntPurposes=["1"]), "vendors.5.legIntPurposes must be a list of integers"),
        (vendors(flexiblePurposes=[True]), "vendors.5.flexiblePurposes must be a list of integers"),
        (vendors(specialPurposes={"1": 1}), "vendors.5.specialPurposes must be a list of integers"),
        (vendors(deletedDate=5), "vendors.5.deletedDate must be a string"),
    ],
)
def test_wrong_shape(tmp_path: Path, document: object, message: str) -> None:
    path = write(tmp_path, document)
    with pytest.raises(GVLError) as info:
        load_gvl(path)
    assert str(info.value).startswith(path + ": ")
    assert message in str(info.value)


def test_missing_purpose_lists_are_empty() -> None:
    gvl = parse_gvl(vendors(purposes=None))
    assert gvl.vendor(5) == VendorInfo(frozenset(), frozenset(), frozenset(), frozenset())


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(GVLError, match="cannot read"):
        load_gvl(str(tmp_path / "missing.json"))
    with pytest.raises(GVLError, match="cannot read"):
        load_gvl(str(tmp_path))  # a directory


def test_not_json(tmp_path: Path) -> None:
    path = tmp_path / "gvl.json"
    path.write_text("{not json")
    with pytest.raises(GVLError, match="not valid JSON"):
        load_gvl(str(path))


def test_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, SAMPLE)
    monkeypatch.setattr(gvl_module, "MAX_GVL_BYTES", 100)
    with pytest.raises(GVLError, match="larger than"):
        load_gvl(path)
