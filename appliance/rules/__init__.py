"""The pure rules engines: battle (one game at one buzzer box) and tournament.

Standard library and :mod:`appliance.errors` only: no clock, randomness, I/O, threads or logging.
Time arrives inside events as CLOCK_MONOTONIC nanoseconds.
"""
