"""Fixtures shared by every test area. Area fixtures live in the nearest conftest.py below."""

from __future__ import annotations

import pytest

from appliance import config


@pytest.fixture
def settings(tmp_path):
    """Settings for one test: a fresh data dir, simulator pins, no file or environment read."""
    return config.load(overrides={"data_dir": tmp_path, "simulator": True}, environ={}, config_path=None)
