"""The numerical rank of representations and weights.

`RankRule` reads a rank off a spectrum: a gap above the noise floor of the precision the
matrix was computed in (`RANK_RULE` is the library's). Built on it or on a relative floor:
the centred rank of a representation (its affine dimension), the rank of every weight
matrix and the middle rank of a fully-connected network (paper 001, Fig 1), and the fits of
`||theta||^2` against depth per middle-rank group (paper 001, §1.1: the slope estimates the
rank, the intercept the regularity `R1`).
"""

from bottlenecklab.measure._layer_ranks import (
    CENTRED_REL,
    COR8,
    COR8_BOUND,
    COR8_MIDDLE_MAX,
    COR8_MIDDLE_MEDIAN,
    COR8_MIDDLE_MEDIAN_INIT,
    COR8_MIDDLE_MEDIAN_RANDOM,
    COR8_RANDOM_BELOW,
    DEPTH,
    MIDDLE_AFFINE_RANK,
    MIDDLE_RANK,
    NORM_SQ,
    OFF_RANK_LAYERS,
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
    rank_summary,
)
from bottlenecklab.measure._rank_depth import (
    collapse_margin,
    largest_depth_share,
    rank_depth_correlation,
    rank_group_fits,
)
from bottlenecklab.measure._rank_rule import (
    GAP,
    RANK_RELS,
    RANK_RULE,
    RankReading,
    RankRule,
    precision_of,
)

__all__ = [
    "CENTRED_REL",
    "COR8",
    "COR8_BOUND",
    "COR8_MIDDLE_MAX",
    "COR8_MIDDLE_MEDIAN",
    "COR8_MIDDLE_MEDIAN_INIT",
    "COR8_MIDDLE_MEDIAN_RANDOM",
    "COR8_RANDOM_BELOW",
    "DEPTH",
    "GAP",
    "MIDDLE_AFFINE_RANK",
    "MIDDLE_RANK",
    "NORM_SQ",
    "OFF_RANK_LAYERS",
    "RANK_FLOOR",
    "RANK_RELS",
    "RANK_RULE",
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
    "rank_summary",
]
