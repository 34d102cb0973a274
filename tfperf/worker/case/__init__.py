"""A measured case's worker in its three phases: build (devices, strategy, model, input,
yardstick), warm up (the first round, the XLA proof, the warm-up rounds: READY), serve (the
runner's commands, one table, until FINISH: FINISHED)."""
