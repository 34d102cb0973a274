"""Every case of the matrix (the test lives in tfperf.suite, so that other repositories run it
too); select cases by any axis value with -k, e.g. `-k "resnet20 and workers2"`."""

from tfperf.suite.test_training import test_training

__all__ = ["test_training"]
