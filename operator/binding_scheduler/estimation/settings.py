"""How the accurate estimator finds, reaches and trusts the per-cluster estimators."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

DEFAULT_PORT = 10352
PartialFailure = Literal["fallback", "discard"]


@dataclass(frozen=True, slots=True)
class EstimatorSettings:
    """Karmada's estimator flags, plus static endpoints and the partial-failure policy.

    - `timeout`: one deadline, in seconds, for a whole fan-out (Karmada `--scheduler-estimator-timeout`).
    - `service_namespace`, `service_prefix`, `port`: discovery of Service `<prefix>-<cluster>`.
    - `endpoints`: `cluster -> host:port`, tried before any discovery.
    - `ca_file`, `cert_file`, `key_file`, `insecure_skip_verify`: TLS; plaintext only when `ca_file` is empty
      and `insecure_skip_verify` is false (the client certificate is then ignored, as in Karmada).
    - `partial_failure`: `fallback` keeps the answers that came back; `discard` drops them all when any
      cluster fails (Karmada's behaviour).
    - `disable_in_pull_mode`: do not ask the estimators of clusters in Pull mode.
    - `dial_timeout`: per address, seconds, for a connection to become ready.
    - `send_legacy_fields`: also fill the field numbers estimators from Karmada v1.17 and earlier read.
    """

    timeout: float = 3.0
    service_namespace: str = "karmada-system"
    service_prefix: str = "karmada-scheduler-estimator"
    port: int = DEFAULT_PORT
    endpoints: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    insecure_skip_verify: bool = False
    partial_failure: PartialFailure = "fallback"
    disable_in_pull_mode: bool = False
    dial_timeout: float = 5.0
    send_legacy_fields: bool = True

    def __post_init__(self) -> None:
        if self.timeout < 0:
            raise ValueError(f"timeout must be >= 0, got {self.timeout}")
        if self.dial_timeout <= 0:
            raise ValueError(f"dial_timeout must be > 0, got {self.dial_timeout}")
        if not 0 < self.port < 65536:
            raise ValueError(f"port must be in 1..65535, got {self.port}")
        if self.partial_failure not in ("fallback", "discard"):
            raise ValueError(f"partial_failure must be fallback or discard, got {self.partial_failure!r}")
        if bool(self.cert_file) != bool(self.key_file):
            raise ValueError("cert_file and key_file must be given together")
        object.__setattr__(self, "endpoints", MappingProxyType(dict(self.endpoints)))

    @property
    def uses_tls(self) -> bool:
        return bool(self.ca_file) or self.insecure_skip_verify
