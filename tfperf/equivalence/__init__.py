"""XLA equivalence, host side: arms in workers, their comparison, the tolerances."""
