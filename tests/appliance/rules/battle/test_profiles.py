"""Rules profiles: one TOML file per regulation, every rule field commented, organisers can copy them."""

from __future__ import annotations

import re

import pytest

from appliance.rules.battle import ProfileError, profile_from_dict, profile_to_dict
from appliance.service.presets import load_profile, profile_names
from appliance.service.presets import PROFILES_DIR

SHIPPED = ["eurocup", "eurocup-final", "irkutsk", "mubc", "mubc-final", "northern-owl", "northern-owl-final",
           "youth-cup", "youth-cup-final"]


def test_every_regulation_and_stage_is_shipped():
    assert profile_names() == SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_every_rule_field_is_commented_with_its_reason(name):
    table = None
    for line in (PROFILES_DIR / f"{name}.toml").read_text(encoding="utf-8").splitlines():
        heading = re.match(r"^\[(\w+)\]", line)
        if heading:
            table = heading.group(1)
        elif table not in ("profile", "sections") and re.match(r"^[a-z_]+ *=", line):
            assert "#" in line, f"{name}.toml [{table}] {line.split('=')[0].strip()} has no comment"


@pytest.mark.parametrize("name", SHIPPED)
def test_a_profile_round_trips_through_its_dict_form(name):
    profile = load_profile(name)
    assert profile_from_dict(profile_to_dict(profile)) == profile
    assert profile.name == name


def test_an_organiser_copies_a_profile_and_changes_a_rule(tmp_path):
    text = (PROFILES_DIR / "eurocup.toml").read_text(encoding="utf-8")
    text = text.replace('name = "eurocup"', 'name = "club-cup"').replace("window_after_reading_ms = 7000",
                                                                          "window_after_reading_ms = 5000")
    path = tmp_path / "club-cup.toml"
    path.write_text(text, encoding="utf-8")
    profile = load_profile(path)
    assert profile.name == "club-cup" and profile.presses_window_after_reading_ms == 5000
    assert profile.cite("answer_limit") == "club-cup 2.8"


@pytest.mark.parametrize("change, words", [
    (("presses", "during_answer", "sometimes"), "one of: queue, ignore"),
    (("answer", "limit_ms", "3s"), "must be an integer"),
    (("answer", "limit_ms", -1), "must not be negative"),
    (("players", "max", 6), "2 <= min <= max <= 4"),
    (("ranking", "tie_break", ["coin_toss"]), "may only hold"),
    (("ranking", "tie_break", ["shootout_theme", "shootout_question"]), "one shoot-out method"),
    (("ranking", "placement_points", [3, 2]), "places 1-4"),
    (("presses", "colour", "red"), "unknown keys colour"),
])
def test_a_bad_profile_is_refused_naming_the_field(change, words):
    data = profile_to_dict(load_profile("eurocup"))
    table, key, value = change
    data[table][key] = value
    with pytest.raises(ProfileError) as info:
        profile_from_dict(data, source="bad.toml")
    assert words in str(info.value) and str(info.value).startswith("bad.toml")


def test_unknown_profile_and_bad_toml(tmp_path):
    with pytest.raises(ProfileError, match="no rules profile 'nope'"):
        load_profile("nope")
    path = tmp_path / "broken.toml"
    path.write_text("[profile\nname=", encoding="utf-8")
    with pytest.raises(ProfileError, match="not valid TOML"):
        load_profile(path)


def test_theme_counts_per_stage_are_profile_data():
    """eurocup 3.4 (4 themes, 6 in the 1/3, 12 in the final), irkutsk 2.2-2.6 (6, 7, 8, 9), youth-cup 2.5."""
    counts = {name: (load_profile(name).themes_usual, load_profile(name).themes_counts) for name in profile_names()}
    assert counts["eurocup"] == (4, (4, 6)) and counts["eurocup-final"] == (12, (12,))
    assert counts["irkutsk"] == (6, (6, 7, 8, 9))
    assert counts["youth-cup"] == (10, (8, 10)) and counts["youth-cup-final"] == (12, (12,))
    for usual, named in counts.values():
        assert not named or usual in named


def test_theme_counts_must_be_positive():
    with pytest.raises(ProfileError, match=r"\[themes\]"):
        profile_from_dict({"profile": {"name": "x", "title": "x"}, "themes": {"usual": 0}})
