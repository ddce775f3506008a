"""A standby instance started with `--config NAME` writes nothing while it waits for the Lease: the Valid
condition of its configuration is the leader's to write (a standby makes no API call but the Lease's)."""

from __future__ import annotations

from binding_scheduler.devcluster import DevCluster
from tests.shutdown.helpers import lease_held_elsewhere
from testsupport.operator.harness import condition, config_spec, get, running_operator, wait_until

LEASE = r"/leases/karmada-scheduler$"


def test_named_config_standby_writes_nothing(api: DevCluster) -> None:
    api.store.create("schedulerconfigurations", {
        "apiVersion": "config.binding-scheduler.io/v1alpha1",
        "kind": "SchedulerConfiguration",
        "metadata": {"name": "sched", "namespace": "karmada-system"},
        "spec": config_spec(),
    })
    lease_held_elsewhere(api)
    api.journal.clear()
    with running_operator(api, identity="standby", config_name="sched", wait_leading=False):
        wait_until(lambda: len(api.journal.filter(path=LEASE)) >= 3, what="a few lease polls")
        writes = [e.path for e in api.journal.writes()]
    assert writes == []
    body = get(api, "schedulerconfigurations", "sched", "karmada-system")
    assert body is not None and condition(body, "Valid") is None
