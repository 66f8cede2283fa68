"""Adaptive multi-round allocation with stochastic arrivals (network recruitment).

Yuqi Pan, Davin Choo, Haichuan Wang, Milind Tambe, Alastair van Heerden, Cheryl Johnson.
ICML 2026, https://arxiv.org/abs/2605.12111.

Figures reproduced (see ``notebooks/recruitment.ipynb``):
F1 single-round greedy is exact; F2 multi-round value vs budget against four baselines;
F3 the surrogate DP's value vs Monte Carlo of its own policy (and its runtime);
F4 robustness to a misspecified capacity pmf, with a simulation-lemma bound.

Model (the abstract and summaries give the setting, O(b^5 log b) and the error split; the
equations below are our reconstruction, consistent with every public statement):

* A frontier of ``m`` people hold coupons. Person ``i`` has a random referral capacity
  ``C_i in {0..K}`` with pmf ``p_i``; giving ``k_i`` coupons yields ``min(k_i, C_i)`` recruits,
  ``E min(k, C_i) = sum_{j=1..k} S_i(j)`` with marginal survival ``S_i(j) = P(C_i >= j)``.
* One round: ``max sum_i E min(k_i, C_i)  s.t.  sum_i k_i <= b``. The objective is separable
  and concave, so greedy on the marginals ``S_i(k_i + 1)`` is exact.
* Several rounds: recruits form the next frontier and spent coupons are gone. The surrogate
  treats the frontier as ``m`` i.i.d. draws from the population pmf ``pbar``::

      V_t(b, m) = max_{0 <= s <= b} E R(m, s) + discount * E V_{t+1}(b - s, min(R, b - s))
      V_{T+1} = 0,   V_t(b, 0) = 0 (a dead process stays dead)

  where ``s`` coupons are spread evenly over the ``m`` exchangeable people and ``R`` is the
  number of recruits, whose PGF is a product of ``E z^{min(k, C)}``. Only frontier sizes up to
  the remaining budget matter, so the PGF is truncated at ``b - s`` with the tail mass LUMPED
  into the last term (dropping it biases the values low: the ``tail="drop"`` pitfall).
* In the real (heterogeneous) process the policy takes ``s`` from the surrogate at
  ``(b, min(m, b))`` and hands the ``s`` coupons out greedily by individual marginals.
* Heterogeneity: ``p_i(c) ∝ pbar0(c) exp(theta_i c)`` with ``theta_i ~ N(0, h^2)``, an
  exponential tilt; for a Binomial(K, q) base it shifts ``logit q`` by ``theta_i`` exactly,
  so ``h`` is the spec's "sd of logit q_i" for every capacity family.
* Robustness (a simulation lemma, ours): for the model-optimal policy ``pi_hat``,
  ``V^{pi*} - V^{pi_hat} <= 2 sum_t disc^{t-1} (eps_F + disc * Vmax_{t+1} * eps_P)`` with
  ``eps_F`` the largest gap in expected recruits (frontier term) and ``eps_P`` the largest total
  variation between truncated recruit distributions (transition term).

Layout: ``model`` (capacity pmfs, marginals, exact greedy), ``dp`` (the truncated-PGF DP and
exact policy evaluation), ``simulator`` (the heterogeneous process, common random numbers),
``experiments`` (config and F1-F3 data), ``robustness`` (F4), ``claims``.
"""

from .claims import CLAIM_SPECS, PAPER, SPECS, claims, claims_for, misspec_claims
from .dp import (
    DPResult,
    continuation_values,
    evaluate_policy,
    recruit_tables,
    surrogate_dp,
    surrogate_dp_reference,
    truncate_pgf,
)
from .experiments import (
    SCALES,
    RecruitmentConfig,
    config_for,
    dp_runtime_data,
    figure_dp_vs_mc_data,
    figure_greedy_data,
    figure_heterogeneous_data,
    figure_value_vs_budget_data,
    stress_state,
)
from .model import (
    DTYPE,
    FAMILIES,
    SPEC_PMF,
    brute_force_allocation,
    capacity_pmf,
    expected_recruits,
    greedy_allocation,
    marginals,
    population_pmf,
    tilt,
    validate_pmf,
)
from .robustness import (
    figure_misspec_data,
    misspec_alt,
    path_errors,
    state_occupancy,
    worst_case_bound,
)
from .simulator import (
    POLICIES,
    POLICY_LABELS,
    Population,
    SpendRule,
    draw_population,
    mean_se,
    simulate,
    spend_rules,
)

__all__ = [
    "CLAIM_SPECS", "DPResult", "DTYPE", "FAMILIES", "PAPER", "POLICIES", "POLICY_LABELS",
    "Population",
    "RecruitmentConfig", "SCALES", "SPECS", "SPEC_PMF", "SpendRule", "brute_force_allocation",
    "capacity_pmf", "claims", "claims_for", "config_for", "continuation_values",
    "dp_runtime_data", "draw_population", "evaluate_policy", "expected_recruits",
    "figure_dp_vs_mc_data", "figure_greedy_data", "figure_heterogeneous_data",
    "figure_misspec_data", "figure_value_vs_budget_data", "greedy_allocation", "marginals",
    "mean_se", "misspec_alt", "misspec_claims", "path_errors", "population_pmf",
    "recruit_tables", "simulate", "spend_rules", "state_occupancy", "stress_state",
    "surrogate_dp", "surrogate_dp_reference", "tilt", "truncate_pgf", "validate_pmf",
    "worst_case_bound",
]
