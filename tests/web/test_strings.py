"""Russian that a native speaker would write (issue 12): no English words on a Russian screen, no verb that
guesses a player's gender, every count through the catalogue's plural forms (appliance/words.py)."""

from __future__ import annotations

import re

import pytest

import appliance.words as words
from appliance.words import plural_index

# Latin words a Russian screen may show: names (of things, languages, regulations, programs, keys) and units.
ALLOWED_LATIN = {
    "PIN", "Wi-Fi", "RPi.GPIO", "JSON", "CSV", "HDMI", "QR", "English", "Enter", "svoyak", "mubc", "eurocup",
    "irkutsk", "northern-owl", "youth-cup", "swiss.rounds", "SD", "USB", "svoyak-data",
    # question packages: the formats and the programs that make them (docs/packages.md)
    "SIGame", "siq", "db.chgk.info", "XML", "TOML", "ZIP", "DTD", "content.xml", "UTF-8", "Windows-1251",
}
# The keys of a tournament's format file and of a log's JSON, named as they are typed (docs/tournament.md): the
# desk's refusals of a broken format file name them; no page shows them otherwise.
FORMAT_KEYS = {"true", "false", "best", "place", "places", "top", "records", "preliminary_min_battle_size",
               "red_values"}
# Words that name who did something: a past-tense verb next to them would guess the gender
NAME_FIELDS = re.compile(r"\{(player|first|answerer|name|who|appellant)\}")
# Past tense agreeing with a person («отвечал», «нажала»); «был»/«было»/«не было» agree with «ответ», not a name
PAST_TENSE = re.compile(r"\b[а-яё]+[аеиоуыяё]л[аи]?\b", re.IGNORECASE)
NOT_ABOUT_A_PERSON = {"был", "было", "была"}


def russian_lines() -> dict[str, str]:
    """Every Russian message of the catalogue, each plural form of a counted one as its own line."""
    lines = {key: words.gettext(key, "ru") for key in words.keys(plural=False)}
    for key in words.keys(plural=True):
        lines.update({f"{key}[{n}]": words.ngettext(key, n, "ru") for n in (1, 2, 5)})
    return lines


def latin_words(line: str) -> list[str]:
    text = re.sub(r"\{[^{}]*\}", " ", line)  # the fields are filled in, not read
    text = re.sub(r"\bsvoyak [a-z]+", " ", text)  # a console command, typed as it is spelt
    return [word.strip(".-") for word in re.findall(r"[A-Za-z][A-Za-z_.\-]*[A-Za-z](?:-[0-9]+)?", text)]


def test_the_russian_catalogue_speaks_russian():
    allowed = {key: ALLOWED_LATIN | (FORMAT_KEYS if key.startswith(("refusal.tournament.format.", "param."))
                                     else set()) for key in russian_lines()}
    offenders = {key: found for key, line in russian_lines().items()
                 if (found := [w for w in latin_words(line) if w not in allowed[key]])}
    assert offenders == {}


def test_the_check_catches_english_on_a_russian_screen():
    assert latin_words("Не проводится: not played: entrants fit") == ["not", "played", "entrants", "fit"]
    assert latin_words("{count} pts") == ["pts"]
    assert latin_words("Неверный PIN (eurocup 2.6)") == ["PIN", "eurocup"]


def test_no_line_guesses_a_players_gender():
    offenders = {}
    for key, line in russian_lines().items():
        if NAME_FIELDS.search(line):
            verbs = [word for word in PAST_TENSE.findall(line) if word.lower() not in NOT_ABOUT_A_PERSON]
            if verbs:
                offenders[key] = (line, verbs)
    assert offenders == {}


def test_the_gender_check_catches_the_old_lines():
    for line in ("{player} не отвечал на вопрос {question}", "{player} уже отвечал на этот вопрос",
                 "Первым нажал {first}, не {player}"):
        assert [w for w in PAST_TENSE.findall(line) if w not in NOT_ABOUT_A_PERSON], line


@pytest.mark.parametrize("count, word", [
    (0, "тем"), (1, "тема"), (2, "темы"), (4, "темы"), (5, "тем"), (6, "тем"), (11, "тем"), (12, "тем"),
    (14, "тем"), (21, "тема"), (22, "темы"), (25, "тем"), (101, "тема"), (111, "тем"), (1002, "темы"),
])
def test_one_plural_rule_for_every_count(count, word):
    assert words.word("count.themes", "ru", count=count) == f"{count} {word}"


def test_english_counts_take_two_forms():
    assert [words.word("count.themes", "en", count=n) for n in (0, 1, 2, 21)] == \
        ["0 themes", "1 theme", "2 themes", "21 themes"]
    assert plural_index(21, "en") == 1


def test_catalogue_lines_with_counts_word_them_by_the_rule():
    worded = words.word("refusal.battle.player_count", "ru", count=1, min=2, max=4)
    assert worded == "1 игрок, а по регламенту — от 2 до 4"
    assert words.word("refusal.battle.player_count", "en", count=5, min=2, max=4).startswith("5 players")


@pytest.mark.parametrize("key, count, ru, en", [
    ("count.themes", 6, "6 тем", "6 themes"), ("count.themes", 2, "2 темы", "2 themes"),
    ("count.questions", 21, "21 вопрос", "21 questions"), ("count.questions", 3, "3 вопроса", "3 questions"),
    ("director.seeds_count", 5, "5 сеяных игроков", "5 seeded players"), ("rooms.events", 1, "1 событие", "1 event"),
])
def test_the_count_lines_of_the_catalogue(key, count, ru, en):
    assert words.word(key, "ru", count=count) == ru
    assert words.word(key, "en", count=count) == en
