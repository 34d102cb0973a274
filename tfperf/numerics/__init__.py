"""Training trajectories compared within measured tolerances: pure maths, no processes. The XLA
equivalence check (tfperf.equivalence) and the workers' numeric faults build on it."""
