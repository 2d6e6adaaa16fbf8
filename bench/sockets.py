"""Socket.IO connections for harnesses that restart the box under their clients."""

from __future__ import annotations

import gc
import warnings


def connect(sio, url: str, **options) -> None:
    """``sio.connect(url, **options)``, closing what a failed attempt leaves open.

    python-engineio leaves its WebSocket open when the server goes away during the handshake
    (``Client._connect_websocket`` raises "Unexpected recv exception" without closing ``ws``). A harness that
    restarts the box and reconnects in a loop meets that often; the socket is then collected with a
    ResourceWarning, which the suite turns into a failure. The leaked socket is collected here, with that
    warning off, before the failure is raised as a ConnectionError that holds no frame of the attempt.
    """
    failure = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            sio.connect(url, **options)
        except Exception as error:  # any failure of the attempt: reported below without its traceback
            failure = f"{type(error).__name__}: {error}"
            try:
                sio.disconnect()
            except Exception:  # nothing was connected
                pass
        gc.collect()
    if failure is not None:
        raise ConnectionError(failure)


def close(sio) -> None:
    """Disconnect ``sio`` and close its WebSocket, also when the box went away under it.

    When the server resets the connection (a SIGKILLed box), python-engineio's read loop ends on the error and
    marks the client disconnected without closing ``ws`` (``Client._read_loop_websocket`` ends in ``_reset()``);
    ``disconnect()`` then skips the close, and the socket stays open until it is collected, with a
    ResourceWarning.
    """
    try:
        sio.disconnect()
    except Exception:  # a process edge: the box may be dead already
        pass
    ws = getattr(sio.eio, "ws", None)
    if ws is not None:
        ws.shutdown()  # closes the socket, with no closing handshake to a peer that may be gone
