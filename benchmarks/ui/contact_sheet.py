"""Contact sheet: a screenshot of every app on load (and, with ``--run``, after its Run), as
350 px thumbnails tiled into ``benchmarks/ui/contact_sheet_load.png`` (and ``_run.png``), plus
what the browser figure check (``tests/ui/browser.py figure_problems``) finds on each page in
``benchmarks/ui/contact_sheet_problems.txt``. Made by hand, looked at before a figure change is
submitted (issue 32); not run in CI (a Run trains models).

    python benchmarks/ui/contact_sheet.py [--full DIR] [SLUG ...] [--run [SLUG ...]]
    python benchmarks/ui/contact_sheet.py --tile DIR     (the sheets from a --full folder)

Chromium at 1400 x 1000, the network blocked, the apps served by one separate process as
``icml26 serve`` would. ``--full DIR`` keeps the full-size screenshots there; ``--run`` alone
presses Run in every app, ``--run a b`` (last) only in apps a and b (Runs train: minutes).
With ``--full`` each page's findings (and Run time) are kept there too, so the apps can be shot
in several sittings and ``--tile DIR`` builds the sheets from all of them, in the papers' order.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests" / "ui"))

from browser import (  # noqa: E402 - test helpers, found through the path above
    ServedApps,
    block_network,
    figure_problems,
    launch,
    open_app,
    wait_until_stable,
)

from icml26 import papers  # noqa: E402

THUMB_W = 350  # px of a thumbnail
THUMB_MAX_H = 900  # px: a long page is cut (the sheet shows its top)
COLUMNS = 5
RUN_TIMEOUT_S = 600


def thumbnail(png: bytes, caption: str):
    from PIL import Image, ImageDraw

    img = Image.open(io.BytesIO(png)).convert("RGB")
    h = round(img.height * THUMB_W / img.width)
    img = img.resize((THUMB_W, h), Image.LANCZOS).crop((0, 0, THUMB_W, min(h, THUMB_MAX_H)))
    out = Image.new("RGB", (THUMB_W, img.height + 18), "white")
    out.paste(img, (0, 18))
    ImageDraw.Draw(out).text((4, 3), caption, fill="black")
    return out


def tile(thumbs: list, path: Path) -> None:
    from PIL import Image

    rows = [thumbs[i:i + COLUMNS] for i in range(0, len(thumbs), COLUMNS)]
    heights = [max(t.height for t in r) for r in rows]
    sheet = Image.new("RGB", (COLUMNS * (THUMB_W + 6), sum(heights) + 6 * len(rows)), "#888")
    y = 0
    for r, h in zip(rows, heights):
        for i, t in enumerate(r):
            sheet.paste(t, (i * (THUMB_W + 6), y))
        y += h + 6
    # 64 colours: text and lines stay legible, the file a third of the full-colour one
    sheet.quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


def shoot(page, slug: str, url: str, run: bool, full: Path | None) -> dict:
    open_app(page, url)
    out = {"load": page.screenshot(full_page=True),
           "problems": figure_problems(page, f"{slug} on load")}
    button = page.get_by_role("button", name=re.compile(r"^Run\b"))
    if run and button.count():
        start = time.perf_counter()
        button.first.click()
        page.get_by_text(re.compile(r"Run (done|failed)")).first.wait_for(
            timeout=RUN_TIMEOUT_S * 1000)
        page.mouse.move(0, 0)  # the Run button's tooltip covered a plot's corner
        wait_until_stable(page)
        out["run_s"] = time.perf_counter() - start
        out["run"] = page.screenshot(full_page=True)
        out["problems"] += figure_problems(page, f"{slug} after Run")
    if full:
        for k in ("load", "run"):
            if k in out:
                (full / f"{slug}-{k}.png").write_bytes(out[k])
    return out


def page_order() -> list[str]:
    return [p.slug for p in papers.built()] + ["robustness"]


def write_sheets(shots: dict, lines: list[str]) -> None:
    for kind in ("load", "run"):
        thumbs = [thumbnail(s[kind], f"{slug} ({kind})") for slug, s in shots.items()
                  if kind in s]
        if thumbs:
            tile(thumbs, HERE / f"contact_sheet_{kind}.png")
    (HERE / "contact_sheet_problems.txt").write_text("\n".join(lines) + "\n")


def tile_from(full: Path) -> None:
    """The sheets from the full-size screenshots and findings kept in ``full``."""
    shots, lines = {}, []
    for slug in page_order():
        shot = {k: (full / f"{slug}-{k}.png").read_bytes() for k in ("load", "run")
                if (full / f"{slug}-{k}.png").exists()}
        if shot:
            shots[slug] = shot
            lines += (full / f"{slug}-problems.txt").read_text().splitlines()
    write_sheets(shots, lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", nargs="*", help="press Run too (trains models): in these apps, "
                    "or in all when none is named")
    ap.add_argument("--full", type=Path, help="keep the full-size screenshots here")
    ap.add_argument("--tile", type=Path, help="only build the sheets from this --full folder")
    ap.add_argument("slugs", nargs="*", help="apps (default: every reproduced paper's)")
    args = ap.parse_args()
    if args.tile:
        return tile_from(args.tile)
    from playwright.sync_api import sync_playwright

    slugs = args.slugs or page_order()
    if args.full:
        args.full.mkdir(parents=True, exist_ok=True)
    server = ServedApps(str(Path(tempfile.gettempdir()) / "contact_sheet_server.log"))
    shots, lines = {}, []
    try:
        with sync_playwright() as p:
            browser = launch(p)
            for slug in slugs:
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                block_network(context)
                try:
                    run = args.run is not None and (not args.run or slug in args.run)
                    shots[slug] = shoot(context.new_page(), slug, f"{server.url}/{slug}", run,
                                        args.full)
                    found = shots[slug]["problems"]
                except Exception as e:  # noqa: BLE001 - one app's failure is a line
                    found = [f"{slug}: {type(e).__name__}: {str(e).splitlines()[0]}"]
                finally:
                    context.close()
                seconds = shots.get(slug, {}).get("run_s")
                page_lines = (found or [f"{slug}: no problem found"]) + (
                    [f"{slug}: Run done in {seconds:.0f} s"] if seconds is not None else [])
                lines += page_lines
                if args.full:
                    (args.full / f"{slug}-problems.txt").write_text("\n".join(page_lines) + "\n")
                print("\n".join(found or [f"{slug}: ok"]), flush=True)
            browser.close()
    finally:
        server.stop()
    write_sheets({k: v for k, v in shots.items() if "load" in v}, lines)


if __name__ == "__main__":
    main()
