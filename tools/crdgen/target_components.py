"""Adds Karmada's `spec.clusters[].components` (karmada-io/karmada #7837, after v1.19.0-rc.0) to a generated v1.18.2 binding CRD, in place.

controller-gen writes properties in name order, so `components` goes first among TargetCluster's properties.
"""

from __future__ import annotations

import sys
from pathlib import Path

TARGET_CLUSTER = """                  description: TargetCluster represents the identifier of a member
                    cluster.
                  properties:
"""
COMPONENTS = """                    components:
                      description: |-
                        Components represents the per-component replica assignment in this cluster.
                        It is populated only for workloads with multiple pod templates, and only when
                        the MultiplePodTemplatesScheduling feature gate is enabled.
                      items:
                        description: TargetComponent represents the replicas of one component in a
                          cluster.
                        properties:
                          name:
                            description: Name of the component, as in spec.components.
                            type: string
                          replicas:
                            description: Replicas of the component in this cluster.
                            format: int32
                            type: integer
                        required:
                        - name
                        type: object
                      type: array
"""


def main(path: Path) -> None:
    text = path.read_text()
    if text.count(TARGET_CLUSTER) != 1:
        found = text.count(TARGET_CLUSTER)
        sys.exit(f"{path}: expected spec.clusters' TargetCluster schema once, found it {found} times")
    path.write_text(text.replace(TARGET_CLUSTER, TARGET_CLUSTER + COMPONENTS))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
