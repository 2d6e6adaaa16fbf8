"""The command line against hostile input (issue 10, «The command line»): every case is a real ``svoyak``
process with a timeout; each must print one clear line on stderr, no traceback, and exit non-zero (1: the log was
read and a line refused or empty; 2: the input cannot be used). ``replay`` and ``protocol`` open an SQLite file
read-only: its bytes are the same after. The run prints the table's figures."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 60  # per case; a hang fails the case instead of the run


def svoyak(argv: list[str], stdin=None, cwd=None) -> subprocess.CompletedProcess:
    """``svoyak ARGV...`` as a process of its own (this Python, this tree), standard input from ``stdin``."""
    env = {**os.environ, "SVOYAK_CONFIG": "", "PYTHONWARNINGS": "error"}
    return subprocess.run([sys.executable, "-m", "svoyak.cli", *argv], capture_output=True, timeout=TIMEOUT_S,
                          stdin=stdin if stdin is not None else subprocess.DEVNULL, env=env, cwd=cwd or ROOT)


def good_log() -> str:
    from appliance.rules.battle import BattleSetUp, ThemeStarted
    from appliance.service.presets import load_profile
    from appliance.store.jsonl import dump_log

    return dump_log("b1", [BattleSetUp(at_ns=0, profile=load_profile("mubc"), players=("А", "Б"), themes=1),
                           ThemeStarted(at_ns=1, name="Реки")])


def store_file(path: Path) -> Path:
    from appliance.rules.battle import BattleSetUp
    from appliance.service.presets import load_profile
    from appliance.store import BATTLE, EventStore

    with EventStore(path) as store:
        store.append(BATTLE, "b1", [BattleSetUp(at_ns=0, profile=load_profile("mubc"), players=("А", "Б"), themes=1)])
    return path


def foreign_sqlite(path: Path) -> Path:
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE birds (name TEXT)")
    connection.execute("INSERT INTO birds VALUES ('сова')")
    connection.commit()
    connection.close()
    return path


HEADER = '{"format":"svoyak-battle-log","version":1,"battle_id":"b1"}\n'


def files(folder: Path) -> dict[str, Path]:
    """The hostile inputs, made in ``folder``."""
    setup_line = good_log().splitlines()[1]
    made = {
        "empty": b"",
        "not_utf8": b"\xff\xfe\x00junk\n",
        "truncated_utf8": HEADER.encode() + '{"type":"ThemeStarted","at_ns":1,"name":"Ре'.encode()[:-1],
        "deep_json": HEADER.encode() + b"[" * 100_000 + b"]" * 100_000 + b"\n",
        "deep_object": HEADER.encode() + b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b"\n",
        "header_only": HEADER.encode(),
        "bad_header": b'{"format":"something-else","version":1}\n',
        "future_version": b'{"format":"svoyak-battle-log","version":99,"battle_id":"b1"}\n',
        "array_line": HEADER.encode() + b"[1, 2, 3]\n",
        "junk_line": HEADER.encode() + b"this is not json\n",
        "blank_line": HEADER.encode() + b"\n\n",
        "unknown_event": HEADER.encode() + b'{"type":"Fireworks","at_ns":1}\n',
        "wrong_types": (HEADER + setup_line + "\n" + '{"type":"ButtonPressed","at_ns":"x","player":[0]}\n').encode(),
        "huge_number": (HEADER + setup_line + "\n" + '{"type":"ButtonPressed","at_ns":' + "9" * 5000
                        + ',"player":0}\n').encode(),
        "huge_player": (HEADER + setup_line + "\n" + '{"type":"ButtonPressed","at_ns":5,"player":'
                        + "9" * 40 + "}\n").encode(),
        "nan_time": (HEADER + setup_line + "\n" + '{"type":"ButtonPressed","at_ns":NaN,"player":0}\n').encode(),
        "float_time": (HEADER + setup_line + "\n" + '{"type":"ButtonPressed","at_ns":1e308,"player":0}\n').encode(),
        "no_setup": HEADER.encode() + b'{"type":"ThemeStarted","at_ns":1,"name":"x"}\n',
        "bad_profile": HEADER.encode() + b'{"type":"BattleSetUp","at_ns":0,"profile":{"nope":1},"players":["A"],'
                                         b'"themes":1}\n',
        "nul_bytes": HEADER.encode() + b"\x00" * 1000 + b"\n",
        "long_line": HEADER.encode() + b'{"type":"ThemeStarted","at_ns":1,"name":"' + b"x" * 20_000_000 + b'"}\n',
        "corrupt_sqlite": b"SQLite format 3\x00" + os.urandom(4096),
        "truncated_sqlite": b"SQLite format 3\x00",
        "good.jsonl": good_log().encode(),
        "bad_preset.toml": b'title_ru = 5\nstage = "abc"\n',
        "bad_types_preset.toml": b'title_ru = "x"\ntitle_en = "x"\nregulation = 1\n[[stage]]\nid = 5\nkind = []\n',
        "invalid.toml": b"[[[ this is = not toml",
        "preset_not_utf8.toml": b"\xff\xfe title = 1\n",
    }
    out = {}
    for name, content in made.items():
        path = folder / name
        path.write_bytes(content)
        out[name.replace(".", "_")] = path  # {good_jsonl} in an argv: str.format reads a dot as an attribute
    out["store"] = store_file(folder / "store.sqlite")
    out["foreign"] = foreign_sqlite(folder / "foreign.sqlite")
    out["directory"] = folder / "a_directory"
    out["directory"].mkdir()
    fifo = folder / "fifo"
    os.mkfifo(fifo)
    out["fifo"] = fifo
    return out


# (case, argv with {name} for a made file; "stdin": a file for standard input, or None). ~100 cases.
LOG_CASES = ["empty", "not_utf8", "truncated_utf8", "deep_json", "deep_object", "header_only", "bad_header",
             "future_version", "array_line", "junk_line", "blank_line", "unknown_event", "wrong_types",
             "huge_number", "huge_player", "nan_time", "float_time", "no_setup", "bad_profile", "nul_bytes",
             "long_line", "corrupt_sqlite", "truncated_sqlite", "foreign", "directory", "fifo"]
CASES: list[tuple[str, list[str], str | None]] = []
for command in ("replay", "protocol"):
    CASES += [(f"{command} missing file", [command, "{folder}/nope.jsonl"], None),
              (f"{command} /dev/zero", [command, "/dev/zero"], None),
              (f"{command} - from /dev/zero", [command, "-"], "/dev/zero"),
              (f"{command} - from a non-UTF-8 file", [command, "-"], "not_utf8"),
              (f"{command} - from a deep JSON file", [command, "-"], "deep_json"),
              (f"{command} store unknown battle", [command, "{store}", "--battle", "nope"], None),
              (f"{command} store huge battle id", [command, "{store}", "--battle", "x" * 100_000], None),
              (f"{command} no log", [command], None),
              (f"{command} unknown flag", [command, "{good_jsonl}", "--nope"], None)]
    CASES += [(f"{command} {name}", [command, "{" + name + "}"], None) for name in LOG_CASES]
CASES += [
    ("protocol -o into a missing folder", ["protocol", "{good_jsonl}", "-o", "{folder}/missing/out.html"], None),
    ("protocol -o a directory", ["protocol", "{good_jsonl}", "-o", "{directory}"], None),
    ("protocol -o /dev/full", ["protocol", "{good_jsonl}", "-o", "/dev/full"], None),
    ("protocol --format pdf", ["protocol", "{good_jsonl}", "--format", "pdf"], None),
    ("protocol csv -o missing folder", ["protocol", "{good_jsonl}", "--format", "csv", "-o", "{folder}/x/y.csv"], None),
    ("tournament no action", ["tournament"], None),
    ("tournament unknown action", ["tournament", "dance"], None),
    ("simulate unknown preset", ["tournament", "simulate", "--preset", "nope", "--players", "8"], None),
    ("simulate preset file missing", ["tournament", "simulate", "--preset", "{folder}/nope.toml", "--players", "8"], None),
    ("simulate preset a directory", ["tournament", "simulate", "--preset", "{directory}", "--players", "8"], None),
    ("simulate preset /dev/zero", ["tournament", "simulate", "--preset", "/dev/zero", "--players", "8"], None),
    ("simulate preset fifo", ["tournament", "simulate", "--preset", "{fifo}", "--players", "8"], None),
    ("simulate preset not UTF-8", ["tournament", "simulate", "--preset", "{preset_not_utf8_toml}", "--players", "8"], None),
    ("simulate preset invalid TOML", ["tournament", "simulate", "--preset", "{invalid_toml}", "--players", "8"], None),
    ("simulate preset wrong shape", ["tournament", "simulate", "--preset", "{bad_preset_toml}", "--players", "8"], None),
    ("simulate preset wrong types", ["tournament", "simulate", "--preset", "{bad_types_preset_toml}", "--players", "8"], None),
    ("simulate preset a battle log", ["tournament", "simulate", "--preset", "{good_jsonl}", "--players", "8"], None),
    ("simulate no players", ["tournament", "simulate", "--preset", "mubc"], None),
    ("simulate players abc", ["tournament", "simulate", "--preset", "mubc", "--players", "abc"], None),
    ("simulate players 0", ["tournament", "simulate", "--preset", "mubc", "--players", "0"], None),
    ("simulate players -5", ["tournament", "simulate", "--preset", "mubc", "--players", "-5"], None),
    ("simulate players 10**9", ["tournament", "simulate", "--preset", "mubc", "--players", "1000000000"], None),
    ("simulate players 5000 digits", ["tournament", "simulate", "--preset", "mubc", "--players", "9" * 5000], None),
    ("simulate seed abc", ["tournament", "simulate", "--preset", "mubc", "--players", "8", "--seed", "abc"], None),
    ("simulate seed 5000 digits", ["tournament", "simulate", "--preset", "mubc", "--players", "8", "--seed",
                                   "9" * 5000], None),
    ("simulate rooms 0", ["tournament", "simulate", "--preset", "mubc", "--players", "8", "--rooms", "0"], None),
    ("simulate rooms 10**9", ["tournament", "simulate", "--preset", "mubc", "--players", "8", "--rooms",
                              "1000000000"], None),
    ("simulate --set swiss.rounds=abc", ["tournament", "simulate", "--preset", "mubc", "--players", "8", "--set",
                                         "swiss.rounds=abc"], None),
    ("simulate --set swiss.rounds=-3", ["tournament", "simulate", "--preset", "mubc", "--players", "8", "--set",
                                        "swiss.rounds=-3"], None),
    ("simulate --set swiss.rounds=10**9", ["tournament", "simulate", "--preset", "mubc", "--players", "8", "--set",
                                           "swiss.rounds=1000000000"], None),
    ("simulate --set 5000 digits", ["tournament", "simulate", "--preset", "mubc", "--players", "8", "--set",
                                    "swiss.rounds=" + "9" * 5000], None),
    ("simulate --set unknown stage", ["tournament", "simulate", "--preset", "mubc", "--players", "8", "--set",
                                      "nope.rounds=3"], None),
    ("simulate --set unknown field", ["tournament", "simulate", "--preset", "mubc", "--players", "8", "--set",
                                      "swiss.nope=3"], None),
    ("simulate --set no equals", ["tournament", "simulate", "--preset", "mubc", "--players", "8", "--set",
                                  "swiss.rounds"], None),
    ("simulate --set empty key", ["tournament", "simulate", "--preset", "mubc", "--players", "8", "--set", "=5"], None),
    ("simulate --set a fraction", ["tournament", "simulate", "--preset", "mubc", "--players", "8", "--set",
                                   "swiss.rounds=1.5"], None),
    ("simulate --set a stage", ["tournament", "simulate", "--preset", "mubc", "--players", "8", "--set", "swiss=3"],
     None),
    ("show unknown preset", ["tournament", "show", "nope"], None),
    ("show a path", ["tournament", "show", "../../../etc/passwd"], None),
    ("show a toml path", ["tournament", "show", "{bad_preset_toml}"], None),
    ("unknown command", ["dance"], None),
    ("no command", [], None),
]


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    return {**files(folder), "folder": folder}


@pytest.mark.parametrize("case,argv,stdin", CASES, ids=[case for case, _, _ in CASES])
def test_hostile_input_gets_one_clear_line_and_a_non_zero_exit(made, case, argv, stdin):
    args = [part.format(**{key: str(value) for key, value in made.items()}) if "{" in part else part
            for part in argv]
    source = None
    if stdin is not None:
        source = open(stdin if stdin.startswith("/") else made[stdin], "rb")
    try:
        done = svoyak(args, stdin=source)
    finally:
        if source is not None:
            source.close()
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode in (1, 2), (case, done.returncode, err[-2000:])
    assert "Traceback" not in err, (case, err[-3000:])
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, (case, lines[:5])
    assert lines[0].startswith("svoyak"), (case, lines[0])
    assert len(lines[0]) < 600, (case, lines[0][:300])


def test_the_table_has_the_size_the_issue_counted(capsys):
    assert len(CASES) >= 99
    with capsys.disabled():
        print(f"\nCLI hostile inputs: {len(CASES)} cases, each one line on stderr, no traceback, exit 1 or 2, "
              f"none past its {TIMEOUT_S} s timeout")


@pytest.mark.parametrize("command", ["replay", "protocol"])
@pytest.mark.parametrize("which", ["store", "foreign"])
def test_replay_and_protocol_open_sqlite_read_only(tmp_path, command, which):
    path = store_file(tmp_path / "store.sqlite") if which == "store" else foreign_sqlite(tmp_path / "foreign.sqlite")
    before = path.read_bytes()
    side_files = {p.name for p in tmp_path.iterdir()}
    argv = [command, str(path)]  # svoyak's subcommands, not programs (tests/test_programs.py)
    done = svoyak(argv)
    assert done.returncode == (0 if which == "store" else 2), done.stderr.decode()
    assert path.read_bytes() == before                                  # not a byte written
    if which == "foreign":
        assert "not a svoyak event store" in done.stderr.decode()
        tables = sqlite3.connect(f"file:{path}?mode=ro", uri=True).execute(
            "SELECT name FROM sqlite_master").fetchall()
        assert tables == [("birds",)]                                   # no tables of ours added
        assert {p.name for p in tmp_path.iterdir()} == side_files       # no journal left beside it
    else:
        assert json.loads(done.stdout)["battle_id"] == "b1" if command == "replay" else done.stdout


def test_replay_reads_a_store_that_cannot_be_written(tmp_path):
    path = store_file(tmp_path / "store.sqlite")
    path.chmod(0o444)
    tmp_path.chmod(0o555)
    try:
        argv = ["replay", str(path)]
        done = svoyak(argv)
    finally:
        tmp_path.chmod(0o755)
    assert done.returncode == 0, done.stderr.decode()
