"""`saddle/*`: experiments of paper 003 (saddle-to-saddle dynamics and escape
directions). Every public module defining `EXPERIMENT` is discovered (`_discover`)."""
