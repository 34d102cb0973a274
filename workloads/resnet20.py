"""ResNet-20 for 32x32x3 images and 10 classes: the CIFAR-10 network of the seeds, and the
reference workload that the smoke tier varies one axis at a time."""

from __future__ import annotations

from _resnet import CifarResNet

WORKLOAD = CifarResNet("resnet20", 20, {"tiny": 64, "full": 128}, smoke_matrix=True)
