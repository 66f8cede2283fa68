"""Panel fixtures: a clean ``pn.state`` per test and one threaded server for HTTP/UI tests."""

from __future__ import annotations

import socket
import time

import pytest

pn = pytest.importorskip("panel")


@pytest.fixture(scope="session", autouse=True)
def _plotting_extension():
    """Views call ``.opts``, which needs a loaded plotting backend (as in the notebook)."""
    import holoviews as hv

    hv.extension("bokeh")
    pn.extension()


@pytest.fixture(autouse=True)
def _reset_panel_state():
    yield
    pn.state.reset()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_apps(apps: dict, port: int):
    """Serve ``{route: callable}`` on 127.0.0.1 in a thread; returns the server."""
    server = pn.serve(apps, port=port, address="127.0.0.1", show=False, threaded=True,
                      allow_websocket_origin=[f"127.0.0.1:{port}", f"localhost:{port}"])
    deadline = time.time() + 30
    while time.time() < deadline:  # wait until the socket accepts connections
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    return server


@pytest.fixture
def served():
    """``served(apps) -> port``: serve on a free port, stopped after the test."""
    servers = []

    def start(apps: dict) -> int:
        port = free_port()
        servers.append(serve_apps(apps, port))
        return port

    yield start
    for server in servers:
        server.stop()
