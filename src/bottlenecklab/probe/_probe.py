"""`BottleneckProbe`: the theory's per-layer quantities on any PyTorch model (spec
`probe.md`), every one computed by `measure`'s layer-level core
(`RepresentationAccumulator`, `weight_quantities`, `ntk_trace_terms`, `balance_residuals`,
`jacobian_rank_log_det`), the same code the experiments' tables use."""

from __future__ import annotations

import copy
import dataclasses
import fnmatch
import inspect
import math
import re
import statistics
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import nn

from bottlenecklab import measure, theory
from bottlenecklab.probe._base import Capture, CaptureError, Layer
from bottlenecklab.probe._capture import capture, graph_mode, is_transformer, to_eval

__all__ = ["COLUMNS", "RANK_RULE", "BottleneckProbe", "ProbeError"]


# Decision (issue 43, spec README "Rank rules"): the layers are compared at one stated
# relative cutoff `c` (`measure.RANK_RULE`, `s_k > c s_1` of each centred spectrum); each
# row says whether its count is clear (c inside a gap >= 3). The former rule picked the
# largest gap per layer and read the layer after a planted rank-3 layer as rank 1.
def rank_rule_text(rule: measure.RankRule) -> str:
    """What the probe's rank and bottleneck are, with `rule` (tables' and summaries'
    metadata)."""
    return (
        f"{rule.describe()}; the precision is the least precise floating dtype of the "
        "model's parameters and of X; the bottleneck layers are the hidden layers (not "
        "input, not output) whose centred rank equals the minimum over depth, and that "
        "minimum is the measured bottleneck rank (set only when the verdict is a "
        "bottleneck); a bottleneck layer whose count is not clear makes the verdict "
        "uncertain; the Jacobian rank uses the spec's 1e-3"
    )


RANK_RULE = rank_rule_text(measure.RANK_RULE)
COLUMNS = {
    "layer_id": "position in depth (0 = input)",
    "name": "module path of the layer (fx/hooks) or its position (our models' adapters)",
    "kind": "input | activation | block (residual join) | attention (an attention module's "
    "output) | pool (a global pooling's output: a CNN's pooled features) | module (the "
    "output of a module named in layers=) | representation | output",
    "op": "the module or function whose output is captured",
    "read_as": "flatten (a sample's feature map is one row), channel (one row per position) "
    "or tokens (a transformer's every token of every sample is a row)",
    "n_samples": "rows of the representation (samples, or samples x positions)",
    "width": "features per row",
    "rank": "rank of the representation A (the rank rule, see rank_rule; its cutoff: "
    "rank_cutoff in the metadata)",
    "stable_rank": "||A||_*^2 / ||A||_F^2 (paper 000, Prop 1); WeightWatcher's stable_rank is "
    "the weight's ||W||_F^2 / ||W||_2^2, not this",
    "rank_centered": "rank of A - mean(A) (the rank rule): the bottleneck's rank",
    "stable_rank_centered": "stable rank of A - mean(A)",
    "rank_clear": "the cutoff falls inside a gap s_k / max(s_{k+1}, floor) >= 3 of the centred "
    "spectrum (k = rank_centered): the count is robust to the choice of cutoff",
    "rank_gap": "that ratio s_k / max(s_{k+1}, floor) at k = rank_centered",
    "rank_floor": "the rule's noise floor relative to s_1 (centred)",
    "rank_exact": "singular values of A - mean(A) above the floor: the exact (round-off) rank",
    "rank_at_1e-1": "singular values of A - mean(A) above 0.1 s_1 (and the floor)",
    "rank_at_1e-2": "singular values of A - mean(A) above 0.01 s_1",
    "rank_at_1e-3": "singular values of A - mean(A) above 0.001 s_1",
    "top_sv": "largest singular values of A",
    "top_sv_centered": "largest singular values of A - mean(A)",
    "coi": "cost of identity ||A||^2_K, gamma = 0, S = [relu(A), 1] (paper 000, §1.4)",
    "coi_gamma": "relaxed cost of identity ||A||^2_{K + gamma I}, gamma = gamma0 ||K||_op",
    "coi_gamma_nobias": "the same with S = relu(A)",
    "weight": "the Linear/Conv weight feeding the layer (nearest upstream)",
    "N": "larger dimension of that weight (WeightWatcher's N)",
    "M": "smaller dimension of that weight (WeightWatcher's M)",
    "W_rank": "numerical rank of W: singular values above the rank rule's floor (numpy's "
    "and WeightWatcher's matrix_rank)",
    "W_rank_fig1": "singular values of W above 0.1 (paper 001, Fig 1; measure/_layer_ranks.py)",
    "W_spikes": "singular values above the Marchenko-Pastur edge of a random matrix of W's "
    "shape plus 4 Tracy-Widom units (measure.mp_spikes); 0 on random Gaussian weights",
    "W_mp_edge": "that edge, as a singular value",
    "W_dk_sq": "d_k(W)^2 at k = the bottleneck rank (paper 001, Thm 15)",
    "balance_residual": "sum_i |in_i - out_i| / ||W_{l+1}||^2 of the layer's neurons (001 §2)",
    "bottleneck": "the layer is a bottleneck layer (see rank_rule; never set when the verdict "
    "is not a bottleneck)",
    "undefined": "quantities reported nan for this layer, with the reason",
}


class ProbeError(Exception):
    """Input the probe cannot analyse (one line: why)."""


def _as_tensor(a: Any, what: str, keep_int: bool = False) -> torch.Tensor:
    """`a` as a tensor; integers (token ids, class labels) stay integers with `keep_int`,
    else are cast to float64; booleans are cast."""
    try:
        t = torch.as_tensor(np.asarray(a) if not isinstance(a, torch.Tensor) else a)
    except (TypeError, ValueError) as e:
        raise ProbeError(f"{what} is not an array of numbers ({e})") from None
    if t.dtype == torch.bool or not (t.is_floating_point() or keep_int):
        t = t.to(torch.float64)
    if t.dim() < 1 or t.shape[0] == 0:
        raise ProbeError(f"{what} has no samples (shape {tuple(t.shape)})")
    if not bool(torch.isfinite(t).all()):
        raise ProbeError(f"{what} holds NaN or infinite values")
    return t


class BottleneckProbe:
    """Does a network have a bottleneck, where, of which rank (spec `probe.md`)?

    Args:
        model: any `nn.Module` mapping a batch `[b, ...]` to `[b, ...]`; not modified (a
            float64 copy on `device` is analysed).
        X: inputs `[N, ...]` (tensor or array) or an iterable of batches (a `DataLoader`
            yielding tensors or `(x, y)` pairs).
        Y: targets `[N, d_out]` (with `lam`: the regularized loss and the certificate).
        lam: weight decay `lambda` of the training loss; cost: `mse` or `cross_entropy`.
        layers: `auto` (every activation, residual join and the output), a glob or a list
            of names/globs, or module classes (a type filter on `op`).
        conv: `flatten` (a feature map is one row per sample) or `channel`.
        device: `cpu`, `cuda` or `auto`; batch_size: rows per forward pass of `X`.
        max_rows: rows kept exactly per layer before second moments (`measure.MAX_ROWS`).
        jacobian_points: the first rows of `X` used for Jacobians and the NTK trace.
        rank_rule: the rank rule (`measure.RANK_RULE`, see `RANK_RULE`).
        capture_method: `auto`, `fx` or `hooks`; progress: a bar (`None`: on a terminal).
        output: which element of a `forward` returning a tuple/list (an index) or a dict (a
            key) is the output (`None`: the first tensor); the summary says which.
        tokens: in a transformer (a model with `nn.MultiheadAttention`), `samples` reads
            every token of every input as a row (`[b T, d]`; the input too, when `X` is
            `[N, T, d]`), `flatten` a sample's `[T, d]` as one row.
        padding_mask: `[N, T]` booleans, True at padded tokens (PyTorch's
            `src_key_padding_mask`): passed to the model as `src_key_padding_mask` when its
            `forward` takes one, and the padded token rows are dropped.
    """

    def __init__(
        self,
        model: nn.Module,
        X: Any,
        Y: Any = None,
        lam: float | None = None,
        cost: str = "mse",
        layers: str | Sequence[str] | type | tuple[type, ...] = "auto",
        *,
        conv: str = "flatten",
        device: str = "cpu",
        batch_size: int = 2048,
        max_rows: int = measure.MAX_ROWS,
        gamma0: float = measure.GAMMA0,
        top: int = 10,
        jacobian_points: int = 256,
        rank_rule: measure.RankRule = measure.RANK_RULE,
        capture_method: str = "auto",
        progress: bool | None = None,
        output: int | str | None = None,
        tokens: str = "samples",
        padding_mask: Any = None,
    ) -> None:
        if conv not in ("flatten", "channel"):
            raise ProbeError(f"conv must be 'flatten' or 'channel', got {conv!r}")
        if tokens not in ("samples", "flatten"):
            raise ProbeError(f"tokens must be 'samples' or 'flatten', got {tokens!r}")
        self.tokens = tokens
        if cost not in ("mse", "cross_entropy"):
            raise ProbeError(f"cost must be 'mse' or 'cross_entropy', got {cost!r}")
        if lam is not None and not (isinstance(lam, int | float) and math.isfinite(lam)):
            raise ProbeError(f"lam must be a finite number >= 0, got {lam!r}")
        if lam is not None and lam < 0:
            raise ProbeError(f"lam must be >= 0 (a weight decay), got {lam!r}")
        if not isinstance(device, str) or device.split(":")[0] not in ("cpu", "cuda", "auto"):
            raise ProbeError(f"device must be cpu, cuda, cuda:N or auto, got {device!r}")
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise ProbeError("device cuda asked but no CUDA device is available")
        if not isinstance(model, nn.Module):
            raise ProbeError(f"model must be an nn.Module, got {type(model).__name__}")
        self.model, self.cost, self.lam, self.layers = model, cost, lam, layers
        self.output = output
        # Evaluated in eval mode on a copy (Dropout off, BatchNorm on running statistics):
        # the user's model, in whatever mode, is never changed.
        self.mode = _mode_note(model)
        self.conv, self.device, self.batch_size = conv, torch.device(device), batch_size
        self.max_rows, self.gamma0, self.top, self.rank_rule = max_rows, gamma0, top, rank_rule
        self.jacobian_points, self.capture_method, self.progress = (
            jacobian_points,
            capture_method,
            progress,
        )
        self.loader = None
        if isinstance(X, torch.Tensor | np.ndarray | list):
            self.X = _as_tensor(X, "X", keep_int=True)
        else:
            self.X, self.loader = None, X
        # the precision the representations were computed in (the rank rule's floor)
        data = [] if self.X is None else [self.X]
        self.precision = measure.precision_of(model, *data)
        self.weight_precision = measure.precision_of(model)
        self.Y = None if Y is None else _as_tensor(Y, "Y", keep_int=True)
        self.padding_mask = None
        if padding_mask is not None:
            m = torch.as_tensor(
                np.asarray(padding_mask) if not torch.is_tensor(padding_mask) else padding_mask
            )
            if self.X is None or m.dim() != 2 or tuple(m.shape) != tuple(self.X.shape[:2]):
                shape = "a DataLoader" if self.X is None else tuple(self.X.shape[:2])
                raise ProbeError(
                    f"padding_mask must be [N, T] like X's first two dimensions ({shape}), "
                    f"got {tuple(m.shape)}"
                )
            self.padding_mask = m.to(torch.bool)
        if self.Y is not None and self.X is not None and len(self.Y) != len(self.X):
            raise ProbeError(f"X has {len(self.X)} samples but Y has {len(self.Y)}")
        self.fixed_batch: int | None = None  # a torch.export archive's fixed batch size
        self._table: pd.DataFrame | None = None
        self._summary: dict[str, Any] | None = None

    # --- data ----------------------------------------------------------------------------
    def _batches(self) -> Iterator[torch.Tensor]:
        if self.X is not None:
            for i in range(0, len(self.X), self.batch_size):
                yield self.X[i : i + self.batch_size]
            return
        for b in self.loader:
            x = b[0] if isinstance(b, list | tuple) else b
            yield _as_tensor(x, "a batch of X", keep_int=True)

    def _n_batches(self) -> int | None:
        if self.X is not None:
            return math.ceil(len(self.X) / self.batch_size)
        try:
            return len(self.loader)
        except TypeError:
            return None

    def _head(self) -> torch.Tensor:
        """The first `jacobian_points` rows of `X` (float64, on the device)."""
        rows, n = [], 0
        for x in self._batches():
            rows.append(x)
            n += len(x)
            if n >= self.jacobian_points:
                break
        return _cast(torch.cat(rows)[: self.jacobian_points], self.device, torch.float64)

    # --- layers --------------------------------------------------------------------------
    def _selected(self, layer: Layer) -> bool:
        sel = self.layers
        if sel == "auto" or layer.kind in ("input", "output") and sel == "auto":
            return True
        if isinstance(sel, type) or (
            isinstance(sel, tuple) and all(isinstance(t, type) for t in sel)
        ):
            types = sel if isinstance(sel, tuple) else (sel,)
            return any(layer.op == t.__name__ for t in types)
        globs = [sel] if isinstance(sel, str) else list(sel)
        return any(fnmatch.fnmatchcase(layer.name, g) for g in globs)

    def _named(self, prefix: str = "") -> Any:
        """The module paths whose outputs the user asked for by name (`layers` globs), as a
        predicate; `None` for `auto` and type filters."""
        sel = self.layers
        if (
            sel == "auto"
            or isinstance(sel, type)
            or isinstance(sel, tuple)
            and sel
            and all(isinstance(t, type) for t in sel)
        ):
            return None
        globs = [sel] if isinstance(sel, str) else list(sel)
        return lambda name: any(fnmatch.fnmatchcase(name.removeprefix(prefix), g) for g in globs)

    def _rows(
        self, t: torch.Tensor, b: int, tokens: bool = False, pad: torch.Tensor | None = None
    ) -> torch.Tensor | str:
        """A captured tensor `[b, ...]` as rows, or the reason it cannot be read; a
        transformer's `[b, T, d]` (or `[T, b, d]`) with `tokens`: its `b T` token rows, less
        the padded ones (`pad` `[b, T]`, True where padded)."""
        if tokens and self.tokens == "samples" and isinstance(t, torch.Tensor):
            if t.dim() == 3 and b in t.shape[:2] and t.is_floating_point():
                return _unpadded(t.reshape(-1, t.shape[-1]), t, pad)
        if not isinstance(t, torch.Tensor) or t.dim() < 1 or t.shape[0] != b:
            shape = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            return f"output {shape} is not a [batch, ...] tensor of the {b} inputs"
        if not t.is_floating_point():
            return f"output of dtype {t.dtype} is not a representation"
        if t.dim() >= 3 and self.conv == "channel":
            return t.movedim(1, -1).reshape(-1, t.shape[1])
        return t.reshape(b, -1)

    # --- analysis ------------------------------------------------------------------------
    def analyze(self) -> pd.DataFrame:
        """One row per analysed layer, in depth order (columns: `COLUMNS`; the rank rule
        and the column meanings are in `table.attrs`)."""
        if self._table is None:
            self._analyze()
        return self._table

    def _eval_copy(self, dtype: torch.dtype | None, device: torch.device | None) -> nn.Module:
        """The model in eval mode, copied (to `dtype`/`device` when given), its output
        selected when `forward` returns a tuple, list or dict (`_Selected`)."""
        net = to_eval(copy.deepcopy(self.model))
        if dtype is not None or device is not None:
            net = net.to(device=device, dtype=dtype)
        first = next(iter(net.parameters()), None)
        x = _cast(
            next(self._batches())[:2],
            device or (first.device if first is not None else torch.device("cpu")),
            dtype or (first.dtype if first is not None else self.precision),
        )
        try:
            with torch.no_grad():
                out = net(x)
        except Exception as e:  # the model cannot run on this data
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            fixed = re.search(r"Guard failed: \S*size\(\)\[0\] == (\d+)", msg)
            if fixed is None:
                raise ProbeError(f"the model fails on X of shape {tuple(x.shape)}: {msg}") from None
            # a torch.export archive with a fixed batch size: analysed in batches of it
            self.fixed_batch = self.batch_size = int(fixed.group(1))
            x = _pad(x, self.fixed_batch)
            with torch.no_grad():
                out = net(x)
            x = x[: self.fixed_batch]
        batch_note = (
            f"; exported with a fixed batch of {self.fixed_batch}: run in batches of "
            f"{self.fixed_batch}, the last padded with copies of its first row"
            if self.fixed_batch is not None
            else ""
        )
        if isinstance(out, torch.Tensor):
            self.output_note = "forward returns a tensor" + batch_note
            self._check_targets(out, len(x))
            return net
        key, note = _pick_output(out, self.output)
        self.output_note = note + batch_note
        self._check_targets(out[key], len(x))
        return _Selected(net, key)

    def _analyze(self) -> None:
        net = self._eval_copy(torch.float64, self.device)
        for p in net.parameters():
            p.requires_grad_(False)
        masked = self.padding_mask is not None and _takes_padding_mask(self.model)
        if masked:
            net = _Masked(net)
        prefix = _prefix(net)
        cap = capture(net, self.capture_method, self._named(prefix))
        self._transformer = is_transformer(net)
        if prefix:
            _strip_prefix(cap, prefix)
        accs: dict[str, measure.RepresentationAccumulator] = {}
        input_acc = measure.RepresentationAccumulator(self.max_rows)
        skipped: dict[str, str] = dict(cap.skipped)
        bar = self._bar()
        seen_samples = 0
        offset, dropped = 0, 0
        with torch.no_grad(), cap:  # a hooks capture's hooks stay on `net` for the loop only
            for x in self._batches():
                x = _cast(x, self.device, torch.float64)
                b = len(x)
                pad = None
                if self.padding_mask is not None:
                    pad = self.padding_mask[offset : offset + b].to(self.device)
                    offset += b
                    dropped += int(pad.sum())
                    if masked:
                        net.mask = pad
                try:
                    if self.fixed_batch is not None and b < self.fixed_batch:
                        _, values = cap.run(_pad(x, self.fixed_batch))
                        values = {
                            k: v[:b] if isinstance(v, torch.Tensor) else v
                            for k, v in values.items()
                        }
                    else:
                        _, values = cap.run(x)
                except Exception as e:  # the model cannot run on this data
                    msg = str(e).splitlines()[0] if str(e) else type(e).__name__
                    raise ProbeError(
                        f"the model fails on X of shape {tuple(x.shape)}: {msg}"
                    ) from None
                token_input = self.tokens == "samples" and x.dim() == 3 and self._transformer
                self._input_read = "tokens" if token_input else "flatten"
                input_acc.update(
                    _unpadded(x.reshape(-1, x.shape[-1]), x, pad)
                    if token_input
                    else x.reshape(b, -1)
                )
                for layer in cap.layers:
                    if not self._selected(layer) or layer.name in skipped:
                        continue
                    rows = self._rows(values.get(layer.name), b, layer.tokens, pad)
                    if isinstance(rows, str):
                        skipped[layer.name] = rows
                        accs.pop(layer.name, None)
                        continue
                    if not bool(torch.isfinite(rows).all()):
                        raise ProbeError(f"layer {layer.name} gives NaN or infinite values")
                    accs.setdefault(layer.name, measure.RepresentationAccumulator(self.max_rows))
                    accs[layer.name].update(rows)
                seen_samples += b
                if bar is not None:
                    bar.update(1)
        if bar is not None:
            bar.close()
        if seen_samples == 0:
            raise ProbeError("X has no samples")
        layers = [layer for layer in cap.layers if layer.name in accs]
        if not layers or all(layer.kind == "output" for layer in layers):
            why = (
                f"the layer filter {self.layers!r} matches none of "
                f"{[layer.name for layer in cap.layers]}"
                if cap.layers and self.layers != "auto"
                else "no activation, residual block or adapter layer found "
                f"(capture: {cap.method}{'; fx: ' + cap.fx_error if cap.fx_error else ''})"
            )
            raise CaptureError(why)
        rows = [self._input_row(input_acc)]
        for layer in layers:
            rows.append(self._layer_row(layer, accs[layer.name]))
        table = pd.DataFrame(rows)
        for col in ("top_sv", "top_sv_centered", "W_top_sv", "weight", "N", "M", "undefined"):
            if col not in table.columns:
                table[col] = None
        for col in ("top_sv", "top_sv_centered", "W_top_sv"):  # parquet: one list type per column
            table[col] = [v if isinstance(v, list) else [] for v in table[col]]
        table.insert(0, "layer_id", range(len(table)))
        self._verdict = self._read_bottleneck(table)
        k = self._verdict["bottleneck_rank"]
        table["W_dk_sq"] = [self._dk(layer, k) for layer in [None] + layers]
        self._balance(table, cap, layers)
        table.attrs = {
            "rank_rule": rank_rule_text(self.rank_rule),
            "rank_rule_kind": self.rank_rule.kind,
            "rank_cutoff": self.rank_rule.cutoff,
            "rank_rule_gap": self.rank_rule.gap,
            "rank_rule_absolute": self.rank_rule.absolute,
            "precision": str(self.precision).removeprefix("torch."),
            "columns": COLUMNS,
            "capture": cap.method,
        }
        if self.fixed_batch is not None:
            net = _FixedBatch(net, self.fixed_batch)
        self._table, self._cap, self._net = table, cap, net
        self._padding = None
        if self.padding_mask is not None:
            self._padding = (
                f"{dropped} padded tokens of {self.padding_mask.numel()} dropped from the "
                "token rows; the mask "
                + (
                    "passed to the model as src_key_padding_mask"
                    if masked
                    else "not passed to the model (its forward takes no src_key_padding_mask)"
                )
                + "; the Jacobians, the NTK trace and the loss are computed without it"
            )
        self._skipped = [{"name": n, "reason": r} for n, r in skipped.items()]

    def _loss_data(self) -> tuple[torch.Tensor, torch.Tensor] | str:
        """`(X, Y)` for the regularized loss and the certificate, or why there is none. A
        DataLoader's batches are gathered (`O(N)` memory: the certificate needs all
        points): its `(x, y)` pairs, or its `x` with the `Y` given."""
        if self.lam is None:
            return "needs lam (and targets Y)"
        data = self._gathered()
        if isinstance(data, str):
            return data
        X, Y = data
        if not X.is_floating_point():
            return (
                f"the inputs are integers ({X.dtype}): the regularized loss and the "
                "certificate are computed on floating inputs only"
            )
        if Y.dim() == 1 and self.cost == "cross_entropy":
            # class labels [N]: one-hot rows of the output's width (the costs' form)
            with torch.no_grad():
                d_out = self._eval_copy(None, None)(_cast(X[:2], None, self._dtype())).reshape(
                    2, -1
                )
            labels = Y.to(torch.int64)
            if not bool((labels == Y).all()) or labels.min() < 0 or labels.max() >= d_out.shape[1]:
                raise ProbeError(
                    f"class labels Y must be whole numbers in [0, {d_out.shape[1]}) (the "
                    "output's width)"
                )
            Y = torch.nn.functional.one_hot(labels, d_out.shape[1]).to(torch.float64)
        return X, Y.to(torch.float64)

    def _gathered(self) -> tuple[torch.Tensor, torch.Tensor] | str:
        """`(X, Y)` as given, or gathered from the DataLoader, or why there are none."""
        if self.X is not None:
            return (self.X, self.Y) if self.Y is not None else "needs targets Y"
        xs, ys = [], []
        for b in self.loader:
            pair = isinstance(b, list | tuple) and len(b) >= 2
            xs.append(_as_tensor(b[0] if isinstance(b, list | tuple) else b, "a batch of X", True))
            if pair:
                ys.append(_as_tensor(b[1], "a batch of Y", keep_int=True))
        X = torch.cat(xs)
        if self.Y is not None:
            Y = self.Y
        elif ys and len(ys) == len(xs):
            Y = torch.cat(ys)
        else:
            return "needs targets Y: the DataLoader yields no (x, y) pairs and Y is not given"
        if len(Y) != len(X):
            return f"the DataLoader gives {len(X)} samples but Y has {len(Y)}"
        self._check_targets(self._eval_copy(None, None)(_cast(X[:2], None, self._dtype())), 2, Y)
        return X, Y

    def _dtype(self) -> torch.dtype:
        first = next(iter(self.model.parameters()), None)
        return first.dtype if first is not None else self.precision

    def _hidden(self, table: pd.DataFrame) -> pd.Series:
        """The layers the bottleneck is sought among: the hidden layers; in a transformer
        the residual stream after each block (`over` says so)."""
        if self._transformer and (table["kind"] == "block").any():
            self._over = "the residual stream after each block" + (
                ", tokens as samples" if self.tokens == "samples" else ""
            )
            return table["kind"] == "block"
        self._over = "the hidden layers"
        return table["kind"].isin(["activation", "block", "pool", "module", "representation"])

    def _check_targets(
        self, out: torch.Tensor | None, b: int, Y: torch.Tensor | None = None
    ) -> None:
        """`Y` `[N, d]` must have the output's `d` columns (class labels `[N]` with
        `cross_entropy`)."""
        Y = self.Y if Y is None else Y
        if Y is None or out is None:
            return
        d_out = out.reshape(b, -1).shape[1]
        if Y.dim() == 1 and self.cost == "cross_entropy":
            return
        d_y = Y.reshape(len(Y), -1).shape[1]
        if d_y != d_out:
            raise ProbeError(f"Y has {d_y} columns but the model's output has {d_out}")

    def _bar(self):
        show = self.progress if self.progress is not None else sys.stderr.isatty()
        if not show:
            return None
        from tqdm.auto import tqdm

        return tqdm(total=self._n_batches(), desc="probe", unit="batch", leave=False)

    def _input_row(self, acc: measure.RepresentationAccumulator) -> dict[str, Any]:
        row = {"name": "input", "kind": "input", "op": "", "read_as": self._input_read}
        return {
            **row,
            **acc.quantities(
                gamma0=self.gamma0, top=self.top, rule=self.rank_rule, precision=self.precision
            ),
            "weight": None,
        }

    def _layer_row(self, layer: Layer, acc: measure.RepresentationAccumulator) -> dict[str, Any]:
        q = acc.quantities(
            gamma0=self.gamma0, top=self.top, rule=self.rank_rule, precision=self.precision
        )
        undefined = []
        if math.isnan(q["coi"]):
            undefined.append(f"coi: {measure.REASONS['coi_moments']}")
        if not layer.homogeneous:
            for key in ("coi", "coi_residual", "coi_gamma"):
                q[key] = math.nan
            undefined.append(f"coi, coi_gamma: {measure.REASONS['not_homogeneous']}")
        row = {
            "name": layer.name,
            "kind": layer.kind,
            "op": layer.op,
            "read_as": "tokens" if layer.tokens and self.tokens == "samples" else self.conv,
            **q,
            "weight": layer.weight.name if layer.weight is not None else None,
        }
        if layer.weight is not None:
            ref = layer.weight
            row.update(
                measure.weight_quantities(
                    None if ref.singular_values is not None else ref.weight,
                    top=self.top,
                    singular_values=ref.singular_values,
                    shape=ref.shape,
                    precision=self.weight_precision,
                    rule=self.rank_rule,
                )
            )
        row["undefined"] = "; ".join(undefined)
        return row

    def _dk(self, layer: Layer | None, k: int | None) -> float:
        if layer is None or layer.weight is None or k is None:
            return math.nan
        W = layer.weight.weight
        if layer.weight.singular_values is not None or k > min(W.shape):
            return math.nan
        return theory.partial_isometry_distance_sq(W, k)

    def _balance(self, table: pd.DataFrame, cap: Capture, layers: list[Layer]) -> None:
        table["balance_residual"] = math.nan
        if cap.chain is None:
            return
        refs = cap.chain[0]
        res = measure.balance_residuals([r.weight for r in refs], [r.bias for r in refs])
        by_weight = {r.name: res["per_neuron"][i] for i, r in enumerate(refs[:-1])}
        for i, layer in enumerate([None] + layers):
            if layer is not None and layer.weight is not None and layer.kind != "output":
                table.loc[i, "balance_residual"] = by_weight.get(layer.weight.name, math.nan)

    # --- model-level quantities ----------------------------------------------------------
    def _jacobians(self) -> dict[str, Any]:
        X = self._head()
        if not X.is_floating_point():
            return {
                "jacobian_points": 0,
                "jacobian_sv_median": [],
                "jacobian_rank": None,
                "jacobian_rank_max": None,
                "log_det_J_median": None,
                "jacobian_undefined": f"the inputs are integers ({X.dtype}): no Jacobian",
            }
        f = self._cap.function or self._net
        try:
            # vmap's notice that an operator (attention's backward) has no batching rule
            # is about speed, not about the result: silenced here, and only it
            with torch.enable_grad(), warnings.catch_warnings():
                warnings.filterwarnings(
                    "ignore", message="There is a performance drop", category=UserWarning
                )
                J = measure.function_jacobians(f, X)
        except Exception:  # not vmappable (data-dependent control flow...): row by row
            J = _autograd_jacobians(f, X)
        J = J.reshape(len(X), -1, X[0].numel())
        s = measure.jacobian_singular_values(J.cpu())
        ranks, logs = zip(*(measure.jacobian_rank_log_det(row) for row in s))
        return {
            "jacobian_points": len(X),
            "jacobian_sv_median": np.median(s, axis=0).tolist(),
            "jacobian_rank": int(statistics.median(ranks)),
            "jacobian_rank_max": int(max(ranks)),
            "log_det_J_median": float(statistics.median(logs)),
            "jacobian_undefined": None,
        }

    def _ntk(self) -> tuple[float | None, str | None]:
        X = self._head()
        if not X.is_floating_point():
            return None, f"the inputs are integers ({X.dtype}): no NTK trace is computed"
        if self._cap.ntk is not None:
            return float(self._cap.ntk(X.cpu()).mean()), None
        tr = _linear_ntk_trace(self._net, X)
        if isinstance(tr, str):
            return None, tr
        return float(tr.mean()), None

    def _read_bottleneck(self, table: pd.DataFrame) -> dict[str, Any]:
        """The verdict on the hidden layers' centred ranks (all read at one cutoff); sets
        the table's `bottleneck` column only when the verdict is a bottleneck."""
        hidden = self._hidden(table)
        table["bottleneck"] = False
        rows = table[hidden]
        out_rows = table[table["kind"] == "output"]
        r_in = int(table.loc[0, "rank_centered"])
        r_out = int(out_rows["rank_centered"].iloc[0]) if len(out_rows) else None
        ends = [r for r in (r_in, r_out) if r is not None]
        result: dict[str, Any] = {
            "bottleneck_rank": None,
            "bottleneck_layers": [],
            "clear": None,
            "min_rank": None,
            "min_layers": [],
        }
        if not len(rows):
            result["verdict"] = "no hidden layer to compare"
            return result
        k = int(rows["rank_centered"].min())
        at_min = hidden & (table["rank_centered"] == k)
        names = table.loc[at_min, "name"].tolist()
        width = int(table.loc[at_min, "width"].min())
        at = ", ".join(names)
        result.update(min_rank=k, min_layers=names)
        cut = f"s_k > {self.rank_rule.cutoff:g} s_1" if self.rank_rule.kind != "exact" else ""
        rule = f"centred, {cut}" if cut else "centred, exact rank"
        if k == 0:
            verdict = f"collapsed: the representation at {at} is constant over the data (rank 0)"
            found = True
        elif k <= min(ends) and k < width:
            verdict = (
                f"bottleneck: rank {k} ({rule}) at {at}, at most the input rank {r_in} and "
                f"the output rank {r_out}, below the layer width {width}"
            )
            found = True
        elif k < width:
            verdict = (
                f"no bottleneck (low rank): the smallest hidden rank {k} ({rule}, at {at}) is "
                f"below the width {width} but above min(input rank {r_in}, output rank "
                f"{r_out})"
            )
            found = False
        else:
            verdict = f"no bottleneck: the smallest hidden rank {k} ({rule}) is the full width"
            found = False
        unclear = [
            n for n in names if not bool(table.loc[table["name"] == n, "rank_clear"].iloc[0])
        ]
        if found and k > 0:
            table["bottleneck"] = at_min
            result.update(bottleneck_rank=k, bottleneck_layers=names, clear=not unclear)
            if unclear:
                counts = "; ".join(
                    f"{n}: {int(r['rank_at_1e-1'])}, {int(r['rank_at_1e-2'])}, "
                    f"{int(r['rank_at_1e-3'])}"
                    for n in unclear
                    for _, r in table[table["name"] == n].iterrows()
                )
                verdict += (
                    f"; uncertain: no gap of {self.rank_rule.gap:g} around the cutoff (the "
                    f"count depends on it; counts at 1e-1, 1e-2, 1e-3 s_1 at {counts})"
                )
        elif found:
            table["bottleneck"] = at_min
            result.update(bottleneck_rank=0, bottleneck_layers=names, clear=True)
        if self._transformer:
            verdict += f" (computed over {self._over})"
        result["verdict"] = verdict
        return result

    def summary(self) -> dict[str, Any]:
        """`bottleneck_rank`, `bottleneck_layers`, `verdicts`, `skipped` (every layer not
        analysed, with its reason), Jacobian and NTK figures, the regularized loss when `Y`
        and `lam` are given, and `certificate`."""
        if self._summary is not None:
            return self._summary
        table = self.analyze()
        v = self._verdict
        out_rows = table[table["kind"] == "output"]
        ntk, ntk_reason = self._ntk()
        s: dict[str, Any] = {
            "model": type(self.model).__name__,
            "capture": self._cap.method,
            "fx_error": self._cap.fx_error,
            "n_samples": int(table.loc[0, "n_samples"]),
            "layers_analysed": int(self._hidden(table).sum()),
            "bottleneck_rank": v["bottleneck_rank"],
            "bottleneck_layers": v["bottleneck_layers"],
            "bottleneck_clear": v["clear"],
            "bottleneck_over": self._over,
            "min_hidden_rank": v["min_rank"],
            "min_rank_layers": v["min_layers"],
            "rank_rule": rank_rule_text(self.rank_rule),
            "rank_cutoff": self.rank_rule.cutoff,
            "precision": str(self.precision).removeprefix("torch."),
            "input_rank": int(table.loc[0, "rank_centered"]),
            "output_rank": int(out_rows["rank_centered"].iloc[0]) if len(out_rows) else None,
            **self._jacobians(),
            "ntk_trace_mean": ntk,
            "ntk_trace_undefined": ntk_reason,
            "skipped": self._skipped,
            "mode": self.mode,
            "output_read": self.output_note,
            "padding": self._padding,
        }
        s["verdicts"] = {"bottleneck": v["verdict"]}
        s["loss"] = None
        s["certificate"] = None
        s["loss_undefined"] = None
        data = self._loss_data()
        if isinstance(data, str):
            s["loss_undefined"] = data
        else:
            X, Y = data
            model = self._eval_copy(None, None)  # in the model's own dtype, eval mode
            if self.fixed_batch is not None:
                model = _FixedBatch(model, self.fixed_batch)
            s["loss"] = measure.regularized_loss(model, X, Y, self.lam, self.cost)
            # The convergence certificate (spec `convergence.md`).
            cert = measure.certify(model, (X, Y), self.lam, cost=self.cost)
            s["certificate"] = {
                **cert.scalars(prefix=""),
                "kinks_per_layer": list(cert.kinks),
                "tau": cert.tau,
                "threshold": cert.threshold,
                "converged": cert.converged,
            }
            s["verdicts"]["converged"] = (
                f"{'converged' if cert.converged else 'not converged'}: nonsmooth "
                f"stationarity {cert.stationarity:.3g} "
                f"{'<=' if cert.converged else '>'} threshold {cert.threshold:g} "
                f"(the network is {'' if cert.converged else 'not '}at a critical point of "
                f"its regularized loss; evaluated in {self.mode})"
            )
        self._summary = s
        return s

    # --- outputs -------------------------------------------------------------------------
    def plot(self, out_dir: str | Path) -> list[Path]:
        """Rank-vs-depth strip, spectra per layer and the Jacobian spectrum, as PNGs under
        `out_dir` (created); returns their paths."""
        # `report` is the one package that imports matplotlib; its probe module imports
        # nothing of the experiments (import-linter contract).
        from bottlenecklab.report._probe import probe_figures

        return probe_figures(self.analyze(), self.summary(), Path(out_dir))

    def report(self, out_dir: str | Path) -> Path:
        """`out_dir/report.html` with the figures beside it (the experiment report's style),
        plus `layers.parquet` and `summary.json`; returns the page's path."""
        from bottlenecklab.report._probe import probe_report

        return probe_report(self.analyze(), self.summary(), Path(out_dir))


def _takes_padding_mask(model: nn.Module) -> bool:
    try:
        return "src_key_padding_mask" in inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return False


def _unpadded(rows: torch.Tensor, t: torch.Tensor, pad: torch.Tensor | None) -> torch.Tensor:
    """Token rows `[b T, d]` of `t` (`[b, T, ...]` or `[T, b, ...]`) less the padded ones
    (`pad` `[b, T]`)."""
    if pad is None:
        return rows
    keep = ~pad if tuple(t.shape[:2]) == tuple(pad.shape) else ~pad.T
    return rows[keep.reshape(-1)]


def _prefix(net: nn.Module) -> str:
    """The attribute path the probe's wrappers (`_Selected`, `_Masked`) add to names."""
    prefix = ""
    while isinstance(net, _Selected | _Masked):
        prefix, net = prefix + "inner.", net.inner
    return prefix


class _Masked(nn.Module):
    """A model called with `src_key_padding_mask=mask` (set per batch)."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner, self.mask = inner, None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mask = self.mask if self.mask is not None and len(self.mask) == len(x) else None
        return self.inner(x, src_key_padding_mask=mask)


def _mode_note(model: nn.Module) -> str:
    """The mode the probe evaluates `model` in, and the mode it was given in."""
    mode = graph_mode(model)
    if mode == "train":
        return (
            "eval mode on a copy (an exported graph in train mode: its batch_norm calls "
            "switched to running statistics and its dropout off)"
        )
    if mode == "eval":
        return "eval mode on a copy (an exported graph in eval mode)"
    if isinstance(model, torch.fx.GraphModule) and "eval" in vars(model):
        return "eval mode on a copy (an exported graph with no train/eval-dependent call)"
    if model.training:
        return "eval mode on a copy (the model was in train mode)"
    return "eval mode on a copy"


def _cast(x: torch.Tensor, device: torch.device | None, dtype: torch.dtype) -> torch.Tensor:
    """`x` on `device`, in `dtype` when it is floating (integer inputs, such as an
    `nn.Embedding`'s token ids, pass unchanged)."""
    return x.to(device, dtype) if x.is_floating_point() else x.to(device)


def _pad(x: torch.Tensor, b: int) -> torch.Tensor:
    """`x` `[n, ...]`, `n <= b`, padded to `b` rows with copies of its first row."""
    if len(x) >= b:
        return x
    return torch.cat([x, x[:1].expand(b - len(x), *x.shape[1:])])


class _FixedBatch(nn.Module):
    """A model that runs only on batches of `b` rows, run on any batch: chunks of `b`, the
    last padded (its padding's outputs dropped; samples are independent in eval mode)."""

    def __init__(self, inner: nn.Module, b: int) -> None:
        super().__init__()
        self.inner, self.b = inner, b

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs = []
        for i in range(0, len(x), self.b):
            chunk = x[i : i + self.b]
            outs.append(self.inner(_pad(chunk, self.b))[: len(chunk)])
        return torch.cat(outs)


class _Selected(nn.Module):
    """A model whose `forward` returns a tuple, list or dict, reduced to one tensor."""

    def __init__(self, inner: nn.Module, key: int | str) -> None:
        super().__init__()
        self.inner, self.key = inner, key

    def forward(self, x: torch.Tensor, **kw: Any) -> torch.Tensor:
        return self.inner(x, **kw)[self.key]


def _pick_output(out: Any, wanted: int | str | None) -> tuple[int | str, str]:
    """The key of the output tensor in a tuple/list/dict `out`, and a note saying which."""
    if isinstance(out, dict):
        keys = list(out)
        kind = f"a dict with keys {keys}"
    elif isinstance(out, list | tuple):
        keys = list(range(len(out)))
        kind = f"a {type(out).__name__} of {len(out)}"
    else:
        raise ProbeError(f"forward returns a {type(out).__name__}, not a tensor")
    if wanted is not None:
        if wanted not in keys or not isinstance(out[wanted], torch.Tensor):
            raise ProbeError(f"output {wanted!r} is not a tensor of the model's output ({kind})")
        return wanted, f"forward returns {kind}: analysed {wanted!r} (asked)"
    for k in keys:
        if isinstance(out[k], torch.Tensor):
            return k, f"forward returns {kind}: analysed {k!r}, its first tensor"
    raise ProbeError(f"forward returns {kind} with no tensor in it")


def _strip_prefix(cap: Capture, prefix: str) -> None:
    """Layer names without the wrappers' attribute path (`_prefix`); a hooks capture's
    layers, found while the first batch runs, are renamed after each run."""
    done: set[int] = set()

    def strip_layers() -> None:
        for layer in cap.layers:
            if id(layer) in done:
                continue
            done.add(id(layer))
            layer.name = layer.name.removeprefix(prefix)
            if layer.weight is not None:
                layer.weight = dataclasses.replace(
                    layer.weight, name=layer.weight.name.removeprefix(prefix)
                )

    strip_layers()
    cap.skipped = [(n.removeprefix(prefix), r) for n, r in cap.skipped]
    run = cap.run

    def renamed(x: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        out, values = run(x)
        strip_layers()
        return out, {k.removeprefix(prefix): v for k, v in values.items()}

    cap.run = renamed


def _autograd_jacobians(f: Any, X: torch.Tensor) -> torch.Tensor:
    """`[N, d_out, d_in]` by one backward pass per output (samples are independent)."""
    with torch.enable_grad():
        x = X.clone().requires_grad_(True)
        y = f(x).reshape(len(X), -1)
        rows = [
            torch.autograd.grad(y[:, c].sum(), x, retain_graph=True)[0].reshape(len(X), -1)
            for c in range(y.shape[1])
        ]
    return torch.stack(rows, dim=1)


def _linear_ntk_trace(net: nn.Module, X: torch.Tensor) -> torch.Tensor | str:
    """`Tr Theta(x, x)` `[n]` of a network whose parameters all sit in `nn.Linear` modules
    called once each (`measure.ntk_trace_terms`: `J_l` from one backward pass per output
    through a zero perturbation of each layer's output, never the parameter Jacobian), or
    the reason it is not defined."""
    linears = [(n, m) for n, m in net.named_modules() if isinstance(m, nn.Linear)]
    owned = {id(p) for _, m in linears for p in m.parameters()}
    if not linears or any(id(p) not in owned for p in net.parameters()):
        return "NTK trace needs every parameter in an nn.Linear module"
    inputs: dict[str, torch.Tensor] = {}
    deltas: dict[str, torch.Tensor] = {}
    calls: dict[str, int] = {}

    def hook(name: str):
        def h(mod, inp, out):
            calls[name] = calls.get(name, 0) + 1
            inputs[name] = inp[0].detach()
            deltas[name] = torch.zeros_like(out, requires_grad=True)
            return out + deltas[name]

        return h

    handles = [m.register_forward_hook(hook(n)) for n, m in linears]
    try:
        with torch.enable_grad():
            y = net(X).reshape(len(X), -1)
            names = [n for n, _ in linears if n in deltas]
            if any(calls[n] > 1 for n in names) or any(inputs[n].dim() != 2 for n in names):
                return "NTK trace needs each nn.Linear applied once to [batch, features]"
            per_c = [
                torch.autograd.grad(y[:, c].sum(), [deltas[n] for n in names], retain_graph=True)
                for c in range(y.shape[1])
            ]
    finally:
        for h in handles:
            h.remove()
    jacs = [torch.stack([g[i] for g in per_c], dim=1).cpu() for i in range(len(names))]
    betas = [1.0 if dict(linears)[n].bias is not None else 0.0 for n in names]
    return measure.ntk_trace_terms(jacs, [inputs[n].cpu() for n in names], betas)
