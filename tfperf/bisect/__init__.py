"""Since when? Bisect a slowdown to the TensorFlow or the commit that caused it, each step an
interleaved A/B."""
