"""The pin backend seam: every factory's ticks are CLOCK_MONOTONIC integer nanoseconds, exactly."""

from __future__ import annotations

import sys
import time
import types
import weakref

import pytest

from appliance.errors import DegradedModeWarning
from gpio import pins


class FakeLgpioModule(types.ModuleType):
    """Enough of the lgpio module for gpiozero.pins.lgpio to import on a machine without the C library."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return hash(name) & 0xFF


@pytest.fixture
def lgpio_classes(monkeypatch):
    monkeypatch.setitem(sys.modules, "lgpio", FakeLgpioModule("lgpio"))
    sys.modules.pop("gpiozero.pins.lgpio", None)
    pins._lgpio_classes.cache_clear()
    try:
        yield pins._lgpio_classes()
    finally:
        sys.modules.pop("gpiozero.pins.lgpio", None)
        pins._lgpio_classes.cache_clear()


def test_lgpio_pin_passes_the_kernel_timestamp_through_as_integer_nanoseconds(lgpio_classes):
    from gpiozero.pins.lgpio import LGPIOPin

    factory_class, pin_class = lgpio_classes
    seen = []

    def handler(ticks, state):
        seen.append((ticks, state))

    # 2**53 + 1 ns (104 days of uptime): gpiozero's own LGPIOPin would hand on ticks / 1e9, a float that can no
    # longer tell this nanosecond from its neighbour.
    kernel_ns = 2**53 + 1
    for cls in (pin_class, LGPIOPin):
        pin = object.__new__(cls)  # no gpiochip here: only the callback path is exercised
        pin._when_changed = weakref.ref(handler)
        pin._factory = types.SimpleNamespace(realtime_events=False)
        pin._call_when_changed(0, 17, 0, kernel_ns)
    (ours, state), (gpiozeros, _) = seen
    assert ours == kernel_ns and isinstance(ours, int) and state == 0
    assert round(gpiozeros * 1e9) != kernel_ns  # the float path is not exact
    assert factory_class.ticks_diff(kernel_ns + 1_500_000_000, kernel_ns) == 1.5
    assert abs(factory_class.ticks() - time.monotonic_ns()) < 10**9  # same clock as time.monotonic_ns()


def test_timed_mock_pin_reports_explicit_and_current_timestamps():
    backend = pins.open_backend("mock")
    try:
        pin = backend.factory.pin(22)
        pin.function = "input"
        pin.pull = "up"
        seen = []

        def handler(ticks, state):
            seen.append((ticks, state))

        pin.when_changed = handler
        pin.drive_low(t_ns=123)
        before = time.monotonic_ns()
        pin.drive_high()
        assert seen[0] == (123, False)
        assert seen[1][1] is True and before <= seen[1][0] <= time.monotonic_ns()
        assert backend.precision == "mock" and backend.is_mock and backend.degraded == []
    finally:
        backend.close()


def test_jumpered_mock_output_drives_its_input_with_a_timestamp():
    backend = pins.open_backend("mock")
    try:
        factory = backend.factory
        target = factory.pin(17)
        target.function = "input"
        target.pull = "up"
        seen = []

        def handler(ticks, state):
            seen.append((ticks, state))

        target.when_changed = handler
        jumper = factory.pin(25, pin_class=pins.JumperedMockPin, input_pin=target)
        jumper.function = "output"
        jumper.state = True
        jumper.state = False
        assert seen[-1][1] is False and seen[-1][0] > 0
    finally:
        backend.close()


def test_no_gpio_at_all_is_one_clear_error(monkeypatch):
    def no_lgpio():
        raise ImportError("No module named 'lgpio'")

    def no_rpigpio():
        raise ImportError("No module named 'RPi'")

    monkeypatch.setattr(pins, "_lgpio_classes", no_lgpio)
    monkeypatch.setattr(pins, "_rpigpio_factory_class", no_rpigpio)
    with pytest.raises(pins.PinFactoryUnavailable, match="lgpio: ImportError.*rpigpio: ImportError.*--simulator"):
        pins.open_backend("lgpio")


def test_falling_back_to_rpigpio_warns_and_reports_callback_precision(monkeypatch):
    def no_lgpio():
        raise OSError("can't open gpiochip")

    monkeypatch.setattr(pins, "_lgpio_classes", no_lgpio)
    monkeypatch.setattr(pins, "_rpigpio_factory_class", lambda: pins.TimedMockFactory)
    with pytest.warns(DegradedModeWarning) as warned:
        backend = pins.open_backend("lgpio")
    try:
        assert backend.name == "rpigpio" and backend.precision == "callback"
        assert any("fell back from lgpio: OSError" in reason for reason in backend.degraded)
        assert any("callback thread" in str(w.message) for w in warned)
    finally:
        backend.close()


def test_lgpio_workdir_moves_out_of_an_unwritable_cwd(tmp_path, monkeypatch):
    readonly = tmp_path / "ro"
    readonly.mkdir()
    runtime = tmp_path / "run"
    runtime.mkdir()
    monkeypatch.chdir(readonly)
    monkeypatch.setattr(pins.os, "access", lambda path, mode: str(path) != str(readonly))
    assert pins.prepare_lgpio_workdir([runtime]) == runtime
    assert pins.Path.cwd() == runtime
    monkeypatch.chdir(readonly)
    with pytest.raises(pins.PinFactoryUnavailable, match="RuntimeDirectory"):
        pins.prepare_lgpio_workdir([readonly])


def test_pre_5_7_kernel_realtime_stamps_are_converted_to_monotonic(lgpio_classes):
    _, pin_class = lgpio_classes
    seen = []

    def handler(ticks, state):
        seen.append(ticks)

    pin = object.__new__(pin_class)
    pin._when_changed = weakref.ref(handler)
    pin._factory = types.SimpleNamespace(realtime_events=True)
    edge_monotonic = time.monotonic_ns() - 5_000_000
    edge_realtime = edge_monotonic + (time.time_ns() - time.monotonic_ns())
    pin._call_when_changed(0, 17, 0, edge_realtime)
    assert abs(seen[0] - edge_monotonic) < 1_000_000  # the offset is read twice: equal within the call's time
    assert pins.kernel_event_clock("4.19.118-v7+") == "realtime"
    assert pins.kernel_event_clock("6.12.1-v8-16k+") == "monotonic"


class FakeRPiGPIO(types.ModuleType):
    """Enough of RPi.GPIO for gpiozero.pins.rpigpio to import; ``input`` reads the line as low (pressed)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return hash(name) & 0xFF

    @staticmethod
    def input(number):
        return 0


def test_rpigpio_fallback_stamps_edges_with_monotonic_ns_in_the_callback(monkeypatch):
    rpi = types.ModuleType("RPi")
    rpi.GPIO = FakeRPiGPIO("RPi.GPIO")
    monkeypatch.setitem(sys.modules, "RPi", rpi)
    monkeypatch.setitem(sys.modules, "RPi.GPIO", rpi.GPIO)
    sys.modules.pop("gpiozero.pins.rpigpio", None)
    pins._rpigpio_factory_class.cache_clear()
    try:
        from gpiozero.pins.rpigpio import RPiGPIOPin

        factory = object.__new__(pins._rpigpio_factory_class())  # no Pi here: only the ticks path
        pin = object.__new__(RPiGPIOPin)
        pin._factory = factory
        pin._number, pin._pwm = 17, None
        seen = []

        def handler(ticks, state):
            seen.append((ticks, state))

        pin._when_changed = weakref.ref(handler)
        before = time.monotonic_ns()
        pin._call_when_changed(17)  # what RPi.GPIO's event thread calls: a channel, no timestamp
        (ticks, state), = seen
        assert isinstance(ticks, int) and before <= ticks <= time.monotonic_ns() and not state
    finally:
        sys.modules.pop("gpiozero.pins.rpigpio", None)
        pins._rpigpio_factory_class.cache_clear()


def test_hidden_proc_gets_a_hint_about_the_unit(monkeypatch):
    def hidden_proc():
        raise FileNotFoundError(2, "No such file or directory", "/proc/cpuinfo")

    monkeypatch.setattr(pins, "_lgpio_classes", hidden_proc)
    monkeypatch.setattr(pins, "_rpigpio_factory_class", hidden_proc)
    with pytest.raises(pins.PinFactoryUnavailable, match="ProcSubset=pid"):
        pins.open_backend("lgpio")


def test_chip_info_ioctl_number_is_linux_gpio_get_chipinfo():
    # linux/gpio.h: #define GPIO_GET_CHIPINFO_IOCTL _IOR(0xB4, 0x01, struct gpiochip_info), a 68-byte struct.
    assert pins._GPIO_GET_CHIPINFO_IOCTL == 0x8044B401


def _fake_chips(tmp_path, labels):
    for number in labels:
        (tmp_path / f"gpiochip{number}").touch()
    return lambda path: labels[int(path.rsplit("gpiochip", 1)[1])]


@pytest.mark.parametrize("labels, found", [
    ({0: "pinctrl-bcm2835", 1: "raspberrypi-exp-gpio"}, 0),                        # Pi 3, Debian 6.12
    ({0: "raspberrypi-exp-gpio", 1: "pinctrl-bcm2711"}, 1),                        # Pi 4: not chip 0
    ({0: "pinctrl-rp1", 10: "gpio-brcmstb@107d508500", 11: "gpio-brcmstb@107d517c00"}, 0),  # Pi 5 since 6.6.47
    ({2: "gpio-brcmstb@107d508500", 4: "pinctrl-rp1", 10: "gpio-brcmstb@107d517c00"}, 4),   # Pi 5 before
])
def test_header_chip_is_found_by_label_never_by_number(tmp_path, labels, found):
    assert pins.find_header_chip(dev=tmp_path, read_label=_fake_chips(tmp_path, labels)) == found


def test_an_explicit_chip_label_wins_and_a_missing_one_lists_what_is_there(tmp_path):
    read = _fake_chips(tmp_path, {0: "9030000.pl061", 1: "pinctrl-bcm2835"})
    assert pins.find_header_chip("9030000.pl061", dev=tmp_path, read_label=read) == 0
    with pytest.raises(pins.PinFactoryUnavailable, match=r"'pinctrl-rp1'.*gpiochip0 '9030000.pl061', "
                                                         r"gpiochip1 'pinctrl-bcm2835'.*gpiodetect"):
        pins.find_header_chip("pinctrl-rp1", dev=tmp_path, read_label=read)
    with pytest.raises(pins.PinFactoryUnavailable, match="no .*/gpiochip"):
        pins.find_header_chip(dev=tmp_path / "empty", read_label=read)


def test_lgpio_opens_the_chip_found_by_label(monkeypatch, tmp_path):
    opened = []

    class Factory(pins.TimedMockFactory):
        realtime_events = False

        def __init__(self, chip):
            opened.append(chip)
            super().__init__()

    monkeypatch.setattr(pins, "_lgpio_classes", lambda: (Factory, None))
    monkeypatch.setattr(pins, "find_header_chip", lambda label: {"": 0, "pinctrl-bcm2711": 1}[label])
    backend = pins.open_backend("lgpio", "pinctrl-bcm2711")
    backend.close()
    assert opened == [1] and backend.name == "lgpio"


def test_unreadable_chips_are_named_in_the_error(tmp_path):
    (tmp_path / "gpiochip0").touch()

    def denied(path):
        raise PermissionError(13, "Permission denied", path)

    with pytest.raises(pins.PinFactoryUnavailable, match="gpiochip0: Permission denied"):
        pins.find_header_chip(dev=tmp_path, read_label=denied)


def test_a_mainline_device_tree_without_a_revision_gets_one_from_its_model(tmp_path):
    from gpiozero.exc import PinUnknownPi

    def gpiozero_finds_none():
        raise PinUnknownPi("unable to locate Pi revision in /proc/device-tree or /proc/cpuinfo")

    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 4 Model B Rev 1.4\0")
    assert pins.read_revision(gpiozero_finds_none, model) == 0xB03114
    assert pins.read_revision(lambda: 0xA02082, model) == 0xA02082  # gpiozero's own answer wins
    model.write_bytes(b"linux,dummy-virt\0")
    with pytest.raises(pins.PinFactoryUnavailable, match="'linux,dummy-virt' is no Raspberry Pi"):
        pins.read_revision(gpiozero_finds_none, model)
    with pytest.raises(PinUnknownPi):
        pins.read_revision(gpiozero_finds_none, tmp_path / "missing")


def test_every_model_maps_to_a_40_pin_board_gpiozero_knows():
    from gpiozero.pins.pi import PiBoardInfo

    seen = {model: PiBoardInfo.from_revision(revision) for model, revision in pins.MODEL_REVISIONS}
    assert {model: info.model for model, info in seen.items()} == {
        "Raspberry Pi 3 Model B Plus": "3B+", "Raspberry Pi 3 Model A Plus": "3A+", "Raspberry Pi 3 Model B": "3B",
        "Raspberry Pi Zero 2 W": "Zero2W", "Raspberry Pi Compute Module 4": "CM4", "Raspberry Pi 400": "400",
        "Raspberry Pi 4 Model B": "4B", "Raspberry Pi 5": "5B"}
    for info in seen.values():
        assert "J8" in info.headers and len(info.headers["J8"].pins) == 40
