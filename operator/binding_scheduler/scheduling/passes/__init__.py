"""One scheduling pass and its writes: the pass itself, its context, its events, its decision line and the
preemption it carries out."""
