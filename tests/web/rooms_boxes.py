"""Boxes of a rooms day in one process (tests/web/test_rooms_packages.py, test_rooms_standby.py): each an app over
its own data directory, battle store, question packages and capture double, its nats-server a child of the app
(the real one); pairing as the pages do it; a battle played through the host's commands and the simulator's
buttons (the real session path)."""

from __future__ import annotations

import itertools
import random
import time

from appliance import config
from appliance.errors import SvoyakError
from appliance.service.battle_adapter import BattleAdapter
from appliance.service.battles import Battles
from appliance.service.packages import QuestionPackages
from appliance.service.rooms.roles import Roles
from appliance.service.session import Session
from appliance.store import EventStore
from tests.conftest import RecordingCapture
from tests.web.conftest import DIRECTOR_PIN, IDENTITY, PressingCapture
from web import create_app
from web.sync import Services


class Box:
    """One box's app with its own question packages, capture double and a real battle store in ``data_dir``."""

    def __init__(self, data_dir, role: str, box_id: str) -> None:
        self.data_dir = data_dir
        Roles(data_dir / "rooms").set_role(role, box_id, box_id=box_id)
        self.settings = config.load(overrides={"data_dir": data_dir, "simulator": True, "rooms_leaf_port": 0},
                                    environ={}, config_path=None)
        self.store = EventStore(data_dir / "events.sqlite")
        battles = Battles(self.store)
        self.packages = QuestionPackages.in_folder(data_dir / "packages", battles)
        self.capture = RecordingCapture()
        self.session = Session(battles, BattleAdapter(packages=self.packages),
                               capture=PressingCapture(self.capture), simulator=True)
        self.capture.session = self.session
        self.session.start()
        self.app = create_app(self.settings, Services(session=self.session, identity=IDENTITY,
                                                      packages=self.packages))
        self.client = self.app.test_client()
        self.client.post("/director/login", data={"pin": DIRECTOR_PIN})
        self.rooms = self.app.extensions.get("svoyak.rooms")
        self.closed = False

    def desk(self):
        from web import director

        with self.app.app_context():
            return director.desk()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.rooms.stop()
            self.session.close()
            self.store.close()


def pair(hub: Box, box: Box, name: str, standby: bool = False) -> None:
    """``box`` pairs with ``hub`` as its page does (a code, then the hub's answer kept in the role file)."""
    extra = {"standby": {"address": "127.0.0.1", "leaf_port": box.rooms._leaf_port()}} if standby else {}
    answer = hub.rooms.pair_station(hub.rooms.roles.new_code(), box.rooms.roles.box_id, name, "127.0.0.1", **extra)
    box.rooms.stop()
    box.rooms.roles.paired(answer["leaf_url"], answer["user"], answer["password"], "127.0.0.1")
    box.rooms.start()
    assert not box.rooms.error, box.rooms.error


def until(predicate, what: str, timeout_s: float = 60.0, step_s: float = 0.2):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step_s)
    raise AssertionError(f"not within {timeout_s} s: {what}")


_ids = itertools.count(1)


def _command(box: Box, name: str) -> bool:
    try:
        box.session.command(name, {}, f"{name}-{next(_ids)}")
        return True
    except SvoyakError:  # the rules refuse it now (the driver tries what a host would)
        return False


def play(box: Box, rng: random.Random, stop_after: int | None = None, max_questions: int = 600) -> int:
    """Play the box's current battle to its end (or for ``stop_after`` questions), as tests/rooms/boxes.py's
    ``play_battle`` does through the pages: every question a press of a random player, pointed, judged right or
    wrong; shoot-outs as the standings ask. Returns the questions played."""
    played = 0
    for _ in range(max_questions):
        state = box.session.state
        if state.is_over or (stop_after is not None and played >= stop_after):
            return played
        if not _command(box, "next"):
            raise AssertionError(f"next refused in phase {state.phase}")
        question = box.session.state.current_question
        if question is None or question.is_over:
            continue  # a theme began
        for _attempt in range(3):
            player = rng.randrange(len(box.session.state.players))
            box.session.simulate(player, "press")
            box.session.simulate(player, "release")
            if _command(box, "point"):
                break
        else:
            _command(box, "withdraw")
            played += 1
            continue
        _command(box, "right" if rng.random() < 0.7 else "wrong")
        question = box.session.state.current_question
        if question is not None and not question.is_over:
            _command(box, "withdraw")
        played += 1
    raise AssertionError("the battle did not end")
