"""The built wheel and the image layout, made once per test session, and a mock appnexus bidder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.deploy.bidder import MockAppnexus
from tests.deploy.image import SYSTEM_PYTHON, ImageLayout, build_wheel, run_stage
from tests.services import require


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session")
def image(wheel: Path) -> Iterator[ImageLayout]:
    require(SYSTEM_PYTHON.exists(), f"{SYSTEM_PYTHON} (Debian's python3.11 with venv) is missing",
            "`make tools` installs python3-venv")
    layout = ImageLayout(wheel, run_stage())
    yield layout
    layout.remove()


@pytest.fixture
def appnexus() -> Iterator[MockAppnexus]:
    mock = MockAppnexus()
    yield mock
    mock.close()
