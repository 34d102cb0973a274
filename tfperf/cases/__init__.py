"""What a case is: the matrix, tiers, options, the machine, what can run here."""
