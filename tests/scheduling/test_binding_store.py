"""The binding store hands each binding out as one object: its body as it arrived, its metadata view, and its parse
(or the error its parse raised)."""

from __future__ import annotations

from binding_scheduler.model import InvalidBinding, ParsedBinding, ValidationError
from binding_scheduler.scheduling.state.stores import BindingStore
from testsupport.builders import binding, placement


def test_store_hands_binding_out_as_one_object_with_parse() -> None:
    store = BindingStore()
    body = binding("web", replicas=1, placement=placement())
    body["status"] = {"conditions": []}
    store.upsert(body)

    entry = store.entry("default/web")

    assert isinstance(entry, ParsedBinding)
    assert (entry.meta.key, entry.binding.key, entry.status) == ("default/web", "default/web", {"conditions": []})


def test_store_hands_invalid_binding_out_with_error_and_view() -> None:
    store = BindingStore()
    store.upsert(binding("web", replicas=-1, placement=placement()))

    entry = store.entry("default/web")

    assert isinstance(entry, InvalidBinding) and isinstance(entry.error, ValidationError)
    assert (entry.meta.key, str(entry.error), entry.status) == ("default/web", "spec.replicas: -1 is less than 0", {})


def test_parsed_bindings_leave_out_invalid() -> None:
    """`parsed_bindings` (a preemption's scan) reads the parse cache only where it holds the stored version: a
    binding updated since its last parse is parsed again."""
    store = BindingStore()
    web = binding("web", replicas=1, placement=placement())
    web["metadata"]["resourceVersion"] = "1"
    store.upsert(web)
    store.upsert(binding("broken", replicas=-1, placement=placement()))
    first = list(store.parsed_bindings())
    assert [b.replicas for b in first] == [1]
    (again,) = store.parsed_bindings()
    assert again is first[0]  # read from the cache, not parsed again

    store.upsert({**web, "metadata": {**web["metadata"], "resourceVersion": "2"},
                  "spec": {**web["spec"], "replicas": 5}})

    assert [(b.key, b.replicas) for b in store.parsed_bindings()] == [("default/web", 5)]
