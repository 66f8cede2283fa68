#!/usr/bin/env bash
# The README's test command: set up .venv, install Chromium if missing, run every test.
#   bash tests/run.sh          everything: lint; lib, kernels, dashboards; browser; every
#                              notebook executed once into the static report, checked against
#                              its committed claim table; the report in Chromium
#   bash tests/run.sh --fast   the inner loop: lint and every test not marked slow, plus the
#                              slow (claim) tests of the papers the working tree changes
#                              (tests/select_fast.py); no browser, no notebooks, no report
# Environment: ICML26_CACHE (default: a fresh temporary folder for this run; --fast deletes
#              the one it made), PYTHON (default: python3.11, else python3), PYTEST_ARGS (extra
#              pytest flags), TEST_WORKERS (default: one per core), FAST_PAPERS (--fast: the
#              papers to treat as changed instead of asking git; "all" = every paper, seed 0).
set -euo pipefail
cd "$(dirname "$0")/.."

FAST=0
case "${1:-}" in
  --fast) FAST=1 ;;
  "") ;;
  *) echo "usage: bash tests/run.sh [--fast]" >&2; exit 2 ;;
esac
WORKERS=${TEST_WORKERS:-$(nproc)}

# Stage times: `stage NAME WHAT` ends the previous stage and starts NAME; at exit (passed or
# failed) one line per stage and the total.
T0=$(date +%s); STAGE=""; STAGE_T=$T0; TIMES=(); OWN_CACHE=""
stage() {
  end_stage; STAGE=$1; STAGE_T=$(date +%s); shift
  printf '\n== %s: %s (%ss)\n' "$STAGE" "$*" "$(( STAGE_T - T0 ))"
}
end_stage() { [ -z "$STAGE" ] || TIMES+=("$STAGE|$(( $(date +%s) - STAGE_T ))"); STAGE=""; }
mmss() { printf '%dm%02ds' $(( $1 / 60 )) $(( $1 % 60 )); }
summary() {
  local rc=$? failed=$STAGE t
  end_stage
  printf '\n== stage times%s\n' "$([ "$FAST" = 1 ] && echo ' (--fast)' || true)"
  for t in "${TIMES[@]}"; do printf '  %-24s %8s\n' "${t%|*}" "$(mmss "${t#*|}")"; done
  printf '  %-24s %8s\n' total "$(mmss $(( $(date +%s) - T0 )))"
  [ "$rc" = 0 ] || printf '  FAILED in stage "%s" (exit %s)\n' "$failed" "$rc"
  [ -z "$OWN_CACHE" ] || rm -rf "$OWN_CACHE"
  exit "$rc"
}
trap summary EXIT

PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
stage setup "virtual environment (.venv, $($PY --version))$([ $FAST = 1 ] || echo ', Chromium')"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
if [ $FAST = 0 ] && [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "no /usr/bin/chromium and not root: browser tests will skip (install Debian's chromium)"
  fi
fi

# one fresh cache per run: everything is computed once, then shared by tests and notebooks
if [ -z "${ICML26_CACHE:-}" ]; then
  ICML26_CACHE=$(mktemp -d -t icml26-cache-XXXX)
  [ $FAST = 0 ] || OWN_CACHE=$ICML26_CACHE
fi
export ICML26_CACHE ICML26_SCALE=quick TORCHINDUCTOR_CACHE_DIR="$ICML26_CACHE/inductor"
echo "cache: $ICML26_CACHE"

stage ruff "lint"
.venv/bin/ruff check lib kernels dashboards tests benchmarks

# One pytest worker per core (pytest-xdist, work stealing: the long claim tests do not queue
# behind each other), one torch thread each; entries of the shared cache are computed once
# (the cache's lock files), so parallel workers never repeat a training.
PYTEST=(.venv/bin/python -m pytest tests -n "$WORKERS" --dist worksteal -p no:cacheprovider
        --ignore=tests/ui)

if [ $FAST = 1 ]; then
  stage select "the slow tests of the changed papers (tests/select_fast.py)"
  SELECTION=$(.venv/bin/python tests/select_fast.py --explain)
  DESELECT=()
  [ -z "$SELECTION" ] || mapfile -t DESELECT <<< "$SELECTION"
  stage pytest "every test not marked slow + the changed papers' claims ($WORKERS workers)"
  OMP_NUM_THREADS=1 "${PYTEST[@]}" --durations=15 "${DESELECT[@]}" ${PYTEST_ARGS:-}
  exit 0
fi

stage pytest "lib, kernels (Triton interpreter), dashboards ($WORKERS workers)"
OMP_NUM_THREADS=1 "${PYTEST[@]}" --durations=25 ${PYTEST_ARGS:-}

# Browser tests one at a time: they share one app server and time what the user sees.
stage browser "pytest tests/ui (Chromium)"
.venv/bin/python -m pytest tests/ui --ui -p no:cacheprovider --durations=10 \
  --ignore=tests/ui/test_report.py ${PYTEST_ARGS:-}

# The notebooks' only execution: every built paper's notebook, at quick scale and one thread
# (as the claim tables were committed), a task each on a Dask LocalCluster, from the warm
# cache, into the static report; it writes each notebook as executed and report.json. A
# failing notebook does not stop the check below, which names the failing cell.
SITE="$ICML26_CACHE/site"
stage "report build" "every notebook executed once (icml26 report, $WORKERS Dask workers)"
report_rc=0
OMP_NUM_THREADS=1 .venv/bin/icml26 report --out "$SITE" --workers "$WORKERS" || report_rc=$?

# What nbval checked, on the report's executions: no cell raised, every cell ran, and each
# cell marked # NBVAL_CHECK_OUTPUT (the claim table, committed with its output by `icml26
# notebooks --refresh-outputs`) equals the committed output under tests/nbval_sanitize.cfg.
stage "executed-notebook check" "the report's notebooks against the committed claim tables"
ICML26_REPORT="$SITE" .venv/bin/python -m pytest -p no:cacheprovider -q \
  tests/test_executed_notebooks.py::test_executed_notebook_ran_and_matches_its_committed_outputs
if [ "$report_rc" != 0 ]; then
  echo "icml26 report exited with $report_rc (its pages say why)" >&2
  exit "$report_rc"
fi

# Static pages from file://, nothing timed: one Chromium per worker, the pages shared out.
stage "report browser" "the report in Chromium, offline (file://, $WORKERS workers)"
ICML26_REPORT="$SITE" .venv/bin/python -m pytest tests/ui/test_report.py --ui \
  -p no:cacheprovider -n "$WORKERS" --dist worksteal

# The dashboard latency benchmark (benchmarks/dashboard_latency.py) is not run here: it
# asserts nothing and took minutes of the 40-minute budget; its medians are committed.
end_stage
