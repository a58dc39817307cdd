"""`fcnn/*` and `linear/*`: experiments of papers 001/002 (representation cost,
bottleneck rank and depth of deep fully-connected networks). Every public module defining
`EXPERIMENT` is discovered (`_discover`)."""
