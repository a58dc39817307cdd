"""The circular CNN's per-frequency spectra in the run's long format."""

from __future__ import annotations

from bottlenecklab.measure import frequency_spectra, layer_frequency_singular_values
from bottlenecklab.models import CircularCNNConfig
from bottlenecklab.theory import frequency_order


def test_frequency_spectra_lists_every_singular_value_with_its_order() -> None:
    """One row per layer, frequency `(w1, w2)` and index `i`, with the value of
    `layer_frequency_singular_values` and the order of `theory.frequency_order`."""
    net = CircularCNNConfig(depth=2, channels=3, size=4).build(2 * 16, 16, seed=0)
    rows = frequency_spectra(net)
    spectra = layer_frequency_singular_values(net)
    assert len(rows) == sum(s.numel() for s in spectra)
    order = frequency_order(4)
    for row in rows[:: max(1, len(rows) // 50)]:
        w1, w2 = map(int, str(row["matrix"]).split(","))
        s = spectra[int(row["layer"]) - 1][w1, w2]
        assert row["value"] == float(s[int(row["index"]) - 1])
        assert row["order"] == int(order[w1, w2])
    indices = {r["index"] for r in rows}  # 1-based
    assert indices == set(range(1, max(s.shape[-1] for s in spectra) + 1))
