"""Settings: one declaration, four sources in a fixed order, clear errors."""

from __future__ import annotations

import pytest

from appliance import config
from appliance.errors import ConfigError


def test_defaults_then_file_then_environment_then_overrides(tmp_path):
    box_file = tmp_path / "svoyak.toml"
    box_file.write_text('web_port = 80\nlanguage = "en"\nplayer_buttons = [2, 3, 4]\nplayer_leds = [5, 6, 7]\n')
    settings = config.load(
        overrides={"language": "ru"},
        environ={"SVOYAK_WEB_PORT": "8081", "SVOYAK_DATA_DIR": str(tmp_path)},
        config_path=box_file,
    )
    assert settings.web_port == 8081          # environment beats the file
    assert settings.language == "ru"          # overrides beat everything
    assert settings.player_buttons == (2, 3, 4)  # the file beats defaults
    assert settings.capture_socket == tmp_path / "capture.sock"  # derived from data_dir


def test_gpiozero_variable_is_honoured_and_simulator_forces_mock():
    assert config.load(environ={"GPIOZERO_PIN_FACTORY": "rpigpio"}, config_path=None).pin_factory == "rpigpio"
    assert config.load(overrides={"simulator": True}, environ={}, config_path=None).pin_factory == "mock"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"player_leds": (5, 6, 17, 19)}, "pins used twice: GPIO17"),
        ({"buzzer_pin": 40}, "GPIO40 is not a usable BCM pin"),
        ({"player_buttons": (17,), "player_leds": (5,)}, "2 to 4 players"),
        ({"player_leds": (5, 6, 13)}, "one LED per button"),
        ({"web_port": 0}, "outside 1-65535"),
        ({"language": "de"}, "'ru' or 'en'"),
        ({"nonsense": 1}, "unknown setting 'nonsense'"),
        ({"spectators_nice": 20}, "spectators_nice 20 is outside 0-19"),
        ({"spectators_cpus": "2-3"}, "must be auto, all or cores like 2,3"),
    ],
)
def test_bad_settings_are_refused_with_the_reason(overrides, message):
    with pytest.raises(ConfigError, match=message):
        config.load(overrides=overrides, environ={}, config_path=None)


def test_bad_values_name_their_source(tmp_path):
    with pytest.raises(ConfigError, match=r"\$SVOYAK_WEB_PORT"):
        config.load(environ={"SVOYAK_WEB_PORT": "eighty"}, config_path=None)
    broken = tmp_path / "svoyak.toml"
    broken.write_text("web_port = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        config.load(environ={}, config_path=broken)
    broken.write_text("webport = 80\n")
    with pytest.raises(ConfigError, match="unknown settings webport"):
        config.load(environ={}, config_path=broken)
