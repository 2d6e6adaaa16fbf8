"""The data directory checked before the web service opens the store (appliance/service/storage.py, web/fault.py)."""

from __future__ import annotations

from appliance import config
from appliance.service import storage
from web.fault import create_fault_app


def settings_for(tmp_path, **values):
    return config.load(overrides={"data_dir": tmp_path / "data", **values}, environ={}, config_path=None)


def test_no_mount_named_a_writable_directory_stores(tmp_path):
    assert storage.check(settings_for(tmp_path)) is None
    assert not (tmp_path / "data" / storage.PROBE_FILE).exists()   # the probe is removed


def test_the_data_partition_not_mounted_is_a_fault(tmp_path):
    fault = storage.check(settings_for(tmp_path, data_mount=str(tmp_path)), is_mount=lambda path: False)
    assert fault is not None and "Раздел данных не подключён" in fault.ru and "not mounted" in fault.en
    assert fault.line().startswith("Раздел данных") and "is not a mount point" in fault.detail


def test_the_data_directory_outside_the_mount_is_a_fault(tmp_path):
    (tmp_path / "mnt").mkdir()
    fault = storage.check(settings_for(tmp_path, data_mount=str(tmp_path / "mnt")), is_mount=lambda path: True)
    assert fault is not None and "outside data_mount" in fault.detail


def test_the_data_directory_on_its_mount_stores(tmp_path):
    assert storage.check(settings_for(tmp_path, data_mount=str(tmp_path)), is_mount=lambda path: True) is None


def test_a_file_where_the_directory_should_be_is_a_fault(tmp_path):
    (tmp_path / "data").write_text("not a directory")
    fault = storage.check(settings_for(tmp_path))
    assert fault is not None and "cannot be written" in fault.en


def test_the_fault_page_answers_every_address_and_starts_nothing(tmp_path):
    fault = storage.check(settings_for(tmp_path, data_mount=str(tmp_path)), is_mount=lambda path: False)
    client = create_fault_app(fault).test_client()
    for path in ("/board", "/host", "/", "/director/", "/play"):
        response = client.get(path)
        assert response.status_code == 503 and response.headers["Retry-After"] == "30"
        page = response.get_data(as_text=True)
        assert page.index("Коробка не может сохранить бой") < page.index("The box cannot store a battle")
    assert client.post("/host/start", data={"pin": "1234"}).status_code == 503   # no battle starts
    css = client.get("/static/css/svoyak.css")
    assert css.status_code == 200                                                 # the page keeps its look
    css.close()
    health = client.get("/healthz")
    assert health.status_code == 503 and "not mounted" in health.get_data(as_text=True)
    assert not (tmp_path / "data" / "events.sqlite").exists()
