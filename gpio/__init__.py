"""The buzzer capture process: pins, arbiter, LEDs, buzzer, standalone lockout, simulator.

It imports only itself, ``appliance.config`` and ``appliance.errors``; the appliance reaches it over its Unix
socket (docs/capture-protocol.md). Modules: :mod:`gpio.pins` (pin factories with nanosecond ticks),
:mod:`gpio.arbiter` (pure lockout logic), :mod:`gpio.devices` (gpiozero devices), :mod:`gpio.capture` (the core),
:mod:`gpio.server` and :mod:`gpio.commands` (the link), :mod:`gpio.service` (composition root, systemd),
:mod:`gpio.hwcheck`, :mod:`gpio.keyboard` (terminal simulator). Wiring: gpio/WIRING.md.
"""
