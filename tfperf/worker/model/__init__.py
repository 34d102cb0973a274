"""What workloads build their models from: shared Keras layers, learnable synthetic images and the
precision policy. Workloads import these."""
