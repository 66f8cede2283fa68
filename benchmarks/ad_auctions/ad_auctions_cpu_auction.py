"""CPU timing of the auction resolution used by every round of ``icml26.ad_auctions``.

The torch reference (``torch.topk(k=2)`` + ``where``) vs the Triton kernel under the
interpreter (``TRITON_INTERPRET=1``; a correctness path, not a fast one) at the market's shape
(M markets x N = 5 bidders), median of repeats.  Rows are appended to
``benchmarks/ad_auctions/ad_auctions_cpu_auction.csv``.  GPU numbers:
``kernels/bench/bench_auction_topk.py``.

    TRITON_INTERPRET=1 python benchmarks/ad_auctions/ad_auctions_cpu_auction.py
"""

from __future__ import annotations

import datetime as dt
import statistics
import sys
import time
from pathlib import Path

import torch

from icml26.kernels.auction_topk import auction_topk
from icml26.kernels.bench import append_csv

OUT = Path(__file__).with_suffix(".csv")


def median_ms(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main() -> int:
    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    rows = []
    for m in (64, 1344, 16384):
        s = torch.rand(m, 5, generator=torch.Generator().manual_seed(0))
        for impl, repeats in (("torch", 50), ("triton-interpreter", 3)):
            ms = median_ms(lambda: auction_topk(s, 0.05, impl=impl.split("-")[0]),  # noqa: B023
                           repeats)
            rows.append({"timestamp": stamp, "impl": impl, "M": m, "N": 5, "ms": round(ms, 4),
                         "threads": torch.get_num_threads()})
            print(rows[-1], flush=True)
    append_csv(OUT, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
