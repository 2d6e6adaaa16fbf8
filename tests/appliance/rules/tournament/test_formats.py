"""Formats are data: every preset loads, cites its sections, and a malformed copy is refused with the field named."""

from __future__ import annotations

import tomllib
from importlib import resources

import pytest

from appliance.rules.tournament.errors import FormatError, UnknownFormatError
from appliance.rules.tournament.formats import parse_format
from appliance.service.presets import list_formats, load_format

PRESETS = ["eurocup", "irkutsk", "mubc", "northern-owl", "youth-cup"]


def raw(name: str) -> dict:
    return tomllib.loads((resources.files("appliance.rules.tournament") / "formats" / f"{name}.toml").read_text())


def test_every_regulation_has_a_preset():
    assert list_formats() == PRESETS


@pytest.mark.parametrize("name", PRESETS)
def test_every_field_of_a_preset_is_commented_with_its_reason(name):
    text = (resources.files("appliance.rules.tournament") / "formats" / f"{name}.toml").read_text()
    fields = [line for line in text.splitlines()
              if "=" in line and not line.lstrip().startswith(("#", "[", "{", "]")) and not line.startswith(" ")]
    uncommented = [line for line in fields if "#" not in line
                   and line.split("=")[0].strip() not in ("name", "title_ru", "title_en", "id", "regulation", "rule",
                                                                     "advance")]
    assert uncommented == []
    fmt = load_format(name)
    for stage in fmt.stages:
        assert stage.rule.startswith(name.split("-")[0]) or stage.rule.startswith(name), stage
        for rule in stage.advance:
            assert rule.rule.startswith(name), rule


def test_an_organisers_copy_loads_by_path(tmp_path):
    text = (resources.files("appliance.rules.tournament") / "formats" / "northern-owl.toml").read_text()
    copy = tmp_path / "owl-2026.toml"
    copy.write_text(text.replace('capacity = 36', 'capacity = 48'))
    assert load_format(str(copy)).registration.capacity == 48


def test_unknown_preset_lists_the_presets():
    with pytest.raises(UnknownFormatError, match="eurocup"):
        load_format("worldcup")


@pytest.mark.parametrize("change, message", [
    (lambda d: d["stage"][0].update(colour="red"), "unknown field"),
    (lambda d: d["stage"][0].update(draw="coin"), "draw 'coin'"),
    (lambda d: d["stage"][0].update(battle_size=6), "a box seats 2-4"),
    (lambda d: d["stage"][0]["advance"][0].update(to="nowhere"), "not a later stage"),
    (lambda d: d["stage"][0]["advance"][0].update(top=3), "exactly one of"),
    (lambda d: d["stage"][0].update(ranking=["luck"]), "ranking key"),
    # a number list's items finite and within the field limit (TOML has nan and inf; issue 10)
    (lambda d: d["stage"][0].update(placement_points=[3.0, float("nan")]), "placement_points must be number"),
    (lambda d: d["stage"][0].update(placement_points=[float("inf")]), "placement_points must be number"),
    (lambda d: d["stage"][0].update(placement_points=[10**30]), "placement_points must be number"),
    # counts, places and values are never negative (an imported capacity of -1 was accepted)
    (lambda d: d["registration"].update(capacity=-1), "capacity must be range"),
    (lambda d: d["stage"][0].update(battles=-1), "battles must be range"),
    (lambda d: d["stage"][0].update(theme_values=[10, -20]), "theme_values must be range"),
    (lambda d: d["stage"][0].update(placement_multiplier=-1), "placement_multiplier must be range"),
])
def test_a_malformed_format_names_the_field(change, message):
    data = raw("irkutsk")
    change(data)
    with pytest.raises(FormatError, match=message):
        parse_format(data, origin="copy.toml")
