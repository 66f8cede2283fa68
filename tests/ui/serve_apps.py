"""Serve the UI tests' apps (:func:`browser.all_apps`) on 127.0.0.1:PORT until terminated.

    python tests/ui/serve_apps.py PORT

Run by the ``app_server`` fixture as a separate process, as ``icml26 serve`` would be.
"""

import signal
import sys

from browser import all_apps

from icml26.dashboards.app import perf

if __name__ == "__main__":
    port = int(sys.argv[1])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    perf.serve(all_apps(), port=port, address="127.0.0.1", show=False,
               allow_websocket_origin=[f"127.0.0.1:{port}", f"localhost:{port}"])
