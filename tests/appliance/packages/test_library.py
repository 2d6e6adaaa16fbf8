"""The library on the box: add (all or nothing), list, read, media, delete; the same file twice is one package."""

from __future__ import annotations

import os

import pytest

from appliance.packages.errors import PackageFileError, PackageNotFound
from appliance.packages.library import Library


def test_a_package_is_added_listed_read_and_deleted(tmp_path, siq_v4):
    library = Library(tmp_path / "packages")
    entry, duplicate = library.add("Кубок двора.siq", siq_v4)
    assert not duplicate
    assert (entry.title, entry.origin, entry.themes, entry.questions, entry.media_questions, entry.media_files) == (
        "Кубок двора", "siq", 2, 3, 1, 2)
    assert library.entries() == [entry]
    assert library.package(entry.id).themes[0].name == "Реки"
    assert library.media_path(entry.id, "Images/Карта реки.png").read_bytes() == b"\x89PNG fake"
    # A fresh Library on the same folder (a restart) sees the same.
    assert Library(tmp_path / "packages").entries() == [entry]
    library.delete(entry.id)
    assert library.entries() == []
    with pytest.raises(PackageNotFound):
        library.package(entry.id)


def test_the_same_file_twice_is_one_package(tmp_path, siq_v4):
    library = Library(tmp_path)
    first, _ = library.add("a.siq", siq_v4)
    again, duplicate = library.add("b.siq", siq_v4)
    assert duplicate and again == first
    assert len(library.entries()) == 1


def test_a_refused_file_leaves_nothing_behind(tmp_path):
    from tests.support.packages import V4_CONTENT, make_zip
    library = Library(tmp_path)
    with pytest.raises(PackageFileError):
        library.add("bad.siq", make_zip({"content.xml": V4_CONTENT.replace('price="10"', 'price="x"')}))
    assert os.listdir(tmp_path) == []


def test_a_crash_midway_leaves_no_half_package(tmp_path, siq_v4, monkeypatch):
    library = Library(tmp_path)

    def power_cut(*args):
        raise OSError("power cut")

    monkeypatch.setattr(os, "rename", power_cut)
    with pytest.raises(OSError):
        library.add("a.siq", siq_v4)
    monkeypatch.undo()
    # What a crash could leave is hidden and swept at the next start; the list never shows it.
    assert Library(tmp_path).entries() == []
    assert [name for name in os.listdir(tmp_path) if not name.startswith(".")] == []


@pytest.mark.parametrize("package_id", ["../etc", "", "ZZZZZZZZZZZZ", "0123456789ab/../x"])
def test_unknown_or_malformed_ids_are_not_found(tmp_path, package_id):
    with pytest.raises(PackageNotFound):
        Library(tmp_path).package(package_id)


def test_media_outside_what_the_package_kept_is_not_served(tmp_path, siq_v4):
    library = Library(tmp_path)
    entry, _ = library.add("a.siq", siq_v4)
    for path in ("../package.json", "Images/other.png", "package.json"):
        with pytest.raises(PackageNotFound):
            library.media_path(entry.id, path)


def test_a_package_kept_in_an_older_format_is_read_again_when_uploaded_again(tmp_path):
    """A package imported before the final round was kept (format 1) learns it by being uploaded again."""
    import json

    from tests.support.packages import final_round_siq
    library = Library(tmp_path)
    data = final_round_siq()
    entry, _ = library.add("финал.siq", data)
    index = tmp_path / entry.id / "package.json"
    record = json.loads(index.read_text(encoding="utf-8"))
    record["package"]["format"] = 1
    for theme in record["package"]["themes"]:
        del theme["kind"], theme["authors"]
    index.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    assert not library.package(entry.id).themes[3].is_final
    again, duplicate = library.add("финал.siq", data)
    assert (again.id, duplicate) == (entry.id, False)
    assert library.package(entry.id).themes[3].is_final
    assert library.add("финал.siq", data)[1] is True
