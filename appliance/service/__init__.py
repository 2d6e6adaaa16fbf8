"""The imperative shell: commands in, events stored durably, state out; wiring of capture, engine and web."""
