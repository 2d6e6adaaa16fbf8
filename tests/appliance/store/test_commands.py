"""svoyak replay and svoyak protocol on real log files."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess

import pytest

from svoyak.cli import main
from appliance.rules.battle import AnswerJudged, replay
from appliance.store import dump_log
from tests.appliance.rules.battle.conftest import Game


def write(tmp_path, events, name="battle.jsonl"):
    path = tmp_path / name
    path.write_text(dump_log("demo", events), encoding="utf-8")
    return path


def test_replay_prints_the_final_state_and_standings(tmp_path, battle_events, capsys):
    assert main(["replay", str(write(tmp_path, battle_events))]) == 0
    out = json.loads(capsys.readouterr().out)
    # Борис's last answer corrected to right: Вера's later +50 is void (eurocup 2.11.1)
    assert out["scores"] == {"Аня": 30, "Борис": 70, "Вера": 10} and out["is_over"]
    assert [(line["name"], line["place"]) for line in out["standings"]] == [("Борис", 1), ("Аня", 2), ("Вера", 3)]
    assert out["shootout"] is None and out["events"] == len(battle_events)


def test_replay_reports_a_shootout_the_rules_call_for(tmp_path, capsys):
    g = Game("eurocup", themes=1)
    g.theme_of([(0, True)], [(1, True)], [(2, True)], [(1, True)], [(0, True)])  # 60, 60, 30
    assert main(["replay", str(write(tmp_path, g.log))]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["shootout"] == {"players": [0, 1], "places": [1, 2], "method": "shootout_theme", "number": 1}
    assert not out["is_over"]


def test_replay_stops_at_a_refused_line_with_its_number(tmp_path, battle_events, capsys):
    events = battle_events[:4] + [AnswerJudged(at_ns=battle_events[3].at_ns + 1, correct=True)] + battle_events[4:]
    assert main(["replay", str(write(tmp_path, events))]) == 1
    err = capsys.readouterr().err
    assert "battle.jsonl:6: refused by eurocup 2.6: nobody is answering" in err  # line 1 is the header


def test_replay_of_a_malformed_line_fails_naming_it(tmp_path, battle_events, capsys):
    path = write(tmp_path, battle_events)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[3] = '{"type": "ButtonPressed"'
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["replay", str(path)]) != 0
    assert "battle.jsonl:4:" in capsys.readouterr().err


def test_protocol_csv_has_presses_gaps_rulings_running_scores_and_corrections(tmp_path, battle_events, capsys):
    assert main(["protocol", str(write(tmp_path, battle_events)), "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0][:3] == ["Тема", "Вопрос", "Цена"]  # one language: Russian unless --lang en
    first = rows[1]
    assert "Аня 0.000" in first[4] and "Борис +0.050" in first[4] and "Вера +0.551 (след.)" in first[4]
    assert first[5] == "Аня −10; Вера +10" and first[7:10] == ["-10", "0", "10"]
    last = rows[-1]
    assert "Борис: −50 → +50" in last[10]  # the original ruling and its correction
    assert "Вера: +50 → 0" in last[10]  # voided by it (eurocup 2.11.1)
    assert [int(x) for x in last[7:10]] == list(replay(battle_events).scores)


def test_protocol_html_prints_on_a4_in_one_language(tmp_path, battle_events):
    out = tmp_path / "protocol.html"
    assert main(["protocol", str(write(tmp_path, battle_events)), "--format", "html", "-o", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "@page { size: A4" in html and '<html lang="ru">' in html
    assert "<h1>Протокол боя: " in html and "источник" in html
    assert "Theme" not in html and "Battle protocol" not in html
    assert main(["protocol", str(write(tmp_path, battle_events)), "--format", "html", "--lang", "en",
                 "-o", str(out)]) == 0
    english = out.read_text(encoding="utf-8")
    assert '<html lang="en">' in english and "<h1>Battle protocol: " in english and "<th>Theme</th>" in english
    assert "Протокол" not in english and "<th>Тема</th>" not in english


@pytest.mark.browser
def test_protocol_html_prints_to_a4_landscape_pages_in_chromium(tmp_path, battle_events):
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed")
    page = tmp_path / "protocol.html"
    pdf = tmp_path / "protocol.pdf"
    assert main(["protocol", str(write(tmp_path, battle_events)), "-o", str(page)]) == 0
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--no-first-run", "--no-pdf-header-footer",
                    f"--print-to-pdf={pdf}", page.as_uri()], check=True, capture_output=True, timeout=120)
    boxes = re.findall(rb"/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", pdf.read_bytes())
    assert boxes, "no page in the PDF"
    for width, height in boxes:  # A4 landscape: 297 x 210 mm = 841.9 x 595.3 pt
        assert abs(float(width) - 841.9) < 2 and abs(float(height) - 595.3) < 2


def test_replay_and_protocol_read_the_box_store_too(tmp_path, battle_events, capsys):
    from appliance.store import BATTLE, EventStore

    path = tmp_path / "events.sqlite"
    with EventStore(path) as store:
        store.append(BATTLE, "room-2", battle_events)
    assert main(["replay", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["battle_id"] == "room-2"
    assert main(["protocol", str(path), "--battle", "room-2", "--format", "csv"]) == 0
    assert "Борис: −50 → +50" in capsys.readouterr().out
    assert main(["replay", str(path), "--battle", "nope"]) == 2
    assert "no battle 'nope'" in capsys.readouterr().err


def test_replay_prints_the_battle_as_the_pages_show_it_the_one_view(tmp_path, battle_events, capsys):
    from appliance.service.battle_adapter import BattleAdapter

    assert main(["replay", str(write(tmp_path, battle_events)), "--questions"]) == 0
    out = json.loads(capsys.readouterr().out)
    state = replay(battle_events)
    assert out["view"] == json.loads(json.dumps(BattleAdapter().view(state, "demo", state.last_at_ns)))
    assert [row["question"] for row in out["protocol"]][:5] == [1, 2, 3, 4, 5]


def test_replay_reads_a_schema_1_store_without_writing_it(tmp_path, capsys):
    import pathlib
    import shutil

    path = tmp_path / "old.sqlite"
    shutil.copy(pathlib.Path(__file__).parent / "fixtures" / "events-v1.sqlite", path)
    before = path.read_bytes()
    assert main(["replay", str(path), "--battle", "battle-one"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["battle_id"] == "battle-one" and out["is_over"]
    assert path.read_bytes() == before              # no table of ours written into it, no migration
    wal = tmp_path / "old.sqlite-wal"               # (SQLite may leave an empty WAL beside a WAL-mode file)
    assert not wal.exists() or wal.stat().st_size == 0
