"""Registry of the 19 ICML 2026 papers in the suite.

A reproduced paper names its library and dashboard modules by string; they are imported
lazily, so listing papers or printing claims never imports panel.
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
    status: str  # "reproduced" | "blocked" (built; a binding claim fails) | "planned"

    @property
    def reproduced(self) -> bool:
        return self.status == "reproduced"

    @property
    def built(self) -> bool:
        """Its code exists: it is tested in CI and served in the index, whatever its status."""
        return self.status in ("reproduced", "blocked")

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

    def claims(self, seed: int = 0, scale: str = "quick"):
        return self.module().claims(seed=seed, scale=scale)


PAPERS: tuple[Paper, ...] = (
    Paper("recruitment", "Adaptive Multi-Round Allocation with Stochastic Arrivals",
          "2605.12111", "reproduced"),
    Paper("place_fields", "The Hippocampal Place Field Gradient: A Bio-inspired Framework "
          "Building Multiscale Representation for Better Sample Efficiency",
          "2506.04943", "reproduced"),
    Paper("promotion", "Multi-Level Strategic Classification: Incentivizing Improvement "
          "through Promotion and Relegation Dynamics", "2602.11439", "reproduced"),
    Paper("function_vectors", "How Few-Shot Examples Add Up: A Causal Decomposition of "
          "Function Vectors in In-Context Learning", "2605.16591", "blocked"),
    Paper("spurious_dpo", "Spurious Correlation Learning in Preference Optimization: "
          "Mechanisms, Consequences, and Mitigation via Tie Training", "2605.11134", "reproduced"),
    Paper("gsrq", "GSRQ: Gain-Shape Residual Quantization for Sub-1-bit KV Cache",
          "2607.01065", "reproduced"),
    Paper("tpv", "Parameter Perturbations Through the Lens of Test Prediction Variance",
          "2512.11089", "reproduced"),
    Paper("panda", "Bilevel Optimization over Saddle Points of Zero-Sum Markov Games",
          "2605.26654", "reproduced"),
    Paper("tritongym", "TritonGym: A Benchmark for Agentic LLM Workflows in Triton GPU Code "
          "Generation", "", "reproduced"),
    Paper("lpds", "Lagrangian Perturbation Diffusion Steering: Latent RL for Generative "
          "Policies", "2606.01151", "reproduced"),
    Paper("grids", "See What Matters: Differentiable Grid Sample Pruning for Generalizable VLA",
          "2605.11817", "blocked"),
    Paper("selfflow", "Self-Supervised Flow Matching for Scalable Multi-Modal Synthesis",
          "2603.06507", "reproduced"),
    Paper("heima", "Efficient Reasoning with Hidden Thinking", "2501.19201", "blocked"),
    Paper("coval", "COVAL: Counterfactual Occlusion-Visibility Anomaly Learning for LiDAR",
          "", "blocked"),
    Paper("ad_auctions", "Autobidding Auctions with LLM-Powered Creatives", "", "reproduced"),
    Paper("unilid", "What Language is This? Ask Your Tokenizer.", "2602.17655", "reproduced"),
    Paper("detectrouter", "Minimizing Mismatch Risk: A Prototype-Based Routing Framework for "
          "Zero-shot LLM-generated Text Detection", "2602.01240", "blocked"),
    Paper("red", "Reasoning-preserved Efficient Distillation of LLMs via Activation-aware "
          "Initialization", "2605.29327", "blocked"),
    Paper("evoclaw", "EvoClaw: Evaluating AI Agents on Continuous Software Evolution",
          "2603.13428", "reproduced"),
)

BY_SLUG = {p.slug: p for p in PAPERS}


def get(slug: str) -> Paper:
    try:
        return BY_SLUG[slug]
    except KeyError:
        raise ValueError(f"unknown paper {slug!r}; expected one of {sorted(BY_SLUG)}") from None


def reproduced() -> list[Paper]:
    return [p for p in PAPERS if p.reproduced]


def built() -> list[Paper]:
    """Papers whose code exists (reproduced or blocked): tested, served, notebooks run."""
    return [p for p in PAPERS if p.built]
