"""Least privilege, proven on the real server: the scheduler runs as its ServiceAccount bound to exactly
`charts/binding-scheduler/files/rbac-rules.yaml`; everything it does is allowed, and everything allowed is done."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.harness import Journal, Objects, decide_again_alike, start_operator, unique, wait_scheduled
from testsupport.operator.harness import binding_doc, cluster_doc, config_spec, crb_doc
from testsupport.realcluster.controlplane import SCHEDULER_NAMESPACE, ControlPlane, all_rules
from testsupport.realcluster.kube import KubeClient
from testsupport.realcluster.webhook import Fault, admission_faults

Permission = tuple[str, str, str]


def granted(section: str) -> set[Permission]:
    cluster_rules, namespace_rules = all_rules()
    rules = cluster_rules if section == "clusterRules" else namespace_rules
    return {
        (verb, group, resource)
        for rule in rules for verb in rule["verbs"] for group in rule["apiGroups"] for resource in rule["resources"]
    }


def test_rules_file_grants_exactly_what_scheduler_uses(
    control_plane: ControlPlane, kube: KubeClient, objects: Objects, journal: Journal, scheduler_name: str,
    tmp_path: Path,
) -> None:
    """One run that takes every path needing a permission: --config NAME (get, watch, status), estimator
    discovery by Service, a ResourceBinding and a ClusterResourceBinding each scheduled with events (and decided
    again alike: the repeated Event is a patch), and a 409 on each one's status write after its spec write
    (the re-read)."""
    namespace = unique("e2e-rbac")
    member = unique("member")
    crb_name = unique("e2e-crb")
    objects.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    objects.create(cluster_doc(member))
    lease = {"leaseName": scheduler_name, "leaseNamespace": SCHEDULER_NAMESPACE}
    objects.create({
        "apiVersion": "config.binding-scheduler.io/v1alpha1", "kind": "SchedulerConfiguration",
        "metadata": {"name": scheduler_name, "namespace": SCHEDULER_NAMESPACE},
        "spec": config_spec(schedulerName=scheduler_name, leaderElection=lease,
                            estimator={"enabled": True, "timeout": "1s",
                                       "service": {"namespace": SCHEDULER_NAMESPACE}}),
    })
    placement = {"clusterAffinity": {"clusterNames": [member]}}
    with admission_faults(control_plane, namespace) as faults:
        faults.add(Fault(resource="resourcebindings", name="web", subresource="status", deny_code=409))
        faults.add(Fault(resource="clusterresourcebindings", name=crb_name, subresource="status", deny_code=409))
        crb = crb_doc(crb_name, placement=placement)
        crb["spec"]["schedulerName"] = scheduler_name
        objects.create(
            binding_doc("web", namespace=namespace, replicas=2, scheduler_name=scheduler_name, placement={
                **placement, "replicaScheduling": {"replicaSchedulingType": "Divided",
                                                   "replicaDivisionPreference": "Weighted"}}),
            crb,
        )
        operator = start_operator(control_plane, None, config_name=scheduler_name)
        try:
            wait_scheduled(kube, "ResourceBinding", "web", namespace)
            wait_scheduled(kube, "ClusterResourceBinding", crb_name)
            decide_again_alike(kube, "ResourceBinding", "web", namespace)
            decide_again_alike(kube, "ClusterResourceBinding", crb_name)
        finally:
            assert operator.stop() == 0

    mine = journal.operator()
    assert [str(e) for e in mine if e.code == 403] == []
    cluster_wide = {e.permission for e in mine if e.resource and e.namespace != SCHEDULER_NAMESPACE}
    in_namespace = {e.permission for e in mine if e.resource and e.namespace == SCHEDULER_NAMESPACE}
    everything = granted("clusterRules") | granted("namespaceRules")
    assert cluster_wide | in_namespace <= everything, "used but not granted"
    assert granted("clusterRules") <= cluster_wide | in_namespace, "granted cluster-wide but never used"
    assert granted("namespaceRules") <= in_namespace, "granted in the scheduler's namespace but never used there"
    assert granted("namespaceRules") & cluster_wide <= granted("clusterRules"), "namespaced use outside it"
