#!/usr/bin/env python3
"""Writes the chart's generated files from their one source each:

- `charts/binding-scheduler/crds/`: the SchedulerConfiguration CRD, a copy of `crds/` (Helm installs what is in
  a chart's crds/ folder; Karmada's own CRDs are not ours to install);
- `charts/binding-scheduler/values.schema.json`: the values' schema, whose `config` is the CRD's `spec` schema,
  so a value the scheduler would reject is rejected by `helm install` already.

    python3 -m scripts.sync_chart          # rewrite both
    python3 -m scripts.sync_chart --check  # exit 1 when either is stale (the tests run this)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
CHART = ROOT / "charts" / "binding-scheduler"
CRD_NAME = "config.binding-scheduler.io_schedulerconfigurations.yaml"
SOURCE_CRD = ROOT / "crds" / CRD_NAME
CHART_CRD = CHART / "crds" / CRD_NAME
SCHEMA = CHART / "values.schema.json"

# Schema keywords of the Kubernetes structural schema that are not JSON Schema: dropped from the copy.
KUBERNETES_ONLY = ("x-kubernetes-", "format")


def _json_schema(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _json_schema(v) for k, v in node.items() if not k.startswith(KUBERNETES_ONLY)}
    if isinstance(node, list):
        return [_json_schema(item) for item in node]
    return node


def _closed(node: Any) -> Any:
    """Every object with listed properties admits no others (the scheduler rejects unknown fields too)."""
    if isinstance(node, dict):
        node = {k: _closed(v) for k, v in node.items()}
        if node.get("type") == "object" and "properties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
    elif isinstance(node, list):
        node = [_closed(item) for item in node]
    return node


def config_schema() -> dict[str, Any]:
    crd = yaml.safe_load(SOURCE_CRD.read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    schema: dict[str, Any] = _closed(_json_schema(spec))
    schema["description"] = "The SchedulerConfiguration's spec, field for field (docs/configuration.md)."
    return schema


def _object(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "properties": properties, **extra}


def _map(values: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": values or {"type": "string"}}


NAME = {"type": "string", "maxLength": 253}
# karmadaAPI.layout: hack/local-up-karmada.sh, `karmadactl init`, Karmada's Helm chart, karmada-operator.
KARMADA_LAYOUTS = ("local-up", "karmadactl-init", "helm", "operator")
ANY_OBJECT = {"type": "object"}
ANY_LIST = {"type": "array"}
PROBE = _object({
    "initialDelaySeconds": {"type": "integer", "minimum": 0},
    "periodSeconds": {"type": "integer", "minimum": 1},
    "timeoutSeconds": {"type": "integer", "minimum": 1},
    "failureThreshold": {"type": "integer", "minimum": 1},
    "successThreshold": {"type": "integer", "minimum": 1},
})


def values_schema() -> dict[str, Any]:
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "binding-scheduler chart values",
        **_object({
            "replicas": {"type": "integer", "minimum": 0},
            "image": _object({
                "repository": {"type": "string", "minLength": 1},
                "tag": {"type": "string"},
                "pullPolicy": {"enum": ["Always", "IfNotPresent", "Never"]},
            }),
            "imagePullSecrets": {"type": "array", "items": _object({"name": NAME}, required=["name"])},
            "karmadaAPI": _object({
                "mode": {"enum": ["kubeconfigSecret", "inCluster"]},
                "layout": {
                    "description": "The Karmada install the chart runs beside; it names karmada-scheduler's Secrets.",
                    "enum": list(KARMADA_LAYOUTS),
                },
                "helm": _object({"releaseName": {**NAME, "minLength": 1, "maxLength": 53}}),
                "operator": _object({"instanceName": {**NAME, "minLength": 1}}),
                "kubeconfigSecret": _object({"name": NAME, "key": {"type": "string"}}),
                "estimatorClientCertificate": _object({
                    "enabled": {"type": "boolean"},
                    "secretName": NAME,
                    "keys": _object({key: {"type": "string"} for key in ("ca", "cert", "key")}),
                }),
            }, required=["mode", "layout"]),
            "config": config_schema(),
            "configuration": _object({
                "source": {"enum": ["", "object", "file"]},
                "name": NAME,
            }),
            "extraArgs": {"type": "array", "items": {"type": "string"}},
            "extraEnv": {"type": "array", "items": ANY_OBJECT},
            "terminationGracePeriodMarginSeconds": {"type": "integer", "minimum": 6},
            "terminationGracePeriodSeconds": {"type": ["integer", "null"], "minimum": 1},
            "resources": ANY_OBJECT,
            "probes": _object({"liveness": PROBE, "readiness": PROBE, "startup": PROBE}),
            "serviceAccount": _object({
                "create": {"type": "boolean"},
                "name": NAME,
                "annotations": _map(),
            }),
            "rbac": _object({
                "create": {"type": "boolean"},
                "extraSubjects": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["kind", "name"],
                        "properties": {"kind": {"enum": ["User", "Group", "ServiceAccount"]}, "name": NAME},
                    },
                },
            }),
            "podSecurityContext": ANY_OBJECT,
            "securityContext": ANY_OBJECT,
            "podAntiAffinity": {"enum": ["soft", "hard", "none"]},
            "topologySpread": _object({
                "enabled": {"type": "boolean"},
                "topologyKey": {"type": "string", "minLength": 1},
                "maxSkew": {"type": "integer", "minimum": 1},
            }),
            "podDisruptionBudget": _object({
                "enabled": {"type": "boolean"},
                "maxUnavailable": {"type": ["integer", "string"], "minimum": 1},
            }),
            "metrics": _object({
                "service": _object({
                    "enabled": {"type": "boolean"},
                    "type": {"enum": ["ClusterIP", "NodePort", "LoadBalancer"]},
                    "annotations": _map(),
                }),
                "serviceMonitor": _object({
                    "enabled": {"type": "boolean"},
                    "interval": {"type": "string"},
                    "scrapeTimeout": {"type": "string"},
                    "labels": _map(),
                }),
                "prometheusRule": _object({
                    "enabled": {"type": "boolean"},
                    "labels": _map(),
                }),
                "dashboard": _object({
                    "enabled": {"type": "boolean"},
                    "namespace": {"type": "string"},
                    "labels": _map(),
                }),
            }),
            "networkPolicy": _object({
                "enabled": {"type": "boolean"},
                "metricsFrom": ANY_LIST,
            }),
            "podAnnotations": _map(),
            "podLabels": _map(),
            "nodeSelector": _map(),
            "tolerations": ANY_LIST,
            "affinity": ANY_OBJECT,
            "priorityClassName": {"type": "string"},
        }),
    }


def rendered() -> dict[Path, str]:
    return {
        CHART_CRD: SOURCE_CRD.read_text(),
        SCHEMA: json.dumps(values_schema(), indent=2) + "\n",
    }


def main(argv: list[str]) -> int:
    stale = [path for path, text in rendered().items() if not path.exists() or path.read_text() != text]
    if argv == ["--check"]:
        for path in stale:
            print(f"{path.relative_to(ROOT)} is stale: run python3 -m scripts.sync_chart", file=sys.stderr)
        return 1 if stale else 0
    for path, text in rendered().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
