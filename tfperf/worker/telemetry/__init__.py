"""What a worker measures besides its rounds: the device's yardsticks (matrix-product and copy
rates), FLOPs of a step, and the figures it reports."""
