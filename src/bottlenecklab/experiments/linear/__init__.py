"""`linear/*`: experiments of paper 001 §3 on deep linear networks (representation cost).
Every public module defining `EXPERIMENT` is discovered (`_discover`)."""
