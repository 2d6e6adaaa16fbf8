"""The box's nats-server process dies with the process that started it, and a leftover is handled: ended when it
is this folder's, left alone when its pid is another program's or another folder's server (issue 19)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from appliance.service.rooms import natsconf
from appliance.service.rooms.server import NatsServer, find_binary, is_server_of
from appliance.service.supervision import is_alive

ROOT = Path(__file__).resolve().parents[4]


def _config(folder: Path) -> str:
    return natsconf.hub_config(str(folder / "jetstream"), {"room2": "p2"}, 0, 0, "app", ports_dir=str(folder))


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not is_alive(pid):
            return True
        time.sleep(0.05)
    return False


def _leftover(folder: Path) -> tuple[subprocess.Popen, dict]:
    """A nats-server over ``folder`` as a killed web process used to leave it: its own session, nobody's child."""
    server = NatsServer(folder)
    server.write(_config(folder))
    process = subprocess.Popen([find_binary(), "-c", str(server.config_path)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    server.process = process
    return process, server.wait_ports(10)


def test_a_leftover_server_of_this_folder_is_ended_and_a_new_one_starts(tmp_path):
    leftover, _ = _leftover(tmp_path)
    server = NatsServer(tmp_path)
    try:
        ports = server.start()  # today: the leftover removes its ports file on SIGTERM, then unlink() raised
        assert leftover.wait(timeout=15) == 0 or leftover.returncode is not None
        assert ports["nats"] and server.process.pid != leftover.pid
        assert [p.name for p in tmp_path.glob("*.ports")] == [f"nats-server_{server.process.pid}.ports"]
    finally:
        server.stop()
        if leftover.poll() is None:
            leftover.kill()
            leftover.wait()


def test_a_ports_file_naming_another_process_kills_nothing(tmp_path):
    """A pid reused by another program, and a nats-server of another folder, are not ours to end."""
    other_folder = tmp_path / "other"
    other, _ = _leftover(other_folder)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    mine = tmp_path / "mine"
    server = NatsServer(mine)
    server.write(_config(mine))
    (mine / f"nats-server_{other.pid}.ports").write_text(json.dumps({"nats": ["nats://127.0.0.1:1"]}))
    (mine / f"nats-server_{sleeper.pid}.ports").write_text(json.dumps({"nats": ["nats://127.0.0.1:1"]}))
    try:
        assert not is_server_of(other.pid, server.config_path) and not is_server_of(sleeper.pid, server.config_path)
        ports = server.start()
        assert ports["nats"] != ["nats://127.0.0.1:1"]
        assert other.poll() is None and sleeper.poll() is None  # both still run
    finally:
        server.stop()
        for process in (other, sleeper):
            process.kill()
            process.wait()


STARTER = """
import sys, threading, time
from pathlib import Path
from appliance.service.rooms.server import NatsServer
from appliance.service.rooms import natsconf
folder = Path(sys.argv[1])
server = NatsServer(folder)
server.write(natsconf.hub_config(str(folder / "jetstream"), {}, 0, 0, "app", ports_dir=str(folder)))
def start():  # from a thread that ends at once, as a request thread would: the server must outlive it
    server.start()
    print(server.process.pid, flush=True)
worker = threading.Thread(target=start)
worker.start()
worker.join()
time.sleep(60)
"""


def test_the_server_dies_with_the_process_that_started_it_even_by_kill_9(tmp_path):
    starter = subprocess.Popen([sys.executable, "-c", STARTER, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                               cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True)
    try:
        pid = int(starter.stdout.readline())
        time.sleep(0.5)
        assert is_alive(pid), "the server must outlive the thread that started it"
        starter.send_signal(signal.SIGKILL)
        starter.wait(timeout=10)
        assert _gone_within(pid, 15), "nats-server outlived its starter"  # today: it runs on, in its own session
    finally:
        if starter.poll() is None:
            starter.kill()
        starter.wait()
        starter.stdout.close()
        for path in tmp_path.glob("nats-server_*.ports"):
            leftover = int(path.stem.rsplit("_", 1)[1])
            if is_alive(leftover):
                os.kill(leftover, signal.SIGKILL)


def test_an_external_server_is_really_stopped_before_the_next_start(tmp_path):
    """The box's svoyak-nats.service (``supervise``) follows the file; the web's stop waits for the server to go, so
    a stop and a start (a re-pair, a role change) give a new server, not the old one read back from its ports."""
    import threading

    from appliance.service.rooms.server import supervise

    done = threading.Event()
    supervisor = threading.Thread(target=supervise, args=(tmp_path,), kwargs={"poll_s": 0.1, "stopped": done})
    web = NatsServer(tmp_path, external=True)
    web.write(_config(tmp_path))
    supervisor.start()
    try:
        first = web.start(timeout_s=10)
        old_pid = web._running_pids()[0]
        web.stop()
        assert not is_alive(old_pid)
        web.write(_config(tmp_path))
        second = web.start(timeout_s=10)
        assert web._running_pids() and web._running_pids()[0] != old_pid
        assert second["nats"] and first["nats"]
    finally:
        web.stop()
        done.set()
        supervisor.join(60)
