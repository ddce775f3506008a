from binding_scheduler.estimation.pb import estimator_pb2 as _estimator_pb2
from google.protobuf import descriptor as _descriptor
from typing import ClassVar as _ClassVar

DESCRIPTOR: _descriptor.FileDescriptor
