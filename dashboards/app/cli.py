"""``icml26`` command line: ``claims`` (the ledger) and ``serve`` (every dashboard).

``claims`` never imports panel; ``serve`` imports the dashboards lazily.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback

from icml26 import claims as ledger
from icml26 import papers


def _claims(args: argparse.Namespace) -> int:
    selected = [papers.get(s) for s in args.slugs] if args.slugs else papers.reproduced()
    everything: list[ledger.Claim] = []
    broken: list[str] = []
    for p in selected:
        if not p.built:
            print(f"{p.slug}: planned, not built yet", file=sys.stderr)
            continue
        start = time.perf_counter()
        try:
            got = p.claims(seed=args.seed, scale=args.scale)
        except Exception:  # report and go on: one broken paper must not hide the others
            traceback.print_exc()
            broken.append(p.slug)
            continue
        everything.extend(got)
        print(f"{p.slug}: {len(got)} claims in {time.perf_counter() - start:.1f} s",
              file=sys.stderr)
    if args.json:
        print(ledger.to_json(everything))
    elif args.markdown:
        print(ledger.format_markdown(everything))
    else:
        print(ledger.format_table(everything, width=args.note_width))
    bad = ledger.unexpected_failures(everything)
    for c in bad:
        print(f"UNEXPECTED: {c.paper}.{c.name} measured {c.measured:.6g}, target "
              f"{c.op} {c.threshold:.6g}", file=sys.stderr)
    return 1 if bad or broken else 0


def _serve(args: argparse.Namespace) -> int:
    from icml26.dashboards.app import perf
    from icml26.dashboards.app.index import create_index

    apps = {"/": create_index}
    for p in papers.built():
        apps[f"/{p.slug}"] = p.dashboard().create_app
    print(f"serving {len(apps) - 1} papers at http://{args.address}:{args.port}/",
          file=sys.stderr)
    perf.serve(apps, address=args.address, port=args.port, show=args.show,
             allow_websocket_origin=[f"{args.address}:{args.port}", f"localhost:{args.port}"],
             title="icml26")
    return 0


def _report(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from icml26.dashboards.app import report

    os.environ.setdefault("ICML26_SCALE", "quick")
    out = Path(args.out)
    pages = report.build(out, args.papers or None)
    for p in pages:
        print(f"{p.slug:18s} {'ok' if p.ok else 'FAILED':6s} {p.seconds:6.1f} s  "
              f"{p.held or p.error[:100]}", file=sys.stderr)
    print(f"report: {out / 'index.html'}", file=sys.stderr)
    return 1 if any(not p.ok for p in pages) else 0


def _list(args: argparse.Namespace) -> int:
    for p in papers.PAPERS:
        print(f"{p.slug:18s} {p.status:11s} {p.arxiv or '-':11s} {p.title}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="icml26", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("claims", help="recompute and print every reproduced paper's claims")
    c.add_argument("slugs", nargs="*", help="papers to run (default: every reproduced one)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--scale", choices=["quick", "paper"], default="quick")
    fmt = c.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="a JSON list of claims")
    fmt.add_argument("--markdown", action="store_true", help="a Markdown table")
    c.add_argument("--note-width", type=int, default=60, help="cut notes to this width")
    c.set_defaults(func=_claims)
    s = sub.add_parser("serve", help="serve every dashboard and an index page")
    s.add_argument("--address", default="127.0.0.1")
    s.add_argument("--port", type=int, default=5006)
    s.add_argument("--show", action="store_true", help="open a browser")
    s.set_defaults(func=_serve)
    r = sub.add_parser("report", help="execute the notebooks and write a static site (offline)")
    r.add_argument("--out", default="site", help="folder of the site (default: site)")
    r.add_argument("--papers", nargs="*", help="papers to include (default: every built one)")
    r.set_defaults(func=_report)
    ls = sub.add_parser("list", help="list the 19 papers and their status")
    ls.set_defaults(func=_list)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ValueError as e:  # bad slug etc.: a message, not a traceback
        print(f"icml26: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
