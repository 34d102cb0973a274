"""ResNet-56 for 32x32x3 images and 10 classes: the deeper CIFAR ResNet (nine basic blocks a
stage), where per-layer overheads (kernel launches, small convolutions) weigh more."""

from __future__ import annotations

from _resnet import CifarResNet

# Each residual branch starts at zero: with 27 branches summed at full scale, the first loss
# was 4-6 (ln 10 = 2.3 is uniform) and SGD oscillated for dozens of steps, rising in CI.
WORKLOAD = CifarResNet("resnet56", 56, {"tiny": 32, "full": 128}, smoke_matrix=False,
                       zero_residual=True)
