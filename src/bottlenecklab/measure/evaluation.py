"""Data costs of a trained network on its train and test sets (float64), multi-step
rollouts of a learned dynamics (paper 002, slide 'Learning Newtonian Mechanics'), and the
float64 copy every diagnostic works on (the caller's network is never cast).
"""

from bottlenecklab.measure._costs import (
    K_STAR,
    N_TRAIN,
    TEST_COST,
    TEST_ERROR,
    TRAIN_COST,
    costs,
    data_rank,
    float64_copy,
    train_size,
)
from bottlenecklab.measure._frequency import (
    rollout,
)

__all__ = [
    "K_STAR",
    "N_TRAIN",
    "TEST_COST",
    "TEST_ERROR",
    "TRAIN_COST",
    "costs",
    "data_rank",
    "float64_copy",
    "rollout",
    "train_size",
]
