"""The GPU models a plan knows: their memory, and what ResNet-50 v1.5 trains at on one of them,
from NVIDIA's published TensorFlow training throughput (tfperf.plan.estimate says where)."""

from __future__ import annotations

# img/s of ResNet-50 v1.5 training on one device: (fp32 or TF32, mixed precision).
RESNET50_IMAGES_PER_SEC: dict[str, tuple[float, float]] = {
    "H100": (2 * 909.0, 2 * 2375.0),  # assumed: twice the A100
    "A100": (909.0, 2375.0),
    "V100": (412.0, 1270.0),
}
GPU_MEMORY_BYTES = {"H100": 80 << 30, "A100": 40 << 30, "V100": 16 << 30}
