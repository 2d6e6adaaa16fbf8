"""Package files made in the tests and the benchmarks, as SIGame and db.chgk.info write them (small, so every case
is visible)."""

from __future__ import annotations

import io
import urllib.parse
import zipfile

NS = "http://vladimirkhil.com/ygpackage3.0.xsd"

V4_CONTENT = f"""<?xml version="1.0" encoding="utf-8"?>
<package name="Кубок двора" version="4" id="7f3c" date="01.12.2026" xmlns="{NS}">
  <info><authors><author>Иван Петров</author></authors></info>
  <rounds>
    <round name="1-й раунд">
      <themes>
        <theme name="Реки">
          <info><comments><comment>Тема о реках России</comment></comments></info>
          <questions>
            <question price="10">
              <scenario><atom>Самая длинная река Европы.</atom></scenario>
              <right><answer>Волга</answer><answer>Ра</answer></right>
              <info><comments>Около 3530 км.</comments><sources><source>БСЭ</source></sources></info>
            </question>
            <question price="20">
              <scenario><atom>Эта река на карте.</atom><atom type="image">@Карта реки.png</atom>
                <atom type="marker" /><atom type="voice">@гимн.mp3</atom></scenario>
              <right><answer>Обь</answer></right>
            </question>
          </questions>
        </theme>
        <theme name="Города">
          <questions>
            <question price="10"><scenario><atom>Город на Неве.</atom></scenario>
              <right><answer>Санкт-Петербург</answer></right></question>
          </questions>
        </theme>
      </themes>
    </round>
  </rounds>
</package>"""

V5_CONTENT = f"""<?xml version="1.0" encoding="utf-8"?>
<package name="Пакет пятой версии" version="5" xmlns="https://github.com/VladimirKhil/SI/blob/master/assets/ygpackage3.0.xsd">
  <rounds><round name="Раунд 1"><themes>
    <theme name="Музыка">
      <questions>
        <question price="30">
          <params>
            <param name="question" type="content">
              <item>Назовите композитора.</item>
              <item type="audio" isRef="True">Мелодия.mp3</item>
            </param>
            <param name="answer" type="content"><item type="image" isRef="True">портрет.jpg</item></param>
          </params>
          <right><answer>Чайковский</answer></right>
        </question>
      </questions>
    </theme>
  </themes></round></rounds>
</package>"""


def make_zip(entries: dict, *, quote: bool = True) -> bytes:
    """A ZIP of ``entries`` (name → text or bytes); names URI-escaped as SIGame stores them."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries.items():
            stored = urllib.parse.quote(name) if quote else name
            archive.writestr(stored, content.encode("utf-8") if isinstance(content, str) else content)
    return buffer.getvalue()


def sport_siq(themes: int = 6, title: str = "Кубок двора") -> bytes:
    """A SIGame v4 package as a sport «Своя игра» tour is: ``themes`` themes of five questions priced 10-50,
    with comments and sources; question texts «Вопрос T.Q …», answers «Ответ T.Q»."""
    rows = []
    for t in range(1, themes + 1):
        questions = "".join(
            f'<question price="{10 * q}"><scenario><atom>Вопрос {t}.{q} о теме {t}.</atom></scenario>'
            f"<right><answer>Ответ {t}.{q}</answer></right><info><comments>Комментарий {t}.{q}</comments>"
            f"<sources><source>Источник {t}.{q}</source></sources></info></question>" for q in range(1, 6))
        rows.append(f'<theme name="Тема номер {t}"><questions>{questions}</questions></theme>')
    content = (f'<?xml version="1.0" encoding="utf-8"?><package name="{title}" version="4" xmlns="{NS}">'
               f'<rounds><round name="1-й раунд"><themes>{"".join(rows)}</themes></round></rounds></package>')
    return make_zip({"content.xml": content})


def _sport_theme(name: str, first: int, authors: str = "", prices=(10, 20, 30, 40, 50)) -> str:
    info = f"<info><authors>{authors}</authors></info>" if authors else ""
    questions = "".join(
        f'<question price="{price}"><scenario><atom>Вопрос {first}.{q} темы «{name}».</atom></scenario>'
        f"<right><answer>Ответ {first}.{q}</answer></right></question>" for q, price in enumerate(prices, start=1))
    return f'<theme name="{name}">{info}<questions>{questions}</questions></theme>'


def final_round_siq(version: int = 4) -> bytes:
    """A package as SIGame writes a game: three ordinary themes (the first by «Иван Петров»), the final round
    (type "final": «Космос», one question priced 0), then a second ordinary round of two themes. Version 5 names
    the first theme's author through the shared authors (``@a1``)."""
    author = "<author>@a1</author>" if version == 5 else "<author>Иван Петров</author>"
    shared = ('<global><Authors><Author id="a1"><Name>Иван</Name><Surname>Петров</Surname></Author></Authors>'
              "</global>") if version == 5 else ""
    content = (f'<?xml version="1.0" encoding="utf-8"?><package name="Игра с финалом" version="{version}" '
               f'xmlns="{NS}">{shared}<rounds>'
               f'<round name="1-й раунд"><themes>{_sport_theme("Реки", 1, author)}{_sport_theme("Города", 2)}'
               f'{_sport_theme("Числа", 3)}</themes></round>'
               f'<round name="Финал" type="final"><themes>{_sport_theme("Космос", 4, prices=(0,))}</themes></round>'
               f'<round name="2-й раунд"><themes>{_sport_theme("Поэты", 5)}{_sport_theme("Птицы", 6)}</themes>'
               "</round></rounds></package>")
    if version == 5:  # version 5 writes a question's content as params
        import re
        content = re.sub(r"<scenario><atom>(.*?)</atom></scenario>",
                         r'<params><param name="question" type="content"><item>\1</item></param></params>', content)
    return make_zip({"content.xml": content})
