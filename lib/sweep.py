"""Claim robustness over seeds on Dask: what ``icml26 sweep`` and the robustness page run.

- one task per (paper, seed), run in a Dask worker process with torch limited to one thread
  (:func:`run_task`); a :class:`distributed.LocalCluster` with one worker process per core, or
  an existing cluster (``dask scheduler`` / ``dask worker ADDRESS``) by its address
  (:func:`connect`);
- the client is the only writer: as futures complete it appends Parquet part files under
  ``OUT/<paper>/`` (temporary name, then an atomic rename), one row per (paper, claim, seed)
  with the columns :data:`COLUMNS`; a task that raised is one row with ``claim=""`` and the
  error text. Re-running skips the (paper, seed) pairs already in the dataset (resumable);
  rows are de-duplicated by (paper, claim, seed, scale) on write and on read, so a task
  Dask re-ran after a worker died is counted once;
- :func:`summarize`: per claim, held on k of n seeds with a Wilson 95% interval, and the
  seeds where it failed.

Nothing here imports dask, pandas or pyarrow at import time (``icml26 claims`` imports this
module to look for a sweep).
"""

from __future__ import annotations

import math
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from icml26 import papers
from icml26.claims import Claim
from icml26.sweep_summary import Z95, format_summary, summarize, wilson

__all__ = ["COLUMNS", "KEY", "Z95", "format_summary", "summarize", "wilson"]

COLUMNS = ("paper", "claim", "seed", "scale", "measured", "op", "threshold", "holds",
           "expected", "seconds", "version", "error")
KEY = ("paper", "claim", "seed", "scale")
SCALES = ("quick", "paper")

#: a task: ``(paper, seed, scale) -> claims``; the default is the paper's own ``claims()``
Task = Callable[[str, int, str], Sequence[Claim]]


# --------------------------------------------------------------------------- input
def parse_seeds(text: str) -> list[int]:
    """``"A:B"`` is Python's half-open ``range(A, B)``; ``"3,5,8"`` a list (duplicates
    dropped). Raises ``ValueError`` for anything else, an empty range or a negative seed."""
    text = str(text).strip()
    try:
        if ":" in text:
            start, _, stop = text.partition(":")
            seeds = list(range(int(start), int(stop)))
        else:
            seeds = list(dict.fromkeys(int(s) for s in text.split(",")))
    except ValueError:
        raise ValueError(f"--seeds must be A:B (half-open, e.g. 0:64) or a list such as 3,5,8; "
                         f"got {text!r}") from None
    if not seeds:
        raise ValueError(f"--seeds {text!r} is an empty range (A:B runs A to B-1)")
    if min(seeds) < 0:
        raise ValueError(f"seeds must be >= 0, got {min(seeds)} in --seeds {text!r}")
    return seeds


def default_out() -> Path:
    """``$ICML26_SWEEPS``, else ``$ICML26_CACHE/sweeps`` (``~/.cache/icml26/sweeps``)."""
    if os.environ.get("ICML26_SWEEPS"):
        return Path(os.environ["ICML26_SWEEPS"])
    root = os.environ.get("ICML26_CACHE") or Path.home() / ".cache" / "icml26"
    return Path(root) / "sweeps"


def check_out(path: str | os.PathLike) -> Path:
    """The absolute output folder, or ``ValueError`` if it cannot be created or written.
    Creates nothing: the nearest existing ancestor must be a writable folder."""
    out = Path(path).expanduser().absolute()
    there = out
    while not there.exists():
        there = there.parent
    if not there.is_dir():
        raise ValueError(f"--out {path}: {there} is not a folder")
    if not os.access(there, os.W_OK | os.X_OK):
        raise ValueError(f"--out {path}: {there} is not writable")
    return out


@dataclass
class Plan:
    """What a sweep will run: validated input and the (paper, seed) pairs still to do."""

    papers: list[str]
    seeds: list[int]
    scale: str
    out: Path
    todo: list[tuple[str, int]]
    done: int  # pairs already in the dataset (skipped)
    device: str = "cpu"  # every task's claims(..., device=device)


def plan(slugs: Iterable[str], seeds: str | Sequence[int], scale: str = "quick",
         out: str | os.PathLike | None = None, resume: bool = True,
         device: str = "cpu") -> Plan:
    """Validate everything (papers, seeds, scale, device, output folder) without writing
    anything. A CUDA sweep's default dataset is a folder of its own (``.../cuda``): its values
    are not bit-identical to the CPU's, so they never count as the CPU's seeds done."""
    from icml26.common import resolve_device

    dev = resolve_device(device)
    slugs = list(dict.fromkeys(slugs))
    if not slugs:
        raise ValueError("name at least one paper to sweep")
    for slug in slugs:
        if not papers.get(slug).built:  # get() raises for an unknown slug
            raise ValueError(f"paper {slug!r} is planned, not built yet: nothing to sweep")
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    seeds = parse_seeds(seeds) if isinstance(seeds, str) else list(dict.fromkeys(seeds))
    if not seeds or min(seeds) < 0:
        raise ValueError(f"seeds must be a non-empty list of integers >= 0, got {seeds!r}")
    if out is None:
        out = default_out() if dev.type == "cpu" else default_out() / dev.type
    out = check_out(out)
    have = done_pairs(read(out, slugs, scale)) if resume else set()
    todo = [(p, s) for p in slugs for s in seeds if (p, s) not in have]
    return Plan(slugs, seeds, scale, out, todo, len(slugs) * len(seeds) - len(todo),
                str(dev))


# --------------------------------------------------------------------------- cluster
def connect(workers: int | None = None, scheduler: str | None = None, timeout: float = 10.0,
            dashboard: str | None = ":0"):
    """A ``distributed.Client``: to the scheduler at ``scheduler``, or to a new LocalCluster
    of ``workers`` single-threaded worker processes (default: one per core). ``ValueError``
    when the scheduler cannot be reached."""
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            return Client(scheduler, timeout=timeout)
        except Exception as e:  # noqa: BLE001 - OSError, TimeoutError, a malformed address...
            first = str(e).splitlines()[0] if str(e) else ""
            raise ValueError(f"cannot reach the Dask scheduler at {scheduler}: "
                             f"{type(e).__name__}: {first}") from None
    n = (os.cpu_count() or 1) if workers is None else workers
    if n < 1:
        raise ValueError(f"--workers must be >= 1, got {n}")
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                           dashboard_address=dashboard)
    return Client(cluster)


def close(client) -> None:
    """Close ``client`` and the LocalCluster it started (an external cluster keeps running)."""
    cluster = getattr(client, "cluster", None)
    client.close()
    if cluster is not None:
        cluster.close()


# --------------------------------------------------------------------------- one task
def paper_claims(paper: str, seed: int, scale: str, device: str = "cpu") -> list[Claim]:
    """The default task: the paper's own ``claims(seed, scale, device)``."""
    return papers.get(paper).claims(seed=seed, scale=scale, device=device)


def version_of(paper: str, device: str = "cpu") -> str:
    """The package version, plus the paper's cache version when it has one, plus the device
    when it is not the CPU (so a dataset row says where it was computed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        v = version("icml26")
    except PackageNotFoundError:  # pragma: no cover - a checkout on sys.path
        v = "0"
    cache = getattr(papers.get(paper).module(), "CACHE_VERSION", None)
    v = v if cache is None else f"{v}+cache{cache}"
    return v if device == "cpu" else f"{v}+{device}"


def error_row(paper: str, seed: int, scale: str, error: str, seconds: float = math.nan,
              version: str = "") -> dict:
    return dict(paper=paper, claim="", seed=seed, scale=scale, measured=math.nan, op="",
                threshold=math.nan, holds=False, expected=False, seconds=seconds,
                version=version, error=error)


def run_task(paper: str, seed: int, scale: str, task: Task | None = None,
             device: str = "cpu") -> list[dict]:
    """Rows of one (paper, seed), in a worker process, on ``device``; an exception becomes one
    error row. A custom ``task`` is called with ``device=`` only off the CPU."""
    import torch

    from icml26 import numerics

    torch.set_num_threads(1)
    start = time.perf_counter()
    unpinned = numerics.problems() if numerics.mode() == "pinned" else []
    if unpinned:  # a worker started outside the suite: its values would not be comparable
        return [error_row(paper, seed, scale, "numerics not pinned in this worker: "
                          + "; ".join(unpinned) + ' (start it after eval "$(icml26 numerics)")',
                          0.0, version_of(paper, device))]
    try:
        if task is None:
            claims = list(paper_claims(paper, seed, scale, device))
        elif device == "cpu":
            claims = list(task(paper, seed, scale))
        else:
            claims = list(task(paper, seed, scale, device=device))
        error = None if claims else "the task returned no claims"
    except Exception as e:  # noqa: BLE001 - recorded as a failed row, the sweep goes on
        claims, error = [], f"{type(e).__name__}: {e}"
    seconds = time.perf_counter() - start
    version = version_of(paper, device)
    if error is not None:
        return [error_row(paper, seed, scale, error, seconds, version)]
    return [dict(paper=paper, claim=c.name, seed=seed, scale=scale, measured=c.measured,
                 op=c.op, threshold=c.threshold, holds=c.holds, expected=c.expected,
                 seconds=seconds, version=version, error=None) for c in claims]


# --------------------------------------------------------------------------- the dataset
def _schema():
    import pyarrow as pa

    types = dict(seed=pa.int64(), measured=pa.float64(), threshold=pa.float64(),
                 holds=pa.bool_(), expected=pa.bool_(), seconds=pa.float64())
    return pa.schema([(c, types.get(c, pa.string())) for c in COLUMNS])


def write_part(out: Path, paper: str, rows: list[dict]) -> Path:
    """One Parquet part file of ``rows`` under ``out/paper/`` (temporary name, then rename)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = out / paper
    folder.mkdir(parents=True, exist_ok=True)
    name = f"part-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}.parquet"
    tmp = folder / f".{name}.tmp"  # pyarrow's dataset readers skip names starting with "."
    table = pa.Table.from_pylist([{c: r[c] for c in COLUMNS} for r in rows], schema=_schema())
    pq.write_table(table, tmp)
    os.replace(tmp, folder / name)
    return folder / name


def has_sweep(paper: str, out: Path | None = None) -> bool:
    folder = (default_out() if out is None else Path(out)) / paper
    return folder.is_dir() and any(folder.glob("part-*.parquet"))


def read(out: str | os.PathLike | None = None, slugs: Iterable[str] | None = None,
         scale: str | None = None, seeds: Iterable[int] | None = None):
    """The dataset as a DataFrame of :data:`COLUMNS`: each (paper, claim, seed, scale) once,
    and a failed task's row only when that (paper, seed) has no successful rows."""
    import pandas as pd
    import pyarrow.parquet as pq

    out = default_out() if out is None else Path(out)
    folders = ([out / s for s in slugs] if slugs is not None
               else sorted(p for p in out.iterdir() if p.is_dir()) if out.is_dir() else [])
    files = [f for d in folders if d.is_dir() for f in sorted(d.glob("part-*.parquet"))]
    if not files:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in zip(
            COLUMNS, _schema().empty_table().to_pandas().dtypes)})
    df = pd.concat([pq.read_table(f, schema=_schema()).to_pandas() for f in files],
                   ignore_index=True)
    if scale is not None:
        df = df[df.scale == scale]
    if seeds is not None:
        df = df[df.seed.isin(list(seeds))]
    ok = df.error.isna()
    good = set(zip(df.paper[ok], df.seed[ok], df.scale[ok]))
    superseded = [(p, s, c) in good for p, s, c in zip(df.paper, df.seed, df.scale)]
    df = df[ok | ~pd.Series(superseded, index=df.index, dtype=bool)]
    return df.drop_duplicates(list(KEY), keep="first").reset_index(drop=True)


def done_pairs(df) -> set[tuple[str, int]]:
    """(paper, seed) pairs with successful rows (a failed task is run again on resume)."""
    ok = df[df.error.isna()]
    return set(zip(ok.paper, ok.seed.astype(int)))


# --------------------------------------------------------------------------- the sweep
@dataclass
class Result:
    submitted: int
    completed: int = 0
    failed: int = 0  # tasks recorded as an error row
    written: int = 0  # rows written (duplicates of rows already in the dataset are not)
    seconds: float = 0.0
    stopped: bool = False
    errors: list[str] = field(default_factory=list)


class Sweep:
    """The tasks of ``plan`` submitted to ``client``; :meth:`collect` writes results as they
    complete; :meth:`cancel` (from any thread) cancels what has not finished."""

    FLUSH_TASKS, FLUSH_SECONDS = 8, 5.0

    def __init__(self, plan: Plan, client, task: Task | None = None):
        self.plan, self.client = plan, client
        self.stopped = False
        self.pairs: dict[str, tuple[str, int]] = {}
        self.futures = []
        for rank, (paper, seed) in enumerate(plan.todo):
            # run in the order asked (paper by paper, seed by seed), so a sweep stopped early
            # has whole papers done: the priority orders the scheduler's queue, and a tuple
            # key puts every task in one task group ("claims"), which the scheduler queues as
            # a whole (string keys made a group per paper, whose first tasks it sent to the
            # workers at once, every paper's seeds 2-5 first)
            f = client.submit(run_task, paper, seed, plan.scale, task, plan.device,
                              pure=False, retries=2, priority=-rank,
                              key=("claims", paper, seed, uuid.uuid4().hex[:8]))
            self.pairs[f.key] = (paper, seed)
            self.futures.append(f)

    def cancel(self) -> None:
        self.stopped = True
        self.client.cancel(self.futures)

    def collect(self, on_task: Callable[[str, int, list[dict]], None] | None = None,
                progress: bool = False) -> Result:
        from distributed import as_completed
        from tqdm.auto import tqdm

        result, start = Result(len(self.futures)), time.perf_counter()
        existing = read(self.plan.out, self.plan.papers)
        seen = set(zip(*(existing[k] for k in KEY))) if len(existing) else set()
        buffer: list[dict] = []
        last_flush, pending = time.perf_counter(), 0

        def flush():
            nonlocal last_flush, pending
            for paper in dict.fromkeys(r["paper"] for r in buffer):
                write_part(self.plan.out, paper, [r for r in buffer if r["paper"] == paper])
            result.written += len(buffer)
            buffer.clear()
            last_flush, pending = time.perf_counter(), 0

        bar = tqdm(total=len(self.futures), unit="seed", desc="sweep", file=sys.stderr,
                   disable=not progress, dynamic_ncols=True)
        try:
            for fut in as_completed(self.futures):
                if self.stopped:
                    break
                paper, seed = self.pairs[fut.key]
                try:
                    rows = fut.result()
                except Exception as e:  # noqa: BLE001 - e.g. KilledWorker after 3 deaths
                    rows = [error_row(paper, seed, self.plan.scale, f"{type(e).__name__}: {e}")]
                result.completed += 1
                if any(r["error"] for r in rows):
                    result.failed += 1
                    result.errors.append(f"{paper} seed {seed}: {rows[0]['error']}")
                for r in rows:
                    if (k := tuple(r[c] for c in KEY)) not in seen:
                        seen.add(k)
                        buffer.append(r)
                pending += 1
                if (pending >= self.FLUSH_TASKS
                        or time.perf_counter() - last_flush >= self.FLUSH_SECONDS):
                    flush()
                bar.update(1)
                if on_task is not None:
                    on_task(paper, seed, rows)
        finally:
            self.client.cancel([f for f in self.futures if not f.done()])
            flush()
            bar.close()
            result.stopped = self.stopped
            result.seconds = time.perf_counter() - start
        return result


# --------------------------------------------------------------------------- summary
def hold_rates(paper: str, scale: str = "quick", out: Path | None = None
               ) -> dict[str, tuple[int, int]]:
    """``{claim: (k, n)}`` from the sweep dataset of ``paper`` ({} when there is none)."""
    if not has_sweep(paper, out):
        return {}
    return {c["claim"]: (c["k"], c["n"]) for c in summarize(read(out, [paper], scale))["claims"]}
