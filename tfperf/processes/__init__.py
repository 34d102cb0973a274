"""The processes a case runs in: start them, talk to them, end them. No TensorFlow."""
