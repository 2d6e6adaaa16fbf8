"""The harnesses' Socket.IO connect and close leave no socket open when the box dies under them (bench/sockets.py).

The servers below behave as a box restarted by the chaos bench does: silent after the WebSocket handshake (a
worker still starting on a loaded machine), or resetting the connection after the client connected.
python-engineio leaves its socket open in both cases; the suite turns the ResourceWarning of that socket into a failure
(``filterwarnings = error``), as CI did on tests/adversarial/test_kills.py: with a bare ``sio.connect`` the first
test fails, with a bare ``sio.disconnect`` the second."""

from __future__ import annotations

import base64
import gc
import hashlib
import socket
import struct
import threading
import time

import pytest
import socketio

from bench.sockets import close, connect

WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def _upgrade(connection: socket.socket) -> None:
    request = b""
    while b"\r\n\r\n" not in request:
        request += connection.recv(4096)
    key = next(line.split(b":", 1)[1].strip() for line in request.split(b"\r\n")
               if line.lower().startswith(b"sec-websocket-key:"))
    accept = base64.b64encode(hashlib.sha1(key + WEBSOCKET_GUID.encode()).digest())
    connection.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                       b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n")


def _text(payload: str) -> bytes:
    data = payload.encode()
    return bytes([0x81, len(data)]) + data  # one unmasked text frame, shorter than 126 bytes


def _silent_after_handshake(listener: socket.socket, served: threading.Event) -> None:
    connection, _ = listener.accept()
    with connection:
        _upgrade(connection)  # then no Engine.IO OPEN packet, as a worker still starting on a loaded machine
        served.wait(timeout=10)


def _reset_after_connecting(listener: socket.socket, served: threading.Event) -> None:
    connection, _ = listener.accept()
    with connection:
        _upgrade(connection)
        connection.sendall(_text('0{"sid":"e","upgrades":[],"pingInterval":25000,"pingTimeout":20000}'))
        connection.recv(4096)  # the client's Socket.IO CONNECT
        connection.sendall(_text('40{"sid":"s"}'))
        time.sleep(0.2)
        # closed with a reset, as the kernel answers for a killed process's socket with unread data
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    served.set()


def test_a_connect_that_times_out_raises_connection_error_and_leaks_no_socket():
    with socket.create_server(("127.0.0.1", 0)) as listener:
        answered = threading.Event()
        server = threading.Thread(target=_silent_after_handshake, args=(listener, answered), daemon=True)
        server.start()
        sio = socketio.Client(reconnection=False, request_timeout=0.5)
        with pytest.raises(ConnectionError):
            connect(sio, f"http://127.0.0.1:{listener.getsockname()[1]}", transports=["websocket"], wait_timeout=2)
        answered.set()
        server.join(timeout=5)
    del sio
    gc.collect()  # a socket left open would be collected here, and its warning fail the test


def test_close_after_the_server_reset_the_connection_leaks_no_socket():
    with socket.create_server(("127.0.0.1", 0)) as listener:
        served = threading.Event()
        server = threading.Thread(target=_reset_after_connecting, args=(listener, served), daemon=True)
        server.start()
        sio = socketio.Client(reconnection=False)
        connect(sio, f"http://127.0.0.1:{listener.getsockname()[1]}", transports=["websocket"], wait_timeout=5)
        server.join(timeout=5)
        assert served.is_set()
        deadline = time.monotonic() + 5
        while sio.eio.state == "connected" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sio.eio.state == "disconnected"  # the read loop saw the server go
        close(sio)
    del sio
    gc.collect()  # the client and its socket collected now, inside this test
