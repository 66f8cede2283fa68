"""Write the shipped F4 results of ``icml26.place_fields`` (toy LM, quick scale, seeds 0-4).

The dashboard shows F4 from the cache, or from these shipped validation losses when the cache
does not hold every seed, so serving the app never trains.  Claims never use them:
``claims(seed)`` always trains (or loads the run's cache).  Run from the repository root after
changing the toy LM's config (the file records the config hash it belongs to; a stale file is
ignored):

    python benchmarks/place_fields/place_fields_ship_f4.py

Trains seeds 0-4 (or takes them from the cache) and writes ``lib/data/place_fields_f4.json``
(a few kB): per-seed held-out losses of every (variant, size) member (the second design, issue
47: the test loss at the early-stopped checkpoint after adaptation on k sequences), and the
Bayes floor of the scored sequences.
"""

from __future__ import annotations

import dataclasses
import json

from icml26 import place_fields as pf
from icml26.place_fields import lm


def main() -> None:
    cfg = pf.LMConfig()
    seeds = lm.SHIPPED_SEEDS
    runs = {s: lm.seed_results(cfg, s, progress=True) for s in seeds}
    bayes = {}
    for s in seeds:
        if cfg.protocol == "adapt":
            data = pf.adapt.adapt_data(cfg, s)
            shifted = dataclasses.replace(cfg, windows=cfg.shift_windows)
            bayes[s] = pf.bayes_loss(shifted, data["test"], data["table"])
        else:
            data = pf.task_data(cfg, s)
            bayes[s] = pf.bayes_loss(cfg, data["val"], data["table"])
    blob = {
        "note": "held-out losses of the quick-scale toy LM of place_fields (F4, second "
                "design: early-stopped test loss after adaptation); written by "
                "benchmarks/place_fields/place_fields_ship_f4.py",
        "config_hash": lm.config_key(cfg),
        "cache_version": lm.CACHE_VERSION,
        "config": dataclasses.asdict(cfg),
        "members": [list(m) for m in lm.members(cfg)],
        "val_loss": {str(s): [round(float(v), 6) for v in runs[s]["val_loss"]] for s in seeds},
        "bayes_loss": {str(s): round(bayes[s], 6) for s in seeds},
    }
    lm.SHIPPED.parent.mkdir(exist_ok=True)
    lm.SHIPPED.write_text(json.dumps(blob, indent=1) + "\n")
    print(f"wrote {lm.SHIPPED}")
    print(lm.frame_from_losses(cfg, list(seeds), [blob["val_loss"][str(s)] for s in seeds])
          .pivot(index="size", columns="variant", values=["mean", "se"]).round(4))


if __name__ == "__main__":
    main()
