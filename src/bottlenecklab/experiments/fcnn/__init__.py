"""`fcnn/*`: experiments of papers 001/002 on deep fully-connected networks (bottleneck
bounds, rank vs depth, symmetry dynamics). Every public module defining `EXPERIMENT` is
discovered (`_discover`)."""
