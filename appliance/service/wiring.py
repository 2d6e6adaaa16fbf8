"""Builders of the serving process's services that need more than a constructor: the question packages, the
tournament desk, the rooms service, the battles over the store. The one composition root (``web.sync.build_services``) calls them, once,
in the process that serves (the gunicorn worker: threads are never started before a fork).
"""

from __future__ import annotations

from appliance.config import Settings


def build_battles(settings: Settings):
    """Every battle of the box's one store (``data_dir/events.sqlite``: battles and tournaments,
    :func:`appliance.store.open_store`), each rebuilt by replay."""
    from appliance.service.battles import Battles
    from appliance.store import open_store

    return Battles(open_store(settings.data_dir))


def build_packages(settings: Settings, battles=None, tournament_of=None):
    """The box's question packages over ``data_dir/packages``, with the upload limit of the settings; the
    ``battles`` (their setups' ``sources``) say which themes were played, ``tournament_of`` (the desk's
    ``box_battles``) which tournament each battle belongs to."""
    from appliance.packages.archive import MB, Limits
    from appliance.service.packages import QuestionPackages

    return QuestionPackages.in_folder(settings.data_dir / "packages", battles, tournament_of=tournament_of,
                                      limits=Limits(upload_bytes=settings.package_upload_mb * MB))


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


def build_rooms(settings: Settings, session, desk):
    """The rooms service (hub, station or standalone by the box's role) with the live ``session`` and ``desk()``
    (the tournament desk), started: a station that reboots republishes before anyone looks."""
    from appliance.service.rooms.runner import Rooms

    rooms = Rooms(settings, session, desk)
    rooms.start()
    return rooms
