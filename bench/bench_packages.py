"""Question packages: importing a 500-question SIGame package (read, validated, stored), and a db.chgk tour.

No target is set by the issue for the import; the figures say what an organiser waits for on upload. The reading
view's cost after a press is part of ``bench web`` (the press → board targets stay as they are).
"""

from __future__ import annotations

import io
import tempfile
import time
import zipfile
from pathlib import Path

from appliance.packages.formats import read_package
from appliance.packages.library import Library


def siq(themes: int, per_theme: int, pictures: int) -> bytes:
    """A version-4 package of ``themes`` × ``per_theme`` questions, ``pictures`` of them with a 50 KB picture."""
    rows, files, picture = [], {}, bytes(range(256)) * 200
    for t in range(themes):
        questions = []
        for q in range(per_theme):
            number = t * per_theme + q
            media = ""
            if number < pictures:
                files[f"Images/p{number}.png"] = picture
                media = f'<atom type="image">@p{number}.png</atom>'
            questions.append(f'<question price="{(q + 1) * 100}"><scenario><atom>Вопрос {number}: '
                             f'{"текст " * 40}</atom>{media}</scenario><right><answer>Ответ {number}</answer></right>'
                             f"<info><comments>Комментарий {number}</comments><sources><source>Источник</source>"
                             "</sources></info></question>")
        rows.append(f'<theme name="Тема {t}"><questions>{"".join(questions)}</questions></theme>')
    content = (f'<?xml version="1.0" encoding="utf-8"?><package name="Бенчмарк" version="4" '
               f'xmlns="http://vladimirkhil.com/ygpackage3.0.xsd"><rounds><round name="1"><themes>{"".join(rows)}'
               "</themes></round></rounds></package>")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("content.xml", content)
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _best(runs: int, work) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def run(report) -> None:
    data = siq(themes=100, per_theme=5, pictures=50)
    report.figure(f"500-question .siq ({len(data) // 1024} KB zipped, 50 pictures of 51 KB): read and validated",
                  _best(5, lambda: read_package("bench.siq", data)) * 1000, "ms")
    with tempfile.TemporaryDirectory() as folder:
        def add():
            library = Library(Path(folder) / str(time.perf_counter_ns()))
            library.add("bench.siq", data)
        report.figure("the same, stored in the library (fsync'd, renamed into place)", _best(5, add) * 1000, "ms")
    text_only = siq(themes=100, per_theme=5, pictures=0)
    report.figure("500-question .siq, text only: read and validated",
                  _best(5, lambda: read_package("bench.siq", text_only)) * 1000, "ms")
