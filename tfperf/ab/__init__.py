"""A/B comparison: two TensorFlows (or settings, or workloads folders), round by round."""
