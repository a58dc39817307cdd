"""Neuron merging for positively homogeneous activations (paper 004, §4, Prop 15, App D.2),
with the spec's rules (`l2-sparsity.md`, Decision: merging; 1-D rule)."""

from __future__ import annotations

import torch

__all__ = ["MERGE_COSINE", "merge_layer", "prune_one_dim"]

MERGE_COSINE = 0.999  # spec Decision: Z_l[:, i] = c Z_l[:, j], c > 0, read as cosine > 0.999


def _rebalance(w: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`w <- s w`, `v <- v / s`, `s = (||v|| / ||w||)^(1/2)` per neuron (rows of `w`, columns
    of `v`): `||w_i|| = ||v_i||`, the smallest `||w_i||^2 + ||v_i||^2` of the rescalings."""
    nw, nv = w.norm(dim=1), v.norm(dim=0)
    s = torch.sqrt(nv / nw)
    return w * s[:, None], v / s[None, :]


def merge_layer(
    W_in: torch.Tensor,
    V_out: torch.Tensor,
    Z: torch.Tensor,
    act_zero: torch.Tensor,
    cosine: float = MERGE_COSINE,
) -> tuple[torch.Tensor, torch.Tensor, list[list[int]]]:
    """Drop dead neurons and merge positively proportional ones of one hidden layer.

    Dead: `sigma(Z[:, i]) = 0` on all data (`act_zero[i]`), or `v_i = 0` (no contribution).
    Merge `i` into the earlier `j` when their pre-activations have cosine `> cosine` and the
    same active set (`Z > 0`): `c = ||Z_i|| / ||Z_j||`, `v_j <- v_j + c v_i`, `w_j <-` the
    smaller-norm of `w_j` and `w_i / c`; then every kept neuron is rebalanced. The outputs
    change only by the proportionality error and `||theta||^2` does not increase
    (paper 004, §4; spec Decision).

    Args:
        W_in: incoming `[n, m]` (`w_i = W_l[i, :]`, bias entry included);
        V_out: outgoing `[n_next, n]` (`v_i = W_{l+1}[:, i]`, bias column excluded);
        Z: pre-activations `[N, n]`
        act_zero: `[n]` bool, `sigma(Z[:, i]) = 0` everywhere.
    Returns:
        `(W_in', V_out', groups)`: the merged layer `[k, m]`, `[n_next, k]` and, per kept
        neuron, the original indices merged into it.
    """
    norms = Z.norm(dim=0)
    unit = Z / torch.where(norms > 0, norms, torch.ones_like(norms))
    active = Z > 0
    w_list, v_list, groups, reps = [], [], [], []
    for i in range(Z.shape[1]):
        if bool(act_zero[i]) or float(V_out[:, i].abs().max()) == 0.0:
            continue
        for g, j in enumerate(reps):
            same = bool(torch.equal(active[:, i], active[:, j]))
            if same and float(unit[:, i] @ unit[:, j]) > cosine:
                c = norms[i] / norms[j]
                v_list[g] = v_list[g] + c * V_out[:, i]
                w_i = W_in[i] / c
                if float(w_i.norm()) < float(w_list[g].norm()):
                    w_list[g] = w_i
                groups[g].append(i)
                break
        else:
            reps.append(i)
            w_list.append(W_in[i].clone())
            v_list.append(V_out[:, i].clone())
            groups.append([i])
    if not reps:
        return W_in[:0].clone(), V_out[:, :0].clone(), []
    w, v = _rebalance(torch.stack(w_list), torch.stack(v_list, dim=1))
    return w, v, groups


def prune_one_dim(
    a: torch.Tensor, c: torch.Tensor, b: torch.Tensor, x: torch.Tensor, beta: float = 1.0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Prop 15's pruning of a shallow ReLU net on 1-D inputs (paper 004, App D.2; spec rule).

    `f(x) = b_out + sum_k a_k relu(c_k x + beta b_k)`. Each neuron is balanced
    (`a_k^2 = c_k^2 + b_k^2`); neurons inactive at every training point are dropped; neurons
    with the same `sign(a)` and the same active set `{i : c x_i + beta b > 0}` are merged:
    `P = sum a_k c_k`, `Q = sum a_k b_k`, `|a~| = ||(P, Q)||^(1/2)`, `sign a~ = sign a`,
    `c~ = P / a~`, `b~ = Q / a~`. Outputs on `x` are unchanged, `||theta||^2` does not
    increase; at most `2 (2N - 1) <= 4N` neurons remain.

    Args:
        a: outgoing `[n]`
        c: incoming `[n]`
        b: biases `[n]`
        x: training inputs `[N]`
        beta: the bias scale. Returns `(a', c', b')`, each `[k]`.
    """
    pre = x[:, None] * c[None, :] + beta * b[None, :]  # [N, n]
    active = pre > 0
    groups: dict[tuple, list[int]] = {}
    for k in range(a.numel()):
        if not bool(active[:, k].any()) or float(a[k]) == 0.0:
            continue
        key = (float(a[k]) > 0, tuple(active[:, k].tolist()))
        groups.setdefault(key, []).append(k)
    out_a, out_c, out_b = [], [], []
    for (positive, _), idx in groups.items():
        ids = torch.tensor(idx)
        P = (a[ids] * c[ids]).sum()
        Q = (a[ids] * b[ids]).sum()
        mag = torch.sqrt(torch.sqrt(P * P + Q * Q))
        if float(mag) == 0.0:  # the group adds nothing on the data
            continue
        at = mag if positive else -mag
        out_a.append(at)
        out_c.append(P / at)
        out_b.append(Q / at)
    if not out_a:
        empty = a[:0].clone()
        return empty, empty.clone(), empty.clone()
    return torch.stack(out_a), torch.stack(out_c), torch.stack(out_b)
