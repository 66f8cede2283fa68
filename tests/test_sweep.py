"""``icml26 sweep`` on Dask: seeds parsing, the Wilson interval, a LocalCluster sweep (rows
once, resumable), a task that raises, a worker killed mid-sweep, a real remote cluster
(``dask scheduler`` + ``dask worker`` subprocesses) against a local run, bad input, the hold
rate column of ``icml26 claims``, the robustness page without a browser, and concurrent
writers to the file cache.

Most tests sweep a tiny fake task (:func:`fake_claims`) so they take seconds; the remote test
runs the real ``recruitment`` claims (a few seconds per seed). The fake tasks live in this
module, which the LocalCluster's worker processes import (they start with this process's
``sys.path``).
"""

from __future__ import annotations

import json
import math
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from icml26 import papers, sweep
from icml26.claims import Claim
from icml26.dashboards.app import cli

PAPERS = ["recruitment", "promotion"]  # built papers; the fake task never runs their code
ROOT = Path(__file__).resolve().parents[1]
DASK = Path(sys.executable).with_name("dask")


def fake_claims(paper: str, seed: int, scale: str, sleep: float = 0.0) -> list[Claim]:
    """Two claims: ``always`` holds on every seed, ``even`` only on even seeds."""
    time.sleep(sleep)
    return [Claim(paper, "always", "holds on every seed", 1.0, ">=", 1.0, True, role="check",
                  unit="each"),
            Claim(paper, "even", "holds on even seeds", float(seed % 2 == 0), ">=", 1.0, False,
                  role="check", unit="each")]


def slow_claims(paper: str, seed: int, scale: str) -> list[Claim]:
    return fake_claims(paper, seed, scale, sleep=0.8)


def raising_claims(paper: str, seed: int, scale: str) -> list[Claim]:
    if seed == 3:
        raise FloatingPointError("NaN loss at this setting")
    return fake_claims(paper, seed, scale)


@pytest.fixture(scope="module")
def client():
    c = sweep.connect(workers=2, dashboard=None)
    yield c
    sweep.close(c)


def keys(df) -> list[tuple]:
    return list(zip(df.paper, df.claim, df.seed))


# --------------------------------------------------------------------------- input
@pytest.mark.parametrize("text, seeds", [("0:4", [0, 1, 2, 3]), ("3,5,8", [3, 5, 8]),
                                         ("7", [7]), ("2,2,1", [2, 1]), (" 10:12 ", [10, 11])])
def test_parse_seeds(text, seeds):
    assert sweep.parse_seeds(text) == seeds


@pytest.mark.parametrize("text, message", [("5:5", "empty"), ("6:2", "empty"),
                                           ("-1:3", ">= 0"), ("3,-2", ">= 0"),
                                           ("a:b", "A:B"), ("1:2:3", "A:B"), ("", "A:B")])
def test_parse_seeds_rejects(text, message):
    with pytest.raises(ValueError, match=message):
        sweep.parse_seeds(text)


def test_wilson_interval():
    lo, hi = sweep.wilson(0, 10)
    assert lo == 0 and hi == pytest.approx(0.27753, abs=1e-4)
    lo, hi = sweep.wilson(32, 32)
    assert hi == 1 and lo == pytest.approx(0.89282, abs=1e-4)
    lo, hi = sweep.wilson(5, 10)  # symmetric about 1/2
    assert lo == pytest.approx(1 - hi) and lo == pytest.approx(0.23659, abs=1e-4)
    assert all(math.isnan(v) for v in sweep.wilson(0, 0))


# --------------------------------------------------------------------------- local sweeps
def test_local_sweep_writes_each_row_once_and_resumes(client, tmp_path):
    plan = sweep.plan(PAPERS, "0:6", out=tmp_path)
    assert len(plan.todo) == 12 and plan.done == 0
    seen = []
    result = sweep.Sweep(plan, client, fake_claims).collect(
        on_task=lambda p, s, rows: seen.append((p, s)))
    assert (result.completed, result.failed, result.written) == (12, 0, 24)
    assert sorted(seen) == sorted(plan.todo)
    df = sweep.read(tmp_path)
    assert list(df.columns) == list(sweep.COLUMNS)
    assert len(df) == 24 and len(set(keys(df))) == 24 and df.error.isna().all()
    summary = {(c["paper"], c["claim"]): c for c in sweep.summarize(df)["claims"]}
    assert (summary["recruitment", "always"]["k"], summary["recruitment", "always"]["n"]) == (6, 6)
    assert summary["promotion", "even"]["failing_seeds"] == [1, 3, 5]
    assert summary["promotion", "even"]["lo"] < 0.5 < summary["promotion", "even"]["hi"]
    # resumable: nothing left for the same seeds, only the new ones for a longer range
    assert sweep.plan(PAPERS, "0:6", out=tmp_path).todo == []
    more = sweep.plan(PAPERS, "0:8", out=tmp_path)
    assert more.todo == [(p, s) for p in PAPERS for s in (6, 7)] and more.done == 12
    sweep.Sweep(more, client, fake_claims).collect()
    assert len(sweep.read(tmp_path)) == 32
    # recomputing seeds already there writes no duplicate rows
    again = sweep.plan(["recruitment"], "0:2", out=tmp_path, resume=False)
    assert sweep.Sweep(again, client, fake_claims).collect().written == 0
    assert len(sweep.read(tmp_path)) == 32 and len(set(keys(sweep.read(tmp_path)))) == 32


def test_tasks_run_in_the_order_asked(tmp_path):
    """Paper by paper, seed by seed, on one worker: a sweep stopped early has whole papers
    done. (Mutation, seen on a real sweep: keys of one task group per paper made the scheduler
    send every paper's first seeds to the workers at once, 4 papers' seeds 2-5 before one
    paper's seed 9.)"""
    plan = sweep.plan(["recruitment", "promotion", "place_fields"], "0:5", out=tmp_path)
    one = sweep.connect(workers=1, dashboard=None)
    try:
        done = []
        sweep.Sweep(plan, one, slow_claims).collect(on_task=lambda p, s, rows: done.append((p, s)))
    finally:
        sweep.close(one)
    assert done == plan.todo


def test_a_task_that_raises_is_a_failed_row_and_the_sweep_goes_on(client, tmp_path):
    plan = sweep.plan(["recruitment"], "0:6", out=tmp_path)
    result = sweep.Sweep(plan, client, raising_claims).collect()
    assert (result.completed, result.failed) == (6, 1)
    assert "FloatingPointError: NaN loss" in result.errors[0]
    df = sweep.read(tmp_path)
    failed = df[df.error.notna()]
    assert list(failed.seed) == [3] and list(failed.claim) == [""] and not failed.holds.any()
    assert sorted(set(df.seed[df.error.isna()])) == [0, 1, 2, 4, 5]
    assert sweep.summarize(df)["failed_tasks"][0]["seed"] == 3
    # the failed seed is run again on resume; its success replaces the error row
    retry = sweep.plan(["recruitment"], "0:6", out=tmp_path)
    assert retry.todo == [("recruitment", 3)]
    sweep.Sweep(retry, client, fake_claims).collect()
    df = sweep.read(tmp_path)
    assert df.error.isna().all() and len(df) == 12


def test_cli_exit_status_counts_failed_tasks(tmp_path, capsys):
    rc = cli.main(["sweep", "recruitment", "--seeds", "2,3,4", "--workers", "1", "--out",
                   str(tmp_path), "--task", "test_sweep:raising_claims", "--no-progress",
                   "--json"])
    captured = capsys.readouterr()
    assert rc == 1
    summary = json.loads(captured.out)
    assert summary["failed_tasks"][0]["seed"] == 3
    assert {(c["claim"], c["k"], c["n"]) for c in summary["claims"]} == {("always", 2, 2),
                                                                         ("even", 2, 2)}
    assert "1 failed" in captured.err and "FAILED: recruitment seed 3" in captured.err


def test_a_worker_killed_mid_sweep_loses_and_duplicates_nothing(client, tmp_path):
    plan = sweep.plan(["recruitment"], "0:10", out=tmp_path)
    killed = []

    def kill_one(paper, seed, rows):
        if not killed:  # both workers are busy: 9 tasks remain
            pid = sorted(client.run(os.getpid).values())[0]
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    result = sweep.Sweep(plan, client, slow_claims).collect(on_task=kill_one)
    assert killed and result.failed == 0 and result.completed == 10
    with pytest.raises(ProcessLookupError):
        os.kill(killed[0], 0)  # really gone
    df = sweep.read(tmp_path)
    assert sorted(keys(df)) == sorted(("recruitment", c, s) for s in range(10)
                                      for c in ("always", "even"))
    client.wait_for_workers(2, timeout=60)  # the nanny restarted it


# --------------------------------------------------------------------------- remote cluster
def test_remote_cluster_gives_the_rows_of_a_local_run(client, tmp_path, capsys):
    """``dask scheduler`` and ``dask worker`` as processes of their own; the real claims."""
    file = tmp_path / "scheduler.json"
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])}
    procs = [subprocess.Popen([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0",
                               "--no-dashboard", "--scheduler-file", str(file)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.time() + 60
        while not file.exists() and time.time() < deadline:
            time.sleep(0.2)
        address = json.loads(file.read_text())["address"]
        procs.append(subprocess.Popen([str(DASK), "worker", address, "--nthreads", "1",
                                       "--no-dashboard"], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        rc = cli.main(["sweep", "recruitment", "--seeds", "0,1", "--scheduler", address,
                       "--out", str(tmp_path / "remote"), "--no-progress"])
        assert rc == 0
        out = capsys.readouterr().out
        assert "greedy_exact" in out and "2/2" in out
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            p.wait(timeout=30)
    local = sweep.plan(["recruitment"], "0,1", out=tmp_path / "local")
    sweep.Sweep(local, client).collect()
    remote_df, local_df = (sweep.read(tmp_path / d).sort_values(["seed", "claim"])
                           .reset_index(drop=True) for d in ("remote", "local"))
    assert len(remote_df) >= 2 * 5 and remote_df.error.isna().all()
    assert keys(remote_df) == keys(local_df)
    for a, b in zip(remote_df.measured, local_df.measured):  # deterministic per seed
        assert a == b or (math.isnan(a) and math.isnan(b))
    assert list(remote_df.holds) == list(local_df.holds)


# --------------------------------------------------------------------------- bad input
def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("argv, message", [
    (["nosuch", "--seeds", "0:2"], "unknown paper 'nosuch'"),
    (["{planned}", "--seeds", "0:2"], "planned, not built"),
    (["recruitment", "--seeds", "4:4"], "empty range"),
    (["recruitment", "--seeds=-3:2"], ">= 0"),
    (["recruitment", "--seeds", "x"], "A:B"),
    (["recruitment", "--workers", "0"], "--workers must be >= 1"),
    (["recruitment", "--scheduler", "tcp://127.0.0.1:{port}", "--timeout", "2"],
     "cannot reach the Dask scheduler"),
    (["recruitment", "--out", "{file}/sub"], "is not a folder"),
], ids=["unknown-paper", "planned-paper", "empty-seeds", "negative-seed", "bad-seeds",
        "no-workers", "unreachable-scheduler", "unwritable-out"])
def test_bad_input_is_one_line_and_writes_nothing(argv, message, tmp_path, capsys):
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder")
    out = tmp_path / "out"
    planned = next((p.slug for p in papers.PAPERS if not p.built), None)
    if "{planned}" in argv and planned is None:
        pytest.skip("every paper in the registry is built")
    argv = [a.format(port=_free_port(), file=a_file, planned=planned) for a in argv]
    if "--out" not in argv:
        argv += ["--out", str(out)]
    rc = cli.main(["sweep", *argv, "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1 and message in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]  # nothing written


# --------------------------------------------------------------------------- claims column
def test_claims_show_the_committed_estimate_not_a_local_sweep(tmp_path, monkeypatch, capsys):
    """``icml26 claims`` shows each claim's estimate over the committed seeds (what the status
    rests on); a local sweep dataset (``icml26 sweep`` prints its own summary) changes
    nothing in the table (it had a "held (sweep)" column before issue 44)."""
    monkeypatch.setenv("ICML26_SWEEPS", str(tmp_path / "sweeps"))
    real = [Claim("recruitment", n, "s", 0.0, "<=", 1e-6, True, role="check", unit="each")
            for n in ("greedy_exact", "bound_monotone")]  # the table, not the paper, is tested
    monkeypatch.setattr(papers.Paper, "claims",
                        lambda self, seed=0, scale="quick", device="cpu": real)
    cli.main(["claims", "recruitment"])
    before = capsys.readouterr().out
    rows = [sweep.error_row("recruitment", s, "quick", "x") | dict(
        claim="greedy_exact", measured=0.0, op="<=", threshold=1e-6, holds=s != 2,
        expected=True, error=None) for s in range(3)]
    sweep.write_part(sweep.default_out(), "recruitment", rows)
    assert sweep.hold_rates("recruitment") == {"greedy_exact": (2, 3)}
    cli.main(["claims", "recruitment"])
    out = capsys.readouterr().out
    assert out == before and "held (sweep)" not in out and "2/3" not in out
    assert "over seeds" in out.splitlines()[0]
    cli.main(["claims", "recruitment", "--json"])
    assert "held" not in json.loads(capsys.readouterr().out)[0]


# --------------------------------------------------------------------------- the page
def test_robustness_page_counts_results_as_they_come_and_reports_bad_settings(
        tmp_path, monkeypatch):
    pytest.importorskip("panel")
    from icml26.dashboards.app.sweep_page import RobustnessExplorer

    monkeypatch.setenv("ICML26_SWEEPS", str(tmp_path))
    page = RobustnessExplorer(task=fake_claims, papers=["recruitment"], n_seeds=5, workers=1)
    try:
        grown = []
        page.source.on_change("data", lambda attr, old, new: grown.append(len(new["rate"])))
        assert page.run(wait=True)
        assert page.hold_rates() == {("recruitment", "always"): (5, 5),
                                     ("recruitment", "even"): (3, 5)}
        assert page.progress == (5, 5) and "Done: 5 of 5" in page.status
        assert len(grown) >= 5  # one redraw per finished task, not one at the end
        assert list(page.figure.y_range.factors) == ["recruitment · even",
                                                     "recruitment · always"]
        page.n_seeds = 7  # seeds 0-4 come from the dataset, 5 and 6 are run
        assert page.run(wait=True)
        assert page.hold_rates()[("recruitment", "even")] == (4, 7)
        assert "Done: 2 of 2" in page.status and page.progress == (7, 7)
        page.papers = []
        assert not page.run() and "at least one paper" in page.error_message
    finally:
        page.shutdown()


def test_robustness_page_says_what_run_will_do():
    pytest.importorskip("panel")
    from icml26.dashboards.app.sweep_page import RobustnessExplorer

    page = RobustnessExplorer(papers=["recruitment"], n_seeds=5)
    page.first_seed = 3
    assert "recruitment on seeds 3-7 (5 tasks)" in page.status, page.status
    page.param.update(papers=["recruitment", "promotion"], recompute=True)
    assert "on seeds 3-7 (10 tasks; seeds already in the dataset are run again)" in page.status


def test_stop_cancels_the_rest_of_a_running_sweep(tmp_path, monkeypatch):
    pytest.importorskip("panel")
    from icml26.dashboards.app.sweep_page import RobustnessExplorer

    monkeypatch.setenv("ICML26_SWEEPS", str(tmp_path))
    page = RobustnessExplorer(task=slow_claims, papers=["recruitment"], n_seeds=8, workers=1)
    try:
        assert page.run()
        deadline = time.time() + 120
        while page.progress[0] < 1 and time.time() < deadline:
            time.sleep(0.05)
        assert page.progress[0] >= 1, "no task finished"
        page.stop()
        page.wait(60)
        assert "Stopped:" in page.status, page.status
        done = page.progress[0]
        assert 1 <= done < 8
        time.sleep(2)  # cancelled tasks add nothing afterwards
        assert page.progress[0] == done
        assert len(sweep.read(tmp_path, ["recruitment"])) == 2 * done  # two claims a seed
    finally:
        page.shutdown()


class _SlowToStart:
    """Stands in for ``sweep.connect`` while a LocalCluster starts: blocks until released."""

    dashboard_link = "http://127.0.0.1:8787/status"

    def __init__(self):
        self.asked, self.release = threading.Event(), threading.Event()

    def __call__(self, workers, scheduler):
        self.asked.set()
        assert self.release.wait(30)
        return self

    def submit(self, *args, **kwargs):
        raise RuntimeError("submit called")

    def close(self):
        pass


def test_stop_while_dask_is_starting_submits_nothing(tmp_path, monkeypatch):
    pytest.importorskip("panel")
    from icml26.dashboards.app.sweep_page import RobustnessExplorer

    monkeypatch.setenv("ICML26_SWEEPS", str(tmp_path))
    starting = _SlowToStart()
    monkeypatch.setattr(sweep, "connect", starting)
    page = RobustnessExplorer(task=fake_claims, papers=["recruitment"], n_seeds=5, workers=1)
    assert page.run()
    assert starting.asked.wait(30)
    page.stop()  # before the sweep exists: the run must still end as stopped
    starting.release.set()
    page.wait(30)
    assert "Stopped: 0 of 5 tasks" in page.status, page.status
    assert page.progress == (0, 5) and len(sweep.read(tmp_path, ["recruitment"])) == 0
    assert page.run()  # the next Run is not stopped by the old Stop: it submits
    page.wait(30)
    assert "submit called" in page.error_message, (page.status, page.error_message)
    page.shutdown()


# --------------------------------------------------------------------------- the file cache
def _cache_writer(root: str, rounds: int, barrier, n: int) -> None:
    os.environ["ICML26_CACHE"] = root
    import torch

    from icml26 import common

    for r in range(rounds):
        barrier.wait()  # every writer computes and writes round r's key at the same time
        got = common.cached("sweep_test", f"k{r}", {"r": r}, 0, 1,
                            lambda r=r: torch.full((n,), float(r)))
        assert bool((got == r).all())


def _cache_reader(root: str, rounds: int, stop, bad) -> None:
    os.environ["ICML26_CACHE"] = root
    import torch

    from icml26 import common

    paths = [common.cache_path("sweep_test", f"k{r}", {"r": r}, 0, 1) for r in range(rounds)]
    while not stop.is_set():
        for r, p in enumerate(paths):
            if p.exists():
                try:
                    ok = bool((torch.load(p, weights_only=False) == r).all())
                except FileNotFoundError:
                    continue
                except Exception:  # noqa: BLE001 - a torn entry is what this looks for
                    ok = False
                if not ok:
                    with bad.get_lock():
                        bad.value += 1


def test_concurrent_writers_to_the_file_cache_never_tear_an_entry(tmp_path):
    ctx = mp.get_context("spawn")
    writers, rounds, n = 3, 10, 1 << 20  # 4 MB entries: a torn write would be seen
    barrier, stop, bad = ctx.Barrier(writers), ctx.Event(), ctx.Value("i", 0)
    reader = ctx.Process(target=_cache_reader, args=(str(tmp_path), rounds, stop, bad))
    procs = [ctx.Process(target=_cache_writer, args=(str(tmp_path), rounds, barrier, n))
             for _ in range(writers)]
    reader.start()
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    stop.set()
    reader.join(timeout=30)
    assert [p.exitcode for p in procs] == [0] * writers
    assert bad.value == 0
    folder = tmp_path / "sweep_test" / "v1"
    assert len(list(folder.glob("*.pt"))) == rounds
    assert list(folder.glob("*.tmp")) == []  # no temporary file left behind


def test_an_entry_is_computed_once_while_others_wait_for_it(tmp_path, monkeypatch):
    """Parallel askers of one missing entry (test workers, Dask workers, dashboard sessions)
    wait for the first one's computation instead of repeating it."""
    import threading
    import time

    from icml26 import common

    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    calls, results = [], []

    def compute():
        calls.append(1)
        time.sleep(0.5)
        return len(calls)

    def ask():
        results.append(common.cached("sweep_test", "once", {}, 0, 1, compute))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(calls) == 1 and results == [1, 1, 1, 1]
