"""The training step: the custom loop in tf.function, the synthetic pool, graph functions without
AutoGraph and the TFRecord files a case reads."""
