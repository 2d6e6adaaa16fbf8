"""Capture-socket fuzzing (issue 10): junk lines, binary, lines over the 64 KiB cap, JSON of the wrong shape,
commands before ``hello`` and second ``hello``s, from other local clients and on the appliance's own link. After
every message the capture's state (armed, eligible, round, LEDs) is what it was, the appliance still holds the
link, and at the end a press reaches the appliance and nobody else. The run prints its figures."""

from __future__ import annotations

import json
import random
import socket
import time

from appliance.capture_wire import MAX_LINE_BYTES

from .conftest import RawClient

MESSAGES = 1500


def state(client: RawClient, number: int) -> dict:
    status = client.command(f"state-{number}", "status")["result"]
    return {key: value for key, value in status.items() if not key.endswith("_ns")}


def intruder_line(rng: random.Random) -> bytes:
    """One hostile line (or chunk) for a fresh connection that has not said hello."""
    choices = [
        lambda: b"not json at all\n",
        lambda: bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))) + b"\n",
        lambda: b"\x00" * 5000 + b"\n",
        lambda: b"x" * (MAX_LINE_BYTES + 1) + b"\n",
        lambda: b'{"type":"cmd","id":"a","op":"arm","eligible":[1],"round_id":"' + b"y" * 100_000 + b'"}\n',
        lambda: b"[1,2,3]\n",
        lambda: b'"hello"\n',
        lambda: b"[" * 100_000 + b"\n",
        lambda: b'{"type":"hello","protocol":99}\n',
        lambda: b'{"type":"hello","protocol":1,"client":"appliance","instance":null,"last_seq":0}\n',
        lambda: b'{"type":"hello","protocol":1,"last_seq":' + b"9" * 5000 + b"}\n",
        lambda: b'{"type":"cmd","id":"x","op":"arm","eligible":[1,2],"round_id":"evil"}\n',
        lambda: b'{"type":"cmd","id":"x","op":"simulate_press","player":1}\n',
        lambda: b'{"type":"ack","seq":1000000000}\n',
        lambda: b'{"type":"heartbeat"}\n',
        lambda: json.dumps({"type": rng.choice(["cmd", "ack", "event", None, 5]), "seq": rng.choice(
            [float("inf"), -1, 2**70, "1"])}).encode() + b"\n",
    ]
    return rng.choice(choices)()


def appliance_junk(rng: random.Random) -> bytes:
    """A hostile line on the appliance's own welcomed link that the server must refuse without acting."""
    choices = [
        lambda: b"not json\n",
        lambda: bytes(rng.randrange(1, 256) for _ in range(rng.randrange(1, 200))).replace(b"\n", b"") + b"\n",
        lambda: b"[]\n",
        lambda: b'{"no_type": 1}\n',
        lambda: b'{"type":"dance"}\n',
        lambda: json.dumps({"type": "cmd", "id": f"j{rng.randrange(10**9)}", "op": rng.choice(
            ["arm", "led", "beep", "fly", "simulate_press", "button_test", ""]), "eligible": rng.choice(
            [[9], "all", [1.5], None, [True]]), "player": rng.choice([0, 9, -1, 2**70, "1", None, 1.5]),
            "ms": rng.choice([-1, 10**9, "x", float("nan")]), "round_id": rng.choice(["", 5, None, "z" * 500]),
            "on": "yes"}).encode() + b"\n",
        lambda: b'{"type":"cmd","op":"arm"}\n',
        lambda: b'{"type":"cmd","id":' + b"7" * 5000 + b',"op":"status"}\n',
    ]
    return rng.choice(choices)()


def test_capture_socket_fuzz_changes_nothing_and_keeps_the_link(service, raw_client, box, capsys):
    appliance = raw_client()
    assert appliance.hello()["type"] == "welcome"
    appliance.command("arm", "arm", eligible=[1, 3], round_id="q1")
    before = state(appliance, 0)
    rng = random.Random(10)
    on_link = intruders = closed = 0
    for number in range(1, MESSAGES + 1):
        if rng.random() < 0.3:
            appliance.sock.sendall(appliance_junk(rng))
            on_link += 1
        else:
            intruder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            intruder.connect(str(service.settings.capture_socket))
            try:
                intruder.sendall(intruder_line(rng))
                intruder.settimeout(2)
                answer = intruder.recv(65536)  # an error line (then closed), or a close
                closed += b'"error"' in answer or answer == b""
            except (BrokenPipeError, ConnectionResetError):
                closed += 1
            finally:
                intruder.close()
            intruders += 1
        assert state(appliance, number) == before, number  # the appliance still holds the link: nothing moved
    assert service.server.running
    box.press(3, time.monotonic_ns())
    press = appliance.recv_until(lambda m: m.get("event") == "press", limit=5000)
    assert press["player"] == 3 and press["status"] == "won"
    with capsys.disabled():
        print(f"\nCapture-socket fuzz: {MESSAGES} messages ({intruders} from other local clients, {on_link} on the "
              f"appliance's own link), state unchanged after each, the link kept, the next press delivered to "
              f"the appliance")
    assert closed == intruders  # every intruder was answered with an error or closed, none welcomed
