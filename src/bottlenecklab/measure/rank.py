"""The numerical rank of representations and weights.

`RankRule` reads a rank off a spectrum: one stated cutoff (relative, a cited paper's, or
round-off only) above the noise floor (`RANK_RULE` is the library's). Built on it or on a
relative floor: the centred rank of a representation (its affine dimension), the rank of
every weight matrix and the middle rank of a fully-connected network (paper 001, Fig 1),
and the fits of `||theta||^2` against depth per middle-rank group (paper 001, §1.1: the
slope estimates the rank, the intercept the regularity `R1`).
"""

from bottlenecklab.measure._layer_ranks import (
    CENTRED_REL,
    RANK_FLOOR,
    affine_profile,
    centred_rank,
    centred_singular_values,
    cor8_summary,
    layer_ranks,
    layer_s_next,
    middle_affine_rank,
    middle_layer,
    middle_median,
    middle_rank,
    random_middle_medians,
)
from bottlenecklab.measure._rank_depth import (
    collapse_margin,
    largest_depth_share,
    rank_depth_correlation,
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
    "CENTRED_REL",
    "CUTOFF",
    "GAP",
    "RANK_FLOOR",
    "RANK_RELS",
    "RANK_RULE",
    "RANK_RULE_EXACT",
    "RankReading",
    "RankRule",
    "affine_profile",
    "centred_rank",
    "centred_singular_values",
    "collapse_margin",
    "cor8_summary",
    "largest_depth_share",
    "layer_ranks",
    "layer_s_next",
    "middle_affine_rank",
    "middle_layer",
    "middle_median",
    "middle_rank",
    "precision_of",
    "random_middle_medians",
    "rank_depth_correlation",
    "rank_group_fits",
]
