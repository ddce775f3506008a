"""The binding store keeps what the scheduler reads: a real API server's managedFields are dropped."""

from __future__ import annotations

from binding_scheduler.scheduling.stores import BindingStore


def test_managed_fields_are_not_kept_and_the_event_body_is_untouched() -> None:
    body = {
        "kind": "ResourceBinding",
        "metadata": {"name": "web", "namespace": "default", "resourceVersion": "7", "generation": 2,
                     "managedFields": [{"manager": "karmada-controller-manager", "fieldsV1": {"f:spec": {}}}]},
        "spec": {"replicas": 2},
    }
    store = BindingStore()
    assert store.upsert(body) is None
    kept = store.body("default/web")
    assert kept is not None
    assert kept["metadata"] == {"name": "web", "namespace": "default", "resourceVersion": "7", "generation": 2}
    assert kept["spec"] == {"replicas": 2}
    assert "managedFields" in body["metadata"]
    assert store.upsert({**body, "metadata": {**body["metadata"], "resourceVersion": "8"}}) == kept
