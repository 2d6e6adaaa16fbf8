"""The editor's pass (issue 20): the lines a native reader quoted from the screens, each read again where it
stands (the page, the host's refusal, the desk's form), worded as a Russian editor would."""

from __future__ import annotations

import pytest

import appliance.words as words
from appliance.rules import battle as engine
from appliance.rules import tournament as t
from appliance.rules.battle import events as ev
from appliance.rules.tournament.simulate import play_battle_outline, simulate
from appliance.service.battle_adapter import BattleAdapter
from tests.web.test_desk_russian import client, desk, visible_text  # noqa: F401 (the desk's client fixture)


def battle(profile: str = "eurocup"):
    adapter = BattleAdapter()
    state = engine.apply(None, adapter.setup_event({"profile": profile, "players": ["Анна", "Борис"], "themes": 4},
                                                   at_ns=1))
    return adapter, state


def refused(adapter, state, event) -> dict:
    with pytest.raises(engine.BattleRuleError) as error:
        engine.apply(state, event)
    return adapter.word_rule_error(error.value, state.players)


def test_a_refusal_with_no_section_cites_no_profile_id_in_russian():
    """«Нечего отменять (eurocup)»: a profile's id is no Russian; the English line keeps the rule's name."""
    adapter, state = battle()
    said = refused(adapter, state, ev.ActionUndone(at_ns=2))
    assert said["code"] == "nothing_to_undo"
    assert said["ru"] == "Нечего отменять"
    assert "eurocup" in said["en"]


def test_the_ruling_refusals_name_the_hosts_buttons():
    """«Решение — «Плюс» или «Минус»» while the host's buttons say «Верно» and «Минус»."""
    right, wrong = words.gettext("cmd.right", "ru"), words.gettext("cmd.wrong", "ru")
    for code in ("bad_ruling", "bad_corrected_ruling"):
        line = words.gettext(f"refusal.battle.{code}", "ru")
        assert f"«{right}» или «{wrong}»" in line and "Плюс" not in line, line


def test_the_hosts_reason_field_is_a_capitalised_label(client):  # noqa: F811
    assert words.gettext("host.reason", "ru") == "Причина"


def desk_pages(client, preset="eurocup", players=81):  # noqa: F811
    log, _state = simulate(preset, players, 5, battle_player=play_battle_outline)
    events = [t.to_dict(event) for event in log[:max(2, len(log) // 3)]]
    events[0] = {**events[0], "tournament_id": f"editor-{preset}"}
    tid = desk(client).import_events(events)
    return tid, {page: "\n".join(visible_text(client.get(f"/director/{tid}/{page}?lang=ru").get_data(as_text=True)))
                 for page in ("registration", "bracket", "")}


def test_the_desk_forms_read_as_russian(client):  # noqa: F811
    tid, pages = desk_pages(client)
    # «Залы для боёв без зала» (which battles, which hall?)
    assert "Залы для боёв, которым зал ещё не назначен" in pages["bracket"]
    assert "без зала" not in pages["bracket"]
    # «запасных тем для перестрелки [0]»: a genitive before an input
    assert "запасных тем для перестрелки" not in "\n".join(pages.values())
    # «формату нужно от 81 до 81 игроков», «сыграют 0»
    registration = pages["registration"]
    assert "от 81 до 81" not in registration and "сыграют" not in registration
    if "ровно" not in registration:
        assert "а нужно от" in registration


def test_the_field_line_says_exactly_when_least_is_most():
    line = words.word("director.field_need_exact", "ru", stage="Отбор", have=0, most=81, rule="eurocup 1.1")
    assert line == "Этап «Отбор»: игроков 0, а нужно ровно 81 (eurocup 1.1)"


def test_the_draw_seed_is_no_calque():
    """«Зерно жеребьёвки» is "seed" word for word."""
    for key in ("director.seed", "refusal.tournament.input.seed"):
        assert "Зерно" not in words.gettext(key, "ru") and "жеребьёвки" in words.gettext(key, "ru")


def test_one_spare_theme_is_not_called_spares():
    """«Сыграем: …; запасные: Запасная» with one spare theme."""
    assert words.word("setup.package_spares", "ru", count=1) == "запасная:"
    assert words.word("setup.package_spares", "ru", count=2) == "запасные:"
    assert words.word("setup.package_spares", "en", count=1) == "spare:"


def test_the_button_test_lines_do_not_run_together(settings, memory_battles):
    """«…когда начнётся вопрос нажатий ещё не было», «нажмите свою кнопку Работают: …»: the page's bold line
    and the script's line after it (svoyak.js buttonTestText) are two sentences."""
    import re

    from appliance.service.session import Session
    from tests.web.conftest import IDENTITY
    from web import create_app
    from web.sync import Services

    session = Session(memory_battles, BattleAdapter(), simulator=True).start(timer_thread=False)
    client = create_app(settings, Services(session=session, identity=IDENTITY)).test_client()
    for page, key in (("/host", "test.on_host"), ("/board", "test.on_board")):
        html = client.get(page, headers={"Host": "10.42.0.1"}).get_data(as_text=True)
        bold = re.search(r"<b>([^<]*)</b> <span id=\"(?:board-)?test-pressed\">", html).group(1)
        assert bold == words.gettext(key, "ru") and bold.endswith(".")
    for key in ("test.none_yet", "test.pressed"):
        assert words.gettext(key, "ru")[0].isupper(), key


def test_a_withdrawn_questions_result_is_withdrawn_not_taken():
    """The protocol said «взят» for a question withdrawn after a right answer."""
    from appliance.rules.battle.protocol import protocol_rows
    from appliance.service import papers

    adapter, state = battle()
    at_ns = 1
    for step in ["next", "next", "reading_done", "press", "point", "right", "withdraw"]:
        at_ns += 10**9
        if step == "press":
            state = engine.apply(state, ev.ButtonPressed(at_ns=at_ns, player=0, source="button"))
            continue
        for event in adapter.command_events(step, state, {"reason": "ошибка в вопросе"}, at_ns):
            state = engine.apply(state, event)
    assert protocol_rows(state, "ru")[0].outcome == "снят"
    assert protocol_rows(state, "en")[0].outcome == "withdrawn"
    paper = papers.protocol_html(state, "b1", language="ru")  # the paper where it stood
    assert "<td>снят</td>" in paper and "<td>взят</td>" not in paper


@pytest.mark.parametrize("key, values, line", [
    ("refusal.package.too_many_entries", {"count": 1, "limit": 500}, "В архиве 1 файл, а можно не больше 500"),
    ("refusal.package.too_many_entries", {"count": 3, "limit": 2}, "В архиве 3 файла, а можно не больше 2"),
    ("http.field_too_long", {"field": "Имя", "limit": 21}, "Поле «Имя» длиннее 21 символа: ничего не изменено"),
    ("http.number_too_long", {"field": "Цена", "limit": 6}, "В поле «Цена» число длиннее 6 цифр: ничего не изменено"),
    ("refusal.package.too_many_themes", {"limit": 101}, "В пакете больше 101 темы"),
    ("param.expected.short", {"chars": 2000}, "нужна строка не длиннее 2000 знаков"),
])
def test_numerals_agree_with_their_nouns(key, values, line):
    """A number next to its noun takes the catalogue's plural forms («1 файлов», «21 символов» were the lines)."""
    assert words.word(key, "ru", **values) == line
