"""Leader election never starves behind scheduling traffic: the Lease has its own client and rate limiter
(as Karmada's leader-election client has), so a leader saturating its API budget keeps its Lease."""

from __future__ import annotations

import time
from pathlib import Path

from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import (
    apply,
    binding_doc,
    cluster_doc,
    config_spec,
    get,
    running_operator,
    scheduled,
    wait_until,
    write_config,
)

RENEWALS = 12  # every 500 ms: 6 s of renewals, well past the 3 s lease and 2 s renew deadline of the test configuration


def renewals_since(api: DevCluster, moment: float) -> list[float]:
    puts = api.journal.filter("PUT", r"/leases/karmada-scheduler$")
    return [e.time for e in puts if e.time > moment and e.status == 200]


def test_rate_limited_leader_keeps_renewing(
    api: DevCluster, tmp_path: Path
) -> None:
    spec = config_spec(workers=8, kubeAPI={"qps": 2, "burst": 2})  # 100 bindings need ~100 s of requests
    apply(api, cluster_doc("m1"), *(binding_doc(f"web-{i}") for i in range(100)))
    with running_operator(api, write_config(tmp_path / "config.yaml", spec)) as operator:
        started = time.monotonic()
        wait_until(lambda: len(renewals_since(api, started)) >= RENEWALS, timeout=60,
                   what=f"{RENEWALS} renewals of the Lease while the passes use up the rate limit")
        assert sum(scheduled(api, f"web-{i}") is not None for i in range(100)) < 100  # still saturated
        assert operator.alive and operator.exit_code is None
        service = operator.app.service
        assert service is not None and service.ready
        lease = get(api, "leases", "karmada-scheduler", "karmada-system")
        assert lease is not None and lease["spec"]["holderIdentity"] == service.lease.identity  # type: ignore[union-attr]
