"""Hostile package files (tests/support/hostile.py): each is refused with its own reason, and reading
it never takes more than a bounded amount of memory (tracemalloc's peak: every allocation of Python and of the
codecs and expat, which allocate through it), whatever the codec and whatever the headers declare.

``./dev bench packages`` prints the same files' peak RSS and time in a child process.
"""

from __future__ import annotations

import tracemalloc

import pytest

from appliance.packages.errors import PackageFileError
from appliance.packages.formats import read_package
from tests.support.hostile import HOSTILE, MB

PEAK_BYTES = 40 * MB  # the bound is +50 MB over the worker's baseline; the reader itself stays under 40


@pytest.mark.parametrize("hostile", HOSTILE, ids=[hostile.label for hostile in HOSTILE])
def test_a_hostile_file_is_refused_for_its_reason_within_bounded_memory(hostile):
    data = hostile.data()
    tracemalloc.start()
    try:
        with pytest.raises(PackageFileError) as caught:
            read_package(hostile.filename, data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.code == hostile.code, str(caught.value)
    assert peak < PEAK_BYTES, f"{hostile.label}: {peak / MB:.1f} MB"
