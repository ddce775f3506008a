"""The scheduler settings `simulate`, `explain` and `placements` decide with: a SchedulerConfiguration (from
`--config-file`, or the one found among the inputs, else the defaults), then the flags given on the command line
over it, so plugins, gates and the scheduler name can match production."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from ..algorithm.plugins import PluginError, WorkloadGroups
from ..algorithm.registry import PluginSet
from ..algorithm.schedule import ScheduleOptions
from ..model import Binding, ValidationError
from ..model.config import DEFAULT_CONFIG, KIND, FeatureGatesConfig, SchedulerConfig, parse_config
from ..model.config.sections import json_fields
from ..model.meta import ObjectMeta
from ..operator.config_file import ConfigFileError, read_documents
from ..scheduling.framework.plugins import UnknownPlugins, load_plugins, parse_plugin_spec, plugin_warnings
from ..scheduling.framework.preemptor import Preemption
from ..scheduling.state.claims import PreemptionClaims
from ..scheduling.state.workload_groups import WorkloadGroupIndex
from .inputs import Inputs, SourcedConfig
from .karmada_flags import FALSE_WORDS, TRUE_WORDS

FEATURE_GATES = tuple(name for name, _ in json_fields(FeatureGatesConfig) if name != "SchedulingOvercommitProtection")
"""The gates `--feature-gates` takes (overcommit protection is about concurrent passes, which these commands do not
run)."""


@dataclass(frozen=True, slots=True)
class DecisionSettings:
    config: SchedulerConfig
    source: str
    """Where `config` came from: a file (and the object's name), or `defaults`."""

    @property
    def scheduler_name(self) -> str:
        return self.config.scheduler_name

    @property
    def options(self) -> ScheduleOptions:
        return ScheduleOptions(
            enable_empty_workload_propagation=self.config.enable_empty_workload_propagation,
            multiple_pod_templates=self.config.feature_gates.multiple_pod_templates_scheduling,
        )

    def plugins(self, source: str = "--plugins") -> PluginSet:
        """The plugins the settings enable; a plugin that fails to load exits 2, what the user should know about
        the choice is a `warning:` line."""
        try:
            plugins = load_plugins(self.config.plugins, workload_affinity=self.config.feature_gates.workload_affinity,
                                   allow_unknown=self.config.allow_unknown_plugins)
        except UnknownPlugins as error:
            print(f"error: {source} {error}", file=sys.stderr)
            raise SystemExit(2) from None
        except PluginError as error:
            print(f"error: {error}", file=sys.stderr)
            raise SystemExit(2) from error
        for line in plugin_warnings(source, plugins):
            print(f"warning: {line}", file=sys.stderr)
        return plugins

    def workload_groups(self, bindings: Sequence[Binding]) -> WorkloadGroups | None:
        """With gate `WorkloadAffinity`, the workload groups of `bindings` as they are stored (what Karmada's
        binding informer would hold); None without it."""
        return WorkloadGroupIndex.of_bindings(bindings) if self.config.feature_gates.workload_affinity else None

    def preemption(self, bindings: Sequence[Binding]) -> Preemption | None:
        """With both preemption gates, preemption among `bindings` as they are stored (no claims: each binding is
        decided on its own); None without them."""
        if not self.config.feature_gates.preemption:
            return None
        return Preemption(lambda: bindings, PreemptionClaims(), max_victims=self.config.preemption.max_victims)


def add_settings_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config-file", metavar="PATH",
        help="decide with this SchedulerConfiguration (plugins, gates, scheduler name) as `run --config-file` "
        "does; without it, one found among the inputs is used. The flags below take precedence over it",
    )
    parser.add_argument(
        "--plugins", metavar="SPEC",
        help="Karmada's --plugins syntax: '*' all, 'name' one, '-name' without one (default: the configuration's, "
        "else '*')",
    )
    parser.add_argument(
        "--allow-unknown-plugins", action="store_true", default=None,
        help="ignore a plugin name no plugin has, as Karmada does, instead of refusing it",
    )
    parser.add_argument(
        "--enable-empty-workload-propagation", action="store_true", default=None,
        help="also list selected clusters that received no replicas, with 0",
    )
    parser.add_argument(
        "--feature-gates", metavar="GATE=BOOL,...",
        help=f"Karmada alpha gates ({', '.join(FEATURE_GATES)}), e.g. MultiplePodTemplatesScheduling=true",
    )


def feature_gates(text: str) -> dict[str, bool]:
    """`--feature-gates` as given, each value a Go bool as `run --feature-gates` reads it (true, True, TRUE, t, T,
    1 and their false words); an unknown gate or any other value exits 2."""
    gates: dict[str, bool] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, value = item.partition("=")
        if name not in FEATURE_GATES or value not in TRUE_WORDS | FALSE_WORDS:
            expected = ", ".join(f"{gate}=true|false" for gate in FEATURE_GATES)
            print(f"error: --feature-gates {item!r}: expected one of {expected}", file=sys.stderr)
            raise SystemExit(2)
        gates[name] = value in TRUE_WORDS
    return gates


def with_flags(config: SchedulerConfig, args: argparse.Namespace) -> SchedulerConfig:
    """`config` with what the command line sets over it."""
    if getattr(args, "plugins", None) is not None:
        config = dataclasses.replace(config, plugins=tuple(parse_plugin_spec(args.plugins)))
    if getattr(args, "allow_unknown_plugins", None):
        config = dataclasses.replace(config, allow_unknown_plugins=True)
    if getattr(args, "enable_empty_workload_propagation", None):
        config = dataclasses.replace(config, enable_empty_workload_propagation=True)
    if getattr(args, "feature_gates", None):
        fields = {key: f.name for key, f in json_fields(FeatureGatesConfig)}
        gates = {fields[name]: value for name, value in feature_gates(args.feature_gates).items()}
        config = dataclasses.replace(config, feature_gates=dataclasses.replace(config.feature_gates, **gates))
    return config


def flag_settings(args: argparse.Namespace) -> DecisionSettings:
    """The defaults with the flags over them (no configuration object)."""
    return DecisionSettings(with_flags(DEFAULT_CONFIG, args), "defaults")


def decision_settings(args: argparse.Namespace, inputs: Inputs) -> DecisionSettings:
    """`--config-file`'s configuration, else the one among `inputs`, else the defaults; the flags over it. A
    configuration that is not valid, or several among the inputs, exits 2."""
    found = _config_file(args.config_file) if getattr(args, "config_file", None) else inputs.configs
    if len(found) > 1:
        where = ", ".join(f"{c.source} ({ObjectMeta.of(c.document).name or '-'})" for c in found)
        print(f"error: {len(found)} SchedulerConfigurations in the inputs: {where}; name one with --config-file",
              file=sys.stderr)
        raise SystemExit(2)
    if not found:
        return flag_settings(args)
    (chosen,) = found
    name = ObjectMeta.of(chosen.document).name or "-"
    try:
        config = parse_config(chosen.document)
    except ValidationError as error:
        for one in error.errors:
            print(f"{chosen.source}: {KIND} {name}: {one}", file=sys.stderr)
        raise SystemExit(2) from None
    return DecisionSettings(with_flags(config, args), f"{chosen.source} ({KIND} {name})")


def _config_file(path: str) -> list[SourcedConfig]:
    try:
        found = [d for d in read_documents(path) if isinstance(d, dict) and d.get("kind") == KIND]
    except ConfigFileError as error:
        for line in error.lines:
            print(f"error: --config-file {line}", file=sys.stderr)
        raise SystemExit(2) from None
    if not found:
        print(f"error: --config-file {path}: no {KIND} in it", file=sys.stderr)
        raise SystemExit(2)
    return [SourcedConfig(path, d) for d in found]
