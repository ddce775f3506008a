"""What devcluster serves for kubectl alone: nothing the scheduler, Kopf or client-go's informers need.

The core (store, server) hands these to the package, by the names below and no others (an import-linter
contract says so):

* the server: bodies it does not read (`decode_body`: protobuf), the representation an `Accept` header asks for
  (`negotiate`: Tables and PartialObjectMetadata, `Representation` shapes the answers), a write's field manager,
  `force` and field validation (`WriteOptions`), the OpenAPI documents (`OpenAPIEndpoint`) and the review kinds
  of `kubectl auth` (`answer_review`);
* the store: the schemas of the built-in kinds, from kube-apiserver's OpenAPI (`builtin_schema`), the
  managedFields of a write (`record_update`), server-side apply (`apply`) and strategic merge patches
  (`strategic_merge`), and the field validation a patch is checked with (`FieldValidation`).
"""

from .apply import apply
from .bodies import decode_body
from .builtin_schemas import builtin_schema
from .fieldvalidation import FieldValidation
from .managers import record_update
from .media import Representation, negotiate
from .openapi import OpenAPIEndpoint
from .options import WriteOptions
from .reviews import answer_review
from .strategic import strategic_merge

__all__ = [
    "FieldValidation",
    "OpenAPIEndpoint",
    "Representation",
    "WriteOptions",
    "answer_review",
    "apply",
    "builtin_schema",
    "decode_body",
    "negotiate",
    "record_update",
    "strategic_merge",
]
