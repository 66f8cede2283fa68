"""Spurious-feature channels in DPO and their mitigation by tie training.

Christian Moya, Alex Semendinger, Guang Lin, Elliott Thornley. "Spurious Correlation Learning
in Preference Optimization: Mechanisms, Consequences, and Mitigation via Tie Training",
ICML 2026, https://arxiv.org/abs/2605.11134. No code was released; everything below is a
reconstruction from the abstract and public summaries (see ``shared/specs/spurious_dpo.md``).

Figures reproduced (``notebooks/spurious_dpo.ipynb``):
F1 the two channels (theta_s1 vs m against 2m/sigma^2; theta_s2 vs rho for early-stopped,
shrunk, converged and linearised DPO, and the hidden-cause variant); F2 irreducibility
(theta_s1 and the ID-OOD accuracy gap vs n, the estimation error falling like 1/n);
F3 tie training (spurious weight, causal alignment, neutral and OOD accuracy vs tie
fraction, with two controls); F4 a small neural reward trained with DPO vs DPO+ties.

Model (paper: log-linear policies, the two channels, linearisation near the reference,
irreducible + O(1/n) error, tie training; ours: the exact data model and every constant):

* Log-linear policy ``pi_theta(y|x) ∝ pi_ref(y|x) exp(theta . phi(x, y))`` with features
  ``phi = (c, s)``, causal ``c in R^{d_c}`` and spurious ``s = (s1, s2)``. The DPO margin of a
  pair is ``beta theta . (phi_w - phi_l)`` (the partition function cancels), so **DPO is
  logistic regression on oriented pair differences** ``d = phi_w - phi_l``::

      L(theta) = -E log sigma(beta theta . d)

* Data: ``dc ~ N(0, I)``, utility ``du = w* . dc`` (``|w*| = 1``), ``P(first wins) =
  sigma(kappa du)``, ``t = +-1`` the label; ``ds1 = m t + rho du + sigma eps1`` (mean spurious
  bias: the chosen response is "longer" by m), ``ds2 = rho du + sigma eps2`` (correlated with
  utility, no extra label information).
* Channel 1 (exact here): given ``du``, ``ds1`` is Gaussian with mean ``+-m``, so the label
  log-odds are exactly linear and the population optimum is
  ``beta theta* = ((kappa - 2 m rho / sigma^2) w*, 2m / sigma^2, 0)``: ``theta_s1 = 2m/(beta
  sigma^2)`` however large n is.
* Channel 2 (leakage): near the reference ``L ≈ log 2 - (beta/2) theta.mu + (beta^2/8)
  theta' Sigma theta`` with ``Sigma = E[d d']``, ``mu = E[d]`` (closed forms in
  :func:`moments`). With shrinkage ``(beta^2 lambda / 8)|theta|^2`` the stationary point is
  ``theta = (2/beta)(Sigma + lambda I)^-1 mu``; ``k`` gradient steps of size ``eta`` from the
  reference give ``(2/beta) Sigma^-1 (I - (I - eta beta^2 Sigma / 4)^k) mu``. Both put weight
  ``∝ rho`` on s2; at exact convergence with every causal feature observed it vanishes.
  Hiding one causal coordinate makes s a proxy for it even at convergence.
* Deployment: test pairs with ``m' = -m`` (flip) or ``m' = 0`` (neutral). Accuracy of
  ``sign(theta . dphi)`` against the label is computed EXACTLY by 1-D Gauss-Hermite quadrature
  over ``du`` (:func:`accuracy`): given ``du`` and the label, the margin is Gaussian.
* Ties: pairs with ``w* . dc = 0`` and the usual spurious spread (``ds1 = +-m + sigma eps``,
  ``ds2 = sigma eps``), trained with the symmetric loss ``-1/2 log sigma(z) - 1/2 log
  sigma(-z) = log(2 cosh(z/2))`` (``z = beta theta . dphi``), ≈ ``log 2 + z^2/8``: a
  data-driven penalty ``(beta^2/8) E_tie[(theta . dphi)^2]`` that touches only directions of
  zero utility change. Rao-Kupper (``log cosh((z-a)/2) + log cosh((z+a)/2)``) and Davidson
  (``log(2 cosh(z/2) + nu)``) tie likelihoods are options (applied to the tie pairs only, the
  preference pairs keep the DPO loss, so every variant shares the same tie-free baseline).
  Controls: the same ties fed to DPO as random wins/losses; plain L2 at matched ``|theta_s|``.
* Neural (F4): a 2-layer MLP reward over one response's raw ``(c, s)`` trained by DPO on
  ``r(phi_w) - r(phi_l)`` (a log-linear policy whose feature map is learnt), with and without
  ties; spurious sensitivity ``E |dr/ds1|`` by central finite differences.

Everything is batched: one tensor program per figure runs every (replicate, setting) at once
(Newton's method in float64, a [B, d, d] solve per step). Nothing runs at import.

Layout (one idea per module; this package re-exports the public API):
``model`` (config, data, losses, population moments), ``solvers`` (batched designs, Newton,
gradient descent, the L2 control), ``theory`` (closed forms, quadratic theory, exact accuracy),
``neural`` (F4's MLP rewards), ``figures`` (the data behind every figure, cached) and
``claims`` (the claim table).
"""

from icml26.spurious_dpo.claims import (
    CHANNEL_SPECS,
    CLAIM_SPECS,
    IRREDUCIBLE_SPECS,
    NEURAL_SPECS,
    TIE_SPECS,
    channel_claims,
    claims,
    claims_for,
    irreducible_claims,
    neural_claims,
    tie_claims,
)
from icml26.spurious_dpo.figures import (
    CACHE_VERSION,
    PAPER,
    figure_channels_data,
    figure_irreducible_data,
    figure_neural_data,
    figure_ties_data,
)
from icml26.spurious_dpo.model import (
    DAVIDSON_NU,
    DTYPE,
    GH_W,
    GH_X,
    PREF,
    RAO_KUPPER_ALPHA,
    SCALES,
    TIE,
    TIE_LOSSES,
    TRAININGS,
    SpuriousConfig,
    check_n,
    check_tie_fraction,
    config_for,
    dpo_loss,
    feature_dim,
    label_signal,
    loss_derivs,
    max_stable_lr,
    moments,
    n_ties_for,
    preference_design,
    softplus,
    substream,
    tie_design,
    tie_loss,
    w_star,
)
from icml26.spurious_dpo.neural import (
    NEURAL_TEST_PAIRS,
    BatchedMLP,
    response_features,
    sensitivity,
    train_neural,
)
from icml26.spurious_dpo.solvers import (
    Design,
    fit_gd,
    fit_newton,
    gradient_hessian,
    make_design,
    margins,
    match_l2,
    objective,
)
from icml26.spurious_dpo.theory import (
    accuracy,
    cosine_causal,
    figure_theory_data,
    linearised_theta,
    population_theta,
    r_squared,
    r_squared_through_origin,
    tie_curvature,
    tie_moments,
    tie_quadratic_theory,
)

__all__ = [
    "accuracy", "BatchedMLP", "CACHE_VERSION", "channel_claims", "CHANNEL_SPECS", "CLAIM_SPECS",
    "check_n",
    "check_tie_fraction", "claims", "claims_for", "config_for", "cosine_causal", "DAVIDSON_NU",
    "Design", "dpo_loss", "DTYPE", "feature_dim", "figure_channels_data",
    "figure_irreducible_data", "figure_neural_data", "figure_theory_data", "figure_ties_data",
    "fit_gd", "fit_newton", "GH_W", "GH_X", "gradient_hessian", "irreducible_claims",
    "IRREDUCIBLE_SPECS", "label_signal", "linearised_theta", "loss_derivs", "make_design",
    "margins", "match_l2", "max_stable_lr", "moments", "n_ties_for", "neural_claims",
    "NEURAL_SPECS", "NEURAL_TEST_PAIRS", "objective", "PAPER", "population_theta", "PREF",
    "preference_design", "r_squared", "r_squared_through_origin", "RAO_KUPPER_ALPHA",
    "response_features", "SCALES", "sensitivity", "softplus", "SpuriousConfig", "substream",
    "TIE", "tie_claims", "tie_curvature", "tie_design", "tie_loss", "TIE_LOSSES", "tie_moments",
    "tie_quadratic_theory", "TIE_SPECS", "train_neural", "TRAININGS", "w_star",
]
