"""`l2/*`: experiments of paper 004 (L2-regularized networks: reformulations, forces,
sparsity). Every public module defining `EXPERIMENT` is discovered (`_discover`)."""
