"""Every tournament refusal raised anywhere has a stable code that is registered, worded and documented."""

from __future__ import annotations

import ast
from pathlib import Path

from appliance.rules.tournament.errors import REFUSAL_CODES
import appliance.words as words
from appliance.service.tournament_refusals import DESK_CODES

REFUSALS = words.pairs("refusal.tournament.")  # code -> (ru, en): the catalogue's lines

ROOT = Path(__file__).resolve().parents[3]
RAISING = sorted((ROOT / "appliance/rules/tournament").glob("*.py")) + [
    ROOT / "appliance/service/tournaments.py", ROOT / "web/director.py"]
DOC = (ROOT / "docs/tournament.md").read_text(encoding="utf-8")


def raised_codes() -> dict[str, str]:
    """code -> where, for every ``SomeError(..., code="...")`` made in the desk's modules (raised or returned)."""
    codes = {}
    for path in RAISING:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "").endswith("Error"):
                for keyword in node.keywords:
                    if keyword.arg == "code" and isinstance(keyword.value, ast.Constant):
                        codes[keyword.value.value] = f"{path.relative_to(ROOT)}:{node.lineno}"
    return codes


def test_every_tournament_error_raised_names_its_code():
    # A raise without a code still reads as "tournament.refused" at run time (never a 500), but never passes here.
    classes = {"TournamentError", "FormatError", "UnknownFormatError", "RegistrationError", "DrawError",
               "ResultError", "StageError", "DeskInputError"}
    missing = []
    for path in RAISING:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in classes and not any(
                    k.arg == "code" for k in node.keywords):
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert missing == []


def test_every_raised_code_is_registered_worded_and_documented():
    codes = raised_codes()
    assert len(codes) > 80
    for code, where in codes.items():
        assert code in REFUSAL_CODES or code in DESK_CODES, where
        assert code in REFUSALS, f"{code} ({where}) has no Russian and English words"
        assert f"`{code}`" in DOC, f"{code} ({where}) is not in docs/tournament.md"


def test_no_worded_or_registered_code_is_stale():
    codes = raised_codes()
    assert set(REFUSALS) == set(REFUSAL_CODES) | set(DESK_CODES)
    unused = sorted(set(REFUSALS) - set(codes) - {"tournament.refused"})  # the code of a raise that names none
    assert unused == [], unused


def test_codes_are_area_dot_name_and_every_line_is_russian_then_english():
    for code, (ru, en) in REFUSALS.items():
        area, _, name = code.partition(".")
        assert area.isalpha() and name.replace("_", "").isalpha() and code.islower(), code
        assert any("а" <= ch <= "я" for ch in ru.lower()), code
        assert en and en[0].isupper() or en.startswith("{"), code
