"""The durable event store: an append-only SQLite log of battle events, and its JSON Lines export/import.

Every event is committed (WAL, ``synchronous=FULL``) before anyone is told about it; restarting replays the
log. The formats are documented in docs/battle-log.md.
"""

from appliance.store.errors import LogFormatError, StoreConflictError
from appliance.store.eventlog import STORE_FILE, EventStore, StoredEvent, open_store
from appliance.store.jsonl import FORMAT, FORMAT_VERSION, dump_log, read_log, write_log

__all__ = ["EventStore", "StoredEvent", "STORE_FILE", "open_store", "LogFormatError", "StoreConflictError", "FORMAT", "FORMAT_VERSION",
           "dump_log", "read_log", "write_log"]
