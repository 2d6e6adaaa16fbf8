"""``svoyak serve``: the web server alone (the box's systemd unit runs this).

gunicorn with the gthread worker: one worker (the session, its timers and the capture link live in one
process), many threads (each WebSocket holds one: 30 scoreboards, phones, the host). Not Werkzeug's dev
server. The worker builds the app (no preload: threads must not cross a fork) and then tells systemd
READY=1 and pings its watchdog while the session is healthy.

One web server per data directory (issue 19): two servers over one store would each keep their own session and
timers and store commands beside each other. ``data_dir/server.lock`` is held with ``flock`` from before the
identity is read until the process ends (``svoyak run`` takes it before it starts its capture); a second server
refuses to start, naming the process that holds it, and a stale holder (gone, or orphaned: its starter gone) is
taken over, as the capture's lock does (gpio/lock.py). gunicorn's worker inherits the descriptor, so the lock is
held while the process that writes the store lives.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import appliance.words as words
from appliance.errors import SvoyakError
from gpio.lock import DirectoryLock

DEFAULT_THREADS = 100
# Connections the worker holds at once (gunicorn's default, 1000, stops accepting beyond it: a thousand phones
# keeping their page loads alive would keep the host's tablet out). docs/spectators.md.
WORKER_CONNECTIONS = 4000
SWITCH_INTERVAL_S = 0.0005


def add_arguments(parser) -> None:
    parser.add_argument("--host", help="address to bind (setting web_host)")
    parser.add_argument("--port", type=int, help="TCP port (setting web_port)")
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS, help="worker threads (one per WebSocket)")
    parser.add_argument("--simulator", action="store_true", default=None, help="show the on-screen buzzers")


SERVER_LOCK = "server.lock"


class ServerLocked(SvoyakError, RuntimeError):
    """Another web server, alive, serves this data directory."""


def _short(command: str) -> str:
    """``python -m svoyak.cli serve --port 8080`` as ``svoyak serve --port 8080``, at most 60 characters."""
    parts = command.split()
    for index, part in enumerate(parts):
        if part == "svoyak.cli" or part.endswith("/svoyak") or part == "svoyak":
            parts = ["svoyak", *parts[index + 1:]]
            break
    text = " ".join(parts)
    return text if len(text) <= 60 else text[:57] + "..."


class ServerLock(DirectoryLock):
    """``data_dir/server.lock``: held by the web server's process (and, inherited, its gunicorn worker)."""

    error = ServerLocked

    def refusal(self, pid, command: str) -> str:
        def holder(language: str) -> str:
            process = words.word("refusal.serve.holder", language, pid=pid)
            return f"{process}, {_short(command)}" if command else process

        return _both("refusal.serve.locked", lambda language: {"dir": self.path.parent, "holder": holder(language)})

    def stuck(self, pid) -> str:
        return _both("refusal.serve.stuck", lambda language: {"pid": pid, "path": self.path})


def _both(key: str, params) -> str:
    """A console line in every language at once («… / …»): a refusal printed before any page or setting speaks."""
    return " / ".join(words.word(key, language, **params(language)) for language in words.LANGUAGES)


def hold_data_dir(settings) -> ServerLock:
    """Take ``server.lock`` of the settings' data directory for the life of this process (keep the result);
    raises :class:`ServerLocked` if a live server holds it."""
    lock = ServerLock(Path(settings.data_dir) / SERVER_LOCK)
    lock.acquire()
    return lock


def settings_from(args):
    from appliance import config

    overrides = {}
    if getattr(args, "host", None):
        overrides["web_host"] = args.host
    if getattr(args, "port", None):
        overrides["web_port"] = args.port
    if getattr(args, "simulator", None):
        overrides["simulator"] = True
    return config.load(overrides=overrides)


def serve(settings, threads: int = DEFAULT_THREADS, on_ready=None, fault=None) -> int:
    """Run gunicorn (gthread, 1 worker) serving :func:`web.create_app` until a signal stops it.

    ``fault`` (a :class:`appliance.service.storage.StorageFault`): the data directory cannot store a battle;
    serve :func:`web.fault.create_fault_app` instead, with no session and no store.
    """
    from gunicorn.app.base import BaseApplication

    from appliance.service.notify import Notifier, systemd_environment

    notify_socket, watchdog_usec = systemd_environment(pop=True)

    class Server(BaseApplication):
        def load_config(self) -> None:
            self.cfg.set("bind", [f"{settings.web_host}:{settings.web_port}"])
            self.cfg.set("workers", 1)
            self.cfg.set("worker_class", "gthread")
            self.cfg.set("threads", threads)
            self.cfg.set("worker_connections", WORKER_CONNECTIONS)
            self.cfg.set("timeout", 30)
            self.cfg.set("graceful_timeout", 5)
            self.cfg.set("keepalive", 5)
            self.cfg.set("accesslog", None)
            self.cfg.set("control_socket_disable", True)  # no admin socket in $HOME on the box
            self.cfg.set("post_fork", post_fork)
            self.cfg.set("post_worker_init", post_worker_init)

        def load(self):
            if fault is not None:
                from web.fault import create_fault_app

                return create_fault_app(fault)
            from web import create_app

            return create_app(settings)

    def post_fork(arbiter, worker) -> None:
        # A worker whose master is gone (``kill -9`` of ``svoyak serve`` or ``svoyak run``) ends at once. gunicorn's
        # own check ("Parent changed") only stops accepting and then waits for every open request, and a
        # WebSocket is a request that never ends: the orphan kept serving the open pages and storing their
        # commands beside the next server. SIGKILL, not a graceful path: each command is one SQLite
        # transaction (synchronous=FULL), so the store is whole at any instant, and a client resends what was
        # not acknowledged (docs/socketio-events.md). appliance/service/supervision.py says why this way.
        from appliance.service.supervision import die_with_parent

        die_with_parent(worker.ppid, signal.SIGKILL)

    def post_worker_init(worker) -> None:
        # One writer thread per WebSocket wakes after each update; with the default 5 ms GIL switch interval a
        # busy thread (the capture link's reader) can keep a woken writer waiting that long. Single-scoreboard
        # runs of bench/bench_web.py: press -> DOM median about 6 ms with the default, 5 ms with 0.5 ms.
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        notifier = Notifier(notify_socket)
        if fault is not None:
            # Serving the fault page is this process's whole job: healthy while it answers.
            notifier.send("READY=1\nSTATUS=cannot store a battle: " + fault.detail)
            notifier.start_watchdog(watchdog_usec, lambda: True)
        else:
            hub = worker.wsgi.extensions["svoyak.hub"]
            notifier.send("READY=1\nSTATUS=serving on port %d" % settings.web_port)
            notifier.start_watchdog(watchdog_usec, hub.session.is_healthy)
        if on_ready is not None:
            on_ready()

    sys.argv = sys.argv[:1]  # gunicorn parses sys.argv; our flags are not its
    Server().run()
    return 0


def describe(settings) -> str:
    """The URLs and PIN a person needs, for the console."""
    from appliance.service.identity import load_or_create

    identity = load_or_create(settings)
    shown = "127.0.0.1" if settings.web_host in ("0.0.0.0", "::") else settings.web_host
    base = f"http://{shown}:{settings.web_port}"
    lines = [
        f"svoyak: box {identity.box_name}, host PIN {identity.host_pin}, director PIN {identity.director_pin}",
        f"  host page   {base}/host",
        f"  scoreboard  {base}/board",
        f"  watch       {base}/watch",
        f"  phones      {base}/play   (players' fallback buzzers)",
        f"  director    {base}/director/",
    ]
    if settings.simulator:
        lines.append(f"  simulator   {base}/sim   (keys 1-4 press the players' buttons)")
    return "\n".join(lines)


def run(args) -> int:
    from appliance.service import storage

    settings = settings_from(args)
    fault = storage.check(settings)
    if fault is not None:
        # No identity read or made: it would land on the wrong file system. The pages say what is wrong.
        print(f"svoyak: {fault.line()}", file=sys.stderr, flush=True)
        return serve(settings, threads=args.threads, fault=fault)
    lock = hold_data_dir(settings)  # before the identity is read or made: one server per data directory
    try:
        print(describe(settings), flush=True)
        return serve(settings, threads=args.threads)
    finally:
        lock.release()
