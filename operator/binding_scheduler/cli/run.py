"""`binding-scheduler run`: the scheduler against a Karmada control plane."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from ..operator.config_file import ConfigFileError, load_config_file
from ..operator.options import LaunchOptions
from ..operator.runner import main as run_main


def configure_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if not verbose:
        logging.getLogger("kopf").setLevel(logging.WARNING)
        logging.getLogger("aiohttp.access").setLevel(logging.WARNING)


def handle(args: argparse.Namespace) -> int:
    configure_logging(args.verbose)
    if args.config_file:
        try:
            load_config_file(args.config_file)
        except ConfigFileError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    options = LaunchOptions(
        kubeconfig=args.kubeconfig,
        context=args.context,
        namespace=args.namespace,
        config_name=args.config,
        config_file=args.config_file,
        identity=args.identity,
    )
    return run_main(options)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run the scheduler against a Karmada control plane",
        description="Schedule the ResourceBindings and ClusterResourceBindings of a Karmada control plane. "
        "Stops on SIGTERM/SIGINT within shutdown.drainTimeout; exits 1 if the lease is lost.",
    )
    parser.add_argument(
        "--kubeconfig", metavar="FILE", help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then in-cluster)"
    )
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context")
    parser.add_argument("--namespace", metavar="NS", help="the scheduler's namespace (where --config is read)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--config", metavar="NAME", help="watch this SchedulerConfiguration in --namespace")
    source.add_argument("--config-file", metavar="FILE", help="read a SchedulerConfiguration from a file")
    parser.add_argument("--identity", metavar="ID", help="lease holder identity (default <hostname>_<uuid>)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.set_defaults(handler=handle, exit_at_once=True)
