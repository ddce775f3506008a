"""karmada-scheduler's command-line flags (Karmada v1.18.2, cmd/scheduler/app/options and the logging flags its
command adds), read into SchedulerConfiguration overrides, so that `binding-scheduler run` is a drop-in for the
container args of a karmada-scheduler Deployment.

Each flag either maps onto a spec field, is a connection setting (`--kubeconfig`, `--master`), is the log
verbosity (`--v`), or has no meaning here and is ignored with a warning naming the flag and why. Pure: warnings
are returned, not printed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..model import ValidationError
from ..model.config import MAX_PORT, is_host
from ..model.duration import parse_duration
from ..model.overrides import NO_OVERRIDES, SpecOverrides
from .goflags import Flag, FlagError, Given

# Flag name -> (kind, spec path). A kind says how the value is read; "checked alone" flags are validated on their
# own when read (the others take part in rules across fields, checked once merged with the configuration).
MAPPED: dict[str, tuple[str, str]] = {
    "leader-elect": ("bool", "leaderElection.enabled"),
    "leader-elect-resource-name": ("string", "leaderElection.leaseName"),
    "leader-elect-resource-namespace": ("string", "leaderElection.leaseNamespace"),
    "leader-elect-lease-duration": ("duration", "leaderElection.leaseDuration"),
    "leader-elect-renew-deadline": ("duration", "leaderElection.renewDeadline"),
    "leader-elect-retry-period": ("duration", "leaderElection.retryPeriod"),
    "scheduler-name": ("string", "schedulerName"),
    "enable-scheduler-estimator": ("bool", "estimator.enabled"),
    "disable-scheduler-estimator-in-pull-mode": ("bool", "estimator.disableInPullMode"),
    "scheduler-estimator-timeout": ("duration", "estimator.timeout"),
    "scheduler-estimator-service-namespace": ("string", "estimator.service.namespace"),
    "scheduler-estimator-service-prefix": ("string", "estimator.service.prefix"),
    "scheduler-estimator-port": ("int", "estimator.service.port"),
    "scheduler-estimator-cert-file": ("string", "estimator.tls.certFile"),
    "scheduler-estimator-key-file": ("string", "estimator.tls.keyFile"),
    "scheduler-estimator-ca-file": ("string", "estimator.tls.caFile"),
    "insecure-skip-estimator-verify": ("bool", "estimator.tls.insecureSkipVerify"),
    "plugins": ("plugins", "plugins"),
    "allow-unknown-plugins": ("bool", "allowUnknownPlugins"),  # ours: Karmada ignores unknown names in silence
    "feature-gates": ("gates", "featureGates"),
    "kube-api-qps": ("number", "kubeAPI.qps"),
    "kube-api-burst": ("int", "kubeAPI.burst"),
    "metrics-bind-address": ("address", "metrics.host metrics.port"),
    "health-probe-bind-address": ("address", "metrics.healthHost metrics.healthPort"),
    "enable-empty-workload-propagation": ("bool", "enableEmptyWorkloadPropagation"),
}
CROSS_FIELD = frozenset({
    "leader-elect-lease-duration", "leader-elect-renew-deadline", "leader-elect-retry-period",
    "scheduler-estimator-cert-file", "scheduler-estimator-key-file",
})
CONNECTION = ("kubeconfig", "master")
VERBOSITY = "v"
LOGGING_FORMAT = "logging-format"  # klog's text|json, read as binding-scheduler's --log-format

_KLOG = "a klog output option; binding-scheduler writes its log to stderr"
_LOG_ALPHA = "an alpha option of Kubernetes' text and JSON log formats; binding-scheduler writes text to stderr"
# Flag name -> (is it a boolean, why it is ignored).
IGNORED: dict[str, tuple[bool, str]] = {
    "rate-limiter-base-delay": (False, "binding-scheduler's queue backs off as spec.queue says"),
    "rate-limiter-max-delay": (False, "binding-scheduler's queue backs off as spec.queue says"),
    "rate-limiter-qps": (False, "binding-scheduler's queue has no rate limiter (it backs off as spec.queue says)"),
    "rate-limiter-bucket-size": (False,
                                 "binding-scheduler's queue has no rate limiter (it backs off as spec.queue says)"),
    "enable-pprof": (True, "binding-scheduler has no Go pprof endpoint"),
    "profiling-bind-address": (False, "binding-scheduler has no Go pprof endpoint"),
    "log-flush-frequency": (False, "binding-scheduler writes each log line at once"),
    "vmodule": (False, "per-file verbosity is klog's; --v sets binding-scheduler's"),
    "log-text-split-stream": (True, _LOG_ALPHA),
    "log-text-info-buffer-size": (False, _LOG_ALPHA),
    "log-json-split-stream": (True, _LOG_ALPHA),
    "log-json-info-buffer-size": (False, _LOG_ALPHA),
    "log-dir": (False, _KLOG),
    "log-file": (False, _KLOG),
    "log-file-max-size": (False, _KLOG),
    "logtostderr": (True, _KLOG),
    "alsologtostderr": (True, _KLOG),
    "add-dir-header": (True, _KLOG),
    "skip-headers": (True, _KLOG),
    "one-output": (True, _KLOG),
    "skip-log-headers": (True, _KLOG),
    "stderrthreshold": (False, _KLOG),
    "log-backtrace-at": (False, _KLOG),
}

# Karmada's feature gates (pkg/features) and the two every Kubernetes gate set has.
IMPLEMENTED_GATES = {
    "MultiplePodTemplatesScheduling": "featureGates.MultiplePodTemplatesScheduling",
    "WorkloadAffinity": "featureGates.WorkloadAffinity",
    "SchedulingOvercommitProtection": "featureGates.SchedulingOvercommitProtection",
    "PriorityBasedScheduling": "featureGates.PriorityBasedScheduling",
    "PriorityBasedPreemptiveScheduling": "featureGates.PriorityBasedPreemptiveScheduling",
}
ALPHA_GATES = (
    "PropagationPolicyPreemption", "MultiClusterService", "ResourceQuotaEstimate", "StatefulFailoverInjection",
    "PriorityBasedScheduling", "FederatedQuotaEnforcement", "LoggingAlphaOptions", "MultiplePodTemplatesScheduling",
    "WorkloadAffinity", "SchedulingOvercommitProtection", "PriorityBasedPreemptiveScheduling",
)
"""Karmada v1.18.2's alpha gates, and PriorityBasedPreemptiveScheduling (alpha in v1.19, karmada-io/karmada PR
#7832), which Karmada's own manifests may already set."""
BETA_GATES = (
    "Failover", "GracefulEviction", "PropagateDeps", "CustomizedClusterResourceModeling", "LoggingBetaOptions",
    "ContextualLogging", "ControllerPriorityQueue",
)
ALL_ALPHA, ALL_BETA = "AllAlpha", "AllBeta"
KARMADA_GATES = frozenset({*ALPHA_GATES, *BETA_GATES, ALL_ALPHA, ALL_BETA})

# Go's strconv.ParseBool, which pflag's booleans and the feature gates use.
TRUE_WORDS = frozenset({"1", "t", "T", "TRUE", "true", "True"})
FALSE_WORDS = frozenset({"0", "f", "F", "FALSE", "false", "False"})
MAX_VERBOSITY = 2**32 - 1
DEBUG_VERBOSITY = 4  # klog's -v=4 is Kubernetes' debug level
_INTEGER = re.compile(r"[+-]?(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|[0-9]+)")
_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")


def karmada_flags() -> dict[str, Flag]:
    """Every flag karmada-scheduler accepts, and `--allow-unknown-plugins` (ours), by name, as the Go flag parser
    needs them."""
    flags = {name: Flag(name, boolean=kind == "bool") for name, (kind, _) in MAPPED.items()}
    flags.update({name: Flag(name) for name in CONNECTION})
    flags.update({name: Flag(name, boolean=boolean) for name, (boolean, _) in IGNORED.items()})
    flags[VERBOSITY] = Flag(VERBOSITY, shorthand="v", optional_number=True)
    flags[LOGGING_FORMAT] = Flag(LOGGING_FORMAT)
    return flags


@dataclass(frozen=True, slots=True)
class KarmadaSettings:
    overrides: SpecOverrides = NO_OVERRIDES
    kubeconfig: str | None = None
    master: str | None = None
    verbosity: int | None = None
    """`--v=N`; None when not given."""
    bare_v: bool = False
    """`-v` without a number: our own meaning, debug logging."""
    log_format: str | None = None
    """`--logging-format` (text or json); None when not given."""
    command_line_only: tuple[str, ...] = ()
    """The flags given that are not part of a SchedulerConfiguration, as `--kubeconfig=FILE` (`--kubeconfig`,
    `--master`, `--v`), the last of each."""
    warnings: tuple[str, ...] = ()

    @property
    def debug(self) -> bool:
        return self.bare_v or (self.verbosity is not None and self.verbosity >= DEBUG_VERBOSITY)


def read(given: Iterable[Given]) -> KarmadaSettings:
    """The settings of Karmada's flags among `given` (other flags are skipped). Raises FlagError naming the flag
    for a value that cannot be read, or that is invalid on its own."""
    reader = _Reader()
    for flag in given:
        reader.take(flag)
    return reader.result()


class _Reader:
    def __init__(self) -> None:
        self.overrides = NO_OVERRIDES
        self.connection: dict[str, str] = {}
        self.verbosity: int | None = None
        self.bare_v = False
        self.log_format: str | None = None
        self.command_line_only: list[str] = []
        self.warnings: list[str] = []
        self.plugins: list[str] | None = None
        self.gates: dict[str, bool] = {}

    def take(self, flag: Given) -> None:
        name, value = flag.name, flag.value
        if name in IGNORED:
            self._warn(f"--{name} is ignored: {IGNORED[name][1]}")
        elif name in CONNECTION:
            self.connection[name] = value
            self._command_line_only(name, f"--{name}={value}")
        elif name == VERBOSITY:
            self._verbosity(value)
            self._command_line_only(name, f"--v={value}" if value else "-v")
        elif name == LOGGING_FORMAT:
            if value not in ("text", "json"):
                raise FlagError(f"--{name}: {value!r} is not one of text, json")
            self.log_format = value
            self._command_line_only(name, f"--{name}={value}")
        elif name in MAPPED:
            self._mapped(name, value)

    def result(self) -> KarmadaSettings:
        if self.plugins is not None:
            self._set("plugins", "plugins", self.plugins)
        self._apply_gates()
        return KarmadaSettings(
            overrides=self.overrides,
            kubeconfig=self.connection.get("kubeconfig") or None,
            master=self.connection.get("master") or None,
            verbosity=self.verbosity,
            bare_v=self.bare_v,
            log_format=self.log_format,
            command_line_only=tuple(self.command_line_only),
            warnings=tuple(self.warnings),
        )

    def _warn(self, line: str) -> None:
        if line not in self.warnings:
            self.warnings.append(line)

    def _command_line_only(self, name: str, written: str) -> None:
        self.command_line_only = [*(w for w in self.command_line_only if self._written_name(w) != name), written]

    @staticmethod
    def _written_name(written: str) -> str:
        return written.lstrip("-").partition("=")[0]

    def _verbosity(self, value: str) -> None:
        if value == "":
            self.bare_v = True
            return
        if not (value.isascii() and value.isdigit()) or int(value) > MAX_VERBOSITY:
            raise FlagError(f"--v: {value!r} is not a verbosity level (a number from 0; 4 and more is debug)")
        self.verbosity = int(value)

    def _mapped(self, name: str, value: str) -> None:
        kind, path = MAPPED[name]
        if kind == "bool":
            self._set(name, path, parse_bool(name, value))
        elif kind == "string":
            self._set(name, path, value)
        elif kind == "duration":
            _check(lambda: parse_duration(value, f"--{name}"))
            self._set(name, path, value)
        elif kind == "int":
            self._set(name, path, _integer(name, value))
        elif kind == "number":
            self._set(name, path, _number(name, value))
        elif kind == "plugins":
            # A string slice: a repeated flag adds to the list, as pflag's does.
            self.plugins = [*(self.plugins or []), *(item.strip() for item in value.split(",") if value)]
        elif kind == "gates":
            self.gates.update(_gates(value))
        else:
            self._address(name, value, *path.split())

    def _set(self, name: str, path: str, value: object) -> None:
        self.overrides = self.overrides.set(path, value, f"--{name}")
        if name in MAPPED and name not in CROSS_FIELD:
            _check(lambda: SpecOverrides().set(path, value, f"--{name}").parse())

    def _address(self, name: str, value: str, host_path: str, port_path: str) -> None:
        if value == "0":  # Karmada's "do not serve"
            self.overrides = self.overrides.set(port_path, 0, f"--{name}")
            return
        host, port = bind_address(name, value)
        self.overrides = self.overrides.set(host_path, host, f"--{name}").set(port_path, port, f"--{name}")

    def _apply_gates(self) -> None:
        gates = dict(self.gates)
        for gate in sorted(gates):
            if gate in IMPLEMENTED_GATES:
                continue
            if gate == ALL_ALPHA:
                others = ", ".join(g for g in ALPHA_GATES if g not in IMPLEMENTED_GATES)
                self._warn(f"--feature-gates: {ALL_ALPHA} sets {' and '.join(IMPLEMENTED_GATES)} only: "
                           f"binding-scheduler does not implement Karmada's other alpha gates ({others})")
            elif gate == ALL_BETA:
                self._warn(f"--feature-gates: {ALL_BETA} is ignored: binding-scheduler implements none of Karmada's "
                           "beta gates")
            else:
                self._warn(f"--feature-gates: {gate} is ignored: binding-scheduler does not implement this Karmada "
                           "gate")
        if ALL_ALPHA in gates:  # a gate named on its own wins over AllAlpha, as in Kubernetes
            for gate in IMPLEMENTED_GATES:
                gates.setdefault(gate, gates[ALL_ALPHA])
        for gate, path in IMPLEMENTED_GATES.items():
            if gate in gates:
                self.overrides = self.overrides.set(path, gates[gate], "--feature-gates")


def _check(action: Callable[[], object]) -> None:
    try:
        action()
    except ValidationError as error:
        raise FlagError(str(error)) from None


def parse_bool(name: str, value: str) -> bool:
    """A boolean flag's value, as Go's strconv.ParseBool reads it."""
    if value in TRUE_WORDS:
        return True
    if value in FALSE_WORDS:
        return False
    raise FlagError(f"--{name}: {value!r} is not a boolean (true or false)")


def _integer(name: str, value: str) -> int:
    if not _INTEGER.fullmatch(value):
        raise FlagError(f"--{name}: {value!r} is not an integer")
    return int(value, 0) if not value.lstrip("+-").isdigit() else int(value)


def _number(name: str, value: str) -> int | float:
    if _INTEGER.fullmatch(value) and value.lstrip("+-").isdigit():
        return int(value)
    if not _NUMBER.fullmatch(value):
        raise FlagError(f"--{name}: {value!r} is not a number")
    return float(value)


def _gates(value: str) -> dict[str, bool]:
    """`--feature-gates=A=true,B=false` read as component-base reads it, with its messages."""
    gates: dict[str, bool] = {}
    for item in value.split(","):
        if not item:
            continue
        key, equals, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if not equals:
            raise FlagError(f"--feature-gates: missing bool value for {key}")
        if raw not in TRUE_WORDS | FALSE_WORDS:
            raise FlagError(f"--feature-gates: invalid value of {key}={raw} (true or false)")
        if key not in KARMADA_GATES:
            raise FlagError(f"--feature-gates: unrecognized feature gate: {key}")
        gates[key] = raw in TRUE_WORDS
    return gates


def bind_address(name: str, value: str) -> tuple[str, int]:
    """Host ("" for every interface) and port of a Go listen address: `:8080`, `127.0.0.1:8080`, `[::1]:8080`,
    `localhost:8080`."""
    host, colon, port = value.rpartition(":")
    usage = "give host:port (:8080, 127.0.0.1:8080, [::1]:8080), or 0 not to serve"
    if not colon or not (port.isascii() and port.isdigit()) or int(port) > MAX_PORT:
        raise FlagError(f"--{name}: {value!r} is not a listen address: {usage}")
    if int(port) == 0:
        raise FlagError(f"--{name}: {value!r} has port 0; binding-scheduler does not pick a free port: {usage}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        if ":" not in host:
            raise FlagError(f"--{name}: {value!r}: brackets are for an IPv6 address")
    elif ":" in host:
        raise FlagError(f"--{name}: {value!r}: an IPv6 address goes in brackets ([::1]:{port})")
    if host and not is_host(host):
        raise FlagError(f"--{name}: {host!r} is not an IP address or a hostname")
    return host, int(port)
