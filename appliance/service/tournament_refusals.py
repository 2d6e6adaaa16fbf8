"""The tournament desk's refusals worded for people, Russian first, then English, by their stable ``code``.

The catalogue's ``refusal.tournament.<code>`` (appliance/locale) words every refusal the director can meet: the
tournament engine's (``appliance.rules.tournament.errors.REFUSAL_CODES``) and the desk's own (:data:`DESK_CODES`).
Each line is filled in from the error's ``params``; nothing here reads the English sentence. A test checks that
every code raised anywhere is worded there and documented in ``docs/tournament.md``.

>>> from appliance.rules.tournament.errors import DrawError
>>> error = DrawError("...", code="draw.too_few",
...                   params={"players": 18, "battles": 9, "size": 3, "needed": 27, "rule": "irkutsk 2.1-2.2"})
>>> word(error)["ru"]
'Игроков 18, а нужно не меньше 27, чтобы заполнить 9 боёв по 3 и более (irkutsk 2.1-2.2)'
>>> word(DrawError("...", code="draw.no_players", params={"rule": ""}))["en"]
'No players to draw'
"""

from __future__ import annotations

from typing import Any

from appliance.config import MAX_FIELD_CHARS as FIELD_CHARS
import appliance.words as words

# Refusals of the desk itself and of its pages' fields (not the engine's): code -> what it means, params.
DESK_CODES: dict[str, str] = {
    "tournament.unknown": "no tournament with this id on this box; params: tid",
    "input.seed": "a draw seed typed on a form is not a whole number; params: seed",
    "input.team_rank": "a team rank typed on a form is not a whole number; params: rank",
    "input.spares": "spare themes typed on the «play on this box» form are not 0 to the limit; params: limit",
}


REFUSAL_PREFIX = "refusal.tournament."
# Params that are names of a kind, not figures, worded per language (``import.field``'s ``expected``): the
# catalogue's ``param.<param>.<value>``.
PARAM_WORDS = ("expected",)
MAX_FIELD_CHARS = 200  # a param echoed back (a typed seed, a deadline) is cut: a page never repeats a huge field


def _shown(value: Any) -> str:
    if isinstance(value, (list, tuple, set, frozenset)):
        text = ", ".join(map(str, value)) or "—"
    else:
        text = str(value)
    return text if len(text) <= MAX_FIELD_CHARS else text[:MAX_FIELD_CHARS] + "…"


def _citation(params: dict, language: str) -> dict:
    """A format's rule line is its citation, then an English gloss («eurocup 3.1: the battle winner goes on»):
    the Russian line cites the section alone."""
    rule = params.get("rule")
    if language == "ru" and isinstance(rule, str) and ":" in rule:
        return {"rule": rule.split(":", 1)[0].strip()}
    return {}


def refusal_codes() -> list[str]:
    """Every tournament refusal code the catalogue words."""
    return [key.removeprefix(REFUSAL_PREFIX) for key in words.keys(REFUSAL_PREFIX, plural=False)]


def _param_word(param: str, value: str, language: str) -> str:
    key = f"param.{param}.{value}"
    return words.word(key, language, chars=FIELD_CHARS) if words.has(key) else value


def word(error: BaseException, battles: dict[str, tuple[str, str]] | None = None) -> dict[str, str]:
    """``{"code", "ru", "en"}`` for a refusal, from its ``code`` and ``params`` (no parsing of its sentence).

    An empty ``rule`` drops its parentheses; a code the catalogue lacks (or params missing a figure) reads
    ``refusal.tournament_fallback`` with the error's own sentence. ``battles`` (a drawn battle's id -> its number and stage as
    people say them, «3 (1/27 финала)», in Russian and English) words a ``battle`` param instead of its id.
    """
    code = getattr(error, "code", None)
    params = {key: _shown(value) for key, value in (getattr(error, "params", None) or {}).items()}
    named = (battles or {}).get(params.get("battle", ""))
    if isinstance(code, str) and words.has(REFUSAL_PREFIX + code):
        try:
            ru, en = (words.word(REFUSAL_PREFIX + code, name, **{**params, **{
                          key: _param_word(key, value, name)
                          for key, value in params.items() if key in PARAM_WORDS}, **_citation(params, name),
                          **({"battle": named[index]} if named else {})})
                      for index, name in enumerate(("ru", "en")))
        except (KeyError, IndexError, ValueError):
            pass
        else:
            if not params.get("rule", "x"):
                ru, en = ru.replace(" ()", "").replace("()", ""), en.replace(" ()", "").replace("()", "")
            return {"code": code, "ru": ru, "en": en}
    message = _shown(str(error))
    return {"code": code if isinstance(code, str) else type(error).__name__,
            **{language: words.word("refusal.tournament_fallback", language, message=message)
               for language in ("ru", "en")}}
