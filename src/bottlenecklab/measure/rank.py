"""The numerical rank of representations and weights.

`RankRule` reads a rank off a spectrum: one stated cutoff (relative, a cited paper's, or
round-off only) above the noise floor (`RANK_RULE` is the library's). Built on it or on a
relative floor: the centred rank of a representation (its affine dimension), the rank of
every weight matrix and the middle rank of a fully-connected network (paper 001, Fig 1),
and the fits of `||theta||^2` against depth per middle-rank group (paper 001, §1.1: the
slope estimates the rank, the intercept the regularity `R1`).
"""

from bottlenecklab.measure._layer_ranks import (
    AFFINE_RANK_RULE,
    CENTRED_REL,
    COR8_BOUND,
    DEPTH,
    MIDDLE_AFFINE_RANK,
    MIDDLE_RANK,
    NORM_SQ,
    RANK_FLOOR,
    centred_rank,
    centred_singular_values,
    layer_s_next,
    middle_median,
    middle_rank,
)
from bottlenecklab.measure._rank_depth import (
    rank_group_fits,
)
from bottlenecklab.measure._rank_rule import (
    CUTOFF,
    GAP,
    RANK_RELS,
    RANK_RULE,
    RANK_RULE_EXACT,
    RankReading,
    RankRule,
    precision_of,
)

__all__ = [
    "AFFINE_RANK_RULE",
    "CENTRED_REL",
    "COR8_BOUND",
    "CUTOFF",
    "DEPTH",
    "GAP",
    "MIDDLE_AFFINE_RANK",
    "MIDDLE_RANK",
    "NORM_SQ",
    "RANK_FLOOR",
    "RANK_RELS",
    "RANK_RULE",
    "RANK_RULE_EXACT",
    "RankReading",
    "RankRule",
    "centred_rank",
    "centred_singular_values",
    "layer_s_next",
    "middle_median",
    "middle_rank",
    "precision_of",
    "rank_group_fits",
]
