"""The composition of the serving process's services: event store, battles, capture link, live session, desk.

``build_session(settings)`` and ``build_desk(settings, battles)`` are called once, by the web app factory's
default services (``web.sync.build_services``), in the process that serves (the gunicorn worker: threads are
never started before a fork).
"""

from __future__ import annotations

from appliance.config import Settings


def build_session(settings: Settings):
    """A started :class:`Session` over the box's one store (``data_dir/events.sqlite``: battles and
    tournaments, :func:`appliance.store.open_store`), linked to the capture service's socket.

    The question packages (``data_dir/packages``, :func:`build_packages`) are the adapter's
    (``session.adapter.packages``): the host's reading view reads each question's comment and source from them.

    The link connects (and reconnects) in the background; until it does, the pages show "buttons not
    connected" and the host may play "on claps" or with phones.
    """
    from appliance.service.battle_adapter import BattleAdapter
    from appliance.service.battles import Battles
    from appliance.service.capture_link import CaptureLink
    from appliance.service.session import Session
    from appliance.service.timeline import current_boot_id
    from appliance.store import open_store

    battles = Battles(open_store(settings.data_dir))
    packages = build_packages(settings, battles)
    adapter = BattleAdapter(packages=packages, board_answer=settings.board_answer)
    # the boot tells a restart of this process (the same offset) from a power cut (the timeline goes on)
    session = Session(battles, adapter, simulator=settings.simulator, boot_id=current_boot_id())
    link = CaptureLink(settings.capture_socket, on_event=session.on_capture_event,
                       heartbeat_ms=settings.capture_heartbeat_ms, timeout_ms=settings.capture_link_timeout_ms,
                       on_connection=session.on_capture_connection, client_name="appliance")
    session.capture = link
    session.start()
    link.start()
    return session


def build_packages(settings: Settings, battles=None):
    """The box's question packages over ``data_dir/packages``, with the upload limit of the settings; the
    ``battles`` (their setups' ``sources``) say which themes were played."""
    from appliance.packages.archive import MB, Limits
    from appliance.service.packages import QuestionPackages

    return QuestionPackages.in_folder(settings.data_dir / "packages", battles,
                                      limits=Limits(upload_bytes=settings.package_upload_mb * MB))


def link_theme_names(session, desk) -> None:
    """A tournament battle's themes take the names the director types after it was put on the box: «next»
    starting an unnamed theme asks the desk (appliance/service/session.py ``theme_names_for``)."""
    if session is not None and desk is not None and hasattr(session, "command"):
        session.theme_names_for = desk.box_battle_theme_names


def build_desk(settings: Settings, battles=None):
    """The tournament desk over ``data_dir``, listening to ``battles`` (the session's :class:`Battles`, or
    ``None`` on an app without battles): results of linked battles played on this box flow in, and battles that
    ended while no desk listened are recorded now."""
    from appliance.service.tournaments import TournamentDesk

    # One store for battles and tournaments: the battles' own when there are battles, else data_dir's.
    desk = TournamentDesk.open(settings.data_dir, store=getattr(battles, "store", None))
    if battles is not None:
        battles.add_listener(desk.on_battle_event)
        desk.reconcile(battles)
    return desk
