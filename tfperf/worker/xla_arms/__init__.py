"""XLA equivalence, worker side: the long-lived arm server, one arm's trajectory, and the numeric
faults that prove the check can fail."""
