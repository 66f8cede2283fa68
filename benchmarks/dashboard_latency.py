"""Dashboard latency in Chromium: slider key press -> updated plots painted, median per app.

Timed inside the page: from the keydown to the frame painted after the LAST plot change
the step causes (``median_s``, the budgeted number), and after the first one
(``first_plot_median_s``, for comparison: Panel sends each plot's update separately, so the
first change can be a cheap marker while other plots are still computing). Rows before
2026-12-02T23:30 in ``dashboard_latency_first_change_polling.csv`` used the earlier
instrument (Python polling for the first changed plot).

Serves every reproduced app plus a trivial one-curve app in the same process and run, and
measures each app in blocks interleaved with the trivial app (the ratio uses the trivial
presses next to the app's), so the ratio is comparable across machines and loads. Appends to
``benchmarks/dashboard_latency.csv`` and prints a table. Budget (DEVELOPERS.md): analytic
papers <= 1.3x the trivial app; heavy papers <= 1 s.

    python benchmarks/dashboard_latency.py [--presses 15] [SLUG ...]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "ui"))

from browser import (  # noqa: E402 - test helpers, found through the path above
    all_apps,
    launch,
    median,
    open_app,
    serve_in_thread,
    slider_steps,
)

from icml26 import papers  # noqa: E402
from icml26.kernels.bench import append_csv  # noqa: E402

OUT = Path(__file__).with_name("dashboard_latency.csv")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("slugs", nargs="*", help="papers (default: every built one)")
    ap.add_argument("--presses", type=int, default=21, help="slider presses per app")
    ap.add_argument("--blocks", type=int, default=3,
                    help="interleaved blocks of trivial-app and app presses")
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    slugs = args.slugs or [p.slug for p in papers.built()]
    server, port = serve_in_thread(all_apps())
    rows = []
    try:
        with sync_playwright() as pw:
            browser = launch(pw)

            def page_for(app: str):
                page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
                open_app(page, f"http://127.0.0.1:{port}/{app}")
                slider_steps(page, presses=2)  # warm-up: first updates compile/cache
                return page

            trivial = page_for("trivial")
            all_trivial = []
            for app in slugs:
                page = page_for(app)
                # interleave short blocks of the trivial app and this app, so a change of
                # machine load shifts both sides of the ratio alike
                base, steps = [], []
                for block in range(args.blocks):
                    n = args.presses // args.blocks + (block < args.presses % args.blocks)
                    base += [last for _, last in slider_steps(trivial, presses=n)]
                    steps += slider_steps(page, presses=n)
                all_trivial += base
                times = [last for _, last in steps]
                rows.append({"app": app, "median_s": median(times), "max_s": max(times),
                             "first_plot_median_s": median([f for f, _ in steps]),
                             "trivial_median_s": median(base)})
                page.context.close()
            rows.insert(0, {"app": "trivial", "median_s": median(all_trivial),
                            "max_s": max(all_trivial),
                            "first_plot_median_s": median(all_trivial),
                            "trivial_median_s": median(all_trivial)})
            browser.close()
    finally:
        server.stop()
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    load = os.getloadavg()[0]
    print(f"{'app':18s} {'median (s)':>11s} {'max (s)':>8s} {'x trivial':>9s} "
          f"{'first plot x':>12s}")
    for r in rows:
        r.update(ratio_to_trivial=r["median_s"] / r["trivial_median_s"],
                 first_plot_ratio=r["first_plot_median_s"] / r["trivial_median_s"],
                 presses=args.presses,
                 when=stamp, machine=f"{platform.machine()} {os.cpu_count()} cpu",
                 load_avg_1min=round(load, 2))
        print(f"{r['app']:18s} {r['median_s']:11.3f} {r['max_s']:8.3f} "
              f"{r['ratio_to_trivial']:9.2f} {r['first_plot_ratio']:12.2f}")
    if not args.no_write:
        append_csv(OUT, rows, ["when", "machine", "load_avg_1min", "app", "presses", "median_s",
                               "max_s", "trivial_median_s", "ratio_to_trivial",
                               "first_plot_median_s", "first_plot_ratio"], digits=4)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
