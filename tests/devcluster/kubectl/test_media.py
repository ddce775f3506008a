"""Which representation an Accept header asks for (kubectl/media.py); tests/conformance holds the 406 wording and
the answers against kube-apiserver's."""

from __future__ import annotations

import pytest

from binding_scheduler.devcluster import ApiError
from binding_scheduler.devcluster.kubectl import Representation, negotiate

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


@pytest.mark.parametrize(("accept", "watch", "chosen"), [
    (None, False, Representation()),
    (f"{TABLE}, application/json", False, Representation("json", "Table", "v1")),
    (f"{TABLE}, application/json", True, Representation("json", "Table", "v1")),
    ("application/yaml", False, Representation("yaml")),
    ("application/json;as=PartialObjectMetadataList;v=v1beta1;g=meta.k8s.io", False,
     Representation("json", "PartialObjectMetadataList", "v1beta1")),
    ("application/vnd.kubernetes.protobuf;q=0.9, */*;q=0.8", False, Representation()),
])
def test_first_acceptable_media_type_is_chosen(accept: str | None, watch: bool, chosen: Representation) -> None:
    assert negotiate(accept, watch=watch) == chosen


@pytest.mark.parametrize(("accept", "watch"), [("application/vnd.kubernetes.protobuf", False),
                                               ("application/yaml", True)])
def test_nothing_devcluster_can_answer_is_406(accept: str, watch: bool) -> None:
    with pytest.raises(ApiError) as refused:
        negotiate(accept, watch=watch)
    assert (refused.value.code, refused.value.reason) == (406, "NotAcceptable")


def test_plain_watch_sends_events_as_they_are() -> None:
    assert Representation().watch_encoder(None, "Metadata") is None  # type: ignore[arg-type]
