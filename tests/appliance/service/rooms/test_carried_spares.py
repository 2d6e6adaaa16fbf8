"""A pack's spare themes are never given to another pack of the tournament (youth-cup 2.4, 2.7; issue 22).

Found by tests/web/test_rooms_packages.py under load: the desk gave run 1 of a 1/16 slot themes 0-7 and held
spare 8 for it when its assignment was written, then gave the next battle themes 8-15, spare 8 among them. The
order here is that one, without the load: themes for one pack, its spares held, themes for the next."""

from __future__ import annotations

from types import SimpleNamespace

from appliance.service.rooms.carried import DeskCarrier, SparesBook


class Desk:
    """The tournament desk as the carrier reads it: two theme packs of 8 themes, the names the carrier gives."""

    def __init__(self) -> None:
        self.sources: dict[str, tuple] = {}
        self.battles = {"1-16/01": SimpleNamespace(theme_pack="A", themes=[None] * 8),
                        "1-16/02": SimpleNamespace(theme_pack="B", themes=[None] * 8)}

    def state(self, _tournament_id):
        return SimpleNamespace(battles=self.battles, theme_sources=dict(self.sources))

    def submit(self, _tournament_id, event) -> None:
        self.sources[event.pack] = event.sources

    def clock(self) -> int:
        return 1


class Packages:
    """A package of 40 themes: the next ones not excluded, in order (as QuestionPackages.battle_themes)."""

    def battle_themes(self, package_id: str, count: int, exclude) -> dict:
        numbers = [n for n in range(40) if n not in set(exclude)][:count]
        return {"theme_names": [f"Тема {n}" for n in numbers], "sources": [(package_id, n) for n in numbers]}


class Store:
    def __init__(self) -> None:
        self.appended = []

    def events(self, _kind, _stream):
        return []

    def append(self, _kind, _stream, events) -> None:
        self.appended += events


def test_the_next_pack_gets_neither_the_themes_nor_the_spares_of_the_first():
    desk = Desk()
    carrier = DeskCarrier(lambda: desk, Packages(), SparesBook(Store()), spare_count=1)
    carrier.give_package("t1", "1-16/01", "pkg")
    first = [n for _p, n in desk.sources["A"]]
    spare = carrier._spares(desk.state("t1"), "t1", "A", "pkg", first)  # held when run 1's assignment is written
    carrier.give_package("t1", "1-16/02", "pkg")
    second = [n for _p, n in desk.sources["B"]]
    assert (first, spare) == (list(range(8)), [8])
    assert not set(second) & set(first + spare), second
    assert carrier._spares(desk.state("t1"), "t1", "B", "pkg", second) == [17]
