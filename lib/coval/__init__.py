"""COVAL: Counterfactual Occlusion-Visibility Anomaly Learning for LiDAR (a 2-D toy).

No arXiv id, authors or code were found: everything below the abstract level is
reconstructed (spec ``shared/specs/coval.md``); the method is DERIVED FROM THE ABSTRACT.

The abstract's points: LiDAR anomaly segmentation should use the occlusion voids anomalies
create; physics-conformed synthetic anomalies give paired factual / counterfactual scans with
identical geometry but different occlusion; two objectives, visibility-variant counterfactual
reconstruction (VVCR) and visibility-invariant counterfactual consistency (VICC).

Reconstructed here:
* 2-D scenes: a sensor at the origin in a room (four walls, one doorway), boxes and poles
  (normal) and one irregular jagged polygon (the anomaly); training and held-out anomaly
  shapes / sizes differ (``scene.TRAIN_SHAPES``, ``scene.TEST_SHAPES``);
* exact ray casting (``icml26.kernels.ray_cast``: ray-segment and ray-circle intersections, a
  per-ray min; Triton on CUDA tensors, the torch reference on CPU);
* factual scan = everything occludes; counterfactual = the anomaly's sides collapsed to zero
  length (non-occluding), so the background reappears inside its angular shadow only;
* input per beam: log range + hit / free / unknown carving channels on log-spaced range bins;
  second design (issue 35, ``claims`` docstring): the sensor drives a straight 6 m path and
  scans 5 times; the labelled middle sweep's channels add, on the cells its return occludes,
  the fraction of the other sweeps that saw each cell free or hit;
* model: a residual dilated circular 1-D conv net with a segmentation and a reconstruction
  head; ``L = L_seg + w_vvcr L_VVCR + w_vicc L_VICC`` (``model`` docstring); issue 47:
  L_VVCR on every beam with a return, each variant's weights chosen on a validation split.

Figures (``notebooks/coval.ipynb``): F1 factual vs counterfactual scan with the shadow; F2
point-level AP / AUROC by ablation (range-only control, seg-only, +VVCR, +VICC, full) over 3
seeds; F3 AP against anomaly size and distance.

Modules: ``scene`` (scenes, scans, shadows), ``model`` (inputs, net, losses, metrics),
``experiments`` (scales, cached runs, figure data) and ``claims``.
"""

from icml26.coval.claims import (
    CLAIM_SPECS,
    CLAIMS_VERSION,
    claims,
    claims_for,
    diagnosis_record,
    seed_record,
)
from icml26.coval.experiments import (
    CACHE_VERSION,
    PAPER,
    SCALES,
    VARIANTS,
    COVALConfig,
    config_for,
    figure_ablation_data,
    figure_scan_data,
    figure_size_distance_data,
    replicate,
    scan_data,
)
from icml26.coval.model import (
    ABLATIONS,
    CircularConvNet,
    TrainConfig,
    auroc,
    average_precision,
    bin_edges,
    encode,
    scores,
    sweep_channels,
    train,
    vvcr_loss,
)
from icml26.coval.scene import (
    ANOMALY_LO,
    MAX_VERTS,
    TEST_SHAPES,
    TRAIN_SHAPES,
    Scans,
    Scenes,
    ShapeRange,
    beam_dirs,
    cast_scans,
    cast_sweeps,
    make_scenes,
    shadow_mask,
    sweep_poses,
)

__all__ = [
    "ABLATIONS", "ANOMALY_LO", "CACHE_VERSION", "CLAIMS_VERSION", "CLAIM_SPECS", "MAX_VERTS",
    "PAPER", "SCALES", "TEST_SHAPES", "TRAIN_SHAPES", "VARIANTS", "COVALConfig",
    "CircularConvNet", "Scans", "Scenes", "ShapeRange", "TrainConfig", "auroc",
    "average_precision", "beam_dirs", "bin_edges", "cast_scans", "cast_sweeps", "claims",
    "claims_for", "config_for", "diagnosis_record", "encode", "figure_ablation_data",
    "figure_scan_data", "figure_size_distance_data", "make_scenes", "replicate", "scan_data",
    "scores", "seed_record", "shadow_mask", "sweep_channels", "sweep_poses", "train", "vvcr_loss",
]
