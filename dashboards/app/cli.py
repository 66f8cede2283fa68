"""``icml26`` command line: ``claims`` (the ledger), ``sweep`` (claims over many seeds, on
Dask) and ``serve`` (every dashboard).

``claims`` and ``sweep`` never import panel; ``serve`` imports the dashboards lazily.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback

from icml26 import claims as ledger
from icml26 import papers


def _claims(args: argparse.Namespace) -> int:
    """Each claim measured on ``--seed``, beside its estimate over the committed seeds.

    Exit 1 when an expected claim fails on this seed or a paper raised; a failure of a claim
    not expected to hold (``expected`` no) is shown, never an error."""
    from icml26.common import resolve_device

    device = str(resolve_device(args.device))  # a bad --device: one line, before any work
    if args.seed < 0:
        raise ValueError(f"--seed must be an integer >= 0, got {args.seed}")
    selected = [papers.get(s) for s in args.slugs] if args.slugs else papers.asserted()
    everything: list[ledger.Claim] = []
    broken: list[str] = []
    for p in selected:
        if not p.built:
            print(f"{p.slug}: planned, not built yet", file=sys.stderr)
            continue
        start = time.perf_counter()
        try:
            got = p.claims(seed=args.seed, scale=args.scale, device=device)
        except Exception:  # report and go on: one broken paper must not hide the others
            traceback.print_exc()
            broken.append(p.slug)
            continue
        everything.extend(got)
        print(f"{p.slug}: {len(got)} claims in {time.perf_counter() - start:.1f} s on "
              f"{device}", file=sys.stderr)
    if args.json:  # the contract (CONVENTIONS §2): exactly the claim's fields plus holds
        print(ledger.to_json(everything))
    else:
        over = over_seeds(sorted({c.paper for c in everything}), args.scale)
        cells = {k: (v["text"], v["verdict"]) for k, v in over.items()}
        print(ledger.format_markdown(everything, cells) if args.markdown
              else ledger.format_table(everything, width=args.note_width, over=cells))
    bad = ledger.unexpected_failures(everything)
    for c in bad:
        print(f"UNEXPECTED: {c.paper}.{c.name} measured {c.measured:.6g}, target "
              f"{c.op} {c.threshold:.6g}", file=sys.stderr)
    return 1 if bad or broken else 0


def over_seeds(slugs: list[str], scale: str = "quick") -> dict[tuple[str, str], dict]:
    """``{(paper, claim): estimate}``: each claim's estimate over its committed per-seed values
    (:func:`icml26.estimates.estimates`: ``benchmarks/claim_values.csv``, quick scale, CPU, the
    claim's current row) as the JSON of ``icml26 claims`` gives it (:func:`_over_json`)."""
    from icml26 import estimates
    from icml26 import ledger as values

    committed = values.read()
    return {(slug, name): _over_json(est, scale)
            for slug in slugs for name, est in estimates.estimates(slug, committed).items()}


def _over_json(est, scale: str) -> dict:
    """One claim's estimate: ``text`` (``k/n seeds (95% lo-hi)`` for ``each``, ``mean m (95%
    CI lo to hi), P(improve) k/n`` for ``mean``), ``verdict`` (``holds`` / ``FAILS`` by the
    unit's rule; ``pending`` while the values do not cover the seeds 0-15 every paper is swept
    on: no verdict on fewer), the seeds, n, held (k), mean, interval (``each``: Wilson 95% of
    k/n; ``mean``: BCa 95% of the mean) and holds. The committed values are quick scale: at
    another ``scale`` there are none."""
    from icml26 import estimates

    if scale != estimates.SCALE:
        est = None
    if est is None:
        text = ledger.NO_VALUES[0] + ("" if scale == estimates.SCALE else f" at {scale} scale")
        return dict(text=text, verdict=ledger.NO_VALUES[1], seeds=[], n=0, held=0, mean=None,
                    interval=None, holds=None)
    covered = set(estimates.SEEDS) <= set(est.seeds)
    verdict = "pending" if not covered else "holds" if est.holds else "FAILS"
    return dict(text=est.text(), verdict=verdict, seeds=list(est.seeds), n=est.n,
                held=est.held, mean=est.mean, interval=list(est.interval), holds=est.holds)


def _load_task(spec: str):
    """``"module:function"`` -> the function (a sweep of something other than claims())."""
    import importlib

    module, _, name = spec.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError) as e:
        raise ValueError(f"--task {spec!r}: {type(e).__name__}: {e}") from None


def _sweep(args: argparse.Namespace) -> int:
    from icml26 import sweep

    task = _load_task(args.task) if args.task else None
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers must be >= 1, got {args.workers}")
    # validates everything (the device too), writes nothing
    plan = sweep.plan(args.slugs, args.seeds, args.scale, args.out, device=args.device)
    result = None
    if plan.todo or args.scheduler:  # an unreachable scheduler is an error even with no work
        client = sweep.connect(args.workers, args.scheduler, timeout=args.timeout)
        try:
            print(f"sweep: {len(plan.todo)} tasks to run, {plan.done} (paper, seed) pairs "
                  f"already in {plan.out}", file=sys.stderr)
            print(f"Dask dashboard: {client.dashboard_link}", file=sys.stderr)
            if plan.todo:
                result = sweep.Sweep(plan, client, task).collect(progress=not args.no_progress)
        finally:
            sweep.close(client)
    summary = sweep.summarize(sweep.read(plan.out, plan.papers, plan.scale, plan.seeds))
    print(json.dumps(summary, indent=1) if args.json else sweep.format_summary(summary))
    if result is not None:
        print(f"sweep: {result.completed} tasks in {result.seconds:.1f} s, {result.failed} "
              f"failed, {result.written} rows written to {plan.out}", file=sys.stderr)
    if result is not None and result.failed:
        for e in result.errors:
            print(f"FAILED: {e}", file=sys.stderr)
        return min(result.failed, 125)  # the exit status is the number of failed tasks
    return 0


def _check_port(address: str, port: int) -> None:
    """One clear line for a port out of range or taken (not a traceback from inside Bokeh)."""
    import socket

    if not 1 <= port <= 65535:
        raise ValueError(f"--port must be in [1, 65535], got {port}")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((address, port))
        except OSError as e:
            raise ValueError(f"--port {port}: cannot listen on {address}:{port} ({e.strerror}); "
                             "choose another --port") from None


def _check_out_folder(path: str) -> None:
    """``--out`` must be a folder that can be created and written (checked before any work)."""
    import tempfile
    from pathlib import Path

    out = Path(path).expanduser().absolute()
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as e:
        raise ValueError(f"--out {path}: cannot write there ({e.strerror}); choose another "
                         "--out") from None


def _serve(args: argparse.Namespace) -> int:
    _check_port(args.address, args.port)
    from icml26.dashboards.app import perf
    from icml26.dashboards.app.index import create_index
    from icml26.dashboards.app.sweep_page import create_app as create_robustness

    apps = {"/": create_index, "/robustness": create_robustness}
    for p in papers.built():
        apps[f"/{p.slug}"] = p.dashboard().create_app
    n_papers = sum(1 for route in apps if route not in ("/", "/robustness"))
    print(f"serving {n_papers} paper apps, the index and the robustness page at "
          f"http://{args.address}:{args.port}/", file=sys.stderr)
    perf.serve(apps, address=args.address, port=args.port, show=args.show,
             allow_websocket_origin=[f"{args.address}:{args.port}", f"localhost:{args.port}"],
             title="icml26")
    return 0


def _report(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from icml26.dashboards.app import report

    for slug in args.papers or []:
        papers.get(slug)  # an unknown paper: one line, before the folder is made
    if args.workers < 1:
        raise ValueError(f"--workers must be >= 1, got {args.workers}")
    _check_out_folder(args.out)
    os.environ.setdefault("ICML26_SCALE", "quick")
    out = Path(args.out)
    try:
        pages = report.build(out, args.papers or None, workers=args.workers,
                             scheduler=args.scheduler)
    except ValueError as e:  # an unreachable scheduler, --workers < 1
        print(f"icml26 report: {e}", file=sys.stderr)
        return 2
    for p in pages:
        print(f"{p.slug:18s} {'ok' if p.ok else 'FAILED':6s} {p.seconds:6.1f} s  "
              f"{p.held or p.error[:100]}", file=sys.stderr)
    print(f"report: {out / 'index.html'}", file=sys.stderr)
    return 1 if any(not p.ok for p in pages) else 0


def _notebooks(args: argparse.Namespace) -> int:
    import os

    from icml26.dashboards.app import report

    slugs = args.papers or [p.slug for p in papers.built()]
    for slug in slugs:
        papers.get(slug)  # an unknown paper: one line, before anything is executed
    if not args.refresh_outputs:
        raise ValueError("icml26 notebooks: say what to do (--refresh-outputs)")
    # the values CI compares are computed at one thread per process (tests/run.sh)
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ.setdefault("ICML26_SCALE", "quick")
    for slug in slugs:
        start = time.perf_counter()
        cells = report.refresh_outputs(slug)
        print(f"{slug:18s} pinned cells {cells} refreshed in {time.perf_counter() - start:.0f} s",
              file=sys.stderr)
    return 0


def _numerics(args: argparse.Namespace) -> int:
    from icml26 import numerics

    if args.check:
        print(numerics.describe())
        return 1 if numerics.problems() else 0
    print(numerics.shell_exports())
    return 0


def _list(args: argparse.Namespace) -> int:
    from icml26 import status_table

    if args.markdown:
        print(status_table.readme_block())
        return 0
    for row in status_table.rows():
        print(f"{row.slug:18s} {row.label:22s} {row.arxiv or '-':11s} {row.title}")
        for h in row.headlines:
            print(f"{'':18s}   headline {h}")
        if row.word == "blocked":  # a partial paper's reason is its failing headlines above
            print(f"{'':18s}   {row.reason}")
    return 0


class UsageError(ValueError):
    """A command line argparse rejects (unknown flag or choice, a value of the wrong type)."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, with its errors as one line naming the command's --help (not a usage block)."""

    def error(self, message: str):
        raise UsageError(f"{message} (see {self.prog} --help)")


def build_parser() -> argparse.ArgumentParser:
    # the module docstring is reStructuredText; --help shows it as plain text
    parser = OneLineParser(prog="icml26", description=__doc__.replace("``", ""))
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    c = sub.add_parser("claims", help="recompute every reproduced paper's claims on one seed "
                       "and print them beside their estimates over the committed seeds",
                       description="Each claim: role, unit, its value and result on --seed, "
                       "whether the suite expects it to hold, its estimate over the committed "
                       "seeds (benchmarks/claim_values.csv; each: held on k/n seeds with the "
                       "Wilson 95% interval; mean: the mean, its 95% BCa interval and "
                       "P(improve)) and the verdict over them (holds, FAILS, or pending before "
                       "seeds 0-15 are all committed). Exit status 1 when an expected claim "
                       "fails on --seed or a paper raised; a claim not expected to hold may "
                       "fail (exit 0).")
    c.add_argument("slugs", nargs="*", help="papers to run (default: every reproduced one)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--scale", choices=["quick", "paper"], default="quick")
    c.add_argument("--device", default="cpu",
                   help="torch device: cpu (default), cuda or cuda:N (a GPU runs the Triton "
                        "kernels; values agree with the CPU's within each claim note's "
                        "tolerance)")
    fmt = c.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true",
                     help="a JSON list of this seed's claims (every claim field and holds; "
                          "the estimates over the committed seeds are in the table)")
    fmt.add_argument("--markdown", action="store_true", help="a Markdown table")
    c.add_argument("--note-width", type=int, default=60, help="cut notes to this width")
    c.set_defaults(func=_claims)
    w = sub.add_parser("sweep", help="hold rates of claims over many seeds, on Dask")
    w.add_argument("slugs", nargs="+", help="papers to sweep")
    w.add_argument("--seeds", default="0:32",
                   help="A:B, Python's half-open range (0:64 = seeds 0-63), or a list 3,5,8 "
                        "(default 0:32)")
    w.add_argument("--scale", choices=["quick", "paper"], default="quick")
    w.add_argument("--device", default="cpu",
                   help="torch device of every task: cpu (default), cuda or cuda:N; a CUDA "
                        "sweep's default dataset is a folder of its own")
    w.add_argument("--workers", type=int, default=None,
                   help="worker processes of the LocalCluster (default: one per core)")
    w.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="an existing Dask scheduler (tcp://host:8786) instead of a LocalCluster")
    w.add_argument("--timeout", type=float, default=10.0,
                   help="seconds to wait for --scheduler (default 10)")
    w.add_argument("--out", default=None,
                   help="Parquet dataset folder (default: $ICML26_SWEEPS, else "
                        "$ICML26_CACHE/sweeps)")
    w.add_argument("--json", action="store_true", help="the summary as JSON")
    w.add_argument("--no-progress", action="store_true", help="no progress bar")
    w.add_argument("--task", default=None, metavar="MODULE:FUNCTION",
                   help="run FUNCTION(paper, seed, scale) -> claims instead of the paper's "
                        "claims() (tests, other settings); importable on every worker")
    w.set_defaults(func=_sweep)
    s = sub.add_parser("serve", help="serve every dashboard and an index page")
    s.add_argument("--address", default="127.0.0.1")
    s.add_argument("--port", type=int, default=5006)
    s.add_argument("--show", action="store_true", help="open a browser")
    s.set_defaults(func=_serve)
    r = sub.add_parser("report", help="execute the notebooks and write a static site (offline)")
    r.add_argument("--out", default="site", help="folder of the site (default: site)")
    r.add_argument("--papers", nargs="*", help="papers to include (default: every built one)")
    r.add_argument("--workers", type=int, default=1,
                   help="execute the notebooks on a Dask LocalCluster of this many processes "
                        "(default 1: one after another, no cluster)")
    r.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="execute them on an existing Dask scheduler (tcp://host:8786)")
    r.set_defaults(func=_report)
    nb = sub.add_parser("notebooks", help="maintain the committed notebooks: --refresh-outputs "
                        "re-executes them and commits their claim tables (nbval compares them)")
    nb.add_argument("papers", nargs="*", help="papers (default: every built one)")
    nb.add_argument("--refresh-outputs", action="store_true",
                    help="execute each notebook (one thread, quick scale) and keep only the "
                         "outputs of its # NBVAL_CHECK_OUTPUT cells")
    nb.set_defaults(func=_notebooks)
    ls = sub.add_parser("list", help="list the 19 papers, their computed status and headline "
                        "claims' estimates over the committed seeds")
    ls.add_argument("--markdown", action="store_true",
                    help="the README's papers table (generated; a test checks it is current)")
    ls.set_defaults(func=_list)
    nu = sub.add_parser("numerics", help="the pinned numeric code paths (icml26.numerics): "
                        "print them as shell exports, or --check this process")
    nu.add_argument("--check", action="store_true",
                    help="say whether this process runs on the pinned paths (exit 1 if not)")
    nu.set_defaults(func=_numerics)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except ValueError as e:  # bad slug etc.: a message, not a traceback
        print(f"icml26: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
