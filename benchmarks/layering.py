"""The layering from the code's imports: the top-level packages and modules of tfperf, the
layers pyproject.toml declares, the import edges between packages, and how many run from a
lower layer back up to a higher one (the contract `./run test` checks says 0).

    python benchmarks/layering.py
"""

from __future__ import annotations

import sys
import tomllib

import grimp
from lab import ROOT


def main() -> int:
    graph = grimp.build_graph("tfperf")
    units = sorted(graph.find_children("tfperf"))
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c["layers"] for c in contracts["contracts"] if c["type"] == "layers")
    height = {name.strip(): len(layers) - i for i, layer in enumerate(layers)
              for name in layer.split("|")}
    edges = [(a, b) for a in units for b in units
             if a != b and graph.direct_import_exists(importer=a, imported=b, as_packages=True)]
    back_up = [(a, b) for a, b in edges if height.get(b, 0) >= height.get(a, 0)]
    print(f"packages and modules: {len(units)}  layers: {len(layers)}  "
          f"import edges: {len(edges)}  edges back up or across: {len(back_up)}")
    for i, layer in enumerate(layers):
        print(f"  {len(layers) - i}  {layer}")
    unplaced = [u for u in units if u not in height]
    if unplaced:
        print(f"in no layer: {', '.join(unplaced)}")
    for a, b in back_up:
        print(f"  back up: {a} -> {b}")
    return 1 if back_up or unplaced else 0


if __name__ == "__main__":
    sys.exit(main())
