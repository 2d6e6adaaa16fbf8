"""The adapter words every refusal the engine can give as one short line per language, keyed by its code."""

import ast
import json
import pathlib
import re
import string

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from appliance.rules import battle as engine
from appliance.rules.battle.queries import eligible_players
from appliance.rules.battle import events as ev
from appliance.rules.battle.errors import REFUSAL_CODES
import appliance.words as words
from appliance.service.battle_adapter import HOST_COMMANDS, BattleAdapter, CommandError, word_refusal

REFUSALS = words.pairs("refusal.battle.")  # code -> (ru, en): the catalogue's lines

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
    named = words.fields(f"refusal.battle.{code}", "ru") | words.fields(f"refusal.battle.{code}", "en")
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
    assert worded["ru"] == "Анна: ответа на вопрос 5 не было (3.3)"


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
    assert worded["ru"] == "Первое нажатие — Анна, а не Борис (2.6)"
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


# ---------------------------------------------------------------------------------------------------------------
# The view is built on every press, so BattleAdapter.view and allowed() share work and reuse rows between calls.
# Their output must stay exactly what the plain computation gives: random battles, command by command, compared
# at every step with (1) the plain computation written out below (the code before the shortcuts) and (2) a fresh
# adapter, which has nothing to reuse.


def plain_allowed(adapter, state, at_ns):
    """Each host command tried on its own, worded afresh: what ``allowed`` must equal."""
    out = {}
    at_ns = max(at_ns, state.last_at_ns)
    for name in HOST_COMMANDS:
        eligible = eligible_players(state)
        last = state.last_question
        ruling = last.rulings[-1] if last is not None and last.rulings else None
        args = {}
        if name == "pick":
            args = {"player": eligible[0] if eligible else 0}
        elif name == "correct":
            args = {"player": ruling.player if ruling else 0, "correct": not ruling.effective if ruling else True}
        elif name == "appeal":
            args = {"player": ruling.player if ruling else 0}
        elif name == "appeal_decide":
            open_appeals = [i for i, appeal in enumerate(state.appeals) if not appeal.decided]
            args = {"appeal": open_appeals[0] if open_appeals else -1, "accepted": True}
        try:
            check = state
            for event in adapter.command_events(name, state, args, at_ns):
                check = engine.apply(check, event)
            out[name] = None
        except engine.BattleRuleError as error:
            out[name] = adapter.word_rule_error(error, state.players)
        except (CommandError, IndexError, ValueError) as error:
            out[name] = {"rule": None, "ru": str(error), "en": str(error)}
    return out


def plain_themes(state):
    profile = state.profile
    themes = []
    for number in range(state.setup.themes):
        started = next((t for t in state.themes if not t.shootout and t.index == number), None)
        name = (started.name if started else "") or (
            state.setup.theme_names[number] if number < len(state.setup.theme_names) else "")
        red = number in state.setup.red_themes
        multiplier = profile.questions_red_theme_multiplier if red else 1
        played = [q.value_points for q in state.questions if started is not None and q.theme == started.index]
        themes.append({"index": number, "name": name, "red": red,  # unnamed: "", the pages word it
                       "prices": [v * multiplier for v in profile.questions_values], "played": played,
                       "current": state.theme is not None and started is state.theme})
    for theme in state.themes:
        if theme.shootout:
            played = [q.value_points for q in state.questions if q.theme == theme.index]
            themes.append({"index": theme.index, "name": theme.name or "⚔", "red": False, "shootout": True,
                           "prices": list(profile.questions_values), "played": played,
                           "current": theme is state.theme})
    return themes


def plain_questions(state):
    return [{"index": q.index, "theme": q.theme, "theme_shootout": state.themes[q.theme].shootout,
             "theme_name": state.themes[q.theme].name,
             "price": q.value_points, "outcome": q.outcome, "withdrawn": q.withdrawn,
             "answers": [{"player": r.player, "correct": r.effective} for r in q.rulings]}
            for q in state.questions]


def natural_command(state, player):
    """What a host would most likely do next, so random battles reach their end and their shoot-outs."""
    question = state.current_question
    if question is None:
        return "next", {}
    if question.answerer is not None:
        return ("point", {}) if question.pointed_ns is None else (("right" if player % 2 else "wrong"), {})
    if state.mode == "claps":
        return "pick", {"player": player}
    if question.reading == "reading" and player % 3 == 0:
        return "reading_done", {}
    return "press", {}


STEP = st.tuples(st.sampled_from(["natural"] * 12 + ["press", "expire", "undo", "pick", "correct", "appeal",
                                                    "appeal_decide", "withdraw", "announce", "claps", "extend",
                                                    "time", "resume_reading", "short_form", "clarify"]),
                 st.integers(min_value=0, max_value=3),            # a player, question or appeal number
                 st.integers(min_value=1, max_value=12_000),       # ms to the step
                 st.booleans())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(profile=st.sampled_from(sorted(engine.profile_names())), players=st.integers(min_value=2, max_value=4),
       themes=st.integers(min_value=1, max_value=3), named=st.booleans(), red=st.booleans(),
       steps=st.lists(STEP, min_size=30, max_size=160))
def test_the_view_and_its_verdicts_equal_the_plain_computation_at_every_step(profile, players, themes, named, red,
                                                                             steps):
    adapter = BattleAdapter()
    loaded = engine.load_profile(profile)
    count = min(max(players, loaded.players_min), loaded.players_max)
    red = red and loaded.questions_red_theme_multiplier != 1
    state = engine.apply(None, adapter.setup_event({
        "profile": profile, "players": [f"P{i}" for i in range(count)],
        "themes": [{"name": f"Тема {i}" if named else "", "red": red and i == 0} for i in range(themes)]}, 1))
    now = state.last_at_ns
    for kind, number, gap_ms, flag in steps:
        now += gap_ms * 1_000_000
        name, args = (natural_command(state, number) if kind == "natural" else (kind, {}))
        if name == "pick":
            args = {"player": number}
        elif name == "correct":
            args = {"question": max(0, len(state.questions) - 1 - number % 2), "player": number, "correct": flag}
        elif name == "appeal":
            args = {"player": number}
        elif name == "appeal_decide":
            args = {"appeal": max(0, len(state.appeals) - 1), "accepted": flag, "correct": flag if number else None}
        if name == "press":
            events = [ev.ButtonPressed(at_ns=now - (gap_ms // 2) * 1_000_000 * flag, player=number % count,
                                       source="button")]
        elif name == "expire":
            events = [ev.PressWindowExpired(at_ns=max(now, state.press_window_over_ns or now))]
        else:
            events = adapter.command_events(name, state, args, now)
        try:
            state = adapter.check(state, events)
        except (engine.BattleRuleError, CommandError):
            pass  # refused: the same state is shown again (and must give the same view)
        shown_at = now + (number * 2_500_000_000 if flag else 0)  # some views later: deadlines have passed
        view = adapter.view(state, "b1", shown_at)
        assert view["allowed"] == plain_allowed(adapter, state, shown_at)
        assert view["themes"] == plain_themes(state)
        assert view["questions"] == plain_questions(state)
        assert json.dumps(view, sort_keys=True) == json.dumps(BattleAdapter().view(state, "b1", shown_at),
                                                              sort_keys=True)


def test_verdicts_worded_for_one_battle_are_not_shown_in_the_next():
    adapter = BattleAdapter()  # one per box: it serves battle after battle
    for names in (["Анна", "Борис"], ["Вера", "Глеб"]):
        state = engine.apply(None, adapter.setup_event({"profile": "eurocup", "players": names, "themes": 2}, 1))
        for at_ns in (2, 3):
            state = adapter.check(state, adapter.command_events("next", state, {}, at_ns))
        state = engine.apply(state, ev.ButtonPressed(at_ns=5, player=0, source="button"))
        refused = adapter.view(state, "b", 6)["allowed"]["pick"]  # the page offers the next in play
        assert refused == plain_allowed(adapter, state, 6)["pick"]
        assert refused["ru"] == f"Первое нажатие — {names[0]}, а не {names[1]} (2.6)"


@pytest.mark.parametrize("name, args", [
    ("correct", {"player": 0, "correct": "false"}), ("correct", {"player": 0, "correct": 1}),
    ("correct", {"player": 0, "correct": True, "reason": ["x"]}), ("appeal", {"player": 0, "claim": 7}),
    ("appeal_decide", {"appeal": 0, "accepted": "yes"}),
    ("appeal_decide", {"appeal": 0, "accepted": True, "correct": 0}),
    ("claps", {"on": "off"}), ("withdraw", {"reason": {"a": 1}}), ("next", {"name": None}),
    ("extend", {"extra_ms": float("inf")}), ("pick", {"player": float("nan")}),
    ("correct", {"player": 0, "question": "1"}),
])
def test_command_arguments_are_checked_explicitly_and_refused_as_a_bad_command(name, args):
    """A bad argument is a CommandError ("bad command"), never a TypeError caught by luck nor a "false" taken
    as true: a bug stays a bug, and a refusal says which argument."""
    adapter = BattleAdapter()
    state = engine.apply(None, ev.BattleSetUp(at_ns=0, profile=engine.load_profile("northern-owl"),
                                              players=("А", "Б", "В"), themes=1))
    with pytest.raises(CommandError) as error:
        adapter.command_events(name, state, args, 1)
    assert any(key in str(error.value) for key in args)
