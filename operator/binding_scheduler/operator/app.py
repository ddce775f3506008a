"""One operator instance: builds the scheduler service at Kopf's startup and routes Kopf's events to it.

Kopf is the event source and the lifecycle, nothing more: it never writes (only `on.event` handlers, posting
off, standalone). Every write goes through the service's own client and write gate.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, NoReturn

import kopf

from ..estimation.credentials import TlsFileError
from ..kube.client import USER_AGENT, ApiClient
from ..kube.connection import ConfigError, Connection, load_connection
from ..kube.errors import Conflict, KubeError, NotFound
from ..kube.gate import WriteGate, WriteGateClosed
from ..kube.lease import LeaseNamespaceMissing, default_identity
from ..model import ObjectMeta, ValidationError
from ..model.conditions import ConditionState, upsert_condition
from ..model.config import (
    API_VERSION,
    CONDITION_VALID,
    SchedulerConfig,
    at_restart,
    changed_fields,
    restart_required,
    validity,
)
from ..scheduling.framework.plugins import UnknownPlugins
from ..scheduling.lifecycle.event_source import LISTED_AT_START
from ..scheduling.lifecycle.service import SchedulerService
from ..scheduling.lifecycle.stop_report import ShutdownReport
from ..scheduling.observability.health import ServeError
from ..scheduling.observability.metrics import SchedulerMetrics
from .config_file import ConfigFileError, load_config_file
from .options import DEFAULT_NAMESPACE, LaunchOptions
from .preflight import PreflightError, preflight

logger = logging.getLogger(__name__)

CONFIG_GROUP, CONFIG_VERSION = API_VERSION.split("/")
CONFIG_PLURAL = "schedulerconfigurations"


class StartError(Exception):
    """The scheduler cannot start as asked (its configuration is missing or invalid); the message says why."""


class OperatorApp:
    def __init__(self, options: LaunchOptions, *, plugins: Sequence[object] = ()) -> None:
        self.options = options
        self.identity = options.identity or default_identity()
        """This instance's name: its Lease holder identity, and in the User-Agent of every request it sends."""
        self.plugins = tuple(plugins)
        """Out-of-tree plugins given in code (`SchedulerService.plugins`)."""
        self.connection: Connection | None = None
        self.namespace = "default"
        self.service: SchedulerService | None = None
        self.stop_flag: asyncio.Event | None = None
        self.start_error: str | None = None
        self.event_source = LISTED_AT_START
        """What the events come from and what it can do: set by the Kopf startup before `start` (which hands it
        to the service)."""
        self._config_body: Mapping[str, Any] | None = None
        self._config_logged: object = None
        """The generation of our configuration last logged about (its own status writes bring it back)."""
        self.metrics = SchedulerMetrics()
        """The service's metrics, made first: the requests before the service (preflight, the configuration's
        first read) are counted too."""

    # -- lifecycle ---------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Kopf's startup: build the service and wait for the Lease (Kopf makes no API call before this
        returns, so a standby instance only ever talks to the Lease)."""
        try:
            self.connection = load_connection(
                self.options.kubeconfig, self.options.context, master=self.options.master
            )
            self.namespace = self.options.namespace or DEFAULT_NAMESPACE
            await self._preflight(self.connection)
            config = await self._initial_config(self.connection)
        except (StartError, ConfigError, PreflightError, ConfigFileError) as error:
            self._cannot_start(error)
        try:
            self.service = SchedulerService(
                self.connection,
                config,
                metrics=self.metrics,
                identity=self.identity,
                plugins=self.plugins,
                config_source=self._config_source(),
                event_source=self.event_source,
            )
        except TlsFileError as error:
            self._cannot_start(self._named(error))
        except UnknownPlugins as error:
            self._cannot_start(self._named(error))
        self.service.on_fatal = self._fatal
        try:
            await self.service.start()
        except (ServeError, LeaseNamespaceMissing) as error:
            self._say_cannot_start(error)  # the cause first, then the shutdown's report
            await self.service.shutdown()
            self._leave_under_kopf_run()
            raise kopf.PermanentError(str(error)) from None
        if self._config_body is not None:  # its Valid condition is a write: only once we lead
            await self.config_event({"type": None, "object": self._config_body})

    def _config_source(self) -> str:
        if self.options.config_file:
            source = f"from file {self.options.config_file}"
        elif self.options.config_name:
            source = f"from SchedulerConfiguration {self._name()} (followed)"
        else:
            source = "from the defaults"
        flags = sorted(set(self.options.overrides.sources.values()))
        return f"{source} and flags {' '.join(flags)}" if flags else source

    def _named(self, error: TlsFileError | UnknownPlugins) -> ValidationError:
        """A file that cannot be read, or a plugin name that does not exist, named by the flag that gave it or by
        its configuration field."""
        problem = f"{error.path}: {error.reason}" if isinstance(error, TlsFileError) else error.message
        return self.options.overrides.named(ValidationError(error.field, problem))

    def _cannot_start(self, error: Exception) -> NoReturn:
        """One line, then Kopf's startup fails for good (no retry, no traceback): the process exits 1."""
        self._say_cannot_start(error)
        self._leave_under_kopf_run()
        raise kopf.PermanentError(str(error)) from None

    def _leave_under_kopf_run(self) -> None:
        """Under `kopf run` (no runner of ours: no stop flag) Kopf would log the failed startup again with two
        tracebacks and exit 0 or 1 as it sees fit: after our one line, the process leaves at once with status 1,
        as `binding-scheduler run` does. Nothing of ours runs yet (or the service's shutdown has finished)."""
        if self.stop_flag is None:
            logging.shutdown()
            os._exit(1)

    def _say_cannot_start(self, error: Exception) -> None:
        """One line; then the runner's stop flag ends the process (exit status 1) without waiting for Kopf."""
        self.start_error = str(error)
        logger.critical("cannot start: %s", error)
        if self.stop_flag is not None:
            self.stop_flag.set()

    def request_stop(self) -> None:
        if self.service is not None:
            self.service.request_stop()

    async def shutdown(self) -> ShutdownReport | None:
        if self.service is None:
            return None
        return await self.service.shutdown()

    @property
    def exit_code(self) -> int:
        return self.service.exit_code if self.service is not None else 0

    def _fatal(self) -> None:
        """The Lease is lost (the gate is already closed, every pass cancelled): stop with exit status 1.
        Our runner turns the stop flag into that status; under `kopf run` there is no way to pass a status
        through Kopf, so the process leaves at once (as Karmada's scheduler does on a lost lease)."""
        if self.stop_flag is not None:
            self.stop_flag.set()
            return
        logger.critical("lease lost under `kopf run`: exiting with status 1")
        logging.shutdown()
        os._exit(1)

    def connection_info(self) -> kopf.ConnectionInfo:
        connection = self.connection
        if connection is None:
            raise kopf.PermanentError("no connection: the startup handler has not run")
        return kopf.ConnectionInfo(
            server=connection.server,
            ca_path=connection.ca_file,
            ca_data=connection.ca_data,
            insecure=connection.insecure,
            token=connection.token or _read(connection.token_file),
            certificate_path=connection.cert_file,
            certificate_data=connection.cert_data,
            private_key_path=connection.key_file,
            private_key_data=connection.key_data,
            username=connection.username,
            password=connection.password,
            default_namespace=connection.namespace,
        )

    # -- configuration -----------------------------------------------------------------------------------

    def _client(self, connection: Connection) -> ApiClient:
        """A client of its own, for the reads before the service exists."""
        return ApiClient(connection, WriteGate(), user_agent=f"{USER_AGENT} ({self.identity})",
                         observer=self.metrics.rest_client)

    async def _preflight(self, connection: Connection) -> None:
        """Before the Lease is taken: the API server is karmada-apiserver, with the CRD `--config` needs
        (read-only)."""
        client = self._client(connection)
        try:
            await preflight(client, config_name=self.options.config_name)
        finally:
            await client.close()

    async def _initial_config(self, connection: Connection) -> SchedulerConfig:
        overrides = self.options.overrides
        if self.options.config_file:
            return load_config_file(self.options.config_file, overrides)
        if not self.options.config_name:
            return overrides.parse()
        client = self._client(connection)
        try:
            try:
                body = await client.get(self._config_path())
            except NotFound:
                raise StartError(
                    f"SchedulerConfiguration {self._name()} (--config) does not exist: create it, or start without "
                    "--config to run on the defaults"
                ) from None
            try:
                config = overrides.parse(body)
            except ValidationError as error:
                # Never run on the defaults instead: they name another scheduler and would take its bindings.
                await self._write_config_status(client, body, *self._validity(error, at_start=True))
                raise StartError(f"SchedulerConfiguration {self._name()} is invalid: {error}") from None
        finally:
            await client.close()
        self._config_body = body
        return config

    def _config_path(self, subresource: str | None = None) -> str:
        path = (
            f"/apis/{CONFIG_GROUP}/{CONFIG_VERSION}/namespaces/{self.namespace}/{CONFIG_PLURAL}/"
            f"{self.options.config_name}"
        )
        return f"{path}/{subresource}" if subresource else path

    def watches_config(self, body: Mapping[str, Any]) -> bool:
        meta = ObjectMeta.of(body)
        wanted = (self.options.config_name, self.namespace)
        return bool(self.options.config_name) and (meta.name, meta.namespace) == wanted

    async def config_event(self, event: Mapping[str, Any]) -> None:
        """A change of our SchedulerConfiguration: apply it to the next passes, or keep the last valid one
        and say why in the status."""
        body = event.get("object") or {}
        service = self.service
        if service is None or event.get("type") == "DELETED" or not self.watches_config(body):
            return
        generation = ObjectMeta.of(body).generation
        first_look = generation != self._config_logged  # its status write brings it back: say things once
        self._config_logged = generation
        try:
            config = self.options.overrides.parse(body)
        except ValidationError as error:
            if first_look:
                logger.error("SchedulerConfiguration %s generation %s is invalid, keeping the last valid one: %s",
                             self._name(), generation, error)
            service.metrics.set_config_valid(False)
            await self._write_config_status(service.client, body, *self._validity(error))
            return
        changed = changed_fields(service.config, config)
        restart = restart_required(service.config, config)
        try:
            service.apply_config(config)
        except (TlsFileError, UnknownPlugins) as refused:
            named = self._named(refused)
            if first_look:
                logger.error("SchedulerConfiguration %s generation %s cannot be applied, keeping the last valid "
                             "one: %s", self._name(), generation, named)
            service.metrics.set_config_valid(False)
            await self._write_config_status(service.client, body, *self._validity(named))
            return
        service.metrics.set_config_valid(True)
        if first_look and changed:
            applied = [path for path in changed if path not in restart]
            if applied:
                logger.info("SchedulerConfiguration %s generation %s applied: %s", self._name(), generation,
                            ", ".join(applied))
            if restart:
                logger.warning("SchedulerConfiguration %s generation %s changes %s, %s", self._name(), generation,
                               ", ".join(restart), at_restart(restart))
        await self._write_config_status(service.client, body, *self._validity(None, restart))

    def _validity(
        self, error: ValidationError | None, restart: list[str] | None = None, *, at_start: bool = False
    ) -> tuple[bool, str, str]:
        """The Valid condition of the object merged with the command line's flags, which it names."""
        valid, reason, message = validity(error, restart or [], at_start=at_start)
        paths = self.options.overrides.paths
        if paths:
            message += f" (command-line flags set {', '.join(paths)}, over the object)"
        return valid, reason, message

    def _name(self) -> str:
        return f"{self.namespace}/{self.options.config_name}"

    async def _write_config_status(
        self, client: ApiClient, body: Mapping[str, Any], valid: bool, reason: str, message: str
    ) -> None:
        meta = ObjectMeta.of(body)
        status = body.get("status") or {}
        current = status.get("conditions") or []
        verdict = ConditionState("True" if valid else "False", reason, message)
        conditions = upsert_condition(current, CONDITION_VALID, verdict, datetime.now(UTC),
                                      observed_generation=meta.generation)
        if conditions == list(current):
            return
        patch = {
            "metadata": {"resourceVersion": meta.resource_version or None},
            "status": {"conditions": conditions, "observedGeneration": meta.generation},
        }
        try:
            await client.patch_merge(self._config_path("status"), patch)
        except Conflict:
            logger.info("SchedulerConfiguration %s changed meanwhile; its next event brings the status", self._name())
        except (KubeError, WriteGateClosed) as error:
            logger.warning("could not write the status of SchedulerConfiguration %s: %s", self._name(), error)

    # -- events ------------------------------------------------------------------------------------------

    def binding_event(self, event: Mapping[str, Any]) -> None:
        body = event.get("object")
        if self.service is None or not isinstance(body, Mapping):
            return
        if event.get("type") == "DELETED":
            self.service.scheduler.on_binding_deleted(body)
        else:
            self.service.scheduler.on_binding(body)

    async def relisted(self, plural: str, bodies: list[Mapping[str, Any]]) -> None:
        """Kopf listed `plural` again (after a 410 or a broken stream): what the list lacks was deleted while
        the watch was down. Like an informer's replace, the stores become the list."""
        if self.service is not None:
            await self.service.relisted(plural, bodies)

    def cluster_changed(self, body: Mapping[str, Any]) -> None:
        """A Cluster listed, added or modified."""
        if self.service is not None:
            self.service.scheduler.on_cluster(body)

    async def cluster_deleted(self, body: Mapping[str, Any]) -> None:
        if self.service is not None:
            await self.service.cluster_deleted(body)


def _read(path: str | None) -> str | None:
    if not path:
        return None
    with open(path, encoding="utf-8") as handle:
        return handle.read().strip()
