"""The benchmark command's CPU-checkable pieces: argument parsing, ``--only`` validation, the
no-CUDA exit, ``do_bench`` normalisation across Triton versions, timing rows and the summary
from fake measurements.  (Timings themselves exist only on a GPU.)"""

from __future__ import annotations

import csv
import importlib
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from icml26.kernels.bench import append_csv, cli, harness

KERNELS = Path(__file__).resolve().parents[2] / "kernels"


def test_parse_args_defaults_quick_and_only():
    args = cli.parse_args([])
    assert args.only == list(cli.OPS) and not args.quick
    assert args.out.parent.name == "gpu" and args.out.name.startswith("bench-")
    args = cli.parse_args(["--quick", "--only", "pgf", "token_stats", "pgf", "--out", "x"])
    assert args.quick and args.only == ["pgf", "token_stats"] and args.out == Path("x")


def test_only_rejects_unknown_kernels(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.parse_args(["--only", "pgf", "flash_attention"])
    assert exc.value.code == 2
    assert "invalid choice: 'flash_attention'" in capsys.readouterr().err


def test_every_kernel_has_a_benchmark_module_with_cases():
    kernels = {p.stem for p in KERNELS.glob("*.py") if not p.stem.startswith("_")}
    assert kernels == set(cli.OPS)
    for op in cli.OPS:
        mod = importlib.import_module(f"icml26.kernels.bench.bench_{op}")
        assert callable(mod.cases), op


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA exit")
def test_without_cuda_the_command_exits_2_and_writes_nothing(tmp_path):
    out = tmp_path / "bench"
    res = subprocess.run([sys.executable, "-m", "icml26.kernels.bench", "--quick", "--out",
                          str(out)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip() == harness.NO_CUDA_MESSAGE and res.stdout == ""
    assert not out.exists()


@pytest.mark.parametrize(("result", "n", "want"), [
    (0.25, 1, [0.25]),                    # Triton 3.6, quantiles=[0.5]: a bare float
    (0.25, 3, [0.25, 0.25, 0.25]),
    ([0.5, 0.4, 0.6], 3, [0.5, 0.4, 0.6]),
    ((0.5,), 1, [0.5]),
    ([0.5], 3, [0.5, 0.5, 0.5]),
], ids=["float-1", "float-3", "list-3", "tuple-1", "list-1-of-3"])
def test_do_bench_results_are_normalised(result, n, want):
    assert harness.normalise_quantiles(result, n) == want


def test_normalise_rejects_a_wrong_count():
    with pytest.raises(ValueError, match="expected 3"):
        harness.normalise_quantiles([1.0, 2.0], 3)


def test_quantiles_with_either_do_bench_flavour():
    assert harness.quantiles(lambda: None, (0.5,), bench=lambda fn, quantiles: 1.5) == [1.5]
    assert harness.quantiles(lambda: None, bench=lambda fn, quantiles: [1.0, 0.9, 1.1]) == \
        [1.0, 0.9, 1.1]


def test_time_case_rows_bandwidth_errors_and_failures():
    def boom():
        raise RuntimeError("compile failed\nlong trace")

    case = harness.Case("demo", "N=4", "fp32",
                        {"triton": lambda: torch.ones(2), "torch-eager": lambda: torch.zeros(2),
                         "torch-compile": boom},
                        bytes_moved=2e9, error=lambda out: float(out.sum()))
    rows = harness.time_case(case, copy_gbps=4000.0,
                             bench=lambda fn, quantiles: [0.5, 0.4, 0.6])
    by = {r["impl"]: r for r in rows}
    assert by["triton"]["ms"] == 0.5 and by["triton"]["gbps"] == pytest.approx(4000.0)
    assert by["triton"]["pct_copy"] == pytest.approx(100.0) and by["triton"]["max_err"] == 2.0
    assert by["torch-eager"]["max_err"] == 0.0
    assert math.isnan(by["torch-compile"]["ms"])
    assert by["torch-compile"]["note"] == "RuntimeError: compile failed"


def fake_rows():
    base = {"kernel": "k", "shape": "N=1", "dtype": "fp32", "pass": "fwd", "pct_copy": 80.0}
    return [{**base, "impl": "triton", "ms": 2.0},
            {**base, "impl": "torch-eager", "ms": 5.0, "pct_copy": 30.0},
            {**base, "impl": "torch-compile", "ms": 1.0, "pct_copy": 90.0},
            {**base, "pass": "bwd", "impl": "triton", "ms": 1.0},
            {**base, "pass": "bwd", "impl": "torch-compile", "ms": math.nan, "note": "failed"},
            {**base, "pass": "bwd", "impl": "torch-eager", "ms": 3.0},
            {**base, "pass": "bwd", "impl": "triton-variant", "ms": 6.0, "pct_copy": 10.0}]


def test_summary_picks_the_best_torch_path():
    fwd, bwd, variant = harness.summarize(fake_rows())
    assert (fwd["best_torch"], fwd["best_torch_ms"], fwd["speedup"]) == ("torch-compile", 1.0,
                                                                         0.5)
    assert fwd["pct_copy"] == 80.0  # Triton's, not the best torch path's
    assert (bwd["best_torch"], bwd["speedup"]) == ("torch-eager", 3.0)  # a NaN never wins
    assert (variant["triton"], variant["speedup"], variant["pct_copy"]) == ("triton-variant",
                                                                            0.5, 10.0)


def test_write_summary_and_csv(tmp_path):
    meta = {"timestamp": "t", "device": "FakeGPU", "torch": "2", "triton": "3"}
    md = harness.write_summary(tmp_path / "summary.md", fake_rows(), meta, 4321.0).read_text()
    assert "FakeGPU" in md and "4321 GB/s" in md
    assert "| k | N=1 | fp32 | fwd | triton | 2.0000 | 1.0000 | torch-compile | 0.50x | 80 |" \
        in md
    assert "| k | N=1 | fp32 | bwd | triton | 1.0000 | 3.0000 | torch-eager | 3.00x | 80 |" in md
    assert "| bwd | triton-variant | 6.0000 | 3.0000 | torch-eager | 0.50x | 10 |" in md
    path = harness.write_csv(tmp_path / "k.csv", fake_rows(), meta)
    rows = list(csv.DictReader(path.open()))
    assert len(rows) == 7 and rows[0]["device"] == "FakeGPU" and rows[0]["ms"] == "2"
    harness.write_csv(path, fake_rows()[:1], meta)  # overwritten, not appended
    assert len(list(csv.DictReader(path.open()))) == 1


def test_append_csv_still_appends(tmp_path):
    p = tmp_path / "a.csv"
    assert append_csv(p, [{"a": 1.23456, "b": "x"}], digits=2) == 1
    assert append_csv(p, [{"a": 2.0, "b": "y"}]) == 1
    assert p.read_text().splitlines() == ["a,b", "1.23,x", "2.0,y"]


# tiny stand-ins for every benchmark's shape constants: the case builders then run on CPU,
# their Triton paths under the interpreter (torch.compile replaced by the eager function)
TINY = {
    "auction_topk": {"LOG2M": (3,), "QUICK_LOG2M": (3,), "BIDDERS": (5,)},
    "bellman_interp": {"SIZES": [(2, 2, 6, 3)], "QUICK": [(2, 2, 6, 3)]},
    "gain_shape_assign": {"LOG2N": (4,), "QUICK_LOG2N": (4,), "CODES": (16,), "DIM": 8},
    "grid_sample": {"CHANNELS": (3,), "POINTS": (2,), "QUICK_POINTS": (2,), "LOG2B": (1,),
                    "QUICK_LOG2B": (1,), "HW": 4},
    "lattice_forward": {"SHAPES": [(2, 5, 3, 2, 7)], "QUICK": [(2, 5, 3, 2, 7)]},
    "ln_modulate": {"LOG2N": (2,), "QUICK_LOG2N": (2,), "DIMS": (8,)},
    "pgf": {"SHAPES": [(3, 5)], "QUICK": [(3, 5)]},
    "quant_noise": {"SHAPES": [(40, 2)], "QUICK": [(40, 2)]},
    "ray_cast": {"LOG2B": (1,), "QUICK_LOG2B": (1,), "SCENE": (8, 3, 2)},
    "scaled_rope": {"SHAPES": [(1, 2, 4, 8)], "QUICK": [(1, 2, 4, 8)]},
    "soft_bellman": {"SIZES": [(3, 2, 2, 2, 1)], "QUICK": [(3, 2, 2, 2, 1)]},
    "token_stats": {"LOG2N": (2,), "VOCABS": (16,)},
    "tritongym_ops": {"SIZES": (3, 16, 64, 8)},
}


@pytest.mark.interpreter
@pytest.mark.skipif(torch.cuda.is_available(), reason="CPU smoke of the case builders; on "
                    "a GPU the benchmark command itself runs them")
@pytest.mark.parametrize("op", cli.OPS)
def test_case_builders_run_at_tiny_shapes_on_cpu(op, monkeypatch):
    """Every benchmark's cases build and every implementation runs (no GPU: nothing timed;
    a fake do_bench calls the function once), so the command cannot die on an API slip."""
    mod = importlib.import_module(f"icml26.kernels.bench.bench_{op}")
    monkeypatch.setattr(harness, "DEVICE", "cpu")
    monkeypatch.setattr(harness, "compiled", lambda fn: fn)
    for name, value in TINY[op].items():
        assert hasattr(mod, name), name
        monkeypatch.setattr(mod, name, value)
    n_cases = 0
    for quick in (True, False):
        for case in mod.cases(quick):
            rows = harness.time_case(case, 1.0, bench=lambda fn, quantiles: (fn(), 1.0)[1])
            assert {r["impl"] for r in rows} >= {"triton", "torch-eager"}, op
            for r in rows:
                assert r["ms"] == 1.0, (op, case.shape, r["impl"], r["note"])
            n_cases += 1
    assert n_cases >= 2
