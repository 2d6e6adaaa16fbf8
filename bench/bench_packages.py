"""Question packages: importing a 500-question SIGame package (read, validated, stored), and a db.chgk tour;
every hostile file of tests/support/hostile.py refused, with its peak memory and time.

Hostile files: each is written to a file and uploaded to the library (``Library.add``: what the web worker does
with an upload) in a child process of its own; the figure is the child's peak RSS during the upload (VmHWM, reset
through /proc/self/clear_refs just before) over its RSS before it (the interpreter, the imports and the file's
bytes already in memory), target +50 MB (issue 19).

No target is set by the issue for the import; the figures say what an organiser waits for on upload. The host's
reading view after a press: the adapter's whole view (what the session builds on every press) of a battle set up
from a package against the same battle typed by hand, in process; the press → board targets of ``bench web`` stay
as they are.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from appliance.packages.formats import read_package
from appliance.packages.library import Library
from bench import median
from appliance.service import presets


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


def imports(report) -> None:
    themes, pictures, runs = (4, 2, 1) if report.short else (100, 50, 5)
    data = siq(themes=themes, per_theme=5, pictures=pictures)
    report.figure(f"{themes * 5}-question .siq ({len(data) // 1024} KB zipped, {pictures} pictures of 51 KB): read "
                  "and validated", _best(runs, lambda: read_package("bench.siq", data)) * 1000, "ms")
    with tempfile.TemporaryDirectory() as folder:
        def add():
            library = Library(Path(folder) / str(time.perf_counter_ns()))
            library.add("bench.siq", data)
        report.figure("the same, stored in the library (fsync'd, renamed into place)", _best(runs, add) * 1000, "ms")
    text_only = siq(themes=themes, per_theme=5, pictures=0)
    report.figure(f"{themes * 5}-question .siq, text only: read and validated",
                  _best(runs, lambda: read_package("bench.siq", text_only)) * 1000, "ms")


def _view_after_press_us(adapter, setup, presses: int = 400) -> tuple[float, float]:
    """Median µs of the adapter's view after a press, and of the view of a new question (the reading view's
    texts looked up afresh)."""
    from appliance.rules import battle as engine
    from appliance.rules.battle import events as ev

    state = engine.apply(None, setup)
    for at, event in enumerate((ev.ThemeStarted, ev.PriceAnnounced, ev.ReadingStarted, ev.ReadingFinished), 1):
        state = engine.apply(state, event(at_ns=at * 10**6, **({"value_points": 10} if event is ev.PriceAnnounced
                                                                 else {})))
    # Two different presses on the same question: each view sees a state it has not seen, as after a real press.
    pressed = [engine.apply(state, ev.ButtonPressed(at_ns=5 * 10**6 + player, player=player)) for player in (0, 1)]
    adapter.view(pressed[0], "bench", 6 * 10**6)
    samples = []
    for i in range(presses):
        started = time.perf_counter_ns()
        adapter.view(pressed[i % 2], "bench", 6 * 10**6)
        samples.append((time.perf_counter_ns() - started) / 1000)
    fresh = []
    for i in range(presses // 4):
        adapter._reading_shown = None  # as the first view of a question: positions moved, texts looked up
        started = time.perf_counter_ns()
        adapter._reading(pressed[i % 2])
        fresh.append((time.perf_counter_ns() - started) / 1000)
    return median(samples), median(fresh)


def reading_view(report) -> None:
    presses = 8 if report.short else 400
    from appliance.rules import battle as engine
    from appliance.rules.battle import events as ev
    from appliance.service.battle_adapter import BattleAdapter
    from appliance.service.packages import QuestionPackages

    with tempfile.TemporaryDirectory() as folder:
        packages = QuestionPackages.in_folder(Path(folder))
        package_id = packages.add("bench.siq", siq(themes=100, per_theme=5, pictures=0))["id"]
        parts = packages.battle_themes(package_id, count=4, spare=[99], questions_per_theme=5)
        profile = presets.load_profile("eurocup")
        players = ("Аня", "Борис", "Вера")
        from_package = ev.BattleSetUp(
            at_ns=0, profile=profile, players=players, themes=4, theme_names=tuple(parts["theme_names"]),
            questions=tuple(tuple(tuple(q) for q in theme) for theme in parts["questions"]),
            sources=tuple(tuple(source) for source in parts["sources"]))
        typed = ev.BattleSetUp(at_ns=0, profile=profile, players=players, themes=4)
        plain_us, _ = _view_after_press_us(BattleAdapter(), typed, presses)
        package_us, fresh_us = _view_after_press_us(BattleAdapter(packages=packages), from_package, presses)
    report.figure("host view after a press, themes typed by hand (median)", plain_us, "µs")
    report.figure("the same, themes and texts from a package: reading view included (median)", package_us, "µs")
    report.ratio("view after a press: from a package / typed by hand", package_us, plain_us)
    report.figure("reading view of a new question (texts, comment and source looked up; median)", fresh_us, "µs")


ROOT = Path(__file__).resolve().parent.parent

# The child: load the file, note the peak RSS, upload it to a fresh library, note the peak RSS and the time.
_CHILD = """
import json, sys, time
from pathlib import Path
from appliance.packages.errors import PackageFileError
from appliance.packages.library import Library

def status(key):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])

path, filename, folder = sys.argv[1:4]
data = Path(path).read_bytes()
library = Library(Path(folder))
Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) starts again from the RSS now
before = status("VmRSS")
started = time.perf_counter()
try:
    library.add(filename, data)
    code = "accepted"
except PackageFileError as error:
    code = error.code
elapsed = time.perf_counter() - started
print(json.dumps({"code": code, "kb": status("VmHWM") - before, "s": elapsed, "baseline_kb": before}))
"""


def _large_media() -> bytes:
    """Not hostile, only large: 40 pictures of 2 MB (not compressible), 80 MB in all, under the upload limit."""
    from tests.support.hostile import content, deflated, zip_of

    pictures = [deflated(f"Images/p{number}.png", os.urandom(2 * 2**20)) for number in range(40)]
    return zip_of([content(40)] + pictures)


def _at_the_entry_limit() -> bytes:
    """As many entries as a package may have: names are looked up in a dict, never compared pairwise."""
    from tests.support.hostile import content, stored, zip_of

    return zip_of([content(0)] + [stored(f"Images/{number}.png", b"x") for number in range(9_999)])


def hostile(report) -> None:
    from tests.support.hostile import HOSTILE, Hostile

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    large = (Hostile("a large package: 40 pictures of 2 MB, kept", "large.siq", _large_media, "accepted"),
             Hostile("10,000 entries (the limit), kept", "entries.siq", _at_the_entry_limit, "accepted"))
    files = HOSTILE[:2] if report.short else (*HOSTILE, *large)  # the short form: two hostile files, each in a child
    with tempfile.TemporaryDirectory() as folder:
        for number, item in enumerate(files):
            path = Path(folder) / f"hostile-{number}"
            data = item.data()
            path.write_bytes(data)
            done = subprocess.run([sys.executable, "-c", _CHILD, str(path), item.filename,
                                   str(Path(folder) / f"library-{number}")], capture_output=True, text=True,
                                  env=env, timeout=300, cwd=ROOT)
            if done.returncode != 0:
                report.figure(f"{item.label}: the child failed ({done.stderr.strip()[-80:]})", float("nan"), "MB",
                              target=50)
                continue
            figures = json.loads(done.stdout)
            verdict = "" if figures["code"] == item.code else f" (WRONG REFUSAL {figures['code']})"
            report.figure(f"{item.label} [{len(data) // 1024} KB]: peak RSS over baseline{verdict}",
                          figures["kb"] / 1024, "MB", target=50)
            report.figure(f"  {figures['code']} in", figures["s"] * 1000, "ms")
            path.unlink()


def run(report) -> None:
    imports(report)
    reading_view(report)
    hostile(report)
