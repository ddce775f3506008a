"""Resource types the emulator serves: built-ins plus whatever the loaded CRDs declare."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .schema import Schema
from .selectors import DEFAULT_FIELDS, EVENT_FIELDS, FieldLabels

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
SUBRESOURCE_VERBS = ("get", "patch", "update")


@dataclass(frozen=True)
class ResourceType:
    """One served (group, version, plural) with its discovery facts."""

    group: str  # "" for the core group
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool
    has_status: bool = False
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    # What kube-apiserver's strategy for the kind does (custom resources: all True but `unconditional_update`):
    generation: bool = True  # metadata.generation is kept (+1 on spec changes)
    unconditional_update: bool = False  # a PUT without metadata.resourceVersion is allowed (else 422)
    schema: Schema | None = field(default=None, compare=False, hash=False, repr=False)
    custom: bool = False  # served from a CRD (its lists always carry `metadata.continue`, "" on the last page)
    fields: FieldLabels = field(default=DEFAULT_FIELDS, compare=False, hash=False, repr=False)  # fieldSelector
    # a CRD version's `additionalPrinterColumns` (the columns of `kubectl get`)
    printer_columns: tuple[Mapping[str, Any], ...] = field(default=(), compare=False, hash=False, repr=False)
    review: bool = False  # create-only and never stored: answered from the request (SelfSubjectAccessReview...)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def storage_key(self) -> tuple[str, str]:
        """Objects are shared by every served version of a (group, plural)."""
        return (self.group, self.plural)

    @property
    def qualified(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def base_path(self, namespace: str | None = None) -> str:
        root = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace is not None:
            return f"{root}/namespaces/{namespace}/{self.plural}"
        return f"{root}/{self.plural}"


BUILTINS: tuple[ResourceType, ...] = (
    ResourceType("", "v1", "namespaces", "namespace", "Namespace", False, True, ("ns",),
                 verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
                 generation=False, unconditional_update=True, fields=FieldLabels.of("metadata.name", "status.phase")),
    ResourceType("", "v1", "events", "event", "Event", True, False, ("ev",),
                 generation=False, unconditional_update=True, fields=EVENT_FIELDS),
    ResourceType("", "v1", "services", "service", "Service", True, True, ("svc",), ("all",),
                 generation=False, unconditional_update=True,
                 fields=FieldLabels.of("metadata.name", "metadata.namespace", "spec.clusterIP", "spec.type")),
    ResourceType("coordination.k8s.io", "v1", "leases", "lease", "Lease", True, False, generation=False,
                 fields=FieldLabels.of("metadata.name", "metadata.namespace", listed=True)),
    ResourceType("apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition",
                 "CustomResourceDefinition", False, True, ("crd", "crds"), ("api-extensions",),
                 fields=FieldLabels.of("metadata.name", "metadata.namespace", listed=True)),
    ResourceType("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "selfsubjectaccessreview",
                 "SelfSubjectAccessReview", False, verbs=("create",), generation=False, review=True),
    ResourceType("authorization.k8s.io", "v1", "selfsubjectrulesreviews", "selfsubjectrulesreview",
                 "SelfSubjectRulesReview", False, verbs=("create",), generation=False, review=True),
    ResourceType("authentication.k8s.io", "v1", "selfsubjectreviews", "selfsubjectreview", "SelfSubjectReview",
                 False, verbs=("create",), generation=False, review=True),
)


def types_from_crd(crd: Mapping[str, Any]) -> list[ResourceType]:
    """Every served version of a `CustomResourceDefinition` as a `ResourceType`."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    plural = str(names["plural"])
    result: list[ResourceType] = []
    for version in spec.get("versions") or []:
        if not version.get("served", True):
            continue
        subresources = version.get("subresources") or {}
        namespaced = spec.get("scope", "Namespaced") == "Namespaced"
        selectable = [str(item.get("jsonPath", "")).lstrip(".") for item in version.get("selectableFields") or ()]
        fields = FieldLabels.of("metadata.name", *(["metadata.namespace"] if namespaced else []), *selectable)
        result.append(
            ResourceType(
                group=str(spec["group"]),
                version=str(version["name"]),
                plural=plural,
                singular=str(names.get("singular") or plural.rstrip("s")),
                kind=str(names["kind"]),
                namespaced=namespaced,
                has_status="status" in subresources,
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                schema=Schema.of_version(version),
                custom=True,
                fields=fields,
                printer_columns=tuple(version.get("additionalPrinterColumns") or ()),
            )
        )
    return result


@dataclass
class Registry:
    """The served resource types, looked up by URL parts or by any of their names."""

    _types: dict[tuple[str, str, str], ResourceType] = field(default_factory=dict)
    generation: int = 0  # +1 whenever the served types change

    @classmethod
    def with_builtins(cls) -> Registry:
        registry = cls()
        registry.add_all(BUILTINS)
        return registry

    def add_all(self, types: Iterable[ResourceType]) -> None:
        for rtype in types:
            self._types[(rtype.group, rtype.version, rtype.plural)] = rtype
        self.generation += 1

    def remove_crd(self, crd: Mapping[str, Any]) -> None:
        spec = crd.get("spec") or {}
        plural = (spec.get("names") or {}).get("plural")
        for key in [k for k in self._types if k[0] == spec.get("group") and k[2] == plural]:
            del self._types[key]
        self.generation += 1

    def get(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._types.get((group, version, plural))

    def __iter__(self) -> Iterator[ResourceType]:
        return iter(list(self._types.values()))

    def groups(self) -> dict[str, list[str]]:
        """group -> served versions, in registration order (the first one is preferred)."""
        result: dict[str, list[str]] = {}
        for group, version, _ in self._types:
            versions = result.setdefault(group, [])
            if version not in versions:
                versions.append(version)
        return result

    def in_group_version(self, group: str, version: str) -> list[ResourceType]:
        return [t for (g, v, _), t in self._types.items() if g == group and v == version]

    def resolve(self, name: str) -> ResourceType:
        """Find a type by plural, singular, kind or short name, optionally `.group`-qualified."""
        lowered = name.lower()
        for rtype in self._types.values():
            for candidate in (rtype.plural, rtype.singular, rtype.kind.lower(), *rtype.short_names):
                if lowered in (candidate, f"{candidate}.{rtype.group}"):
                    return rtype
        raise KeyError(f"no served resource is called {name!r}")
