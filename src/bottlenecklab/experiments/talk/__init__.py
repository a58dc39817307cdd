"""`talk/*`: experiments of paper 002 (the talk on bottleneck structure: kernels vs depth,
classification, a CNN on mechanics). Every public module defining `EXPERIMENT` is
discovered (`_discover`)."""
