"""Panel fixtures: a clean ``pn.state`` per test and threaded servers for HTTP tests."""

from __future__ import annotations

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


@pytest.fixture
def served():
    """``served(apps) -> port``: serve on a free port, stopped after the test."""
    from browser import serve_in_thread

    servers = []

    def start(apps: dict) -> int:
        server, port = serve_in_thread(apps)
        servers.append(server)
        return port

    yield start
    for server in servers:
        try:
            server.stop()
        except RuntimeError as e:  # panel raises when a stop is already under way
            if "already stopping" not in str(e):
                raise
        # Wait for the thread to end: pn.state.reset() (autouse, torn down after this)
        # calls stop() again and panel raises on a thread that is still stopping.
        server.join(timeout=30)
        assert not server.is_alive(), "panel server thread did not stop within 30 s"
