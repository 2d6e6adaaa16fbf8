"""Several rooms, one desk: boxes joined through NATS JetStream (docs/rooms.md).

A box is ``standalone`` (today's box: nothing of this package runs), ``hub`` (the desk) or ``station`` (a room).
Each box runs its own ``nats-server`` with JetStream in a domain of its own; a station is a leaf node of the hub.
A station publishes every battle-log event to its own stream ``BOX_<id>``; the hub's ``DESK`` stream sources
every station's stream through the station's domain. Assignments go the other way in a KV bucket per station.

Pure parts: :mod:`.protocol` (subjects, message format), :mod:`.natsconf` (server configuration),
:mod:`.ledger` (the hub's idempotent, in-order apply). The rest is the shell: :mod:`.server` (the nats-server
process), :mod:`.loop` (nats-py's asyncio loop in a thread of its own), :mod:`.station`, :mod:`.hub`,
:mod:`.roles` (role and credentials on disk) and :mod:`.service` (the composition the web process starts).
"""
