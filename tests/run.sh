#!/usr/bin/env bash
# The README's test command: set up .venv, install Chromium if missing, run every test.
#   bash tests/run.sh            (everything: lint, lib/kernels/dashboards, browser, notebooks)
# Environment: ICML26_CACHE (default: a fresh temporary folder for this run),
#              PYTHON (default: python3.11, else python3), PYTEST_ARGS (extra pytest flags).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
say() { printf '\n== %s (%ss)\n' "$*" "$(( $(date +%s) - start ))"; }

PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
say "virtual environment (.venv, $($PY --version))"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'

say "browser for the UI tests"
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "no /usr/bin/chromium and not root: browser tests will skip (install Debian's chromium)"
  fi
fi

# one fresh cache per run: everything is computed once, then shared by tests and notebooks
export ICML26_CACHE=${ICML26_CACHE:-$(mktemp -d -t icml26-cache-XXXX)}
export ICML26_SCALE=quick
export TORCHINDUCTOR_CACHE_DIR="$ICML26_CACHE/inductor"
echo "cache: $ICML26_CACHE"

say "ruff"
.venv/bin/ruff check lib kernels dashboards tests benchmarks

# One pytest worker per core (pytest-xdist, work stealing: the long claim tests do not queue
# behind each other), one torch thread each; entries of the shared cache are computed once
# (the cache's lock files), so parallel workers never repeat a training.
say "pytest: lib, kernels (Triton interpreter), dashboards ($(nproc) workers)"
OMP_NUM_THREADS=1 .venv/bin/python -m pytest tests -n "${TEST_WORKERS:-$(nproc)}" \
  --dist worksteal -p no:cacheprovider --durations=25 --ignore=tests/ui ${PYTEST_ARGS:-}

# Every built paper's notebook re-executed with nbval (one notebook per worker: --dist loadfile),
# at one thread like the pytest workers above, so the claims come from the shared cache: a
# failing cell fails, and so does a claim table (the cells marked # NBVAL_CHECK_OUTPUT, committed
# with their output by `icml26 notebooks --refresh-outputs`) that differs from the computed one.
say "notebooks: nbval (committed claim tables against the computed ones)"
OMP_NUM_THREADS=1 .venv/bin/python -m pytest notebooks --nbval-lax --nbval-current-env \
  --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout 900 \
  -n "${TEST_WORKERS:-$(nproc)}" --dist loadfile -p no:cacheprovider -q ${PYTEST_ARGS:-}

# Browser tests one at a time: they share one app server and time what the user sees.
say "pytest: browser (Chromium)"
.venv/bin/python -m pytest tests/ui --ui -p no:cacheprovider --durations=10 \
  --ignore=tests/ui/test_report.py ${PYTEST_ARGS:-}

# Every built paper's notebook, executed at quick scale (a failing cell fails the run), as the
# static report; then the report in Chromium from file://, offline.
say "notebooks -> static report (icml26 report)"
.venv/bin/icml26 report --out "$ICML26_CACHE/site" --workers "${TEST_WORKERS:-$(nproc)}"

say "the report in Chromium, offline"
ICML26_REPORT="$ICML26_CACHE/site" .venv/bin/python -m pytest tests/ui/test_report.py --ui \
  -p no:cacheprovider

# The dashboard latency benchmark (benchmarks/dashboard_latency.py) is not run here: it
# asserts nothing and took minutes of the 40-minute budget; its medians are committed.
say "done"
