#!/usr/bin/env bash
# The GPU check: `bash benchmarks/gpu_check.sh [OUT_DIR]` (default benchmarks/gpu/<UTC date>/).
#
# One prepared run for a lent GPU machine (kernels <= 8 minutes, the papers' claims <= 4 more,
# on one H200; Python 3.12, torch,
# Triton, pytest; no panel, no network, no pip). Everything lands in OUT_DIR:
#   env.txt / env.json      nvidia-smi, driver, CUDA, torch, Triton, Python, the commit
#   tests.log, tests.xml    pytest tests/kernels -q --gpu (compiled kernels on CUDA tensors)
#   bench/, bench.log       python -m icml26.kernels.bench --quick (one CSV per kernel +
#                           summary.md)
#   claims/, claims.log     every paper's claims(seed=0, quick, device="cuda"), 8 papers at
#                           once, compared with the CPU ledger (benchmarks/claims_ledger.py:
#                           claims.csv + summary.md)
#   steps.tsv               step, exit code, seconds, status (one line per step)
# Each step runs under `timeout` (T_ENV, T_TESTS, T_BENCH, T_CLAIMS seconds: 30 + 170 + 210 +
# 240 = 650 s, under 11 minutes), so one stuck step cannot eat the others' time; every step runs
# whatever the previous ones did; a step stopped by its limit keeps what it wrote. The library is imported from this checkout through a mirror tree on
# PYTHONPATH (icml26/ = lib/, icml26/kernels/ = kernels/, with kernels/bench inside), not pip.
#
# On a machine without CUDA it is a smoke test: the kernel tests run under the Triton
# interpreter (give them time: T_TESTS=1200), the benchmark step reports "no CUDA" (exit 2,
# status no-cuda, not a failure). Exit code: 0 when every step passed (or was no-cuda /
# absent), 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
PY=${PYTHON:-python3}
out=${1:-benchmarks/gpu/$(date -u +%Y-%m-%d)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
T_ENV=${T_ENV:-30}
T_TESTS=${T_TESTS:-170}
T_BENCH=${T_BENCH:-210}
T_CLAIMS=${T_CLAIMS:-240}

mirror=$(mktemp -d)
trap 'rm -rf "$mirror"' EXIT
cp -r lib "$mirror/icml26"
rm -rf "$mirror/icml26/kernels"
cp -r kernels "$mirror/icml26/kernels"   # kernels/bench comes with it: icml26/kernels/bench
find "$mirror" -name __pycache__ -prune -exec rm -rf {} +
export PYTHONPATH="$mirror${PYTHONPATH:+:$PYTHONPATH}"
export ICML26_CACHE=${ICML26_CACHE:-$mirror/cache}
export PYTHONDONTWRITEBYTECODE=1

printf 'step\trc\tseconds\tstatus\n' > "$out/steps.tsv"
step() {  # step NAME TIMEOUT LOG CMD... ; records rc, seconds and a status
  local name=$1 limit=$2 log=$3; shift 3
  local t0=$SECONDS rc status
  echo "== $name (limit ${limit}s)"
  # SIGINT first: pytest then still writes its summary and JUnit XML, the benchmark keeps the
  # CSVs and summary.md of the kernels it finished; SIGKILL 15 s later if that hangs
  timeout -s INT -k 15 "$limit" "$@" > "$log" 2>&1
  rc=$?
  case "$rc" in
    0) status=ok ;;
    124|130|137) status=timeout ;;
    *) status=failed ;;
  esac
  # the benchmark without a GPU: one "no CUDA device" line and exit 2, expected, not a failure
  if [ "$name" = bench ] && [ "$rc" = 2 ] && grep -q "no CUDA device" "$log"; then
    status=no-cuda
  fi
  printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - t0))" "$status" >> "$out/steps.tsv"
  echo "   $status (rc $rc, $((SECONDS - t0)) s): $(tail -n 1 "$log")"
}

env_info() {
  {
    echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(hostname)"
    echo "commit: $(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"
    echo "uncommitted_files: $(git -C "$root" status --short 2>/dev/null | wc -l)"
    echo "--- nvidia-smi"
    nvidia-smi 2>&1 || echo "nvidia-smi: not available"
    echo "--- nvidia-smi --query-gpu"
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1 \
      || echo "no GPU query"
    echo "--- python"
  } > "$out/env.txt"
  "$PY" - "$out/env.json" >> "$out/env.txt" 2>&1 <<'PY'
import json, platform, sys
info = {"python": platform.python_version(), "executable": sys.executable}
try:
    import torch
    info.update(torch=torch.__version__, cuda=str(torch.version.cuda),
                cudnn=str(torch.backends.cudnn.version()), cuda_available=torch.cuda.is_available())
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        info.update(device=p.name, capability=f"{p.major}.{p.minor}",
                    memory_gib=round(p.total_memory / 2**30, 1), device_count=torch.cuda.device_count())
except Exception as exc:  # noqa: BLE001
    info["torch_error"] = repr(exc)
try:
    import triton
    info["triton"] = triton.__version__
except Exception as exc:  # noqa: BLE001
    info["triton_error"] = repr(exc)
try:
    import pytest
    info["pytest"] = pytest.__version__
except ImportError:
    info["pytest"] = None
import icml26, icml26.kernels
info["icml26_from"] = icml26.__file__
info["kernels_from"] = icml26.kernels.__file__
json.dump(info, open(sys.argv[1], "w"), indent=1)
for k, v in info.items():
    print(f"{k}: {v}")
PY
}

export out root PY
export -f env_info
start=$SECONDS
step env "$T_ENV" "$out/env.log" bash -c env_info
step tests "$T_TESTS" "$out/tests.log" \
  "$PY" -m pytest tests/kernels -q --gpu -p no:cacheprovider --junitxml="$out/tests.xml"
step bench "$T_BENCH" "$out/bench.log" \
  "$PY" -m icml26.kernels.bench --quick --out "$out/bench"
if [ "${GPU_CHECK_CLAIMS:-1}" = 1 ]; then
  # one process per paper (a hang costs one paper); on CPU this is the CPU ledger's run
  dev=$("$PY" -c "import torch; print('cuda' if torch.cuda.is_available() else 'cpu')")
  step claims "$T_CLAIMS" "$out/claims.log" \
    "$PY" benchmarks/claims_ledger.py --device "$dev" --jobs "${CLAIMS_JOBS:-8}" \
    --timeout "$((T_CLAIMS - 10))" --out "$out/claims"
else
  printf 'claims\t-\t0\tabsent (GPU_CHECK_CLAIMS=0)\n' >> "$out/steps.tsv"
fi
echo "total $((SECONDS - start)) s; results in $out"
cat "$out/steps.tsv"
if cut -f4 "$out/steps.tsv" | grep -qx -e failed -e timeout; then exit 1; fi
exit 0
