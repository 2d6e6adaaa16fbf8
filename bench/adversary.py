"""The stateful adversary of the whole box: a hypothesis state machine that drives a real box through its real
interfaces with random sequences of host taps, presses, audience connections, restarts, kills, package setups and
undo, and checks the box's promises after every step.

The box is the one of :mod:`bench.chaos`: ``svoyak capture --simulator`` and ``svoyak serve --simulator`` over one
data directory, each in its own process group. Who drives it:

- the host's tablet is the real host page (``/host``) in headless Chromium: battle commands are taps on its
  buttons, so a tap goes through ``host.js`` exactly as a host's finger does (its double-tap keys included);
- a second host connection (python-socketio, ``/host`` with the PIN) sets battles up (plain or from a package
  uploaded through ``/packages/upload``), switches phones, sends commands the view refuses, and watches the view;
- presses go through ``/sim`` into the capture process (the real path: capture, socket, arbiter, session);
- the audience is python-socketio clients on ``/board`` and ``/player`` with no login, connecting, dropping and
  reconnecting; every payload they receive is kept and searched for secrets.

The invariants (checked after every step, each a :class:`Violation` when broken; never weakened to pass):

1. ``tap``: every host tap is applied once (one more stored command, never two, also after restarts) or refused in
   words (the page shows a refusal; the socket answers ``{ok: false, error: {ru, en}}`` and nothing is stored);
   never silently dropped.
2. ``restart``: the host's view after a restart (clean or SIGKILL, server or capture) equals the view before it,
   key by key, when no event was stored in between; a SIGKILLed process leaves no process of its group behind.
3. ``secret``: no audience payload holds the host PIN, the director's PIN, a seat code, a question's text before
   its question started or an answer before its question is over, or a host-only view key.
4. ``undo``: an undo right after a host command (nothing stored between) gives back the view before that command.
5. ``replay``: the store replayed with the pure engine (``Battles`` + ``BattleAdapter.view``) gives the host's view.

Used by ``tests/adversarial/test_stateful.py`` (bounded) and ``bench/bench_chaos.py`` (for a duration).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import json
import os
import re
import signal
import sqlite3
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

from bench.chaos import ROOT, Box
from bench.sockets import close, connect

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
STEP_S = 10.0        # how long a tap, a restart or a reconnect may take before it counts as lost
LEFTOVER_S = 5.0     # a SIGKILLed process group must be empty by then (issue 19: "kill -9 splits the box")
PLAYERS = ["Аня", "Борис", "Вера"]
# the host page's buttons (web/templates/host.html ``.controls [data-cmd]``)
TAPS = ("next", "reading_done", "point", "time", "extend", "right", "wrong", "short_form", "clarify",
        "resume_reading", "withdraw", "undo")
# view keys that are the session's, not the battle's, or depend on the moment the view was built
SESSION_KEYS = ("allowed",)
# what a restart may change in the host's view: the capture link's status (it reconnects on its own)
RESTART_VOLATILE = ("allowed", "capture")
# keys the audience must never receive (web/sync.py HOST_ONLY_KEYS: the host's verdicts, seat codes, texts)
HOST_ONLY = ("allowed", "appeals", "questions", "seat_codes", "battles", "undo", "reading")


class Violation(AssertionError):
    """A broken promise of the box: ``invariant`` names which one (see the module's docstring)."""

    def __init__(self, invariant: str, detail: str) -> None:
        super().__init__(f"[{invariant}] {detail}")
        self.invariant = invariant


@dataclasses.dataclass
class Figures:
    steps: int = 0
    taps: int = 0
    taps_refused: int = 0
    commands: int = 0
    refused_commands: int = 0
    presses: int = 0
    undos_checked: int = 0
    server_restarts: int = 0
    server_kills: int = 0
    capture_restarts: int = 0
    capture_kills: int = 0
    audience_connections: int = 0
    audience_payloads: int = 0
    package_setups: int = 0
    replays_checked: int = 0
    examples: int = 0
    violations: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    failed_this_round: bool = False  # a run of hypothesis stops at its first failure (then replays it)
    first_violations: list = dataclasses.field(default_factory=list)


# ---------------------------------------------------------------------------------------------- packages
def package_files() -> dict[str, tuple[str, bytes]]:
    """The package fixtures of the import tests, one per format: kind -> (file name, bytes)."""
    from tests.appliance.packages.conftest import sport_siq

    folder = ROOT / "tests" / "appliance" / "packages"
    csv_rows = ["тема,цена,вопрос,ответ"]
    for theme in range(1, 5):
        for price in (10, 20, 30, 40, 50):
            csv_rows.append(f"Таблица {theme},{price},Табличный вопрос {theme}-{price} о чём-то,"
                            f"Табличный ответ {theme}-{price}")
    return {"siq": ("кубок.siq", sport_siq(themes=6, title="Кубок адверсария")),
            "chgk": ("tour.xml", (folder / "tour.xml").read_bytes()),
            "csv": ("таблица.csv", ("\n".join(csv_rows) + "\n").encode("utf-8"))}


# ---------------------------------------------------------------------------------------------- the box
class Processes(Box):
    """:class:`bench.chaos.Box` with clean stops, SIGKILLs of the main process only, and a leftover check."""

    def _stop(self, process, kill: bool) -> list[str]:
        """Stop ``process`` (SIGTERM, or SIGKILL of its main pid only, as systemd's or a person's ``kill -9``);
        return the leftovers of its process group, then clear them (so the next start is not blocked)."""
        if process is None or process.poll() is not None:
            return []
        group = process.pid
        process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except Exception:  # noqa: BLE001 - a stop that hangs is a leftover too
            pass
        deadline = time.monotonic() + LEFTOVER_S
        left = _group_members(group)
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = _group_members(group)
        if left:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while _group_members(group) and time.monotonic() < deadline:
                time.sleep(0.05)
        return left

    def stop_server(self, kill: bool) -> list[str]:
        return self._stop(self.server, kill)

    def stop_capture(self, kill: bool) -> list[str]:
        return self._stop(self.capture, kill)

    def stop(self) -> None:
        for process in (self.server, self.capture):
            if process is not None:
                self._stop(process, kill=False)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
        self.log.close()


def _group_members(group: int) -> list[str]:
    """The live processes of process group ``group``, as "pid command" lines (zombies are not alive)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == group and fields[0] != "Z":
            with contextlib.suppress(OSError):
                command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                members.append(f"{entry} {command[:120]}")
    return members


class Store:
    """The box's store, read-only, as the adversary's referee: what is stored, and the replay."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / "events.sqlite"
        self.data_dir = data_dir

    def _rows(self, sql: str, *params) -> list:
        if not self.path.exists():
            return []
        with contextlib.closing(sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=10)) as db:
            return db.execute(sql, params).fetchall()

    def host_commands(self) -> list[str]:
        """Every stored command id of a host (not the deadlines' or the phones' own)."""
        return [row[0] for row in self._rows("SELECT command_id FROM commands WHERE kind = 'battle'")
                if not row[0].startswith(("deadline:", "phone:"))]

    def signature(self) -> tuple:
        """Changes whenever anything is stored."""
        rows = self._rows("SELECT (SELECT count(*) FROM stream_events), (SELECT count(*) FROM commands)")
        return tuple(rows[0]) if rows else (0, 0)

    def events_since(self, signature: tuple) -> list[str]:
        rows = self._rows("SELECT type FROM stream_events ORDER BY rowid")
        return [row[0] for row in rows[signature[0]:]]

    def replay(self, battle_id: str | None, now_ns: int) -> dict | None:
        """The view of ``battle_id`` as the pure engine replays the store (``BattleAdapter.view`` and the
        battle list), or None when no such battle is stored."""
        from appliance.service.battle_adapter import BattleAdapter
        from appliance.service.battles import Battles
        from appliance.service.packages import QuestionPackages
        from appliance.store import EventStore

        if battle_id is None or not self.path.exists():
            return None
        with EventStore(self.path, read_only=True) as store:
            battles = Battles(store)
            if battles.broken:
                raise Violation("replay", f"battles that do not replay: {battles.broken}")
            try:
                state = battles.state(battle_id)
            except Exception:  # noqa: BLE001 - an unknown battle: the page shows one the log lacks
                return None
            packages = QuestionPackages.in_folder(self.data_dir / "packages", battles)
            adapter = BattleAdapter(packages=packages)
            if hasattr(battles, "same_command"):  # undo takes back a whole command (as session.py wires it)
                adapter.joined = lambda seq: battles.same_command(battle_id, seq)
            view = adapter.view(state, battle_id, now_ns)
            view["battles"] = adapter.battle_list(battles, battle_id)
            return view

    def secrets(self) -> list[tuple[str, str]]:
        """(kind, text) the audience must not have been sent by now: every battle's question texts of questions
        not started yet and answers of questions not over yet (the setups' texts, as stored)."""
        from appliance.service.battles import Battles
        from appliance.store import BATTLE, EventStore

        if not self.path.exists():
            return []
        found = []
        with EventStore(self.path, read_only=True) as store:
            battles = Battles(store)
            for battle_id in store.stream_ids(BATTLE):
                try:
                    state = battles.state(battle_id)
                except Exception:  # noqa: BLE001 - a broken battle is the replay invariant's to report
                    continue
                started, over = set(), set()
                for question in state.questions:
                    position = (state.themes[question.theme].index, question.number)
                    started.add(position)
                    if question.is_over:
                        over.add(position)
                for slot, texts in enumerate(state.setup.questions):
                    for number, (text, answer) in enumerate(texts):
                        if (slot, number) not in started:
                            found.append(("question text", text))
                        if (slot, number) not in over:
                            found.append(("answer", answer))
        return found


# ---------------------------------------------------------------------------------------------- clients
class Watcher:
    """A python-socketio client of one namespace that keeps every payload it receives and follows the view."""

    def __init__(self, url: str, namespace: str, auth: dict | None = None, also: tuple = ()) -> None:
        import socketio

        self.namespace = namespace
        self.received: list[tuple[str, object]] = []
        self.checked = 0
        self.view: dict | None = None
        self.seq = -1
        self.snapshots = 0
        self.changed = threading.Condition()
        self.sio = socketio.Client(reconnection=False)
        for name in ("hello", "snapshot", "update", "pin_shown"):
            self.sio.on(name, self._keeper(name), namespace=namespace)
        connect(self.sio, url, namespaces=[namespace, *also], auth=auth or {}, transports=["websocket"],
                wait_timeout=10)

    def _keeper(self, name):
        def keep(data):
            with self.changed:
                self.received.append((name, data))
                if name == "snapshot":
                    self.view, self.seq = json.loads(json.dumps(data["view"])), data["seq"]
                    self.snapshots += 1
                elif name == "update" and self.view is not None:
                    if data["seq"] != self.seq + 1:
                        self.sio.emit("resync", {}, namespace=self.namespace)
                    else:
                        self.view.update(json.loads(json.dumps(data["changes"])))
                        for key in data["removed"]:
                            self.view.pop(key, None)
                        self.seq = data["seq"]
                self.changed.notify_all()
        return keep

    def fresh(self, timeout: float = STEP_S) -> dict:
        """A snapshot asked for now: ``{seq, view}`` as the server has it."""
        with self.changed:
            before = self.snapshots
        self.sio.call("resync", {}, namespace=self.namespace, timeout=timeout)
        with self.changed:
            if not self.changed.wait_for(lambda: self.snapshots > before, timeout=timeout):
                raise TimeoutError(f"{self.namespace}: no snapshot after resync")
            return {"seq": self.seq, "view": json.loads(json.dumps(self.view))}

    @property
    def connected(self) -> bool:
        return self.sio.connected

    def close(self) -> None:
        close(self.sio)


class HostSocket(Watcher):
    """The second host connection: setups, phones, refused commands, presses through ``/sim``."""

    def __init__(self, url: str, pin: str) -> None:
        super().__init__(url, "/host", {"pin": pin}, also=("/sim",))

    def command(self, name: str, args: dict, command_id: str) -> dict:
        return self.sio.call("command", {"id": command_id, "name": name, "args": args}, namespace="/host",
                             timeout=STEP_S)

    def packages(self) -> list[dict]:
        ack = self.sio.call("packages", {}, namespace="/host", timeout=STEP_S)
        return ack.get("packages") or [] if ack.get("ok", True) else []

    def press(self, player: int) -> dict:
        ack = self.sio.call("simulate", {"player": player, "action": "press"}, namespace="/sim", timeout=STEP_S)
        self.sio.call("simulate", {"player": player, "action": "release"}, namespace="/sim", timeout=STEP_S)
        return ack


class HostPage:
    """The host page in Chromium: login, taps on its buttons, what it says."""

    def __init__(self, browser, url: str, pin: str) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 800}, has_touch=True)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.goto(url + "/host")
        self.page.fill("#pin", pin)
        self.page.click("#login-form button")
        self.page.wait_for_selector("#setup:not([hidden]), #run:not([hidden]), #unfinished:not([hidden])",
                                    timeout=STEP_S * 1000)

    def online(self, timeout: float = 30) -> None:
        """Wait until the page's link is back (``body[data-conn=online]``) and it shows the battle."""
        self.page.wait_for_selector("body[data-conn=online]", timeout=timeout * 1000)
        if self.page.locator("#unfinished").is_visible():
            self.page.click("#go-on")
        if self.page.locator("#setup").is_visible() and self.page.locator("#back-to-battle").is_visible():
            self.page.click("#back-to-battle")

    def seq(self) -> int:
        return int(self.page.locator("body").get_attribute("data-seq") or -1)

    def shows_run(self) -> bool:
        return self.page.locator("#run").is_visible()

    def clear_reason(self) -> None:
        self.page.evaluate("() => { const r = document.getElementById('reason'); r.textContent = ''; "
                           "r.className = 'reason'; }")

    def reason(self) -> str:
        return (self.page.locator("#reason").text_content() or "").strip()

    def has_button(self, name: str) -> bool:
        """The page shows a button for ``name`` (a profile without the command hides it)."""
        return self.page.locator(f".controls [data-cmd={name}]").first.is_visible()

    def reload(self) -> None:
        """The host reloads the page (or the tablet's browser drops it): it logs in again with its saved PIN."""
        self.page.reload()
        self.page.wait_for_selector("#setup:not([hidden]), #run:not([hidden]), #unfinished:not([hidden])",
                                    timeout=STEP_S * 1000)

    def tap(self, name: str) -> None:
        # force: a finger taps a greyed button too (the page words why it is refused)
        self.page.locator(f".controls [data-cmd={name}]").first.click(timeout=STEP_S * 1000, force=True)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.context.close()


# ---------------------------------------------------------------------------------------------- checks
def _strings(value, path=""):
    """Every string value and key inside ``value`` with its path (numbers are not searched: timestamps hold any
    run of digits)."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield f"{path}.{key}", str(key)
            yield from _strings(item, f"{path}.{key}")
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _strings(item, f"{path}[{index}]")


def find_secret(payload, digits: dict[str, str], texts: list[tuple[str, str]], public: set[str]) -> str | None:
    """Where ``payload`` (one message to the audience) holds a secret, or None. ``digits``: PINs and seat codes
    (found as whole numbers inside strings); ``texts``: question texts and answers not public yet (found inside
    strings, unless the text is itself a public name such as a theme's)."""
    for path, text in _strings(payload):
        for kind, code in digits.items():
            if code and re.search(rf"(?<!\d){re.escape(code)}(?!\d)", text):
                return f"{kind} {code!r} at {path}: {text[:120]!r}"
        for kind, secret in texts:
            if len(secret) >= 4 and secret not in public and secret in text:
                return f"{kind} {secret!r} at {path}: {text[:120]!r}"
    if isinstance(payload, dict):
        view = payload.get("view") if "view" in payload else payload.get("changes")
        if isinstance(view, dict):
            leaked = sorted(set(view) & set(HOST_ONLY))
            if leaked:
                return f"host-only keys {leaked}"
    return None


# The live battle's entry in the view's ``battles`` is made at setup or resume; the page shows these fields of it
# from the view itself (host.js battleCard), so they are not compared
LIVE_ENTRY_FROM_VIEW = ("finished", "questions", "themes_started", "theme_name", "theme_index", "theme_shootout",
                        "players")


def as_shown(view: dict) -> dict:
    """``view`` with the live battle's list entry as the host page shows it (LIVE_ENTRY_FROM_VIEW from the view)."""
    if not isinstance(view.get("battles"), list):
        return view
    battles = [{key: value for key, value in entry.items() if key not in LIVE_ENTRY_FROM_VIEW}
               if isinstance(entry, dict) and entry.get("current") else entry for entry in view["battles"]]
    return {**view, "battles": battles}


def first_difference(before, after, path: str = "") -> str | None:
    """Where ``before`` and ``after`` first differ, as ``path: before -> after`` (values cut short), or None."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after), key=str):
            if key not in before or key not in after:
                return f"{path}.{key}: {_short(before.get(key, '(absent)'))} -> {_short(after.get(key, '(absent)'))}"
            found = first_difference(before[key], after[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for index, (one, other) in enumerate(zip(before, after)):
            found = first_difference(one, other, f"{path}[{index}]")
            if found:
                return found
        return None
    return None if before == after else f"{path}: {_short(before)} -> {_short(after)}"


def _short(value) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 300 else text[:297] + "..."


def differences(before: dict, after: dict, skip=()) -> list[str]:
    """Where the top-level keys of two views differ (each key's first difference), ``skip`` left out."""
    out = []
    for key in sorted(set(before) | set(after)):
        if key in skip:
            continue
        found = first_difference({key: before.get(key)}, {key: after.get(key)})
        if found:
            out.append(found)
    return out


# ---------------------------------------------------------------------------------------------- the adversary
class Adversary:
    """One box and its clients; every action of the state machine is a method here, each followed by checks."""

    def __init__(self, browser, data_dir: Path, figures: Figures) -> None:
        self.figures = figures
        self.data_dir = data_dir
        self.box = Processes(data_dir)
        self.box.start_capture()
        self.box.start_server()
        self.store = Store(data_dir)
        self.pin = self.box.pin
        identity = json.loads((data_dir / "identity.json").read_text())
        self.digits = {"host PIN": identity["host_pin"], "director PIN": identity.get("director_pin", "")}
        self.seat_codes: set[str] = set()
        self.host = self._connect_host()
        self.page = HostPage(browser, self.box.url, self.pin)
        self.audience: list[Watcher] = []
        self.uploaded: dict[str, str] = {}   # package kind -> its id on the box
        self.numbers = iter(range(1, 10**9))
        self.last_intent: dict | None = None  # the view before the last applied host command, and the store after
        self.replay_failures: list[str] = []

    # ---------------------------------------------------------------- plumbing
    def _connect_host(self) -> HostSocket:
        last = None
        for _attempt in range(100):
            try:
                return HostSocket(self.box.url, self.pin)
            except Exception as error:  # noqa: BLE001 - the server listens a moment before it serves
                last = error
                time.sleep(0.1)
        raise RuntimeError(f"could not connect the host: {last}")

    def new_id(self) -> str:
        return f"adv-{os.getpid()}-{next(self.numbers)}"

    def settled(self) -> tuple[dict, tuple]:
        """The host's view as the server has it now, and the store's signature it was made at (nothing stored
        while it was taken; deadlines may store an expiry at any moment, so it is asked again)."""
        for _attempt in range(20):
            signature = self.store.signature()
            time.sleep(0.05)
            snapshot = self.host.fresh()
            if self.store.signature() == signature:
                return snapshot, signature
        raise TimeoutError("the store kept changing")

    def close(self) -> None:
        self.page.close()
        for client in [self.host, *self.audience]:
            client.close()
        self.box.stop()

    # ---------------------------------------------------------------- checks after every step
    def check(self) -> None:
        self.figures.steps += 1
        snapshot, signature = self.settled()
        view = snapshot["view"]
        for code in view.get("seat_codes") or []:
            self.seat_codes.add(code)
        self._check_audience()
        battle = view.get("battle")
        if battle is not None:
            replayed = self.store.replay(battle["id"], 0)
            if replayed is None:
                raise Violation("replay", f"the host's battle {battle['id']} is not in the store")
            skip = {"allowed", *[key for key in view if key not in replayed]}
            found = differences(as_shown(replayed), as_shown(view), skip=skip)
            self.figures.replays_checked += 1
            if found:
                raise Violation("replay", "the store replayed by the engine differs from the host's view: "
                                + "; ".join(found))
        # the page shows what the server has (its own copy of the view, updated by its link)
        deadline = time.monotonic() + STEP_S
        while self.page.seq() != snapshot["seq"] and time.monotonic() < deadline:
            time.sleep(0.05)
            snapshot, signature = self.settled()
        if self.page.seq() != snapshot["seq"]:
            raise Violation("replay", f"the host page shows update {self.page.seq()}, the server is at "
                            f"{snapshot['seq']}")

    def _check_audience(self) -> None:
        texts = self.store.secrets()
        view = self.host.view or {}
        public = {t.get("name") or "" for t in view.get("themes") or [] if isinstance(t, dict)}
        public |= {p.get("name") or "" for p in view.get("players") or []}
        digits = dict(self.digits)
        for number, code in enumerate(sorted(self.seat_codes)):
            digits[f"seat code {number}"] = code
        for client in self.audience:
            with client.changed:
                fresh = client.received[client.checked:]
                client.checked = len(client.received)
            self.figures.audience_payloads += len(fresh)
            for name, payload in fresh:
                where = find_secret(payload, digits, texts, public)
                if where:
                    raise Violation("secret", f"{client.namespace} {name} (seq {payload.get('seq')}): {where}")

    # ---------------------------------------------------------------- actions
    def setup(self, kind: str, profile: str = "eurocup") -> None:
        """A new battle through the host socket: plain themes, or the next unplayed themes of a package."""
        view = self.host.fresh()["view"]
        args: dict = {"profile": profile, "players": list(PLAYERS), "themes": [{"name": "Реки"}, {"name": "Кино"}]}
        if kind != "plain":
            package = self.upload(kind)
            if package is None:
                return
            args["themes"] = 2
            args["package"] = {"id": package}
        live = view.get("battle")
        if live is not None and not live.get("finished"):
            args["set_aside"] = live["id"]
        self.command("setup", args, expect_ok=None)
        self.figures.package_setups += kind != "plain"
        self.page.online()

    def upload(self, kind: str) -> str | None:
        """Upload the ``kind`` fixture through ``/packages/upload`` (logged in with the PIN); its id on the box."""
        import requests

        if kind in self.uploaded:
            return self.uploaded[kind]
        name, data = package_files()[kind]
        http = requests.Session()
        origin = {"Origin": self.box.url}
        login = http.post(self.box.url + "/packages/login", data={"pin": self.pin}, headers=origin, timeout=STEP_S,
                          allow_redirects=False)
        if login.status_code not in (302, 303):
            raise Violation("tap", f"the packages login with the right PIN answered {login.status_code}")
        sent = http.post(self.box.url + "/packages/upload", files={"file": (name, data)}, headers=origin,
                         timeout=STEP_S * 3)
        if sent.status_code not in (200, 201):
            raise Violation("tap", f"the {kind} fixture {name} was refused on upload: {sent.status_code}")
        before = {choice["id"] for choice in self.host.packages()}
        match = re.search(r'data-package="([^"]+)"', sent.text) or re.search(r"/packages/([0-9a-f]{6,})", sent.text)
        choices = self.host.packages()
        ids = [choice["id"] for choice in choices]
        package = match.group(1) if match and match.group(1) in ids else (ids[-1] if ids else None)
        if package is None:
            raise Violation("tap", f"the {kind} package was accepted but the host's setup form does not list it "
                            f"({before})")
        self.uploaded[kind] = package
        return package

    def command(self, name: str, args: dict, expect_ok: bool | None) -> dict:
        """A command through the host socket, checked: applied once (one more stored command, the view
        updated) or refused in words (nothing stored). ``expect_ok``: what the view's verdict said, if known."""
        before, signature = self.settled()
        stored = self.store.host_commands()
        command_id = self.new_id()
        ack = self.host.command(name, args, command_id)
        self.figures.commands += 1
        after_commands = self.store.host_commands()
        if ack.get("ok"):
            if ack.get("duplicate"):
                raise Violation("tap", f"a new command id {command_id} {name} was answered duplicate: {ack}")
            if after_commands.count(command_id) != 1 or len(after_commands) != len(stored) + 1:
                raise Violation("tap", f"{name} acknowledged, stored {after_commands.count(command_id)} times "
                                f"({len(stored)} -> {len(after_commands)} commands)")
            if expect_ok is False:
                raise Violation("tap", f"{name} was applied although the view refused it: "
                                f"{before['view'].get('allowed', {}).get(name)}")
            self._intent(name, before["view"])
        else:
            self.figures.refused_commands += 1
            error = ack.get("error") or {}
            if not (error.get("ru") and error.get("en")):
                raise Violation("tap", f"{name} refused without words: {ack}")
            if len(after_commands) != len(stored):
                raise Violation("tap", f"{name} refused ({error.get('code')}) yet a command was stored")
            if expect_ok is True and error.get("code") != "error.internal":
                pass  # the state may have moved on (a deadline) between the verdict and the command
        return ack

    def refused_command(self, name: str) -> None:
        """A command the view refuses now, sent anyway: it must be refused in words and store nothing."""
        view = self.host.fresh()["view"]
        verdict = (view.get("allowed") or {}).get(name)
        args = {"player": 0} if name == "pick" else {}
        self.command(name, args, expect_ok=False if verdict else None)

    def tap(self, name: str) -> None:
        """A tap on the host page's button: applied once, or refused in words on the page; never silent."""
        self.page.online()
        if not self.page.shows_run():
            return
        snapshot, signature = self.settled()
        view = snapshot["view"]
        verdicts = view.get("allowed") or {}
        if name not in verdicts or not self.page.has_button(name):
            return  # this profile has no such command: the button is hidden
        stored = self.store.host_commands()
        self.page.clear_reason()
        self.figures.taps += 1
        self.page.tap(name)
        deadline = time.monotonic() + STEP_S
        while time.monotonic() < deadline:
            commands = self.store.host_commands()
            if len(commands) > len(stored):
                break
            if self.page.reason():
                break
            time.sleep(0.05)
        time.sleep(0.3)  # a second send of the same tap would land now
        commands = self.store.host_commands()
        said = self.page.reason()
        if len(commands) > len(stored) + 1:
            raise Violation("tap", f"one tap on «{name}» stored {len(commands) - len(stored)} commands")
        if len(commands) == len(stored) + 1:
            if verdicts[name]:
                raise Violation("tap", f"«{name}» was applied although the view refused it: {verdicts[name]}")
            self._intent(name, view)
            return
        if said:
            self.figures.taps_refused += 1
            return
        raise Violation("tap", f"a tap on «{name}» (allowed: {verdicts[name] is None}, the page at update "
                        f"{self.page.seq()}, the server at {snapshot['seq']}) was neither applied nor refused "
                        f"within {STEP_S:.0f} s: silently dropped")

    def _intent(self, name: str, view_before: dict) -> None:
        """Remember the view before an applied command (the undo invariant), unless it was an undo itself."""
        _snapshot, signature = self.settled()
        if name == "undo":
            intent, self.last_intent = self.last_intent, None
            if intent is not None and self.store.events_since(intent["signature"]) == ["ActionUndone"]:
                after = self.store.replay(view_before["battle"]["id"], 0) or {}
                skip = {"allowed", "undo", "battles", *[key for key in intent["view"] if key not in after]}
                found = differences(intent["view"], after, skip=skip)
                self.figures.undos_checked += 1
                if found:
                    raise Violation("undo", f"undo of «{intent['name']}» did not give back the view before it: "
                                    + "; ".join(found))
            return
        battle = view_before.get("battle")
        if battle is None or name in ("setup", "phones", "resume"):
            self.last_intent = None
            return
        # the view before the command as the host saw it (the check after the step before matched it to the replay)
        self.last_intent = {"name": name, "signature": signature, "view": view_before}

    def host_reload(self) -> None:
        self.page.reload()
        self.page.online()

    def press(self, player: int) -> None:
        try:
            self.host.press(player)
            self.figures.presses += 1
        except Exception as error:  # noqa: BLE001 - no answer from /sim within STEP_S
            raise Violation("tap", f"a press of button {player + 1} got no answer: {error}") from None
        time.sleep(0.15)  # the capture's press reaches the session
        self.last_intent = None

    def phones(self, enabled: bool) -> None:
        self.command("phones", {"enabled": enabled}, expect_ok=None)

    def audience_connect(self, namespace: str) -> None:
        client = Watcher(self.box.url, namespace)
        self.audience.append(client)
        self.figures.audience_connections += 1

    def audience_reconnect(self, index: int) -> None:
        if not self.audience:
            return
        old = self.audience.pop(index % len(self.audience))
        self._check_audience_of(old)
        old.close()
        self.audience_connect(old.namespace)

    def _check_audience_of(self, client: Watcher) -> None:
        self.audience.append(client)
        try:
            self._check_audience()
        finally:
            self.audience.remove(client)

    def restart(self, which: str, kill: bool) -> None:
        """Stop the server or the capture (SIGTERM, or SIGKILL of its main process), start it again; the
        host's view after equals the view before, and a kill leaves no process of its group behind."""
        before, signature = self.settled()
        self._check_audience()
        if which == "server":
            left = self.box.stop_server(kill)
            self.figures.server_kills += kill
            self.figures.server_restarts += not kill
        else:
            left = self.box.stop_capture(kill)
            self.figures.capture_kills += kill
            self.figures.capture_restarts += not kill
        if left:
            raise Violation("restart", f"{'SIGKILL' if kill else 'SIGTERM'} of the {which}'s main process left "
                            f"{len(left)} process(es) of its group running after {LEFTOVER_S:.0f} s: {left}")
        if which == "server":
            self.host.close()
            for client in self.audience:
                client.close()
            self.box.start_server()
            self.host = self._connect_host()
            reconnected = []
            for client in self.audience:  # the audience's pages reconnect on their own
                self._check_audience_of(client)
                reconnected.append(Watcher(self.box.url, client.namespace))
            self.audience = reconnected
        else:
            self.box.start_capture()
        self.page.online()
        # the capture link reconnects on its own; wait for it before comparing
        deadline = time.monotonic() + 30
        after, signature_after = self.settled()
        while not (after["view"].get("capture") or {}).get("connected") and time.monotonic() < deadline:
            time.sleep(0.2)
            after, signature_after = self.settled()
        found = differences(as_shown(before["view"]), as_shown(after["view"]), skip=RESTART_VOLATILE)
        while found and signature_after == signature and time.monotonic() < deadline:
            # a deadline that passed during the restart fires again at once: give the new process a moment
            time.sleep(0.2)
            after, signature_after = self.settled()
            found = differences(as_shown(before["view"]), as_shown(after["view"]), skip=RESTART_VOLATILE)
        if signature_after == signature:
            if found:
                raise Violation("restart", f"the host's view after the {which} {'kill' if kill else 'restart'} "
                                "differs from the view before: " + "; ".join(found))
        else:
            self.last_intent = None  # a deadline passed meanwhile: the undo check starts afresh


def launch_browser():
    """Debian's Chromium through Playwright: ``(playwright, browser)``; stop both with :func:`close_browser`."""
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    return playwright, playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def close_browser(handles) -> None:
    playwright, browser = handles
    with contextlib.suppress(Exception):
        browser.close()
    playwright.stop()


# ---------------------------------------------------------------------------------------------- the state machine
def machine(browser, figures: Figures, folder: Path):
    """The hypothesis state machine class over a new box per example, in a new folder under ``folder``.

    Each violation is counted in ``figures`` when it happens, with the steps of its example so far (a real box
    is not deterministic to the millisecond, so hypothesis's own replay of a failing example may fail elsewhere)."""
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

    class BoxMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.folder = Path(tempfile.mkdtemp(dir=folder, prefix="box-"))
            self.trail: list[str] = []
            figures.examples += 1
            self.adversary = Adversary(browser, self.folder, figures)
            self.step("setup", "plain")

        def step(self, action: str, *args) -> None:
            self.trail.append(f"{action}({', '.join(map(repr, args))})")
            try:
                getattr(self.adversary, action)(*args)
            except Exception as error:
                invariant = error.invariant if isinstance(error, Violation) else "harness"
                if not figures.failed_this_round:  # hypothesis replays a failing example once: count it once
                    figures.failed_this_round = True
                    figures.violations[invariant] += 1
                    if len(figures.first_violations) < 10:
                        figures.first_violations.append(
                            f"{'' if isinstance(error, Violation) else type(error).__name__ + ': '}{str(error)[:2000]}"
                            f"\n    steps: {'; '.join(self.trail)}")
                error.add_note(f"steps of this example: {'; '.join(self.trail)}")
                raise

        def teardown(self) -> None:
            self.adversary.close()

        # (named to sort first: hypothesis's simplest example repeats the first rule, and this one plays on)
        @rule(choice=st.integers(0, len(TAPS) - 1))
        def allowed_tap(self, choice):
            """A tap the view allows (the way a battle goes on): the ``choice``-th of the allowed, round."""
            view = self.adversary.host.fresh()["view"]
            allowed = sorted(name for name, verdict in (view.get("allowed") or {}).items()
                             if verdict is None and name in TAPS)
            if allowed:
                self.step("tap", allowed[choice % len(allowed)])

        @rule(name=st.sampled_from(TAPS))
        def tap(self, name):
            self.step("tap", name)

        @rule(choice=st.integers(0, len(TAPS) - 1))
        def allowed_tap_then_undo(self, choice):
            """A host's mis-tap taken back at once: the undo must give back the view before the tap."""
            view = self.adversary.host.fresh()["view"]
            allowed = sorted(name for name, verdict in (view.get("allowed") or {}).items()
                             if verdict is None and name in TAPS and name != "undo")
            if allowed:
                self.step("tap", allowed[choice % len(allowed)])
                self.step("tap", "undo")

        @rule(name=st.sampled_from(TAPS + ("pick",)))
        def refused_command(self, name):
            self.step("refused_command", name)

        @rule(player=st.integers(0, len(PLAYERS) - 1))
        def press(self, player):
            self.step("press", player)

        @rule(kind=st.sampled_from(("plain", "siq", "chgk", "csv")))
        def setup(self, kind):
            self.step("setup", kind)

        @rule(enabled=st.booleans())
        def phones(self, enabled):
            self.step("phones", enabled)

        @rule(namespace=st.sampled_from(("/board", "/player")))
        def audience_connect(self, namespace):
            self.step("audience_connect", namespace)

        @precondition(lambda self: self.adversary.audience)
        @rule(index=st.integers(0, 7))
        def audience_reconnect(self, index):
            self.step("audience_reconnect", index)

        @rule()
        def host_reload(self):
            self.step("host_reload")

        @rule(which=st.sampled_from(("server", "capture")), kill=st.booleans())
        def restart(self, which, kill):
            self.step("restart", which, kill)

        @invariant()
        def promises_hold(self):
            self.step("check")

    return BoxMachine


# Sequences the state machine found breaking a promise (issue 19's seams), kept as fixed scenarios: each is
# played on a new box with every promise checked after each step. (action, arguments) as Adversary's methods.
FOUND = {
    # host.js keyed a tap by (command, arguments, update number); the number starts again after a restart, so a
    # new «Следующий вопрос» at update 5 was taken for the double tap of one made at update 5 before it
    "tap after a restart": [("tap", "next"), ("tap", "next"), ("restart", "server", False),
                            ("tap", "reading_done"), ("restart", "server", False), ("tap", "next"),
                            ("tap", "next"), ("restart", "server", False), ("tap", "next"), ("tap", "next")],
    # undo of «Следующий вопрос» (the price and the reading's start, one command) took back the reading only
    "undo of next": [("tap", "next"), ("tap", "next"), ("tap", "undo")],
    # the setup's update (its event) carried every question and answer of a package to the board and phones
    "setup from a package": [("audience_connect", "/board"), ("audience_connect", "/player"), ("setup", "siq"),
                             ("setup", "chgk"), ("setup", "csv")],
    # kill -9 of the web server's main process left its gunicorn worker serving
    "kill of the server": [("tap", "next"), ("restart", "server", True), ("tap", "next")],
    "kill of the capture": [("tap", "next"), ("restart", "capture", True), ("tap", "next")],
    # phones switched on by the host were off after a restart, their seat codes gone
    "phones across a restart": [("phones", True), ("restart", "server", False), ("phones", False)],
}


def play_steps(browser, folder: Path, steps: list[tuple], figures: Figures | None = None) -> Figures:
    """Play ``steps`` on a new box (set up with a plain battle first), every promise checked after each; raises
    the first :class:`Violation`."""
    figures = figures or Figures()
    adversary = Adversary(browser, Path(tempfile.mkdtemp(dir=folder, prefix="box-")), figures)
    figures.examples += 1
    try:
        adversary.setup("plain")
        adversary.check()
        for action, *args in steps:
            getattr(adversary, action)(*args)
            adversary.check()
    finally:
        adversary.close()
    return figures


class TimeUp(Exception):
    """The bench's time is over: no new box is started."""


def run_for(seconds: float, steps_per_example: int = 40, log=print) -> Figures:
    """Run the state machine over new boxes for ``seconds``; every violation is counted (the first ones kept with
    their falsifying steps) and the run goes on with new boxes."""
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis.stateful import run_state_machine_as_test

    figures = Figures()
    handles = launch_browser()
    ends = time.monotonic() + seconds
    try:
        with tempfile.TemporaryDirectory(dir=ROOT, prefix=".adversary-") as folder:
            Machine = machine(handles[1], figures, Path(folder))

            class Timed(Machine):
                def __init__(self) -> None:
                    if time.monotonic() > ends:
                        raise TimeUp()
                    super().__init__()

            while time.monotonic() < ends:
                figures.failed_this_round = False
                try:
                    run_state_machine_as_test(Timed, settings=settings(
                        max_examples=10**6, stateful_step_count=steps_per_example, deadline=None, database=None,
                        phases=(Phase.generate,), suppress_health_check=list(HealthCheck),
                        report_multiple_bugs=False))
                except TimeUp:
                    break
                except Exception as error:  # noqa: BLE001 - counted by the machine when it happened; go on
                    if not figures.failed_this_round:  # raised outside a step (hypothesis itself)
                        figures.violations["harness"] += 1
                        figures.first_violations.append(f"{type(error).__name__}: {str(error)[:2000]}")
                    log(f"  {type(error).__name__}: {str(error)[:300]}")
    finally:
        close_browser(handles)
    return figures
