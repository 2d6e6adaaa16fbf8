"""The capture service's settings are validated at start with a clear error (appliance/config.py)."""

from __future__ import annotations

import pytest

from appliance import config
from appliance.errors import ConfigError
from gpio.devices import PinsUnavailable
from gpio.pins import open_backend
from gpio.sdnotify import Notifier
from gpio.service import CaptureService


def load(**overrides):
    return config.load(overrides=overrides, environ={}, config_path=None)


@pytest.mark.parametrize(("overrides", "message"), [
    ({"pin_factory": "pigpio"}, "pin_factory 'pigpio' must be one of lgpio, rpigpio, mock"),
    ({"hwcheck_output_pin": 17}, "pins used twice: GPIO17"),
    ({"reset_button": 5}, "pins used twice: GPIO5"),
    ({"player_buttons": (17, 27, 22, 23, 26), "player_leds": (5, 6, 13, 19, 16)}, "a box has 2 to 4 players"),
    ({"buzzer_pin": 1}, "GPIO1 is not a usable BCM pin"),
    ({"capture_debounce_ms": 500}, "capture_debounce_ms 500 is outside 0-200"),
    ({"buzzer_ms": 0}, "buzzer_ms 0 is outside 1-5000"),
])
def test_bad_capture_settings_are_refused_clearly(overrides, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load(**overrides)


def test_gpiozero_pin_factory_variable_is_honoured_and_checked():
    assert config.load(environ={"GPIOZERO_PIN_FACTORY": "mock"}, config_path=None).pin_factory == "mock"
    with pytest.raises(ConfigError, match="pin_factory 'native'"):
        config.load(environ={"GPIOZERO_PIN_FACTORY": "native"}, config_path=None)


def test_a_three_player_box_works(settings, tmp_path):
    three = settings.replace(player_buttons=(17, 27, 22), player_leds=(5, 6, 13), capture_socket=tmp_path / "c.sock")
    service = CaptureService(three, backend=open_backend("mock"), notifier=Notifier(environ={}))
    try:
        assert service.capture.status()["players"] == 3 and len(service.hardware.leds) == 3
    finally:
        service.close()


def test_a_busy_pin_is_one_clear_error(settings, tmp_path):
    backend = open_backend("mock")
    from gpiozero import LED

    squatter = LED(settings.buzzer_pin, pin_factory=backend.factory)  # someone else holds the buzzer pin
    try:
        with pytest.raises(PinsUnavailable, match="cannot open the box's pins"):
            CaptureService(settings.replace(capture_socket=tmp_path / "c.sock"), backend=backend,
                           notifier=Notifier(environ={}))
    finally:
        squatter.close()
        backend.close()
