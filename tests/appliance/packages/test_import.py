"""Importing question packages: SIGame .siq (versions 4 and 5), db.chgk.info tours (XML and text), CSV and TOML."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from appliance.packages.archive import Limits
from appliance.packages.chgk import read_chgk_text, read_chgk_xml, split_numbered
from appliance.packages.errors import PackageFileError
from appliance.packages.formats import read_package
from appliance.packages.model import media_markers, package_from_json

HERE = Path(__file__).parent
DOCS = Path(__file__).resolve().parents[3] / "docs/packages.md"


def test_a_version_4_siq_keeps_text_answers_comments_and_marks_its_media(siq_v4):
    read = read_package("Кубок.siq", siq_v4)
    package = read.package
    assert (package.title, package.origin, package.authors) == ("Кубок двора", "siq", ("Иван Петров",))
    rivers, cities = package.themes
    assert (rivers.name, rivers.round, [q.price_points for q in rivers.questions]) == ("Реки", "1-й раунд", [10, 20])
    first, second = rivers.questions
    assert (first.text, first.answer, first.comment, first.source) == (
        "Самая длинная река Европы.", "Волга / Ра", "Около 3530 км.", "БСЭ")
    # The picture belongs to the question; what follows the marker atom is shown with the answer.
    assert media_markers(second.text) == [("image", "Images/Карта реки.png")]
    assert second.answer.splitlines() == ["Обь", "[[audio Audio/гимн.mp3]]"]
    assert (package.question_count, package.media_question_count) == (3, 1)
    # URI-escaped entry names are unescaped; the media files kept are exactly the ones referenced.
    assert {path: media.read() for path, media in read.media.items()} == {
        "Audio/гимн.mp3": b"ID3", "Images/Карта реки.png": b"\x89PNG fake"}
    assert cities.questions[0].answer == "Санкт-Петербург"


def test_a_version_5_siq_reads_params_and_items(siq_v5):
    package = read_package("v5.siq", siq_v5).package
    (theme,) = package.themes
    (question,) = theme.questions
    assert question.price_points == 30
    assert question.text == "Назовите композитора.\n[[audio Audio/Мелодия.mp3]]"
    assert question.answer == "Чайковский\n[[image Images/портрет.jpg]]"


def test_a_db_chgk_tour_xml_makes_one_theme_per_database_question():
    package = read_chgk_xml((HERE / "tour.xml").read_bytes()).package
    assert package.title == "Своя игра. Первый тур"
    rivers, numbers = package.themes
    # "1." to "5." are positions priced 10-50; "10." to "50." are prices.
    assert [q.price_points for q in rivers.questions] == [10, 20, 30, 40, 50]
    assert [q.price_points for q in numbers.questions] == [10, 20, 30, 40, 50]
    assert (rivers.name, numbers.name) == ("Реки", "Числа")
    assert [q.answer for q in rivers.questions][:4] == ["Волга.", "Обь.", "Неман.", "Амазонка."]
    assert rivers.questions[4].answer == "Миссисипи.\nЗачёт: Миссури."
    # "в 1812 году" inside a question does not split it; a numbered comment goes to its question.
    assert rivers.questions[2].text == "Эта река в 1812 году отделяла армии."
    assert rivers.questions[2].comment == "Наполеон переправился через Неман 24 июня."
    assert rivers.questions[0].author == "Мария Иванова"
    # An unnumbered comment is the theme's, an unnumbered source every question's.
    assert numbers.comment == "Тема для разминки."
    assert {q.source for q in numbers.questions} == {"Здравый смысл."}


def test_a_db_chgk_text_export_reads_the_same_fields():
    package = read_chgk_text((HERE / "tour.txt").read_text(encoding="utf-8")).package
    writers, colours = package.themes
    assert package.title == "Кубок двора по своей игре — Своя игра. Второй тур"
    assert writers.name == "Писатели"
    assert [q.answer for q in writers.questions] == ["Пушкин.", "Гоголь.", "Толстой.\nЗачёт: Лев Толстой.",
                                                      "Достоевский.", "Булгаков."]
    assert writers.questions[4].comment == "Роман опубликован в 1966 году."
    assert writers.questions[0].source == "Школьная программа."
    assert [q.text for q in colours.questions][0] == "Цвет неба."


def test_split_numbered_follows_the_sequence_only():
    head, parts = split_numbered("Даты 1. В 1. году. 2. Второй 3. год 4. 12. 5. Пятый")
    assert head == "Даты"
    assert [number for number, _ in parts] == [1, 2, 3, 4, 5]
    assert parts[3] == (4, "12.")


def docs_example(language: str) -> str:
    """The example of ``language`` in docs/packages.md (so the documented example is the tested one)."""
    (block,) = re.findall(rf"```{language}\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    return block


def test_the_documented_csv_example_imports():
    package = read_package("тур.csv", docs_example("csv").encode("utf-8")).package
    assert package.title == "тур"
    assert [theme.name for theme in package.themes] == ["Реки", "Города"]
    assert [q.price_points for q in package.themes[0].questions] == [10, 20, 30, 40, 50]
    assert package.themes[0].questions[0].comment == "Около 3530 км."


def test_the_documented_toml_example_imports():
    package = read_package("тур.toml", docs_example("toml").encode("utf-8")).package
    assert package.title == "Кубок двора, тур 1"
    assert [q.answer for q in package.themes[0].questions][:2] == ["Волга", "Обь"]


def test_a_csv_saved_by_russian_excel_semicolons_and_windows_1251():
    data = "Тема;Цена;Вопрос;Ответ\nРеки;10;Самая длинная;Волга\n;20;Новосибирск;Обь\n".encode("cp1251")
    package = read_package("excel.csv", data).package
    (theme,) = package.themes
    assert [(q.price_points, q.answer) for q in theme.questions] == [(10, "Волга"), (20, "Обь")]


def test_the_stored_form_round_trips(siq_v4):
    package = read_package("Кубок.siq", siq_v4).package
    assert package_from_json(package.to_json()) == package


# --- refused files: a clear message that names the place, and a stable code


def refusal(filename: str, data: bytes, limits: Limits = Limits()) -> PackageFileError:
    with pytest.raises(PackageFileError) as caught:
        read_package(filename, data, limits)
    return caught.value


def test_entries_that_leave_the_package_are_refused():
    from tests.support.packages import V4_CONTENT, make_zip
    for name in ("../evil.png", "/etc/passwd", "Images/../../x", "C:/x.png", "Images\\..\\x"):
        error = refusal("bad.siq", make_zip({"content.xml": V4_CONTENT, name: b"x"}, quote=False))
        assert error.code == "package.unsafe_entry", name
    # URI-escaped traversal is traversal too.
    error = refusal("bad.siq", make_zip({"content.xml": V4_CONTENT, "%2E%2E/evil": b"x"}, quote=False))
    assert error.code == "package.unsafe_entry"


def test_an_entry_declared_over_the_budget_is_refused_before_it_is_inflated():
    from tests.support.packages import V4_CONTENT, make_zip
    bomb = make_zip({"content.xml": V4_CONTENT, "Images/Карта реки.png": bytes(30 * 2**20)})
    error = refusal("bomb.siq", bomb, Limits(unpacked_bytes=8 * 2**20))
    assert (error.code, error.params["entry"]) == ("package.entry_too_large", "Images/Карта реки.png")
    # The ratio its header declares stops it even within the byte budget.
    assert refusal("bomb.siq", bomb).code == "package.bomb"


def test_every_codec_a_package_may_use_is_read_and_checked():
    """Stored, deflate, bzip2 and lzma entries, read by the archive's own streaming reader, CRC checked."""
    import io
    import zipfile

    from tests.support.packages import V4_CONTENT
    picture = bytes(range(256)) * 4000  # 1 MB, not compressible past the ratio
    for method in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", method) as archive:
            archive.writestr("content.xml", V4_CONTENT)
            archive.writestr("Images/%D0%9A%D0%B0%D1%80%D1%82%D0%B0%20%D1%80%D0%B5%D0%BA%D0%B8.png", picture)
        read = read_package("codec.siq", buffer.getvalue())
        assert read.media["Images/Карта реки.png"].read() == picture, method
        corrupted = bytearray(buffer.getvalue())
        corrupted[corrupted.index(b"content.xml") + 40] ^= 0xFF  # a byte of content.xml's data
        assert refusal("codec.siq", bytes(corrupted)).code in ("package.corrupt_entry", "package.bad_xml"), method


def test_xml_entity_expansion_and_external_entities_are_refused():
    from tests.support.packages import make_zip
    laughs = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
              '<package name="&lol2;"><rounds/></package>')
    external = '<?xml version="1.0"?><!DOCTYPE p [<!ENTITY x SYSTEM "file:///etc/passwd">]><package name="&x;"/>'
    for content in (laughs, external):
        assert refusal("x.siq", make_zip({"content.xml": content})).code == "package.unsafe_xml"
    assert refusal("tour.xml", external.encode()).code == "package.unsafe_xml"


def test_an_upload_over_the_limit_is_refused_before_it_is_read():
    error = refusal("big.siq", b"PK\x03\x04" + bytes(3 * 2**20), Limits(upload_bytes=2 * 2**20))
    assert (error.code, error.params["limit_mb"]) == ("package.too_large", 2)


@pytest.mark.parametrize("filename, data, code, where", [
    ("broken.siq", b"PK\x03\x04 not really a zip", "package.not_zip", ""),
    ("empty.siq", None, "package.no_content", ""),
    ("tour.xml", b"<tournament><question><Question>Reki\n1. a\n2. b</Question>", "package.bad_xml", "XML line 3"),
    ("tour.xml", "<tournament><question><Number>4</Number><Question>Реки без номеров</Question>"
     "<Answer>Волга</Answer></question></tournament>".encode(), "package.not_a_theme", "<question> 4"),
    ("tour.xml", "<tournament><question><Question>Реки\n1. a\n2. b</Question><Answer>Волга</Answer></question>"
     "</tournament>".encode(), "package.answers_do_not_match", "<question> 1"),
    ("t.csv", "тема,цена,вопрос\nРеки,10,Текст\n".encode(), "package.missing_columns", "line 1"),
    ("t.csv", "тема,цена,вопрос,ответ\nРеки,10,Текст,Ответ\nРеки,abc,Текст,Ответ\n".encode(), "package.bad_price",
     "line 3"),
    ("t.csv", "тема,цена,вопрос,ответ\nРеки,10,Т,О\nГорода,10,Т,О\nРеки,20,Т,О\n".encode(), "package.theme_split",
     "line 4"),
    ("t.toml", b"[[theme]]\nname = 'x'\n[[theme.question]]\nprice = 'ten'\nquestion = 'q'\n", "package.bad_price",
     "theme «x» › question 1"),
    ("t.toml", b"title = [", "package.bad_toml", None),
    ("notes.txt", "просто текст".encode(), "package.unknown_format", ""),
    ("empty.csv", b"  \n", "package.empty", ""),
])
def test_malformed_files_are_refused_naming_the_element_or_line(filename, data, code, where):
    from tests.support.packages import make_zip
    if data is None:
        data = make_zip({"Images/x.png": b"x"})
    error = refusal(filename, data)
    assert error.code == code
    if where is not None:
        assert error.where == where
    assert "Traceback" not in str(error) and str(error)


def test_a_siq_question_with_a_bad_price_names_its_round_theme_and_number():
    from tests.support.packages import V4_CONTENT, make_zip
    content = V4_CONTENT.replace('price="20"', 'price="двадцать"')
    error = refusal("bad.siq", make_zip({"content.xml": content}))
    assert (error.code, error.where) == ("package.bad_price", "round «1-й раунд» › theme «Реки» › question 2")


# --- the package's shape: SIGame's final round and the themes' authors


@pytest.mark.parametrize("version", [4, 5])
def test_a_final_round_keeps_its_kind_and_theme_authors_are_kept(version):
    from appliance.packages.model import FINAL, STANDARD
    from tests.support.packages import final_round_siq
    package = read_package("финал.siq", final_round_siq(version)).package
    assert [(theme.name, theme.kind) for theme in package.themes] == [
        ("Реки", STANDARD), ("Города", STANDARD), ("Числа", STANDARD), ("Космос", FINAL), ("Поэты", STANDARD),
        ("Птицы", STANDARD)]
    assert package.themes[3].is_final and [q.price_points for q in package.themes[3].questions] == [0]
    # Version 4 writes the author, version 5 links to the package's shared authors.
    assert package.themes[0].authors == ("Иван Петров",) and package.themes[1].authors == ()
    assert package_from_json(package.to_json()) == package


def test_a_stored_package_of_format_1_reads_as_ordinary_themes_without_authors(siq_v4):
    package = read_package("Кубок.siq", siq_v4).package
    stored = package.to_json()
    stored["format"] = 1
    for theme in stored["themes"]:
        del theme["kind"], theme["authors"]
    old = package_from_json(stored)
    assert [theme.kind for theme in old.themes] == ["standard", "standard"] and old.themes[0].authors == ()


def test_a_db_chgk_themes_authors_are_its_theme_authors():
    package = read_chgk_xml((HERE / "tour.xml").read_bytes()).package
    assert package.themes[0].authors == ("Мария Иванова",)


@pytest.mark.parametrize("version", ["6", "5.5", "abc", "-1"])
def test_an_unknown_format_version_is_refused_naming_it(version):
    from tests.support.packages import V4_CONTENT, make_zip
    error = refusal("v.siq", make_zip({"content.xml": V4_CONTENT.replace('version="4"', f'version="{version}"')}))
    assert (error.code, error.params["version"]) == ("package.unsupported_version", version)
    assert version in str(error)


@pytest.mark.parametrize("version", ["4", "5", "5.0", "3"])
def test_the_known_format_versions_are_read(version):
    from tests.support.packages import V4_CONTENT, make_zip
    read_package("v.siq", make_zip({"content.xml": V4_CONTENT.replace('version="4"', f'version="{version}"')}))


# --- fields hold to what a setup typed by hand may hold (one source: appliance/config.py)


def test_package_fields_are_capped_where_a_typed_setup_is():
    from appliance.config import QUESTION_TEXT_CHARS, SETUP_TEXT_CHARS
    from appliance.service.arguments import MAX_TEXT_CHARS
    from tests.support.packages import V4_CONTENT, make_zip
    from web.payloads import MAX_TEXT_CHARS as MESSAGE_TEXT_CHARS
    assert (MAX_TEXT_CHARS, MESSAGE_TEXT_CHARS) == (SETUP_TEXT_CHARS, QUESTION_TEXT_CHARS)

    def siq(old: str, new: str) -> bytes:
        assert old in V4_CONTENT
        return make_zip({"content.xml": V4_CONTENT.replace(old, new)})

    longest = "Р" * SETUP_TEXT_CHARS
    assert read_package("k.siq", siq('name="Реки"', f'name="{longest}"')).package.themes[0].name == longest
    cases = [
        ('name="Реки"', f'name="{longest}Р"', "theme", "theme 1"),
        ('name="Кубок двора"', f'name="{longest}Р"', "title", "title"),
        ("Иван Петров", longest + "Р", "author", "authors"),
        ("Самая длинная река Европы.", "В" * (QUESTION_TEXT_CHARS + 1), "question", "theme 1 «Реки» › question 1"),
        ("<answer>Волга</answer>", f"<answer>{'О' * (QUESTION_TEXT_CHARS + 1)}</answer>", "answer",
         "theme 1 «Реки» › question 1"),
    ]
    for old, new, field, where in cases:
        error = refusal("k.siq", siq(old, new))
        assert (error.code, error.params["field"]) == ("package.field_too_long", field), field
        assert error.where.startswith(where) and len(error.where) < 120, error.where
    table = f"тема,цена,вопрос,ответ\n{longest}Р,10,Вопрос,Ответ\n".encode()
    error = refusal("t.csv", table)
    assert (error.code, error.params["field"], error.where) == ("package.field_too_long", "theme", "line 2")
