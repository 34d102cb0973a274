"""ResNet-56 for 32x32x3 images and 10 classes: the deeper CIFAR ResNet (nine basic blocks a
stage), where per-layer overheads (kernel launches, small convolutions) weigh more."""

from __future__ import annotations

from _resnet import CifarResNet

WORKLOAD = CifarResNet("resnet56", 56, {"tiny": 32, "full": 128}, smoke_matrix=False)
