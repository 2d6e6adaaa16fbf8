"""svoyak: the brain of the buzzer box.

- ``appliance.rules``: pure rules engines (battle, tournament) and their data (profiles, formats).
- ``appliance.store``: the append-only event log (SQLite) and its JSON Lines export.
- ``appliance.service``: the imperative shell that wires capture, engine, store and web together.
- ``appliance.config`` and ``appliance.errors``: the one place for settings and the error tree.
"""
