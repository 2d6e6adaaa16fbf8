"""The durable event store: one SQLite file of append-only streams (battles, tournaments), and the battle
log's JSON Lines export/import.

Every command's events are committed together (WAL, ``synchronous=FULL``) before anyone is told about them;
restarting replays the streams. The formats are documented in docs/battle-log.md.
"""

from appliance.store.errors import DuplicateCommandError, LogFormatError, StoreConflictError, StoreFormatError
from appliance.store.eventlog import (BATTLE, STORE_FILE, TOURNAMENT, EventStore, StoredCommand, StoredEvent,
                                      StreamKind, open_store)
from appliance.store.jsonl import FORMAT, FORMAT_VERSION, dump_log, read_log, write_log

__all__ = ["EventStore", "StoredEvent", "StoredCommand", "StreamKind", "BATTLE", "TOURNAMENT", "STORE_FILE",
           "open_store", "LogFormatError", "StoreConflictError", "DuplicateCommandError", "StoreFormatError",
           "FORMAT", "FORMAT_VERSION", "dump_log", "read_log", "write_log"]
