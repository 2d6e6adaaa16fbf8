"""The box's packages: played themes come from the battle log; a battle's themes from a package."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from appliance.service.packages import PackageChoiceError, QuestionPackages
from tests.appliance.packages.conftest import make_zip


def table(themes: int) -> bytes:
    rows = ["тема,цена,вопрос,ответ,комментарий"]
    for t in range(themes):
        rows += [f"Тема {t + 1},{10 * (q + 1)},Вопрос {t + 1}.{q + 1},Ответ {t + 1}.{q + 1},К {t + 1}.{q + 1}"
                 for q in range(6 if t == 0 else 5)]
    return "\n".join(rows).encode()


class FakeBattles:
    """Battles whose setups carry ``sources``, as BattleSetUp does."""

    def __init__(self, *setups):
        self.setups = {f"b{i}": SimpleNamespace(sources=sources) for i, sources in enumerate(setups)}

    def list(self):
        return [{"battle_id": battle_id} for battle_id in self.setups]

    def state(self, battle_id):
        return SimpleNamespace(setup=self.setups[battle_id])


def test_played_themes_come_from_the_battles_setups(tmp_path):
    packages = QuestionPackages.in_folder(tmp_path)
    added = packages.add("тур.csv", table(6))
    package_id = added["id"]
    packages.battles = FakeBattles(((package_id, 0), (package_id, 2)), ((package_id, 2),), ())
    (entry,) = packages.entries()
    assert entry["played_themes"] == 2
    preview = packages.preview(package_id)
    assert [theme["played_in"] for theme in preview["themes"]][:3] == [["b0"], [], ["b0", "b1"]]
    # The next unplayed themes skip what was played, in package order.
    parts = packages.battle_themes(package_id, count=3)
    assert parts["theme_names"] == ["Тема 2", "Тема 4", "Тема 5"]
    assert parts["sources"] == [[package_id, 1], [package_id, 3], [package_id, 4]]


def test_chosen_themes_then_spares_with_their_texts(tmp_path):
    packages = QuestionPackages.in_folder(tmp_path)
    package_id = packages.add("тур.csv", table(6))["id"]
    parts = packages.battle_themes(package_id, themes=[0, 3], spare=[5], questions_per_theme=5)
    assert parts["theme_names"] == ["Тема 1", "Тема 4", "Тема 6"]
    assert parts["questions"][0][0] == ["Вопрос 1.1", "Ответ 1.1"]
    assert len(parts["questions"][0]) == 5 and parts["skipped"] == 1  # theme 1 has six questions
    assert packages.question(package_id, 0, 2)["comment"] == "К 1.3"


@pytest.mark.parametrize("choice, code", [
    ({"themes": [0, 9]}, "package.no_such_theme"),
    ({"themes": [0, True]}, "package.no_such_theme"),
    ({"themes": [1], "spare": [1]}, "package.theme_twice"),
    ({"count": 7}, "package.too_few_unplayed"),
])
def test_a_choice_that_cannot_be_had_is_refused(tmp_path, choice, code):
    packages = QuestionPackages.in_folder(tmp_path)
    package_id = packages.add("тур.csv", table(6))["id"]
    with pytest.raises(PackageChoiceError) as caught:
        packages.battle_themes(package_id, **choice)
    assert caught.value.code == code


def test_media_are_listed_in_the_preview(tmp_path):
    from tests.appliance.packages.conftest import V4_CONTENT
    packages = QuestionPackages.in_folder(tmp_path)
    package_id = packages.add("k.siq", make_zip({"content.xml": V4_CONTENT, "Images/Карта реки.png": b"p"}))["id"]
    question = packages.preview(package_id)["themes"][0]["questions"][1]
    assert question["media"] == [{"kind": "image", "path": "Images/Карта реки.png"},
                                 {"kind": "audio", "path": "гимн.mp3"}]


# ------------------------------------------------------------ a battle set up from a package, in the session
def sport_session(tmp_path, memory_battles, board_answer="announced", themes=6):
    from appliance.service.battle_adapter import BattleAdapter
    from appliance.service.session import Session
    from tests.appliance.packages.conftest import sport_siq
    from tests.conftest import FakeClock

    packages = QuestionPackages.in_folder(tmp_path / "packages", memory_battles)
    package_id = packages.add("кубок.siq", sport_siq(themes))["id"]
    clock = FakeClock()
    session = Session(memory_battles, BattleAdapter(packages=packages, board_answer=board_answer), clock=clock,
                      simulator=True).start(timer_thread=False)
    return session, packages, package_id, clock


SETUP = {"profile": "eurocup", "players": ["Аня", "Борис", "Вера"], "themes": [{"name": "", "red": False}] * 2}


def test_the_next_unplayed_themes_are_set_up_and_then_marked_played(tmp_path, memory_battles):
    session, packages, package_id, _ = sport_session(tmp_path, memory_battles)
    session.command("setup", {**SETUP, "package": {"id": package_id, "spare": [5]}}, "c1")
    setup = session.state.setup
    assert setup.theme_names == ("Тема номер 1", "Тема номер 2", "Тема номер 6")
    assert setup.sources == ((package_id, 0), (package_id, 1), (package_id, 5))
    assert setup.questions[0][2] == ("Вопрос 1.3 о теме 1.", "Ответ 1.3")
    # The box remembers: the next battle takes the themes after them, the spare counts as played.
    assert [t["played"] for t in packages.choices()[0]["themes"]] == [True, True, False, False, False, True]
    first = session.snapshot()["view"]["battle"]["id"]
    session.command("setup", {**SETUP, "package": {"id": package_id}, "set_aside": first}, "c2")
    assert session.state.setup.theme_names == ("Тема номер 3", "Тема номер 4")
    session.close()


def test_chosen_themes_keep_the_forms_red_flags_and_a_bad_choice_changes_nothing(tmp_path, memory_battles):
    from appliance.service.session import CommandRejected

    session, packages, package_id, _ = sport_session(tmp_path, memory_battles)
    session.command("setup", {"profile": "eurocup-final", "players": ["А", "Б", "В"],
                              "themes": [{"red": False}, {"red": True}],
                              "package": {"id": package_id, "themes": [4, 2]}}, "c1")
    setup = session.state.setup
    assert (setup.themes, setup.red_themes, setup.theme_names) == (2, (1,), ("Тема номер 5", "Тема номер 3"))
    before = session.seq
    with pytest.raises(PackageChoiceError) as refused:
        session.command("setup", {**SETUP, "package": {"id": package_id, "themes": [0, 6]}}, "c2")
    assert refused.value.code == "package.no_such_theme" and refused.value.params["theme"] == 6
    with pytest.raises(Exception) as missing:
        session.command("setup", {**SETUP, "package": {"id": "000000000000"}}, "c3")
    assert getattr(missing.value, "code", "") == "package.not_found"
    with pytest.raises(CommandRejected) as malformed:
        session.command("setup", {**SETUP, "package": {"id": package_id, "themes": "1,2"}}, "c4")
    assert malformed.value.code == "error.argument_type"
    assert session.seq == before and session.state.setup.theme_names == ("Тема номер 5", "Тема номер 3")
    session.close()


def play(session, clock, *commands):
    for index, name in enumerate(commands):
        clock.now_ns += 10**9
        session.command(name, None, f"p{clock.now_ns}-{index}")


def test_the_reading_view_follows_the_engines_position_and_the_board_answer_follows_the_setting(tmp_path,
                                                                                                memory_battles):
    session, packages, package_id, clock = sport_session(tmp_path, memory_battles, board_answer="over")
    session.command("setup", {**SETUP, "package": {"id": package_id}}, "c1")
    reading = session.snapshot()["view"]["reading"]
    assert reading["current"] is None and reading["next"]["text"] == "Вопрос 1.1 о теме 1."
    play(session, clock, "next", "next")
    view = session.snapshot()["view"]
    assert view["reading"]["current"]["text"] == "Вопрос 1.1 о теме 1." and view["question"]["answer"] is None
    assert view["reading"]["current"]["comment"] == "Комментарий 1.1"
    play(session, clock, "reading_done")
    clock.now_ns = session.state.press_window_closes_ns + 10**6
    session.deadlines.run_due()
    view = session.snapshot()["view"]
    assert view["question"]["over"] and view["question"]["answer"] == "Ответ 1.1"  # "over": no announce needed
    assert view["reading"]["next"]["text"] == "Вопрос 1.2 о теме 1."
    session.close()


def test_the_board_never_shows_an_answer_with_board_answer_never(tmp_path, memory_battles):
    session, packages, package_id, clock = sport_session(tmp_path, memory_battles, board_answer="never")
    session.command("setup", {**SETUP, "package": {"id": package_id}}, "c1")
    play(session, clock, "next", "next", "reading_done")
    clock.now_ns = session.state.press_window_closes_ns + 10**6
    session.deadlines.run_due()
    play(session, clock, "announce")
    assert session.snapshot()["view"]["question"]["answer"] is None
    session.close()


def test_the_protocol_names_the_themes_and_where_each_question_was_read_from(tmp_path, memory_battles):
    from appliance.rules.battle.protocol import protocol_rows
    from appliance.service.papers import protocol_csv, protocol_html

    session, packages, package_id, clock = sport_session(tmp_path, memory_battles)
    session.command("setup", {**SETUP, "package": {"id": package_id, "themes": [3, 1]}}, "c1")
    play(session, clock, "next", "next", "reading_done")
    clock.now_ns = session.state.press_window_closes_ns + 10**6
    session.deadlines.run_due()
    state = session.state
    (row,) = protocol_rows(state)
    assert row.theme_name == "Тема номер 4"
    assert row.source == f"пакет {package_id}, тема 4, вопрос 1 — ответ: Ответ 4.1"
    assert protocol_rows(state, "en")[0].source == f"package {package_id}, theme 4, question 1 — answer: Ответ 4.1"
    html = protocol_html(state, "b1")
    assert "1 Тема номер 4, 2 Тема номер 2" in html and f"(пакет {package_id})" in html
    assert "Источник вопроса" in html and "ответ: Ответ 4.1" in html and "Question from" not in html
    assert "Источник вопроса" in protocol_csv(state).splitlines()[0]
    assert "Question from" in protocol_csv(state, "en").splitlines()[0]
    assert f"(package {package_id})" in protocol_html(state, "b1", language="en")
    # the paper names the package by its title, never its hash (issue 20: «пакет b4fc212ea86f»), in its
    # header and every source cell, when the box still has it (web/papers.py hands the titles over)
    titles = {package_id: packages.title(package_id)}
    named = protocol_html(state, "b1", titles=titles)
    assert f"(пакет «{titles[package_id]}»)" in named and package_id not in named
    assert protocol_rows(state, titles=titles)[0].source.startswith(f"пакет «{titles[package_id]}», тема 4")
    assert package_id not in protocol_csv(state, titles=titles)
    session.close()


def youth_cup_desk(tmp_path, session, packages):
    """A youth-cup tournament on the desk with the written round (2.2) played and closed: the 1/16 seated."""
    from appliance.service.tournaments import TournamentDesk
    from appliance.store import EventStore

    desk = TournamentDesk(EventStore(tmp_path / "tournaments.sqlite"))
    packages.tournament_of = desk.box_battles
    tid = desk.create("youth-cup", "Кубок", seed=1)
    for i in range(48):
        desk.register(tid, f"Игрок {i}")
    desk.draw(tid, seed=1)
    for i in range(48):  # every sheet a different score: no tie to break
        desk.enter_sheet(tid, "written", f"p{i + 1:03d}", "+" * i + "0" * (60 - i))
    desk.close_stage(tid, "written")
    return desk, tid


def test_both_runs_of_a_slot_play_the_same_themes_of_the_package(tmp_path, memory_battles):
    """youth-cup 2.4: the 1/16 is played in two runs on the same themes. The first run's battle takes the next
    unplayed themes of the package and they become its theme pack's (ThemesNamed with their sources, the one
    source of a pack's themes); the second run's battle reads the same themes, with no package chosen again."""
    session, packages, package_id, clock = sport_session(tmp_path, memory_battles, themes=20)
    desk, tid = youth_cup_desk(tmp_path, session, packages)
    state = desk.state(tid)
    first, second = state.battles["1-16/01"], state.battles["1-16/07"]
    assert first.theme_pack == second.theme_pack and first.run == 1 and second.run == 2
    one = desk.play_on_box(tid, "1-16/01", session, "c1", package={"id": package_id})
    taken = session.state.setup.sources
    assert taken == tuple((package_id, n) for n in range(8))
    assert desk.state(tid).theme_sources[first.theme_pack] == taken
    assert desk.state(tid).theme_names[first.theme_pack][:2] == ("Тема номер 1", "Тема номер 2")
    assert desk.setup_view(tid, "1-16/07")["package"] == {"id": package_id, "themes": list(range(8))}
    assert desk.setup_view(tid, "1-16/02")["package"] is None
    two = desk.play_on_box(tid, "1-16/07", session, "c2", set_aside=one)
    assert two != one and session.state.setup.sources == taken
    assert session.state.setup.questions == memory_battles.state(one).setup.questions  # the same texts
    # Another pack of the stage takes the next unplayed themes; the played ones are marked in this tournament.
    desk.play_on_box(tid, "1-16/02", session, "c3", set_aside=two, package={"id": package_id, "spares": 1},
                     packages=packages)
    assert session.state.setup.sources == tuple((package_id, n) for n in range(8, 17))  # and one spare
    assert desk.state(tid).theme_sources["1-16:2"] == tuple((package_id, n) for n in range(8, 16))
    assert packages.preview(package_id)["themes"][0]["played_in_tournaments"] == [tid]
    session.close()


def test_a_pack_named_by_hand_is_played_with_its_names_and_a_new_package_choice_replaces_them(tmp_path,
                                                                                                memory_battles):
    session, packages, package_id, clock = sport_session(tmp_path, memory_battles, themes=20)
    desk, tid = youth_cup_desk(tmp_path, session, packages)
    pack = desk.state(tid).battles["1-16/01"].theme_pack
    desk.name_themes(tid, pack, ["Реки", "Города"])
    one = desk.play_on_box(tid, "1-16/01", session, "c1")
    assert session.state.setup.theme_names[:3] == ("Реки", "Города", "") and session.state.setup.sources == ()
    desk.play_on_box(tid, "1-16/07", session, "c2", set_aside=one, package={"id": package_id})
    assert desk.state(tid).theme_names[pack][0] == "Тема номер 1"  # a later naming replaces (docs/tournament.md)
    assert len(desk.state(tid).theme_sources[pack]) == 8
    session.close()


def test_themes_named_with_sources_is_checked_and_kept_in_the_log(tmp_path):
    from appliance.rules import tournament as t
    from appliance.rules.tournament.errors import StageError

    named = t.ThemesNamed(1, "1-16:1", ("Реки", "Города"), (("abc", 3), ("abc", 0)))
    assert t.from_dict(t.to_dict(named)) == named
    assert "sources" not in t.to_dict(t.ThemesNamed(1, "1-16:1", ("Реки",)))  # typed names: the line as it was
    desk, tid = youth_cup_desk(tmp_path, None, SimpleNamespace())
    state = desk.state(tid)
    assert t.apply(state, named).theme_sources["1-16:1"] == (("abc", 3), ("abc", 0))
    for bad in ((("abc", 3),), (("abc", -1), ("abc", 0)), (("", 1), ("abc", 0))):
        with pytest.raises(StageError) as refused:
            t.apply(state, t.ThemesNamed(2, "1-16:1", ("Реки", "Города"), bad))
        assert refused.value.code == "themes.bad_sources"


def test_the_reading_view_goes_back_with_an_undo(tmp_path, memory_battles):
    """The position is the engine's: an undone «next» takes the reading view back to the question before."""
    session, packages, package_id, clock = sport_session(tmp_path, memory_battles)
    session.command("setup", {**SETUP, "package": {"id": package_id}}, "c1")
    play(session, clock, "next", "next")
    assert session.snapshot()["view"]["reading"]["current"]["number"] == 1
    play(session, clock, "undo")  # the price and its reading: one tap, one undo (issue 19)
    reading = session.snapshot()["view"]["reading"]
    assert reading["current"] is None and reading["next"]["text"] == "Вопрос 1.1 о теме 1."
    session.close()


def test_the_next_unplayed_skip_the_themes_another_pack_of_the_tournament_holds(tmp_path, memory_battles):
    """A pack given themes beforehand holds them until played: a battle of another pack set up from the same
    package takes the next ones after them, and a package too short is refused with nothing set up."""
    from appliance.rules import tournament as t

    session, packages, package_id, clock = sport_session(tmp_path, memory_battles, themes=20)
    desk, tid = youth_cup_desk(tmp_path, session, packages)
    held = tuple((package_id, n) for n in range(8))
    desk.submit(tid, t.ThemesNamed(1, "1-16:3", tuple(f"Тема номер {n + 1}" for n in range(8)), held))
    desk.play_on_box(tid, "1-16/01", session, "c1", package={"id": package_id}, packages=packages)
    assert session.state.setup.sources == tuple((package_id, n) for n in range(8, 16))
    one = session.battle_id
    with pytest.raises(PackageChoiceError) as refused:  # 4 themes left, 8 needed
        desk.play_on_box(tid, "1-16/02", session, "c2", set_aside=one, package={"id": package_id},
                         packages=packages)
    assert refused.value.code == "package.too_few_unplayed"
    assert session.battle_id == one and len(memory_battles.list()) == 1
    session.close()


# ------------------------------------------------- the package's shape at the battle: final round, theme authors
def final_round_session(tmp_path, memory_battles, version=4):
    from appliance.service.battle_adapter import BattleAdapter
    from appliance.service.session import Session
    from tests.appliance.packages.conftest import final_round_siq
    from tests.conftest import FakeClock

    packages = QuestionPackages.in_folder(tmp_path / "packages", memory_battles)
    package_id = packages.add("финал.siq", final_round_siq(version))["id"]
    clock = FakeClock()
    session = Session(memory_battles, BattleAdapter(packages=packages), clock=clock,
                      simulator=True).start(timer_thread=False)
    return session, packages, package_id, clock


FOUR = {"profile": "eurocup", "players": ["Аня", "Борис", "Вера"], "themes": [{"name": "", "red": False}] * 4}


@pytest.mark.parametrize("version", [4, 5])
def test_the_next_unplayed_never_take_a_final_round_theme(tmp_path, memory_battles, version):
    session, packages, package_id, _ = final_round_session(tmp_path, memory_battles, version)
    themes = packages.choices()[0]["themes"]
    assert [(theme["name"], theme["final"]) for theme in themes][2:5] == [("Числа", False), ("Космос", True),
                                                                          ("Поэты", False)]
    assert packages.preview(package_id)["themes"][3]["final"] is True
    session.command("setup", {**FOUR, "package": {"id": package_id}}, "c1")
    assert session.state.setup.theme_names == ("Реки", "Города", "Числа", "Поэты")
    session.close()


def test_a_final_round_theme_chosen_as_an_ordinary_one_is_refused_and_may_be_a_spare(tmp_path, memory_battles):
    session, packages, package_id, _ = final_round_session(tmp_path, memory_battles)
    with pytest.raises(PackageChoiceError) as refused:
        session.command("setup", {**SETUP, "package": {"id": package_id, "themes": [0, 3]}}, "c1")
    assert (refused.value.code, refused.value.params["theme"]) == ("package.final_theme", 3)
    assert session.state is None
    session.command("setup", {**SETUP, "package": {"id": package_id, "themes": [0, 1], "spare": [3]}}, "c2")
    assert session.state.setup.theme_names == ("Реки", "Города", "Космос")
    session.close()


@pytest.mark.parametrize("version", [4, 5])
def test_theme_authors_reach_the_reading_view_and_the_protocol(tmp_path, memory_battles, version):
    from appliance.rules.battle.protocol import protocol_rows
    from appliance.service.papers import protocol_html

    session, packages, package_id, clock = final_round_session(tmp_path, memory_battles, version)
    from appliance.rules.battle.events import event_from_dict, event_to_dict

    session.command("setup", {**SETUP, "package": {"id": package_id}}, "c1")
    assert session.state.setup.theme_authors == (("Иван Петров",), ())
    stored = event_to_dict(session.state.setup)
    assert stored["theme_authors"] == [["Иван Петров"], []] and event_from_dict(stored) == session.state.setup
    reading = session.snapshot()["view"]["reading"]
    assert reading["next"]["theme_authors"] == "Иван Петров"
    play(session, clock, "next", "next", "reading_done")
    clock.now_ns = session.state.press_window_closes_ns + 10**6
    session.deadlines.run_due()
    assert session.snapshot()["view"]["reading"]["current"]["theme_authors"] == "Иван Петров"
    (row,) = protocol_rows(session.state)
    assert "автор темы: Иван Петров" in row.source
    assert "theme by Иван Петров" in protocol_rows(session.state, "en")[0].source
    assert "автор темы: Иван Петров" in protocol_html(session.state, "b1")
    session.close()


def test_a_stored_package_with_an_over_long_theme_name_gives_no_setup(tmp_path):
    """A package kept before the caps (format 1 had none): choosing its long theme is refused in words, as an
    import of it would be; the other themes still play."""
    import json

    packages = QuestionPackages.in_folder(tmp_path)
    package_id = packages.add("тур.csv", table(3))["id"]
    index = tmp_path / package_id / "package.json"
    record = json.loads(index.read_text(encoding="utf-8"))
    record["package"]["themes"][1]["name"] = "Р" * 200_000
    index.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    from appliance.packages.errors import PackageFileError

    with pytest.raises(PackageFileError) as refused:
        packages.battle_themes(package_id, themes=[0, 1])
    assert (refused.value.code, refused.value.params["field"]) == ("package.field_too_long", "theme")
    assert packages.battle_themes(package_id, themes=[0, 2])["theme_names"] == ["Тема 1", "Тема 3"]
