"""`leaky-resnet/*`: experiments of paper 000 (leaky ResNets, the Hamiltonian of feature
learning). Every public module defining `EXPERIMENT` is discovered (`_discover`)."""
