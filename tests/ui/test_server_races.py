"""The server under concurrent work: page loads while a Run computes on a worker thread.

Panel snapshots ``sys.modules`` around every new session (``panel.io.reload.record_modules``),
so a Run that registered and removed modules in the process-wide ``sys.modules`` from a worker
thread could make a page load fail with ``KeyError`` (HTTP 500). EvoClaw's Run imports and runs
generated packages thousands of times; its modules must live in a private namespace.

The race is rare (about 1 load in 100 during a Run), so this end-to-end test may pass by luck
with the old import hook; the deterministic detector is
``tests/test_evoclaw.py::test_in_process_runner_never_touches_the_process_wide_import_state``
(fails on the old code: the generated modules appear in ``sys.modules``).
"""

from __future__ import annotations

import re
import threading
import urllib.error
import urllib.request

import pytest
from browser import serve_in_thread

from icml26.dashboards import evoclaw as evoclaw_app
from icml26.dashboards.app.index import create_index

pytestmark = pytest.mark.ui

LOADS = 200


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


def test_index_answers_every_load_during_evoclaw_runs():
    """200 loads of the index while evoclaw Runs (each on fresh packages, so their tests are
    really imported and run, not read from the oracle's memo) go on in the same process on
    another thread: every load answers 200."""
    server, port = serve_in_thread({"/": create_index})
    explorer = evoclaw_app.Explorer(n_repos=2, trajectories=100)
    stop, runs, states, failures = threading.Event(), [], [], []

    def keep_running():
        seed = 5000  # seeds no other test uses: fresh oracles, so every Run imports modules
        while not stop.is_set():
            explorer.seed = seed
            done = explorer.run_done
            explorer.param.trigger("run")
            if explorer.run_done != done:
                states.append(int(re.search(r"(\d+) distinct code states",
                                            explorer.result_note()).group(1)))
            else:
                failures.append(explorer.error_message())
            runs.append(seed)
            seed += 1

    worker = threading.Thread(target=keep_running, daemon=True)
    worker.start()
    try:
        statuses = [_status(f"http://127.0.0.1:{port}/") for _ in range(LOADS)]
    finally:
        stop.set()
        worker.join(timeout=120)
        server.stop()
    assert not failures, failures
    assert len(runs) >= 2 and all(n > 0 for n in states), (runs, states)
    bad = [s for s in statuses if s != 200]
    assert not bad, f"{len(bad)}/{LOADS} index loads failed during Runs: {sorted(set(bad))}"
