"""Proofs that a case ran as named: devices and tasks, variable and op placement, layouts,
transfers, and XLA compiled and executed as the mode says."""
