"""Escape from the saddle at the origin of a bias-free ReLU network (paper 003).

The localized loss `L_0(theta) = <G, Y_theta>` and its escape directions (Sec 2, Def 2.1;
projected GD with many restarts at once), the deep-linear escape speed, the norm growth
along an escape direction (Prop 2.2), depth extension (Prop 3.2), the circle example
(Example 1, Eq. 6, Sec 4), and the weak balancedness that the flow conserves (Sec 5).
"""

from bottlenecklab.theory._circle import (
    circle_inputs,
    circle_rank2_weights,
    circle_speed,
    circle_width1_loss,
    circle_width1_optimum,
    circle_width1_speed,
)
from bottlenecklab.theory._depth_extension import extend_depth
from bottlenecklab.theory._escape import (
    EscapeResult,
    cost_gradient_at_zero,
    escape_directions,
    forward_batched,
    linear_escape_speed,
    localized_loss,
)
from bottlenecklab.theory._escape_norm import (
    escape_blowup_time,
    escape_norm,
    escape_rate,
    escape_time_to_norm,
)
from bottlenecklab.theory._saddle_bounds import weak_balancedness

__all__ = [
    "EscapeResult",
    "circle_inputs",
    "circle_rank2_weights",
    "circle_speed",
    "circle_width1_loss",
    "circle_width1_optimum",
    "circle_width1_speed",
    "cost_gradient_at_zero",
    "escape_blowup_time",
    "escape_directions",
    "escape_norm",
    "escape_rate",
    "escape_time_to_norm",
    "extend_depth",
    "forward_batched",
    "linear_escape_speed",
    "localized_loss",
    "weak_balancedness",
]
