"""The recorded default Run of each app (issue 49): a page opens on the paper's result.

A Run can take minutes from an empty cache, and a page that opens on empty "Press Run" boxes
shows a new user nothing of the paper. So each app's default Run is run once and what it kept
(:meth:`ExplorerBase.run_state`, e.g. ``self._result``) is committed under
``dashboards/recorded/<slug>.pt`` with the settings it ran at, the date, the commit and how
long it took. An Explorer built at exactly those settings shows that result at once, labelled
as recorded (:func:`recorded_note`); the Run button recomputes it here and the label goes.
At any other settings (or without a record) the page is as before: "press Run".

Records are written by ``python -m icml26.dashboards.app.recorded SLUG...`` (the default
Run, synchronously, in this process; exit status 1 when a Run fails). The same ``torch.save``
format as the claims' cache; ``tests/dashboards/test_recorded_runs.py`` checks that every
app with a Run has a record at today's default settings, that the page shows it, and that a
cheap app's fresh Run gives the same result note.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import os
import subprocess
import sys
import time
from pathlib import Path

import param

#: the committed records, one file per app
RECORD_DIR = Path(__file__).resolve().parents[1] / "recorded"
#: parameters that are no setting of the result (the Run button, the Run counter, the name)
NOT_SETTINGS = {"name", "run_done"}


def record_path(slug: str) -> Path:
    return RECORD_DIR / f"{slug}.pt"


def settings_of(explorer: param.Parameterized) -> str:
    """The explorer's settings as one comparable string: every parameter's value but the
    name, the Run counter and buttons (``param.Event``/``param.Action``)."""
    values = {name: value for name, value in explorer.param.values().items()
              if name not in NOT_SETTINGS
              and not isinstance(explorer.param[name], (param.Event, param.Action))}
    return repr(sorted(values.items()))


def load(explorer, slug: str) -> dict | None:
    """The record of ``slug`` when it was made at the explorer's current settings, else None
    (no record, another setting, or a file that does not load)."""
    path = record_path(slug)
    if not path.exists():
        return None
    import torch

    try:
        record = torch.load(path, weights_only=False)
    except Exception:  # noqa: BLE001 - an unreadable record is no record: the page says Run
        return None
    return record if record.get("settings") == settings_of(explorer) else None


def recorded_note(record: dict) -> str:
    """The label over a recorded result (markdown)."""
    commit = f", commit {record['commit']}" if record.get("commit") else ""
    return (f"**Recorded result of the default Run** (computed {record['date']}{commit}): "
            f"the note and figures below are what that Run found. Press **Run** to recompute "
            f"it here; move a setting and press **Run** to see another.")


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, cwd=RECORD_DIR.parent, timeout=10, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def record(slug: str) -> Path:
    """Run app ``slug``'s default Run here and save its record (raises when the Run fails)."""
    module = importlib.import_module(f"icml26.dashboards.{slug}")
    explorer = module.Explorer(recorded=False)
    start = time.perf_counter()
    explorer.param.trigger("run")  # the Run's watchers run here, synchronously
    wall = time.perf_counter() - start
    if explorer.run_done != 1 or explorer.error_message():
        raise RuntimeError(f"{slug}: the default Run failed: {explorer.error_message()!r}")
    import torch

    RECORD_DIR.mkdir(exist_ok=True)
    path = record_path(slug)
    torch.save({"settings": settings_of(explorer), "state": explorer.run_state(),
                "date": dt.date.today().isoformat(), "commit": _commit(), "wall_s": wall,
                "machine": f"{os.cpu_count()} CPU cores"}, path)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Record apps' default Runs (see the module).")
    parser.add_argument("slugs", nargs="+", help="the apps to record")
    failed = 0
    for slug in parser.parse_args(argv).slugs:
        try:
            path = record(slug)
            print(f"{slug}: {path} ({path.stat().st_size / 1e3:.0f} kB)", flush=True)
        except Exception as e:  # noqa: BLE001 - the others still record
            failed += 1
            print(f"{slug}: FAILED {type(e).__name__}: {e}", file=sys.stderr, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
