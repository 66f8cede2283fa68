"""LP-DS: Lagrangian Perturbation Diffusion Steering (latent RL for generative policies).

"Lagrangian Perturbation Diffusion Steering: Latent RL for Generative Policies",
https://arxiv.org/abs/2606.01151 (authors not retrieved; no code released).  Everything below
the abstract / project-page level is reconstructed (spec ``shared/specs/lpds.md``).

The paper's (abstract, project page): freeze a generative BC policy ``a = Phi(s, w)``
(deterministic given its input noise ``w``) and learn a state-conditioned perturbation of the
noise only, ``w = eps + Delta_theta(s)``, ``eps ~ N(0, I)``, under the trust region
``E_s ||Delta_theta(s)||^2 <= delta``, by the Lagrangian
``L(theta, lambda) = -E[Q(s, w)] + lambda (E||Delta||^2 - delta)`` with dual ascent
``lambda <- [lambda + eta_lambda (E||Delta||^2 - delta)]_+``.  Versus DSRL (an unconstrained
latent policy) it keeps latents on the N(0, I) support and the prior's multimodality.

Reconstructed (ours): the toy task (``env``: a 2-D point mass around two stacked disks with a
narrow gap; bimodal demos, 30% noisy), the flow-matching BC prior (``prior``: an MLP, 4 Euler
steps), the critic as a reward model over whole waypoint chunks (no bootstrapping), DSRL as a
tanh-squashed Gaussian latent policy with an auto-tuned SAC entropy bonus, residual RL on
actions (``steer``), the scales and the cache (``experiments``) and the claims (``claims``).

What held at quick scale on seeds 0-4 (claims v2; 60 x 256 episodes per run, deltas 0.5 and 2,
every LP-DS claim at its worst delta, baselines tuned over 3 values of their bound on a
validation split): the final LP-DS policy's E||Delta||^2 / delta is 0.34-0.96, and LP-DS keeps
9-10 nats more action entropy than the tuned DSRL (W = 1 on every seed).  Not holding there: the
abstract's return headline (the tuned DSRL beats LP-DS by 11-20% on all five seeds, tuned
residual RL beats it on seed 0), LP-DS / BC >= 1.10 at the worst delta (1.08 on seed 2), the
support contrast with DSRL (a tanh-bounded DSRL latent stays in the prior's ball too) and sample
efficiency.  Mutations: lambda frozen at 0 (E||Delta||^2 / delta ~50), the critic fed the
unsteered noise (final policy ~2x delta while the training batches' mean stays inside) and a
latent that replaces the noise (entropy collapses) each fail their claim.

Figures (``notebooks/lpds.ipynb``): decoded trajectories per method over the obstacle map;
return and action entropy vs episodes; E||Delta||^2 and lambda vs iterations; the latent-norm
histogram against chi^2_16.

The paper's status is computed from its claims' roles, units and committed per-seed values,
never written here: ``icml26 list`` / :mod:`icml26.status`.
"""

from icml26.lpds.claims import (
    CLAIM_SPECS,
    CLAIMS_VERSION,
    claims,
    claims_for,
    claims_from,
    measure,
)
from icml26.lpds.env import (
    MapConfig,
    bump_paths,
    demonstrations,
    dense_path,
    rollout,
    sample_states,
)
from icml26.lpds.experiments import (
    CACHE_VERSION,
    PAPER,
    SCALES,
    LPDSConfig,
    bc_result,
    config_for,
    episodes_to_fraction,
    experiment,
    figure_training_data,
    figure_trajectories_data,
    final_trust,
    method_configs,
    method_groups,
    run_method,
    summarize,
    trained_prior,
    tuned,
)
from icml26.lpds.prior import FlowPolicy, PriorConfig, train_prior
from icml26.lpds.steer import (
    METHODS,
    SteerConfig,
    Steerer,
    chi2_quantile,
    evaluate,
    evaluate_prior,
    kl_entropy,
    policy_entropy,
    train_steering,
    validation_return,
)

__all__ = [
    "CACHE_VERSION", "CLAIMS_VERSION", "CLAIM_SPECS", "METHODS", "PAPER", "SCALES", "FlowPolicy",
    "LPDSConfig", "MapConfig", "PriorConfig", "SteerConfig", "Steerer", "bc_result",
    "bump_paths", "chi2_quantile", "claims", "claims_for", "claims_from", "config_for",
    "demonstrations", "dense_path", "episodes_to_fraction", "evaluate", "evaluate_prior",
    "experiment",
    "figure_training_data", "figure_trajectories_data", "final_trust", "kl_entropy",
    "measure", "method_configs", "method_groups", "policy_entropy", "rollout", "run_method",
    "sample_states", "summarize", "train_prior", "train_steering", "trained_prior", "tuned",
    "validation_return",
]
