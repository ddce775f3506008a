"""Kopf is an event source only: every write in the journal is ours, and fenced."""

from __future__ import annotations

import json
import re
from pathlib import Path

from binding_scheduler.devcluster import DevCluster
from testsupport.fencing import fence
from testsupport.operator.harness import (
    DUPLICATED,
    apply,
    at_rest,
    binding_doc,
    cluster_doc,
    crb_doc,
    crb_scheduled,
    running_operator,
    scheduled,
    wait_until,
)

LEASE = r"^/apis/coordination\.k8s\.io/v1/namespaces/karmada-system/leases"
BINDING = (
    r"^/apis/work\.karmada\.io/v1alpha2/(namespaces/default/resourcebindings|clusterresourcebindings)/[a-z0-9-]+"
    r"(/status)?$"
)

EVENTS = r"^/api/v1/namespaces/default/events(/[a-z0-9.-]+)?$"


def test_every_write_is_lease_fenced_binding_write_or_our_event(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), cluster_doc("m2"), binding_doc("web", replicas=3),
          binding_doc("dup", replicas=1, placement=DUPLICATED), crb_doc("role"))
    with running_operator(api, config_file) as operator:
        wait_until(lambda: scheduled(api, "web") and scheduled(api, "dup") and crb_scheduled(api, "role"),
                   what="every binding to be scheduled")
        at_rest(api, operator)
    writes = api.journal.writes()
    assert writes
    for entry in writes:
        text = json.dumps(entry.body)
        assert "kopf" not in text.lower(), entry
        assert "finalizers" not in text, entry
        if re.search(LEASE, entry.path):
            assert entry.method in ("POST", "PUT"), entry
        elif re.search(BINDING, entry.path):
            assert entry.method == "PATCH", entry
            fence(entry.body, entry)
            assert set(entry.body) == {"metadata", "spec" if not entry.path.endswith("/status") else "status"}, entry
        elif re.search(EVENTS, entry.path) and entry.method == "PATCH":  # a repeat counted on our own Event
            assert set(entry.body) <= {"count", "lastTimestamp", "message"}, entry
        elif re.search(EVENTS, entry.path):
            assert entry.method == "POST", entry
            assert entry.body["source"]["component"] == "default-scheduler", entry
            assert entry.body["reason"] in ("ScheduleBindingSucceed", "ScheduleBindingFailed"), entry
        else:
            raise AssertionError(f"unexpected write {entry.method} {entry.path}: {entry.body}")
    assert not api.journal.filter(path=r"kopfpeerings|clusterkopfpeerings")
    for plural in ("resourcebindings", "clusterresourcebindings", "clusters"):
        for obj in api.store.list(plural):
            metadata = obj["metadata"]
            assert not [k for k in metadata.get("annotations") or {} if "kopf" in k], obj
            assert not metadata.get("finalizers"), obj
