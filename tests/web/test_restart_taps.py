"""A whole battle with the web server restarted between every two host commands: each tap is sent, and applied once.

The host is a python-socketio client that makes its command ids as the host page does (web/static/js/host.js
``send``): one id per tap intent, keyed by the command, its arguments and the view it was tapped on, and an intent
seen before is not sent again (a double tap). A restart is a new session and server over the same event store,
as systemd does after a crash; the page connects again and gets a new snapshot.

Before: the intent was keyed by the update number alone, which starts again at 0 after a restart, so a tap after
a restart that matched one from before it was never sent (issue 19). Now the snapshot names the server's run
(``epoch``) and the page keys a tap by (epoch, seq).
"""

from __future__ import annotations

import itertools
import json
import threading
import time

from werkzeug.serving import make_server

from appliance.rules.battle.choices import Reading
from appliance.service.battle_adapter import BattleAdapter
from appliance.service.battles import Battles
from appliance.service.session import Session
from appliance.store import BATTLE, EventStore
from tests.conftest import RecordingCapture
from tests.web.conftest import PIN, IDENTITY, Client
from web import create_app
from web.sync import Services

SETUP = {"profile": "eurocup", "players": ["Аня", "Борис", "Вера"], "themes": [{"name": "Реки"}, {"name": "Кино"}]}
MOST_STEPS = 120  # a battle of two themes is 1 setup + 2 themes x (1 + 5 x 4) commands; a shoot-out adds some


class Box:
    """The web server over a session over ``path``: started, stopped and started again on the same store."""

    def __init__(self, settings, path) -> None:
        self.settings, self.path = settings, path
        self.capture = RecordingCapture()

    def start(self) -> "Box":
        self.store = EventStore(self.path)
        self.session = Session(Battles(self.store), BattleAdapter(), capture=self.capture)
        self.capture.session = self.session
        self.session.start()
        app = create_app(self.settings, Services(session=self.session, identity=IDENTITY))
        self.http = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self.http.server_port}"
        self.thread = threading.Thread(target=self.http.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.http.shutdown()
        self.thread.join(timeout=5)
        self.session.close()
        self.store.close()

    def stored(self, command_id: str) -> list[str]:
        """The types of the events stored under ``command_id``."""
        return [type(row.event).__name__ for battle in self.store.stream_ids(BATTLE)
                for row in self.store.read(BATTLE, battle) if row.command_id == command_id]


class HostPage:
    """The host page's tap ids (host.js ``send``): a new intent gets a new id; the same intent is not sent again."""

    def __init__(self) -> None:
        self.ids = (f"page-{number}" for number in itertools.count(1))
        self.intents: dict[str, str] = {}

    def tap(self, name: str, args: dict, snapshot: dict) -> str | None:
        """The id the page sends for a tap on the view of ``snapshot``, or None: taken for a double tap."""
        tapped_on = f"{snapshot.get('epoch') or ''}:{snapshot['seq']}"  # link.serverEpoch + ":" + link.seq
        intent = f"{name}|{json.dumps(args, ensure_ascii=False)}|{tapped_on}"
        if intent in self.intents:
            return None
        self.intents[intent] = next(self.ids)
        return self.intents[intent]


def expected(view: dict) -> tuple[str, dict] | None:
    """What the host taps next (the page highlights it: host.js ``renderExpected``); None: a player presses."""
    allowed = lambda name: view["allowed"].get(name, "refused") is None  # noqa: E731
    question = view["question"]
    if view["answerer"] is not None and not view["pointed"] and allowed("point"):
        return "point", {}
    if view["pointed"] and allowed("right"):
        return ("wrong" if question["index"] % 3 == 1 else "right"), {}  # some wrong answers: the window reopens
    if question and not question["over"] and question["reading"] == Reading.READING and allowed("reading_done"):
        return "reading_done", {}
    if question and not question["over"] and view["answerer"] is None and question["reading"] == Reading.FINISHED:
        return None
    if allowed("next"):
        return "next", {}
    raise AssertionError(f"nothing to tap: {view['battle']}, {question}")


def test_a_whole_battle_with_a_restart_between_every_two_host_commands(settings, tmp_path):
    box = Box(settings, tmp_path / "events.sqlite").start()
    page = HostPage()
    sent: list[tuple[str, str, list[str]]] = []  # (command, id, the event types stored under that id)
    pending: tuple[str, dict, str] | None = ("setup", SETUP, "")
    closing: list[threading.Thread] = []
    try:
        for step in range(MOST_STEPS):
            client = Client(box.url, "/host", {"pin": PIN})
            try:
                snapshot = client.next("snapshot")
                view = snapshot["view"]
                if view["battle"] is not None and view["battle"]["finished"]:
                    break
                if pending is None:
                    choice = expected(view)
                    if choice is None:  # the press window is open: a player presses (not a host command)
                        player = 1 + (view["question"]["index"] + len(sent)) % 3
                        box.capture.press(player, time.monotonic_ns())
                        client.until_seq(snapshot["seq"] + 1)
                        snapshot = {**snapshot, "seq": client.seq}
                        choice = expected(client.view)
                    pending = (*choice, "")
                name, args, _ = pending
                command_id = page.tap(name, args, snapshot)
                assert command_id is not None, f"step {step}: «{name}» after a restart was taken for a double tap"
                ack = client.command(name, command_id, **args)
                assert ack["ok"] and ack["duplicate"] is False, (step, name, ack)
                if sent:  # the page resends the tap before (its ack lost in the restart): applied once, not twice
                    last_name, last_id, last_events = sent[-1]
                    again = client.command(last_name, last_id, **({"profile": "x"} if last_name == "setup" else {}))
                    assert again["ok"] and again["duplicate"] is True, (step, last_name, again)
                    assert box.stored(last_id) == last_events
                sent.append((name, command_id, box.stored(command_id)))
                assert sent[-1][2], f"step {step}: «{name}» stored nothing"
                pending = None
            finally:  # the client's goodbye waits up to 3 s for the server's: not in the way of the next step
                closing.append(threading.Thread(target=client.close, daemon=True))
                closing[-1].start()
            box.stop()  # between every two host commands
            box.start()
        else:
            raise AssertionError(f"the battle did not end in {MOST_STEPS} steps")
        assert box.session.state.is_over
        # every tap once: its own id, its events stored under it, and nothing else stored under any id twice
        ids = [command_id for _name, command_id, _events in sent]
        assert len(ids) == len(set(ids))
        for name, command_id, events in sent:
            assert box.stored(command_id) == events, name
        names = [name for name, _id, _events in sent]
        assert names.count("next") >= 12 and names.count("right") >= 1 and names.count("wrong") >= 1
    finally:
        box.stop()
        for thread in closing:
            thread.join(timeout=10)
