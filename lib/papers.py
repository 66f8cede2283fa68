"""Registry of the 19 ICML 2026 papers in the suite: slug, title, arXiv id.

The status is not typed here: :attr:`Paper.status` is computed by :mod:`icml26.status` from
the paper's claim roles and units and the committed per-seed values
(``benchmarks/claim_values.csv``). Each paper names its library and
dashboard modules by string; they are imported lazily, so listing papers or printing claims
never imports panel.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class Paper:
    slug: str
    title: str
    arxiv: str  # "" when no arXiv id was found
    #: tier C: the paper's subject (an LLM agent) cannot run here; what is reproduced is the
    #: harness around it, and the status says so
    harness: bool = False
    #: its code exists: tested in CI and served in the index, whatever its status
    built: bool = True

    def status_info(self):
        """The computed :class:`icml26.status.Status` (word, reason, the claims' records)."""
        from icml26 import status

        if not self.built:
            return status.Status(self.slug, "planned", self.harness, "not built yet")
        return status.status(self.slug, self.harness)

    @property
    def status(self) -> str:
        """``reproduced`` | ``partial`` | ``blocked`` (computed, never typed)."""
        return self.status_info().word

    @property
    def reproduced(self) -> bool:
        return self.status == "reproduced"

    @property
    def module_name(self) -> str:
        return f"icml26.{self.slug}"

    @property
    def dashboard_name(self) -> str:
        return f"icml26.dashboards.{self.slug}"

    @property
    def notebook(self) -> str:
        return f"notebooks/{self.slug}.ipynb"

    @property
    def url(self) -> str:
        return f"https://arxiv.org/abs/{self.arxiv}" if self.arxiv else ""

    def module(self) -> ModuleType:
        if not self.built:
            raise LookupError(f"paper {self.slug!r} is planned, not built yet")
        return importlib.import_module(self.module_name)

    def dashboard(self) -> ModuleType:
        if not self.built:
            raise LookupError(f"paper {self.slug!r} is planned, not built yet")
        return importlib.import_module(self.dashboard_name)

    def claims(self, seed: int = 0, scale: str = "quick", device: str = "cpu"):
        return self.module().claims(seed=seed, scale=scale, device=device)


PAPERS: tuple[Paper, ...] = (
    Paper("recruitment", "Adaptive Multi-Round Allocation with Stochastic Arrivals",
          "2605.12111"),
    Paper("place_fields", "The Hippocampal Place Field Gradient: A Bio-inspired Framework "
          "Building Multiscale Representation for Better Sample Efficiency",
          "2506.04943"),
    Paper("promotion", "Multi-Level Strategic Classification: Incentivizing Improvement "
          "through Promotion and Relegation Dynamics", "2602.11439"),
    Paper("function_vectors", "How Few-Shot Examples Add Up: A Causal Decomposition of "
          "Function Vectors in In-Context Learning", "2605.16591"),
    Paper("spurious_dpo", "Spurious Correlation Learning in Preference Optimization: "
          "Mechanisms, Consequences, and Mitigation via Tie Training", "2605.11134"),
    Paper("gsrq", "GSRQ: Gain-Shape Residual Quantization for Sub-1-bit KV Cache",
          "2607.01065"),
    Paper("tpv", "Parameter Perturbations Through the Lens of Test Prediction Variance",
          "2512.11089"),
    Paper("panda", "Bilevel Optimization over Saddle Points of Zero-Sum Markov Games",
          "2605.26654"),
    Paper("tritongym", "TritonGym: A Benchmark for Agentic LLM Workflows in Triton GPU Code "
          "Generation", "", harness=True),
    Paper("lpds", "Lagrangian Perturbation Diffusion Steering: Latent RL for Generative "
          "Policies", "2606.01151"),
    Paper("grids", "See What Matters: Differentiable Grid Sample Pruning for Generalizable VLA",
          "2605.11817"),
    Paper("selfflow", "Self-Supervised Flow Matching for Scalable Multi-Modal Synthesis",
          "2603.06507"),
    Paper("heima", "Efficient Reasoning with Hidden Thinking", "2501.19201"),
    Paper("coval", "COVAL: Counterfactual Occlusion-Visibility Anomaly Learning for LiDAR",
          ""),
    Paper("ad_auctions", "Autobidding Auctions with LLM-Powered Creatives", ""),
    Paper("unilid", "What Language is This? Ask Your Tokenizer.", "2602.17655"),
    Paper("detectrouter", "Minimizing Mismatch Risk: A Prototype-Based Routing Framework for "
          "Zero-shot LLM-generated Text Detection", "2602.01240"),
    Paper("red", "Reasoning-preserved Efficient Distillation of LLMs via Activation-aware "
          "Initialization", "2605.29327"),
    Paper("evoclaw", "EvoClaw: Evaluating AI Agents on Continuous Software Evolution",
          "2603.13428", harness=True),
)

BY_SLUG = {p.slug: p for p in PAPERS}


def get(slug: str) -> Paper:
    try:
        return BY_SLUG[slug]
    except KeyError:
        raise ValueError(f"unknown paper {slug!r}; expected one of {sorted(BY_SLUG)}") from None


def reproduced() -> list[Paper]:
    return [p for p in PAPERS if p.reproduced]


def asserted() -> list[Paper]:
    """Papers whose expected claims CI asserts on seeds 0 and 1: every expected claim holds by
    its unit's rule over the committed seeds (whatever the roles make of the status). A blocked
    paper whose expected claims fail on some seeds is asserted by its own test file instead."""
    return [p for p in PAPERS if p.built and all(
        r.ok for r in p.status_info().records if r.expected)]


def built() -> list[Paper]:
    """Papers whose code exists (reproduced or blocked): tested, served, notebooks run."""
    return [p for p in PAPERS if p.built]
