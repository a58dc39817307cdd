"""Full-batch training in phases with the model's explicit regularizer and checkpoints;
phase kinds live in the `PHASES` registry, each phase may carry its own weight decay
(`continuation`: a geometric path in `lambda`); `train_ensemble` trains many same-shape
networks at once (torch.func)."""

from bottlenecklab.training._checkpoint import (
    CheckpointError,
    load_checkpoint,
    previous_checkpoint,
    save_checkpoint,
)
from bottlenecklab.training._config import PhaseConfig, TrainConfig
from bottlenecklab.training._continuation import continuation
from bottlenecklab.training._ensemble import ensemble_phases, train_ensemble
from bottlenecklab.training._extension import Extension, extend
from bottlenecklab.training._kink_newton import KinkNewton, find_kinks, kink_newton_step
from bottlenecklab.training._newton import NewtonOutcome, newton_steps
from bottlenecklab.training._phases import PHASES, STOP, PhaseKind
from bottlenecklab.training._representation_gd import (
    RepresentationGDResult,
    network_from_representations,
    train_representations,
)
from bottlenecklab.training._small_init import (
    SmallInitConfig,
    SmallInitResult,
    scale_to_norm,
    train_small_init,
)
from bottlenecklab.training._smoothing import SmoothReLU, check_smoothable, smooth_leaky_relu
from bottlenecklab.training._trainer import Bookkeeper, TrainingDiverged, TrainResult, train
from bottlenecklab.training._trust_region import TrustRegion, trust_region_step
from bottlenecklab.training._woodbury import Woodbury, output_jacobian, regularization_diagonal
from bottlenecklab.training._woodbury_newton import (
    WoodburyTrustRegion,
    preconditioned_gltr,
    woodbury_trust_region_step,
)

__all__ = [
    "PHASES",
    "STOP",
    "Bookkeeper",
    "CheckpointError",
    "Extension",
    "KinkNewton",
    "NewtonOutcome",
    "PhaseConfig",
    "PhaseKind",
    "RepresentationGDResult",
    "SmallInitConfig",
    "SmallInitResult",
    "SmoothReLU",
    "TrainConfig",
    "TrainResult",
    "TrainingDiverged",
    "TrustRegion",
    "Woodbury",
    "WoodburyTrustRegion",
    "check_smoothable",
    "continuation",
    "ensemble_phases",
    "extend",
    "find_kinks",
    "kink_newton_step",
    "load_checkpoint",
    "network_from_representations",
    "newton_steps",
    "output_jacobian",
    "preconditioned_gltr",
    "previous_checkpoint",
    "regularization_diagonal",
    "save_checkpoint",
    "scale_to_norm",
    "smooth_leaky_relu",
    "train",
    "train_ensemble",
    "train_representations",
    "train_small_init",
    "trust_region_step",
    "woodbury_trust_region_step",
]
