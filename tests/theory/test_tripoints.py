"""Tripoints of a label grid (paper 002, slide 'Implications: Classification')."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from bottlenecklab.theory import tripoint_blocks


def test_three_sectors_meet_in_one_block():
    i, j = torch.meshgrid(torch.arange(8), torch.arange(8), indexing="ij")
    labels = torch.where(i < 4, torch.where(j < 4, 0, 1), 2)  # three regions meeting at (3, 3)
    assert tripoint_blocks(labels).tolist() == [[3, 3]]


def test_four_quadrants_meet_in_one_block():
    i, j = torch.meshgrid(torch.arange(6), torch.arange(6), indexing="ij")
    labels = 2 * (i >= 3) + (j >= 3)
    assert tripoint_blocks(labels).tolist() == [[2, 2]]


@given(st.lists(st.integers(0, 5), min_size=2, max_size=30), st.integers(2, 30), st.booleans())
@settings(max_examples=50, deadline=None)
def test_labels_of_one_coordinate_have_no_tripoint(row_labels, width, transpose):
    """A map that depends on one grid coordinate (a rank-1 classifier's level sets
    aligned with the grid) has at most 2 labels in every 2x2 block."""
    labels = torch.tensor(row_labels)[:, None].expand(-1, width)
    labels = labels.T if transpose else labels
    assert len(tripoint_blocks(labels)) == 0
