"""tfperf: a pytest suite for TensorFlow training performance (see README.md)."""
