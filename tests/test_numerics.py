"""The pinned numeric code paths (icml26.numerics): each pin is in effect where claims are
computed, whatever the environment asked for, and a small training is bit-identical across
the native paths the pins override (AVX512 vs AVX2 kernels, 1 vs 2 threads).

Each case runs in a fresh interpreter: the pins are read when MKL, ATen, oneDNN, OpenBLAS and
numpy first run, which in this test process happened long ago."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from icml26 import numerics

# a few SGD steps of a small conv + MLP net: GEMMs (MKL), a convolution (oneDNN), vectorised
# elementwise ops and reductions (ATen), and numpy's exp and matmul (its SIMD loops, OpenBLAS)
TRAIN = """
import json, icml26, numpy as np, torch
from icml26 import numerics
g = torch.Generator().manual_seed(0)
x = torch.randn(64, 3, 16, 16, generator=g)
y = torch.randint(0, 10, (64,), generator=g)
net = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3), torch.nn.GELU(), torch.nn.Flatten(),
                          torch.nn.Linear(32 * 14 * 14, 256), torch.nn.Tanh(),
                          torch.nn.Linear(256, 10))
torch.manual_seed(0)
for m in net:
    if hasattr(m, "reset_parameters"):
        m.reset_parameters()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for _ in range(5):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
a = np.random.default_rng(0).standard_normal((257, 129))
print(json.dumps({"loss": loss.item(), "w": float(net[3].weight.double().sum()),
                  "np": float(np.exp(a).sum() + (a @ a.T).trace()),
                  "capability": torch.backends.cpu.get_cpu_capability(),
                  "threads": torch.get_num_threads(), "problems": numerics.problems()}))
"""

# what another machine's native choice could be (or a user's environment asks for)
HOSTILE = {"ATEN_CPU_CAPABILITY": "avx512", "ONEDNN_MAX_CPU_ISA": "ALL", "MKL_CBWR": "AUTO",
           "OMP_NUM_THREADS": "2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
           "OPENBLAS_CORETYPE": "SkylakeX", "NPY_DISABLE_CPU_FEATURES": ""}
AVX2_MACHINE = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2",
                "MKL_ENABLE_INSTRUCTIONS": "AVX2", "OPENBLAS_CORETYPE": "Haswell",
                "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
                "OMP_NUM_THREADS": "1"}


def run(code: str, **env) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items()
            if k not in numerics.PINS and k not in ("ICML26_NUMERICS", "MKL_VERBOSE",
                                                       "ONEDNN_VERBOSE")}
    done = subprocess.run([sys.executable, "-c", code], env={**base, **env},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def train(**env) -> dict:
    return json.loads(run(TRAIN, **env).stdout.strip().splitlines()[-1])


def has_avx512() -> bool:
    with open("/proc/cpuinfo") as f:
        return "avx512f" in f.read()


def test_import_pins_every_library_whatever_the_environment_asked():
    code = ("import icml26, torch; a = torch.ones(64, 64); b = a @ a; "
            "c = torch.nn.functional.conv2d(torch.ones(8, 64, 32, 32), torch.ones(64, 64, 3, 3)); "
            "print(torch.backends.cpu.get_cpu_capability(), torch.get_num_threads())")
    done = run(code, MKL_VERBOSE="1", ONEDNN_VERBOSE="1", **HOSTILE)
    assert done.stdout.strip().splitlines()[-1] == "AVX2 1"
    cnr = [line.split("CNR:")[1].split()[0] for line in done.stdout.splitlines()
           if "CNR:" in line]  # MKL's verbose log: AVX2 on Intel CPUs, AUTO (its CNR) on AMD
    assert cnr and set(cnr) <= {"AVX2", "AUTO"}, cnr
    assert "NThr:1" in done.stdout
    isa = [line for line in done.stdout.splitlines() if line.startswith("onednn_verbose")
           and ",isa:" in line]  # oneDNN logs the ISA it dispatches to once, at first use
    assert isa == ["onednn_verbose,v1,info,cpu,isa:Intel AVX2"], isa


def test_native_mode_leaves_the_machines_paths():
    """Mutation: without the pins MKL runs without CNR and ATen at the CPU's widest lanes."""
    done = run("import icml26, torch; a = torch.ones(64, 64); b = a @ a; "
               "print(torch.backends.cpu.get_cpu_capability())",
               ICML26_NUMERICS="native", MKL_VERBOSE="1")
    assert "CNR:OFF" in done.stdout
    if has_avx512():
        assert done.stdout.strip().splitlines()[-1] == "AVX512"


def test_numpy_imported_first_is_reported():
    done = run("import numpy, icml26; from icml26 import numerics; "
               "print(numerics.describe())")
    assert "NOT pinned" in done.stdout and "numpy" in done.stdout


def test_bad_mode_is_a_clear_error():
    done = subprocess.run([sys.executable, "-c", "import icml26"], capture_output=True,
                          text=True, env={**os.environ, "ICML26_NUMERICS": "fast"})
    assert done.returncode != 0 and "ICML26_NUMERICS must be one of" in done.stderr


@pytest.mark.skipif(not has_avx512(), reason="needs an AVX512 CPU to vary the native paths")
def test_training_is_bit_identical_across_native_paths_when_pinned():
    native = train()
    assert native["problems"] == [] and native["capability"] == "AVX2"
    for env in (HOSTILE, AVX2_MACHINE):
        other = train(**env)
        assert other == native, (env, other, native)


@pytest.mark.skipif(not has_avx512(), reason="needs an AVX512 CPU to vary the native paths")
def test_training_differs_across_native_paths_unpinned():
    """Mutation: the same training on the machine's own paths moves with them (else the test
    above would prove nothing)."""
    avx512 = train(ICML26_NUMERICS="native", OMP_NUM_THREADS="2")
    avx2 = train(ICML26_NUMERICS="native", **AVX2_MACHINE)
    assert avx512["capability"] == "AVX512" and avx2["capability"] == "AVX2"
    assert (avx512["loss"], avx512["w"], avx512["np"]) != (avx2["loss"], avx2["w"], avx2["np"])


def test_this_test_process_is_pinned():
    """conftest imports icml26 before torch and numpy run: the claims the tests compute are
    computed on the pinned paths."""
    assert numerics.problems() == []


def test_shell_exports_pin_a_process_started_elsewhere():
    code = "import numpy, icml26; from icml26 import numerics; print(numerics.describe())"
    exports = f"{sys.executable} -m icml26.dashboards.cli numerics"
    done = subprocess.run(["bash", "-c", f'eval "$({exports})" && {sys.executable} -c "{code}"'],
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "numerics pinned", done.stdout + done.stderr



# 80 training steps of an MLP at batch 4096: activations and gradients of 16 MiB allocated and
# freed every step, as in the papers' trainings
CHURN = """
import icml26, resource, torch
g = torch.Generator().manual_seed(0)
x = torch.randn(4096, 256, generator=g)
net = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(),
                          torch.nn.Linear(1024, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 1))
opt = torch.optim.SGD(net.parameters(), lr=1e-3)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(80):  # kept memory faults in once; returned memory faults in on every step
    opt.zero_grad()
    net(x).square().mean().backward()
    opt.step()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def test_kept_memory_saves_page_faults_and_changes_no_number():
    """icml26.allocator keeps freed buffers: a training loop faults its pages in far fewer
    times (80 steps; mutation: ICML26_MALLOC=default, which faults the buffers in on every
    step), and a training gives the same bits either way."""
    kept = int(run(CHURN).stdout.split()[-1])
    default = int(run(CHURN, ICML26_MALLOC="default").stdout.split()[-1])
    assert 3 * kept < default, (kept, default)
    assert train() == train(ICML26_MALLOC="default")
