"""The image tests. Those marked ``image`` build or boot the disk image (minutes, root, qemu): they run only
when asked for, ``pytest -m image tests/image`` (or ``./dev image`` and ``./dev image-test`` directly)."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config, items):
    if "image" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="builds/boots the disk image: run with -m image (or ./dev image-test)")
    for item in items:
        if item.get_closest_marker("image"):
            item.add_marker(skip)
