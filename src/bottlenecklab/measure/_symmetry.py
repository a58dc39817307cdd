"""Symmetry and bottleneck diagnostics of a network trained on `symmetry_dynamics`
(paper 001 §5 and Fig 2): spectral gaps of the weights, crossings of the 2-D projected
input paths, and invariance of a layer to rotations about `w`."""

from __future__ import annotations

import math

import numpy as np
import torch

from bottlenecklab.measure._costs import float64_copy
from bottlenecklab.measure._jacobian import representation_jacobian_ranks
from bottlenecklab.measure._layer_ranks import centred_rank

__all__ = [
    "crossing_counts",
    "curve_distances",
    "gap_rank_rows",
    "haar_rotation_about",
    "invariant_coordinates",
    "knn_r2",
    "largest_gap",
    "layer_distance_map",
    "layer_paths",
    "layer_state_r2",
    "path_crossings",
    "pca_path_crossings",
    "pca_paths2d",
    "pca_states",
    "random_projection_crossings",
    "rotation_ratio",
    "state_bijection_r2",
    "step_r2",
]


def largest_gap(
    W: torch.Tensor | None, rel: float = 1e-3, *, singular_values: torch.Tensor | None = None
) -> tuple[int, float]:
    """Where the spectrum of `W` drops most: `(i, s_i / s_{i+1})` maximizing the ratio
    over the `i` with `s_i > rel * s_1` (1-based; a zero `s_{i+1}` gives `inf`). Paper
    001 Fig 2: `i = 2` in the middle layers.

    Singular values below `rel * s_1` (the spec's numerical-rank cut) are round-off or
    dead units; ratios among them say nothing about the spectrum's top, so the largest
    gap is searched only from above the cut (the gap *into* the cut still counts).

    Args:
        W: `[m, n]` with `min(m, n) >= 2`; singular_values: its spectrum (descending) when
            the caller has it (then `W` may be `None`).
    """
    if singular_values is None:
        s = torch.linalg.svdvals(W.detach().to(torch.float64))
    else:
        s = singular_values.to(torch.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = (s[:-1] / s[1:]).nan_to_num(nan=1.0, posinf=math.inf)
    ratios[s[:-1] <= rel * s[0]] = 0.0
    i = int(torch.argmax(ratios))
    return i + 1, float(ratios[i])


def layer_paths(model: torch.nn.Module, layer: int, paths: np.ndarray) -> torch.Tensor:
    """The activations `alpha_layer` along input paths, on a float64 copy.

    Args:
        model: an FCNN
        layer: `0` (the inputs) to `L - 1`
        paths: `[P, T + 1, d]`.
    Returns:
        `[P, T + 1, n_layer]`.
    """
    net = float64_copy(model)
    X = torch.as_tensor(paths, dtype=torch.float64)
    P, T1, d = X.shape
    with torch.no_grad():
        A = net.forward_path(X.reshape(P * T1, d))[1][layer]
    return A.reshape(P, T1, -1)


def path_crossings(paths: torch.Tensor, pairs: torch.Tensor | None = None) -> int:
    """Proper crossings between segments of different 2-D polylines.

    Args:
        paths: `[P, T + 1, 2]`; path `p` is the polyline `paths[p, 0] -> ... -> paths[p, T]`.
        pairs: optional `[P, P]` bool mask: count only crossings between paths `p, q` with
            `pairs[p, q]` (default: every pair of different paths).
    Returns:
        the number of pairs of segments of two different paths that cross (orientation
        test; touching or collinear segments do not count).
    """
    paths = torch.as_tensor(paths)
    a, b = paths[:, :-1].reshape(-1, 2), paths[:, 1:].reshape(-1, 2)  # [S, 2]
    owner = torch.arange(paths.shape[0]).repeat_interleave(paths.shape[1] - 1)

    def orient(p, q, r):  # sign of the turn p -> q -> r, broadcast [S, 1] vs [1, S]
        return torch.sign(
            (q[..., 0] - p[..., 0]) * (r[..., 1] - p[..., 1])
            - (q[..., 1] - p[..., 1]) * (r[..., 0] - p[..., 0])
        )

    A, B = a[:, None], b[:, None]
    C, D = a[None, :], b[None, :]
    cross = (orient(A, B, C) * orient(A, B, D) < 0) & (orient(C, D, A) * orient(C, D, B) < 0)
    cross &= owner[:, None] < owner[None, :]  # each pair of paths' segments once
    if pairs is not None:
        cross &= torch.as_tensor(pairs, dtype=torch.bool)[owner[:, None], owner[None, :]]
    return int(cross.sum())


def invariant_coordinates(paths: np.ndarray, w: np.ndarray) -> np.ndarray:
    """`u(v) = ((w^T v)^2, ||(I - w w^T) v||^2)`, the two invariants of rotations about
    `w` that determine the dynamics for `E = 0` (spec `depth-and-rank.md`, Tasks).

    Args:
        paths: `[..., d]`
        w: `[d]` unit.
    Returns:
        `[..., 2]`.
    """
    a = paths @ w
    perp = (paths * paths).sum(axis=-1) - a * a
    return np.stack([a * a, perp], axis=-1)


def curve_distances(u_paths: np.ndarray) -> np.ndarray:
    """How far apart the curves `t -> u_p(t)` are: the smallest distance between a point of
    curve `p` and a point of curve `q`, each coordinate in units of its standard deviation
    over all the points. Two paths of one 2-D flow that come close are neighbours; paths
    far apart in `u` follow different dynamics.

    Args:
        u_paths: `[P, T + 1, 2]`.
    Returns:
        `[P, P]` (zero diagonal).
    """
    flat = u_paths.reshape(-1, u_paths.shape[-1])
    z = torch.as_tensor(u_paths / flat.std(axis=0), dtype=torch.float64)  # [P, T+1, 2]
    P, T1, _ = z.shape
    d = torch.cdist(z.reshape(P * T1, -1), z.reshape(P * T1, -1)).reshape(P, T1, P, T1)
    return d.amin(dim=(1, 3)).numpy()


def knn_r2(
    x_fit: np.ndarray, y_fit: np.ndarray, x_test: np.ndarray, y_test: np.ndarray, k: int = 10
) -> np.ndarray:
    """Held-out R^2 of k-nearest-neighbour regression, per output column.

    The inputs are standardized with the fit set's mean and deviation; the prediction is
    the mean of the `k` nearest fit rows' outputs; `R^2 = 1 - SS_res / SS_tot` on the test
    rows (`SS_tot` about the test mean).

    Args:
        x_fit: `[M, p]`
        y_fit: `[M, q]`
        x_test: `[n, p]`
        y_test: `[n, q]`
        k: neighbours.
    Returns:
        `[q]`.
    """
    mu, sd = x_fit.mean(axis=0), x_fit.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    a = torch.as_tensor((x_fit - mu) / sd, dtype=torch.float64)
    b = torch.as_tensor((x_test - mu) / sd, dtype=torch.float64)
    idx = torch.cdist(b, a).topk(k, dim=1, largest=False).indices.numpy()  # [n, k]
    pred = y_fit[idx].mean(axis=1)  # [n, q]
    res = ((y_test - pred) ** 2).sum(axis=0)
    tot = ((y_test - y_test.mean(axis=0)) ** 2).sum(axis=0)
    return 1.0 - res / np.where(tot > 0, tot, np.nan)


def state_bijection_r2(
    z_fit: np.ndarray, u_fit: np.ndarray, z_test: np.ndarray, u_test: np.ndarray, k: int = 10
) -> float:
    """The smallest of the four held-out k-NN R^2 `z -> u_1`, `z -> u_2`, `u -> z_1`,
    `u -> z_2` (`knn_r2`): near 1 when the 2-D state `z` and `u` determine each other (a
    bijection, paper 001 §5 "up to bijection"), low when either loses information.

    Args:
        z_fit: `[M, 2]`
        u_fit: `[M, 2]`
        z_test: `[n, 2]`
        u_test: `[n, 2]`
        k: neighbours.
    """
    r = np.concatenate(
        [knn_r2(z_fit, u_fit, z_test, u_test, k), knn_r2(u_fit, z_fit, u_test, z_test, k)]
    )
    return float(np.min(r)) if np.all(np.isfinite(r)) else math.nan


def pca_paths2d(model: torch.nn.Module, layer: int, paths: np.ndarray) -> torch.Tensor:
    """`alpha_layer` along the input paths `[P, T + 1, d]` projected on its top 2
    principal components (over all path points): `[P, T + 1, 2]`."""
    A = layer_paths(model, layer, paths)  # [P, T+1, n]
    flat = A.reshape(-1, A.shape[-1])
    flat = flat - flat.mean(dim=0)
    _, _, Vh = torch.linalg.svd(flat, full_matrices=False)
    return (flat @ Vh[:2].T).reshape(A.shape[0], A.shape[1], 2)


def pca_states(
    model: torch.nn.Module, layer: int, fit_paths: np.ndarray, paths: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The 2-D state of layer `layer` along input paths: `alpha_layer` projected on the top 2
    principal components of its values along `fit_paths` (all their points, centred on
    their mean), for `fit_paths` and for `paths`.

    Args:
        model: an FCNN
        layer: `0..L-1`
        fit_paths: `[M, T + 1, d]` (e.g. the training inputs' GD paths)
        paths: `[P, T + 1, d]` (e.g. the test inputs' paths).
    Returns:
        `[M, T + 1, 2]` and `[P, T + 1, 2]`.
    """
    A = layer_paths(model, layer, fit_paths)  # [M, T+1, n]
    B = layer_paths(model, layer, paths)  # [P, T+1, n]
    flat = A.reshape(-1, A.shape[-1])
    mean = flat.mean(dim=0)
    _, _, Vh = torch.linalg.svd(flat - mean, full_matrices=False)
    basis = Vh[:2].T  # [n, 2]
    return ((A - mean) @ basis).numpy(), ((B - mean) @ basis).numpy()


def pca_path_crossings(model: torch.nn.Module, layer: int, paths: np.ndarray) -> int:
    """`path_crossings` of `pca_paths2d`. Paper 001 Fig 2: few crossings where the layer
    represents the 2-D state that determines the dynamics."""
    return path_crossings(pca_paths2d(model, layer, paths))


def random_projection_crossings(paths: np.ndarray, gen: torch.Generator, n: int = 1) -> float:
    """`path_crossings` of the input paths under random orthonormal 2-D projections: the
    mean over `n` of them."""
    X = torch.as_tensor(paths, dtype=torch.float64)
    counts = []
    for _ in range(n):
        G = torch.randn(X.shape[-1], 2, generator=gen, dtype=torch.float64)
        Qm, _ = torch.linalg.qr(G)
        counts.append(path_crossings(X @ Qm))
    return float(np.mean(counts))


def haar_rotation_about(w: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """`Q = w w^T + U O U^T`: `U` `[d, d-1]` an orthonormal basis of `w^perp`, `O` Haar
    on `O(d-1)` (QR of a Gaussian with the sign fix). `w` `[d]` unit; returns `[d, d]`."""
    d = len(w)
    full, _ = torch.linalg.qr(
        torch.cat([w[:, None], torch.randn(d, d - 1, generator=gen, dtype=w.dtype)], dim=1)
    )
    U = full[:, 1:]
    Z = torch.randn(d - 1, d - 1, generator=gen, dtype=w.dtype)
    O, R = torch.linalg.qr(Z)
    O = O * torch.sign(torch.diagonal(R))
    return torch.outer(w, w) + U @ O @ U.T


def rotation_ratio(
    model: torch.nn.Module, layer: int, V: np.ndarray, w: np.ndarray, gen: torch.Generator
) -> torch.Tensor:
    """Per input `v`: `||alpha(Q v) - alpha(v)|| / ||alpha(v + delta) - alpha(v)||` with a
    Haar rotation `Q` about `w` (one per input) and `delta` random in
    `span{w, (I - w w^T) v}` with `||delta|| = ||Q v - v||` (spec, `fcnn/symmetry-dynamics`).
    Small where the layer is invariant to the symmetry but not to the state it encodes.

    Args:
        layer: `0..L-1`
        V: `[N, d]`
        w: `[d]` unit.
    Returns:
        `[N]` ratios.
    """
    Vt = torch.as_tensor(V, dtype=torch.float64)
    wt = torch.as_tensor(w, dtype=torch.float64)
    rotated = torch.stack([haar_rotation_about(wt, gen) @ v for v in Vt])  # [N, d]
    perp = Vt - torch.outer(Vt @ wt, wt)
    perp = perp / perp.norm(dim=1, keepdim=True)
    psi = 2 * math.pi * torch.rand(len(Vt), 1, generator=gen, dtype=torch.float64)
    size = (rotated - Vt).norm(dim=1, keepdim=True)
    moved = Vt + size * (torch.cos(psi) * wt + torch.sin(psi) * perp)
    A = layer_paths(model, layer, torch.stack([Vt, rotated, moved], dim=1).numpy())  # [N, 3, n]
    return (A[:, 1] - A[:, 0]).norm(dim=1) / (A[:, 2] - A[:, 0]).norm(dim=1)


def layer_distance_map(
    model: torch.nn.Module,
    layer: int,
    w: np.ndarray,
    height: float,
    radius: float,
    resolution: int,
    gen: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor]:
    """`||alpha(x_0) - alpha(x)||` on a plane perpendicular to `w`.

    The plane is `height * w + span{u_1, u_2}` (`u_1, u_2` random orthonormal in
    `w^perp`), sampled at `a, b in [-radius, radius]`; `x_0 = height * w + (radius/2) u_1`.
    A layer invariant to rotations about `w` gives circular level sets around the origin.

    Returns:
        `coords` `[R]` and the map `[R, R]` (`[i, j]` at `a = coords[i]`, `b = coords[j]`).
    """
    wt = torch.as_tensor(w, dtype=torch.float64)
    G = torch.randn(len(wt), 2, generator=gen, dtype=torch.float64)
    G = G - torch.outer(wt, wt @ G)
    U, _ = torch.linalg.qr(G)  # [d, 2]
    coords = torch.linspace(-radius, radius, resolution, dtype=torch.float64)
    a, b = torch.meshgrid(coords, coords, indexing="ij")
    X = height * wt + a.reshape(-1, 1) * U[:, 0] + b.reshape(-1, 1) * U[:, 1]  # [R*R, d]
    x0 = height * wt + radius / 2 * U[:, 0]
    A = layer_paths(model, layer, torch.cat([x0[None], X])[None].numpy())[0]
    return coords, (A[1:] - A[0]).norm(dim=1).reshape(resolution, resolution)


def layer_state_r2(
    model: torch.nn.Module,
    init: torch.nn.Module,
    fit: np.ndarray,
    test: np.ndarray,
    u_fit: np.ndarray,
    u_test: np.ndarray,
    k: int,
    at: int,
) -> tuple[list[dict[str, float]], dict[str, tuple[np.ndarray, np.ndarray]]]:
    """The state metric (`state_bijection_r2` of the top-2 PCA states and `u`) at every
    hidden layer `l = 1..L-1` of the trained net and of its untrained `init`, and the 2-D
    states themselves at layer `at` (paper 001 §5, Fig 2).

    Args:
        model: the trained net.
        init: the same net at initialization.
        fit: input paths `[M, T+1, d]` (PCA and k-NN fitted).
        test: input paths `[P, T+1, d]` (scored).
        u_fit: the invariant coordinates of `fit`, `[M, T+1, 2]`.
        u_test: the invariant coordinates of `test`, `[P, T+1, 2]`.
        k: neighbours of the k-NN R^2.
        at: the layer whose states are returned.

    Returns:
        One row `{"state_r2", "state_r2_init"}` per layer `l = 1..L-1`, and
        `{"trained": (z_fit, z_test), "init": (z_fit, z_test)}` at `at` (`[., T+1, 2]`).
    """

    def metric(net: torch.nn.Module, layer: int) -> tuple[float, np.ndarray, np.ndarray]:
        z_fit, z_test = pca_states(net, layer, fit, test)  # [M, T+1, 2], [P, T+1, 2]
        flat = (z_fit, u_fit, z_test, u_test)
        r2 = state_bijection_r2(*(a.reshape(-1, 2) for a in flat), k)
        return r2, z_fit, z_test

    rows, states = [], {}
    for layer in range(1, model.depth):
        r2, z_fit, z_test = metric(model, layer)
        r2_init, zi_fit, zi_test = metric(init, layer)
        rows.append({"state_r2": r2, "state_r2_init": r2_init})
        if layer == at:
            states = {"trained": (z_fit, z_test), "init": (zi_fit, zi_test)}
    return rows, states


def crossing_counts(
    z_test: np.ndarray, zi_test: np.ndarray, u_test: np.ndarray, apart: float
) -> dict[str, float]:
    """Crossings of the test paths in the PCA plane (paper 001 §5, Fig 2): trained
    (`z_test`, `[P, T+1, 2]`), untrained (`zi_test`) and exact `u` (`u_test`); `far_*`
    count only pairs whose `u`-curves are more than `apart` sd apart (`curve_distances`),
    `far_crossing_ratio` is trained over untrained (NaN when the untrained net has none)."""
    far = torch.as_tensor(curve_distances(u_test) > apart)
    out = {
        "far_crossings": float(path_crossings(torch.as_tensor(z_test), far)),
        "far_crossings_init": float(path_crossings(torch.as_tensor(zi_test), far)),
    }
    base = out["far_crossings_init"]
    out["far_crossing_ratio"] = out["far_crossings"] / base if base > 0 else math.nan
    out["pca_crossings"] = float(path_crossings(torch.as_tensor(z_test)))
    out["pca_crossings_init"] = float(path_crossings(torch.as_tensor(zi_test)))
    out["u_crossings"] = float(path_crossings(torch.as_tensor(u_test)))
    return out


def step_r2(z_fit: np.ndarray, z_test: np.ndarray, k: int) -> float:
    """One-step self-consistency of the 2-D state (paper 001 §5): the held-out k-NN R^2
    of `z(t) -> z(t+1) - z(t)`, fitted on `z_fit` `[M, T+1, 2]`, tested on `z_test`
    `[P, T+1, 2]`; the smaller of the two coordinates."""
    r2 = knn_r2(
        z_fit[:, :-1].reshape(-1, 2),
        np.diff(z_fit, axis=1).reshape(-1, 2),
        z_test[:, :-1].reshape(-1, 2),
        np.diff(z_test, axis=1).reshape(-1, 2),
        k,
    )
    return float(np.min(r2))


def gap_rank_rows(model: torch.nn.Module, X: np.ndarray) -> list[dict[str, float]]:
    """Per layer `l = 1..L` of an `FCNN`: where `W_l`'s spectrum drops most
    (`largest_gap`: `gap_index`, `gap`; paper 001 Fig 2), the median over the inputs
    `X` `[N, d_in]` of 001's rank of `d a~_l / dx` (`jacobian_rank`) and the affine
    dimension of the pre-activations `a~_l(X)` (`centred_rank`). `X` is cast to the
    model's dtype."""
    jac = np.median(representation_jacobian_ranks(model, X), axis=1)  # [L]
    with torch.no_grad():
        pre, _ = model.forward_path(torch.as_tensor(X, dtype=model.weights[0].dtype))
    return [
        {
            "layer": l,
            **dict(zip(("gap_index", "gap"), largest_gap(W))),
            "jacobian_rank": float(jac[l - 1]),
            "centred_rank": float(centred_rank(pre[l - 1])),
        }
        for l, W in enumerate(model.weights, start=1)
    ]
