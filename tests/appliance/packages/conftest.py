"""The package tests' fixtures: the package files themselves are made in :mod:`tests.support.packages`."""

from __future__ import annotations

import pytest

from tests.support.packages import V4_CONTENT, V5_CONTENT, make_zip


@pytest.fixture
def siq_v4() -> bytes:
    return make_zip({"content.xml": V4_CONTENT, "Images/Карта реки.png": b"\x89PNG fake", "Audio/гимн.mp3": b"ID3",
                     "[Content_Types].xml": "<Types/>"})


@pytest.fixture
def siq_v5() -> bytes:
    return make_zip({"content.xml": V5_CONTENT, "Audio/Мелодия.mp3": b"ID3", "Images/портрет.jpg": b"\xff\xd8"})
