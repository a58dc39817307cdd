"""The rank of a matrix read off its singular values: one `RankRule` type, three kinds.

Every rank-valued quantity names the rule it was read with (spec README, "Rank rules"):

- **relative** (`RankRule.relative(c)`, the library's default `RANK_RULE`): the number of
  singular values `s_k > c s_1`, with one stated `c` for every layer compared. A bottleneck
  compares layers at one scale; a gap in the spectrum says how robust a count is, it does
  not choose another count per layer.
- **paper** (`RankRule.paper(cutoff, source)`): a cutoff a source document states for that
  quantity, cited; relative to `s_1` or absolute (paper 001, Fig 1: `s_k > 0.1`).
- **exact** (`RankRule.exact()`): round-off only, `s_k > f` with the noise floor
  `f = s_1 eps (sqrt(n) + sqrt(w))` of an `[n, w]` matrix (for theory identities and
  planted constructions).

The floor is the operator norm of an `[n, w]` round-off matrix whose entries are `eps`
relative to the matrix's (the Marchenko-Pastur edge), `eps` the machine epsilon of the
precision the matrix was computed in (a float32 network's representation is known to
float32's `eps` even when analysed in float64). A spectrum read from second moments
(`s_i = sqrt(lambda_i)` of a Gram matrix) is known only to `s_1 sqrt(eps64 (sqrt(n) +
sqrt(w)))`: that is its floor. Every rule counts only values above the floor.

Each reading says how robust its count `k` is: `clear` when the cutoff falls inside a gap
`s_k / max(s_{k+1}, f) >= gap` (`GAP = 3`, the library's "stands out"; the drop into the
floor counts), the counts at `RANK_RELS = (1e-1, 1e-2, 1e-3)` `s_1`, and the exact rank.

Why `c = 3e-3` (`CUTOFF`): `tests/probe/test_probe.py` plants an exact rank `k = 2..5`
(non-negative, non-orthogonal factors) followed by 1-3 random ReLU(Linear) layers, 20
initialisations each (240 networks). The planted layer's smallest centred value falls to
`0.02 s_1`, and a random layer's tail (or a linear output map) after it puts the `k`-th value
near `5e-3 s_1`: the largest cutoffs that read every network right are `4e-3` and below
(`docs/lab-notes/probe.md` has the counts per cutoff); `3e-3` keeps a margin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

__all__ = [
    "CUTOFF",
    "GAP",
    "RANK_RELS",
    "RANK_RULE",
    "RANK_RULE_EXACT",
    "RankReading",
    "RankRule",
    "precision_of",
]

GAP = 3.0  # singular values "stand out" above a gap s_i / s_{i+1} >= 3 (spec leaky-resnets.md)
RANK_RELS = (1e-1, 1e-2, 1e-3)  # the relative counts reported beside the rule's
CUTOFF = 3e-3  # the library's relative cutoff c (module docstring: how it was chosen)
KINDS = ("relative", "paper", "exact")


@dataclass(frozen=True)
class RankReading:
    """What `RankRule.read` found.

    Attributes:
        rank: the rule's count.
        exact: singular values above the noise floor (the round-off rank, numpy's
            `matrix_rank` with the floor of `RankRule.floor`).
        clear: the cutoff falls inside a gap: `gap >= RankRule.gap`.
        gap: `s_k / max(s_{k+1}, f)` at the rule's count `k` (`nan` for a zero matrix or
            `k = 0`).
        floor: `f / s_1` (0 for a zero matrix).
        cutoff: the cutoff used, relative to `s_1` (`nan` for a zero matrix).
        at_rel: `{rel: #(s_i > max(rel s_1, f))}` for `rel` in `RANK_RELS`.
    """

    rank: int
    exact: int
    clear: bool
    gap: float
    floor: float
    cutoff: float
    at_rel: dict[float, int]

    @property
    def numerical(self) -> int:
        """The round-off rank (`exact`; the name numpy's `matrix_rank` has)."""
        return self.exact


@dataclass(frozen=True)
class RankRule:
    """A rank rule (module docstring). Build one with `relative`, `paper` or `exact`.

    Args:
        kind: `relative`, `paper` or `exact`.
        cutoff: `relative`: `c` (count `s_k > c s_1`); `paper`: the stated cutoff,
            relative to `s_1` unless `absolute`; `exact`: unused (0).
        gap: the smallest ratio `s_k / s_{k+1}` around the cutoff that makes a count clear.
        source: `paper`: the citation ("paper 001, Fig 1").
        absolute: `paper`: the cutoff is absolute, not relative to `s_1`.
    """

    kind: str = "relative"
    cutoff: float = CUTOFF
    gap: float = GAP
    source: str = ""
    absolute: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"rank rule kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind == "paper" and not self.source:
            raise ValueError("a 'paper' rank rule cites its source")
        if self.kind != "exact" and not (self.cutoff > 0 and math.isfinite(self.cutoff)):
            raise ValueError(f"a rank cutoff must be a positive number, got {self.cutoff!r}")
        if self.absolute and self.kind != "paper":
            raise ValueError("only a 'paper' rank rule has an absolute cutoff")

    @classmethod
    def relative(cls, c: float = CUTOFF, gap: float = GAP) -> RankRule:
        """Count `s_k > c s_1` (one `c` for every layer compared)."""
        return cls("relative", c, gap)

    @classmethod
    def paper(
        cls, cutoff: float, source: str, absolute: bool = False, gap: float = GAP
    ) -> RankRule:
        """Count `s_k > cutoff s_1` (`s_k > cutoff` when `absolute`), as `source` states."""
        return cls("paper", cutoff, gap, source, absolute)

    @classmethod
    def exact(cls, gap: float = GAP) -> RankRule:
        """Count `s_k` above the round-off floor."""
        return cls("exact", 0.0, gap)

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

    def threshold(self, s1: float, f: float) -> float:
        """The absolute value a singular value must exceed to count (never below `f`)."""
        if self.kind == "exact":
            return f
        return max(self.cutoff if self.absolute else self.cutoff * s1, f)

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
            zeros = {r: 0 for r in RANK_RELS}
            return RankReading(0, 0, True, math.nan, 0.0, math.nan, zeros)
        s1 = float(s[0])
        f = self.floor(s1, shape, precision, moments)
        at_rel = {r: int((s > max(r * s1, f)).sum()) for r in RANK_RELS}
        exact = int((s > f).sum())
        t = self.threshold(s1, f)
        k = int((s > t).sum())
        if k == 0:
            gap = math.nan
        else:
            below = float(s[k]) if k < s.numel() else 0.0
            gap = float(s[k - 1]) / max(below, f)
        clear = k == 0 or gap >= self.gap
        return RankReading(k, exact, clear, gap, f / s1, t / s1, at_rel)

    def describe(self) -> str:
        """The rule in one sentence (tables' metadata)."""
        floor = (
            "f = s_1 eps (sqrt(n) + sqrt(w)) with eps of the precision the [n, w] matrix was "
            "computed in (s_1 sqrt(eps64 (sqrt(n) + sqrt(w))) for spectra read from second "
            "moments)"
        )
        clear = f"clear when the cutoff falls inside a gap s_k / max(s_{{k+1}}, f) >= {self.gap:g}"
        if self.kind == "exact":
            return f"exact: rank = #(s_k > f), the round-off floor {floor}; {clear}"
        if self.kind == "relative":
            cut = f"relative: rank = #(s_k > max({self.cutoff:g} s_1, f))"
        else:
            at = f"{self.cutoff:g}" if self.absolute else f"{self.cutoff:g} s_1"
            cut = f"paper ({self.source}): rank = #(s_k > max({at}, f))"
        return f"{cut}, one cutoff for every matrix compared; {clear}; the floor {floor}"


RANK_RULE = RankRule.relative()  # the library's rule for a representation's rank
RANK_RULE_EXACT = RankRule.exact()  # round-off only: theory identities, planted ranks


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
