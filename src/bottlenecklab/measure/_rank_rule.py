"""The numerical rank of a representation: a gap in its spectrum above a noise floor.

`RankRule` reads a rank off singular values `s_1 >= s_2 >= ...` of a matrix `[n, w]` in
two steps.

1. **Noise floor** `f = s_1 eps (sqrt(n) + sqrt(w))`: the operator norm of an `[n, w]`
   round-off matrix whose entries are `eps` relative to the matrix's (the
   Marchenko-Pastur edge), with `eps` the machine epsilon of the precision the matrix was
   computed in (a float32 network's representation is known to float32's `eps` even when
   analysed in float64). numpy's `matrix_rank` uses the worst-case `s_1 max(n, w) eps`,
   which for a float16 or bfloat16 network on a thousand points exceeds `s_1`. A spectrum
   read from second moments (`s_i = sqrt(lambda_i)` of a Gram matrix) is known only to
   `s_1 sqrt(eps64 (sqrt(n) + sqrt(w)))`; that is its floor. Singular values at or below
   `f` are zero (`numerical`).
2. **Gap.** Among the `k` with `s_k > max(search s_1, f)` (`search`: the spec's relative
   cut-off `1e-3`, `RANK_REL`), the rank is the `k` of the largest ratio `s_k /
   max(s_{k+1}, f)` (the drop into the floor counts: that is an exact rank), if that ratio
   is at least `gap` (`GAP = 3`, the library's "stands out"). Without such a gap (a
   spectrum decaying smoothly) the rank is the number of `s_k` in the window.

An exactly rank-`k` matrix whose centred singular values span a condition number `s_1 /
s_k` up to `1 / search = 1000` reads `k`: its drop into the floor (`s_k / f`, about `1e9`
in float64 and `1e3` in float32 on a few hundred points) is larger than any ratio inside
its spectrum, whatever its factors. A trained network's representation, with a few dominant
directions and a tail decaying slowly below `search s_1` (dead units included), reads the
dominant count: the tail below the window is not searched. A relative cut alone does
neither: `s_i > 0.1 s_1` reads the exactly rank-3 spectrum `7.26, 0.42, 0.16, 0, ...` as
rank 1, and `s_i > 1e-3 s_1` reads a trained tail as rank 20-30 of 32. Limits: an exact
rank whose spectrum spans more than `1 / search` reads as the largest gap above `search
s_1`; a random layer whose top value stands 3x above the rest reads rank 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

__all__ = ["GAP", "RANK_RELS", "RANK_RULE", "RankReading", "RankRule", "precision_of"]

GAP = 3.0  # singular values "stand out" above a gap s_i / s_{i+1} >= 3 (spec leaky-resnets.md)
RANK_RELS = (1e-1, 1e-2, 1e-3)  # the relative ranks reported beside the rule's


@dataclass(frozen=True)
class RankReading:
    """What `RankRule.read` found.

    Attributes:
        rank: the rule's rank.
        numerical: singular values above the floor (numpy's `matrix_rank`).
        gap: the ratio `s_k / max(s_{k+1}, f)` at the rule's `k` (the largest in the search
            window; below `RankRule.gap` when no gap stands out; `nan` for a zero matrix).
        floor: `f / s_1` (0 for a zero matrix).
        stands_out: the largest ratio is at least `RankRule.gap`.
        at_rel: `{rel: #(s_i > rel s_1)}` for `rel` in `RANK_RELS`.
    """

    rank: int
    numerical: int
    gap: float
    floor: float
    stands_out: bool
    at_rel: dict[float, int]


@dataclass(frozen=True)
class RankRule:
    """The library's rank of a representation (module docstring).

    Args:
        gap: the smallest ratio `s_k / s_{k+1}` that makes a gap (`GAP`).
        search: gaps are searched among `s_k > search s_1` (`RANK_REL`).
    """

    gap: float = GAP
    search: float = 1e-3

    @staticmethod
    def floor(
        s1: float, shape: tuple[int, int], precision: torch.dtype, moments: bool = False
    ) -> float:
        """The noise floor `f` (absolute) of a spectrum with top value `s1` of a matrix
        `shape = (n, w)` computed in `precision`; `moments`: read from a Gram matrix."""
        edge = math.sqrt(shape[0]) + math.sqrt(shape[1])
        f = s1 * edge * torch.finfo(precision).eps
        if moments:
            f = max(f, s1 * math.sqrt(edge * torch.finfo(torch.float64).eps))
        return f

    def read(
        self,
        s: torch.Tensor,
        shape: tuple[int, int],
        precision: torch.dtype = torch.float64,
        moments: bool = False,
    ) -> RankReading:
        """The rank of a matrix `shape = (n, w)` from its singular values `s` (descending).

        Args:
            s: `[min(n, w)]` (or fewer: the rest are zero), any float dtype.
            precision: the dtype the matrix was computed in (its noise floor).
            moments: `s` are square roots of a Gram matrix's eigenvalues.
        """
        s = s.detach().to(torch.float64).cpu()
        if s.numel() == 0 or float(s[0]) <= 0.0:
            return RankReading(0, 0, math.nan, 0.0, False, {r: 0 for r in RANK_RELS})
        s1 = float(s[0])
        f = self.floor(s1, shape, precision, moments)
        at_rel = {r: int((s > r * s1).sum()) for r in RANK_RELS}
        numerical = int((s > f).sum())
        t = torch.cat([s, s.new_zeros(1)]).clamp_min(f)  # below the floor: f
        ratios = t[:-1] / t[1:]
        window = s > max(self.search * s1, f)
        n_window = int(window.sum())
        if n_window == 0:  # cannot happen for s1 > 0 (s1 > f): kept for safety
            return RankReading(0, numerical, math.nan, f / s1, False, at_rel)
        ratios = ratios[:n_window]  # s is descending: the window is a prefix
        k = int(torch.argmax(ratios))
        ratio = float(ratios[k])
        stands_out = ratio >= self.gap
        rank = k + 1 if stands_out else n_window
        return RankReading(rank, numerical, ratio, f / s1, stands_out, at_rel)

    def describe(self) -> str:
        """The rule in one sentence (tables' metadata)."""
        return (
            "rank = the k of the largest ratio s_k / max(s_{k+1}, f) among the s_k above max("
            f"{self.search:g} s_1, f), if that ratio is >= {self.gap:g}, else the number of "
            "those s_k; the noise floor f = s_1 eps (sqrt(n) + sqrt(w)) with eps of the "
            "precision the [n, w] matrix was computed in (s_1 sqrt(eps64 (sqrt(n) + "
            "sqrt(w))) for spectra read from second moments)"
        )


RANK_RULE = RankRule()  # the library's default


def precision_of(*tensors_or_modules: object) -> torch.dtype:
    """The least precise floating dtype among tensors, arrays and modules' parameters and
    buffers (float64 when none is floating): the precision a computation with them has."""
    dtypes: list[torch.dtype] = []
    for obj in tensors_or_modules:
        if isinstance(obj, torch.nn.Module):
            dtypes += [t.dtype for t in (*obj.parameters(), *obj.buffers())]
        elif isinstance(obj, torch.Tensor):
            dtypes.append(obj.dtype)
        elif hasattr(obj, "dtype"):
            try:
                dtypes.append(torch.from_numpy(obj[:0]).dtype)  # numpy arrays
            except (TypeError, IndexError, ValueError):
                pass
    floats = [d for d in dtypes if d.is_floating_point]
    if not floats:
        return torch.float64
    return max(floats, key=lambda d: torch.finfo(d).eps)
