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
