"""The adapter words every refusal the engine can give as one short line per language, keyed by its code."""

import ast
import pathlib
import re
import string

import pytest

from appliance.rules.battle.errors import REFUSAL_CODES
from appliance.service.battle_adapter import REFUSALS, BattleAdapter, word_refusal

ROOT = pathlib.Path(__file__).parents[3]
SOURCES = [ROOT / "appliance" / "rules" / "battle" / name for name in ("engine.py", "events.py")]
DOC = ROOT / "docs" / "battle-engine.md"


def _strings(node) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def _branches(node) -> set[str]:
    """The codes an expression may give: a literal, either branch of ``a if test else b`` (not the test), or the
    values and default of ``{...}.get(x, default)``."""
    if isinstance(node, ast.IfExp):
        return _branches(node.body) | _branches(node.orelse)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
            and isinstance(node.func.value, ast.Dict):
        return set().union(*map(_branches, node.func.value.values), *map(_branches, node.args[1:]))
    return {node.value} if isinstance(node, ast.Constant) and isinstance(node.value, str) else set()


def raised_codes() -> dict[str, list[set[str]]]:
    """Every refusal the engine raises: code -> the ``params`` names of each place raising it. Read from the
    source by AST: ``_refuse(state, key, code, message, event, [player], **params)``, the setup's
    ``refuse(key, code, message, **params)`` and ``BattleRuleError(..., code=..., params={...})``; a code given
    by ``_barrier_code(state)`` stands for each code that function returns."""
    found: dict[str, list[set[str]]] = {}
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        barrier = [node for node in ast.walk(tree)
                   if isinstance(node, ast.FunctionDef) and node.name == "_barrier_code"]
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None)
            keywords = {k.arg: k.value for k in node.keywords}
            if name == "_refuse" and len(node.args) >= 4:
                code = node.args[2]
                params = set(keywords) - {"player"}
                if len(node.args) >= 6 or "player" in keywords:
                    params.add("player")
            elif name == "refuse" and len(node.args) >= 3:
                code, params = node.args[1], set(keywords)
            elif name == "BattleRuleError" and "code" in keywords:
                code = keywords["code"]
                given = keywords.get("params")
                params = _strings(given) if isinstance(given, ast.Dict) else set()
            else:
                continue
            if isinstance(code, ast.Name):  # the function's own parameter (_refuse, refuse): not a raise site
                continue
            if isinstance(code, ast.Call) and getattr(code.func, "id", None) == "_barrier_code":
                codes = {v.value for f in barrier for d in ast.walk(f) if isinstance(d, ast.Dict) for v in d.values}
            else:
                codes = _branches(code)
            assert codes, f"{path.name}:{node.lineno}: a refusal whose code is not a literal"
            for one in codes:
                found.setdefault(one, []).append(params)
    return found


RAISED = raised_codes()


def documented_params(code: str) -> set[str]:
    _key, meaning = REFUSAL_CODES[code]
    _, _, listed = meaning.partition("params: ")
    return {re.sub(r" \(.*", "", name).strip() for name in listed.split(",") if name.strip()}


def test_every_code_the_engine_raises_is_registered_and_every_registered_code_is_raised():
    assert set(RAISED) - set(REFUSAL_CODES) == set()
    assert set(REFUSAL_CODES) - set(RAISED) == set()


def test_the_catalogue_words_exactly_the_registered_codes():
    assert set(REFUSALS) - set(REFUSAL_CODES) == set(), "catalogue lines no refusal uses"
    assert set(REFUSAL_CODES) - set(REFUSALS) == set(), "refusals with no Russian line"


def test_the_doc_lists_every_code_with_its_rule_key():
    rows = dict(re.findall(r"^\| `([a-z_]+)` \| (.+?) \|", DOC.read_text(encoding="utf-8"), flags=re.M))
    listed = {code: key for code, key in rows.items() if code in REFUSAL_CODES or "_" in code}
    assert set(REFUSAL_CODES) <= set(listed)
    for code, (key, _meaning) in REFUSAL_CODES.items():
        assert listed[code].replace("`", "") == key, code


@pytest.mark.parametrize("code", sorted(REFUSAL_CODES))
def test_each_place_raising_a_code_gives_the_params_its_line_names_and_no_undocumented_ones(code):
    named = {field for line in REFUSALS[code] for _, field, _, _ in string.Formatter().parse(line) if field}
    for params in RAISED[code]:
        assert named <= params, (code, named - params)
        assert params <= documented_params(code), (code, params - documented_params(code))


@pytest.mark.parametrize("code", sorted(REFUSAL_CODES))
def test_every_refusal_has_a_short_russian_line(code):
    params = {name: 1 for name in documented_params(code)} | {"min": 2, "max": 4}
    worded = word_refusal(code, params, "eurocup 2.7", "an English message", ("Анна", "Борис", "Вера"))
    assert worded["code"] == code
    assert not worded["ru"].startswith("Правила боя не позволяют"), worded
    assert worded["ru"].endswith("(2.7)") and worded["en"].endswith("(eurocup 2.7)")
    assert len(worded["ru"]) <= 70
    assert not re.search(r"[A-Za-z]{3}", worded["ru"]), worded["ru"]


def test_an_unknown_code_falls_back_to_the_engines_own_words():
    worded = word_refusal("from_a_newer_engine", {}, "eurocup 2.6", "a new refusal")
    assert worded == {"rule": "eurocup 2.6", "code": "from_a_newer_engine",
                      "ru": "Правила боя не позволяют: a new refusal (2.6)", "en": "a new refusal (eurocup 2.6)"}


def test_numbers_people_read_are_counted_from_one():
    worded = word_refusal("no_answer_to_correct", {"player": 0, "question": 4}, "eurocup 3.3", players=("Анна",))
    assert worded["ru"] == "Анна не отвечал на вопрос 5 (3.3)"


def test_a_refusal_from_the_engine_is_worded_by_its_code_and_params():
    from appliance.rules import battle as engine
    from appliance.rules.battle import events as ev

    adapter = BattleAdapter()
    state = engine.apply(None, adapter.setup_event(
        {"profile": "eurocup", "players": ["Анна", "Борис"], "themes": 4}, at_ns=1))
    for at_ns in (2, 3):
        for event in adapter.command_events("next", state, {}, at_ns):
            state = engine.apply(state, event)
    state = engine.apply(state, ev.ButtonPressed(at_ns=5, player=0, source="button"))
    with pytest.raises(engine.BattleRuleError) as refused:
        engine.apply(state, ev.AnswererPointed(at_ns=6, player=1))
    assert refused.value.code == "not_the_answerer"
    assert refused.value.params == {"first": 0, "player": 1, "question": 0}
    worded = adapter.word_rule_error(refused.value, state.players)
    assert worded["ru"] == "Первым нажал Анна, не Борис (2.6)"
    assert worded["en"] == "Анна pressed first, not Борис (eurocup 2.6)"


def test_the_button_reading_done_cites_its_own_rule_not_the_short_form():
    from appliance.rules import battle as engine
    from appliance.rules.battle import events as ev

    adapter = BattleAdapter()
    state = engine.apply(None, adapter.setup_event(
        {"profile": "eurocup", "players": ["Анна", "Борис"], "themes": 4}, at_ns=1))
    for at_ns in (2, 3):  # the theme, then the first question (price and reading in one gesture)
        for event in adapter.command_events("next", state, {}, at_ns):
            state = engine.apply(state, event)
    state = engine.apply(state, ev.ButtonPressed(at_ns=5, player=0, source="button"))  # interrupts the reading
    refused = adapter.allowed(state, 6)["reading_done"]
    assert refused["ru"].startswith("Вопрос прерван — сначала укажите отвечающего (")
    assert "краткая" not in refused["ru"]
