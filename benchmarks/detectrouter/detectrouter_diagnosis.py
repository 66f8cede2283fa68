"""Diagnosis of detectrouter's designs (issue 35) ->
``benchmarks/detectrouter/detectrouter_diagnosis.csv`` (matrices, long format: design, seed, table,
row, col, value) and ``benchmarks/detectrouter/detectrouter_routing_diagnosis.csv`` (one row per
design, seed and source).

Tables: ``matrix`` the source x surrogate AUROC matrix; ``domain_auroc`` human text alone,
AUROC(human of the other corpora, human of corpus c) per surrogate; ``likelihood_gap`` mean
likelihood z-score of each source's texts per surrogate (``icml26.detectrouter.diagnose``).

    ICML26_CACHE=/tmp/x OMP_NUM_THREADS=1 \
        python benchmarks/detectrouter/detectrouter_diagnosis.py first|second SEED ...
"""

from __future__ import annotations

import sys
from pathlib import Path

from icml26.detectrouter import diagnose as G
from icml26.detectrouter import experiments as E
from icml26.detectrouter.corpus import CORPORA
from icml26.kernels.bench import append_csv

HERE = Path(__file__).resolve().parent


def main(design: str, seeds) -> int:
    cfg = G.first_design() if design == "first" else E.config_for("quick")
    for seed in seeds:
        data = E.zoo_data(cfg.zoo, seed)
        r = E.evaluate(cfg, seed, data)
        rows = []
        for table, m, names in (("matrix", r["matrix"], data["sources"]),
                                ("domain_auroc", G.domain_auroc(data, cfg), CORPORA),
                                ("likelihood_gap", G.likelihood_gap(data), data["sources"])):
            rows += [{"design": design, "seed": seed, "table": table, "row": a, "col": b,
                      "value": round(float(m[i, j]), 4)}
                     for i, a in enumerate(names) for j, b in enumerate(data["pool"])]
        append_csv(HERE / "detectrouter_diagnosis.csv", rows)
        routing = [{"design": design, "seed": seed, **row}
                   for row in G.blackbox_routing(data, cfg, seed, r)]
        append_csv(HERE / "detectrouter_routing_diagnosis.csv", routing,
                   fields=["design", "seed", "source", "black_box", "best", "nearest_prototype",
                           "best_rank", "routed_to_best", "best_auroc", "routed_auroc",
                           "router_texts", "target_names_best",
                           "label_free_best"])
        for row in routing:
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], [int(s) for s in sys.argv[2:]] or [0, 1]))
