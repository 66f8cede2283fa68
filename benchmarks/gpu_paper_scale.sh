#!/usr/bin/env bash
# Paper scale on the GPU: `bash benchmarks/gpu_paper_scale.sh PAPER... [-- SEED...]`.
# Each (paper, seed) runs `claims(seed, scale="paper", device="cuda")` in its own process under
# a 10-minute limit (the budget per paper and seed); the rows are appended to
# benchmarks/gpu/paper_scale.csv (paper, claim, seed, scale, device, measured, holds, seconds)
# and each run's claims.csv / summary.md land in benchmarks/gpu/paper_scale/<paper>-s<seed>/.
# Imports the library from the checkout through a mirror tree (no pip, no panel), like
# benchmarks/gpu_check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
papers=(); seeds=(0)
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; seeds=("$@"); break; fi
  papers+=("$1"); shift
done
[ ${#papers[@]} -gt 0 ] || { echo "usage: $0 PAPER... [-- SEED...]" >&2; exit 2; }
PY=${PYTHON:-python3}
mirror=$(mktemp -d)
cp -r lib "$mirror/icml26" && cp -r kernels "$mirror/icml26/kernels"
export PYTHONPATH="$mirror${PYTHONPATH:+:$PYTHONPATH}"
export ICML26_CACHE=${ICML26_CACHE:-$(mktemp -d)}
out=benchmarks/gpu/paper_scale; mkdir -p "$out"
csv=benchmarks/gpu/paper_scale.csv
[ -s "$csv" ] || echo "paper,claim,seed,scale,device,measured,holds,seconds" > "$csv"
for p in "${papers[@]}"; do
  for s in "${seeds[@]}"; do
    d="$out/$p-s$s"
    "$PY" benchmarks/claims_ledger.py --papers "$p" --seeds "$s" --scale paper \
      --device cuda --timeout 600 --out "$d" || echo "$p seed $s: failed (see $d)"
    [ -f "$d/claims.csv" ] || continue
    "$PY" - "$d/claims.csv" >> "$csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(",".join(r[k] for k in ("paper", "claim", "seed", "scale", "device", "measured",
                                  "holds", "seconds")))
PY
  done
done
rm -rf "$mirror"
echo "paper scale rows: $csv"
