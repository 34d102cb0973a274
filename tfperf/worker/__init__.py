"""The TensorFlow side: everything that runs inside a worker process. Nothing outside this
package imports from it (the pytest process never imports TensorFlow); it may import the
host side's TensorFlow-free modules (the protocol, the workload protocol)."""
