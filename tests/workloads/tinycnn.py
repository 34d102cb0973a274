"""The tiny CNN as a workload of its own."""

from _tiny import TinyCNN

WORKLOAD = TinyCNN()
