"""Whatever arrives from the API (or a file), the parsers answer with a model object or a ValidationError,
never with any other exception."""

from __future__ import annotations

import contextlib
import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from binding_scheduler.model import ValidationError, parse_binding, parse_cluster
from testsupport.builders import AGGREGATED, binding, cluster, expression, placement, taint, term, toleration

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["", "1", "-1", "1Gi", "100m", "1e999999", "In", "Exists", "Divided", "cluster", "zone",
                       "NoSchedule", "2024-01-01T00:00:00Z", "2024-01-01", "apps/v1"])
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)

VALID_BINDING = binding(
    replicas=3,
    requests={"cpu": "100m", "memory": "1Gi"},
    placement=placement(
        affinities=[term("a", "m1", overflow=[{"affinityName": "o", "clusterNames": ["m2"]}]),
                    {"affinityName": "b", "labelSelector": {"matchExpressions": [expression("env", "In", "x")]},
                     "fieldSelector": {"matchExpressions": [expression("zone", "Exists")]}}],
        tolerations=[toleration("k", "Equal", "v", "NoSchedule")],
        spread=[{"spreadByField": "region", "minGroups": 1, "maxGroups": 2}, {"spreadByField": "cluster"}],
        scheduling={**AGGREGATED, "weightPreference": {"staticWeightList": [{"targetCluster": {}, "weight": 1}]}},
    ),
    clusters={"m1": 2, "m2": 1},
    evicting=["m3"],
    observed_affinity="a",
    reschedule_at="2024-01-01T00:00:00Z",
    last_scheduled="2024-01-01T00:00:00Z",
)
VALID_BINDING["spec"]["components"] = [{"name": "c", "replicas": 1, "replicaRequirements": {"resourceRequest": {}}}]
VALID_BINDING["spec"]["suspension"] = {"scheduling": False}
VALID_BINDING["spec"]["schedulePriority"] = {"priority": 1}
VALID_BINDING["status"]["conditions"] = [{"type": "Scheduled", "status": "True"}]

VALID_CLUSTER = cluster("m1", labels={"a": "b"}, provider="p", region="r", zones=["z"], taints=[taint("t")],
                        allocatable={"cpu": "4"})
VALID_CLUSTER["spec"]["resourceModels"] = [{"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "1"}]}]
VALID_CLUSTER["status"]["resourceSummary"]["allocatableModelings"] = [{"grade": 0, "count": 1}]
VALID_CLUSTER["status"]["conditions"] = [{"type": "CompleteAPIEnablements", "status": "True"}]

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside a JSON document."""
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += paths(value, (*prefix, i))
    return found


@st.composite
def mutated(draw: st.DrawFn, valid: dict[str, Any]) -> Any:
    """A valid document with one to three values replaced, removed or negated."""
    doc = copy.deepcopy(valid)
    for _ in range(draw(st.integers(1, 3))):
        candidates = paths(doc)
        if not candidates:
            break
        path = draw(st.sampled_from(candidates))
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        action = draw(st.sampled_from(["replace", "delete", "negate", "wrong-type"]))
        if action == "delete" and isinstance(parent, dict):
            del parent[last]
        elif action == "negate" and isinstance(parent[last], int) and not isinstance(parent[last], bool):
            parent[last] = -parent[last] - 1
        elif action == "wrong-type":
            parent[last] = draw(st.sampled_from([[], {}, "x", 1, 1.5, None, True]))
        else:
            parent[last] = draw(JSON)
    return doc


def parses_or_rejects(parse: Any, data: Any) -> None:
    with contextlib.suppress(ValidationError):
        parse(data)


def test_seed_documents_are_valid() -> None:
    parse_binding(VALID_BINDING)
    parse_cluster(VALID_CLUSTER)


@FUZZ
@given(JSON)
def test_arbitrary_json_as_binding(data: Any) -> None:
    parses_or_rejects(parse_binding, data)


@FUZZ
@given(JSON)
def test_arbitrary_json_as_cluster(data: Any) -> None:
    parses_or_rejects(parse_cluster, data)


@FUZZ
@given(mutated(VALID_BINDING))
def test_mutated_binding(data: Any) -> None:
    parses_or_rejects(parse_binding, data)


@FUZZ
@given(mutated(VALID_CLUSTER))
def test_mutated_cluster(data: Any) -> None:
    parses_or_rejects(parse_cluster, data)


@FUZZ
@given(st.dictionaries(st.sampled_from(["kind", "metadata", "spec", "status"]), JSON))
def test_binding_shaped_document_with_arbitrary_parts(data: dict[str, Any]) -> None:
    parses_or_rejects(parse_binding, data)
