"""`binding-scheduler placements`: where the replicas are, bindings × clusters, with what each cluster has free.

It shows what IS placed (each binding's current `spec.clusters`), not a decision: nothing is scheduled, and
nothing is written (a live plane is read through a closed write gate).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from ..algorithm.general_estimator import EstimatorCache
from ..algorithm.resource_models import CPU, MEMORY
from ..kube.jsonio import dumps_indented
from ..model import Cluster
from ..model.meta import InvalidBinding, ObjectMeta, ParsedBinding
from .common import add_source_arguments, fail, load_or_exit, run_command
from .inputs import Inputs
from .placements_svg import render_svg

MATRIX_CLUSTERS = 10
"""`--layout auto` prints the matrix for at most this many clusters, one row per cluster beyond."""
GIB = 2**30
LAYOUTS = ("auto", "matrix", "clusters")


@dataclass(frozen=True, slots=True)
class Free:
    """What a cluster's resource summary leaves, as the general estimator reads it: allocatable − allocated −
    allocating. Negative when the cluster is over-committed; None for a resource `allocatable` does not list."""

    pods: int
    cpu_millicores: int | None
    memory_bytes: int | None

    @property
    def cores(self) -> str:
        return "-" if self.cpu_millicores is None else tenths(self.cpu_millicores, 1000)

    @property
    def gib(self) -> str:
        return "-" if self.memory_bytes is None else tenths(self.memory_bytes, GIB)

    def to_dict(self) -> dict[str, int | None]:
        return {"pods": self.pods, "cpuMillicores": self.cpu_millicores, "memoryBytes": self.memory_bytes}


def tenths(amount: int, unit: int) -> str:
    """`amount / unit` with one decimal, rounded down (what is free is never overstated)."""
    count = amount * 10 // unit
    sign = "-" if count < 0 else ""
    return f"{sign}{abs(count) // 10}.{abs(count) % 10}"


def free_of(cluster: Cluster, cache: EstimatorCache) -> Free | None:
    """None without a resource summary. The estimator's own integer profile of the cluster: pods rounded up
    before the subtraction, cpu in millicores and memory in bytes rounded up after it."""
    profile = cache.profile(cluster)
    if profile is None:
        return None
    return Free(profile.allowed_pods, profile.available.get(CPU), profile.available.get(MEMORY))


@dataclass(frozen=True, slots=True)
class Column:
    """One cluster of the matrix."""

    name: str
    found: bool
    """A Cluster of that name is among the inputs (False: only some binding's spec.clusters names it)."""
    free: Free | None
    replicas: int
    bindings: int


@dataclass(frozen=True, slots=True)
class Row:
    """One binding of the matrix: its replicas per shown cluster (placed there with 0 replicas counts as placed)."""

    meta: ObjectMeta
    clusters: Mapping[str, int]
    invalid: str | None = None
    """Why the model refuses the binding (its placement is then unknown)."""

    @property
    def label(self) -> str:
        return f"{self.meta.kind} {self.meta.key}"

    @property
    def replicas(self) -> int:
        return sum(self.clusters.values())

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.meta.kind, "namespace": self.meta.namespace, "name": self.meta.name,
                "replicas": self.replicas, "clusters": dict(self.clusters), "invalid": self.invalid}


@dataclass(frozen=True, slots=True)
class Matrix:
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    left_out: int = 0
    """Bindings `--clusters` left out: none of their replicas is on a shown cluster."""

    @property
    def replicas(self) -> int:
        return sum(c.replicas for c in self.columns)

    @property
    def free(self) -> Free | None:
        """What the shown clusters have free together, each figure over the clusters that report it."""
        frees = [c.free for c in self.columns if c.free is not None]
        if not frees:
            return None
        cpu = [f.cpu_millicores for f in frees if f.cpu_millicores is not None]
        memory = [f.memory_bytes for f in frees if f.memory_bytes is not None]
        return Free(sum(f.pods for f in frees), sum(cpu) if cpu else None, sum(memory) if memory else None)

    @property
    def largest(self) -> int:
        """The most replicas in one cell (the top of the SVG's colour scale)."""
        return max((n for r in self.rows for n in r.clusters.values()), default=0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "clusters": [{"name": c.name, "found": c.found, "replicas": c.replicas, "bindings": c.bindings,
                          "free": None if c.free is None else c.free.to_dict()} for c in self.columns],
            "bindings": [r.to_dict() for r in self.rows],
        }


def _placed(entry: ParsedBinding) -> dict[str, int]:
    replicas: dict[str, int] = {}
    for target in entry.binding.clusters:
        replicas[target.name] = replicas.get(target.name, 0) + target.replicas
    return replicas


def build_matrix(inputs: Inputs, patterns: Sequence[str] = ()) -> Matrix:
    """Clusters sorted by name (the Clusters, and any cluster a binding is placed on), bindings sorted by
    namespace, name and kind. With `patterns`, only the clusters they match, and only the bindings with a
    replica on one of them (or that the model refuses: where those are is unknown)."""
    clusters = {c.name: c for c in inputs.clusters}
    placed = {id(e): _placed(e) for e in inputs.entries if isinstance(e, ParsedBinding)}
    names = set(clusters).union(*placed.values())
    if patterns:
        names = {n for n in names if any(fnmatchcase(n, p) for p in patterns)}
    rows = []
    left_out = 0
    for entry in inputs.entries:
        if isinstance(entry, InvalidBinding):
            rows.append(Row(entry.meta, {}, str(entry.error)))
            continue
        shown = {n: r for n, r in sorted(placed[id(entry)].items()) if n in names}
        if patterns and not shown:
            left_out += 1
        else:
            rows.append(Row(entry.meta, shown))
    rows.sort(key=lambda r: (r.meta.namespace, r.meta.name, r.meta.kind))
    on: dict[str, list[int]] = {name: [] for name in names}
    for row in rows:
        for name, replicas in row.clusters.items():
            on[name].append(replicas)
    cache = EstimatorCache()
    columns = []
    for name in sorted(names):
        cluster = clusters.get(name)
        free = None if cluster is None else free_of(cluster, cache)
        columns.append(Column(name, cluster is not None, free, sum(on[name]), len(on[name])))
    return Matrix(tuple(columns), tuple(rows), left_out)


def cluster_patterns(values: Iterable[str], inputs: Inputs) -> list[str]:
    """`--clusters` values (comma-separated, repeatable) as glob patterns; one that matches no cluster is bad
    input (exit 2): most likely a typo, and an empty picture would not say so."""
    patterns = [p.strip() for value in values for p in value.split(",") if p.strip()]
    known = {c.name for c in inputs.clusters}
    known.update(t.name for b in inputs.bindings for t in b.clusters)
    unmatched = [p for p in patterns if not any(fnmatchcase(n, p) for n in known)]
    if unmatched:
        raise fail([f"error: --clusters {p!r} matches no cluster (clusters: {', '.join(sorted(known)) or 'none'})"
                    for p in unmatched])
    return patterns


def warnings(inputs: Inputs, matrix: Matrix) -> list[str]:
    lines = [f"warning: {line} (its placement is not shown)" for line in inputs.invalid_lines()]
    for column in matrix.columns:
        if not column.found:
            count = f"{column.bindings} binding{'' if column.bindings == 1 else 's'}"
            lines.append(f"warning: {count} placed on cluster {column.name!r}, which is not among the Clusters")
    return lines


FREE_LABELS = ("FREE PODS", "FREE CPU (cores)", "FREE MEMORY (GiB)")


def free_cells(free: Free | None) -> tuple[str, str, str]:
    if free is None:
        return "-", "-", "-"
    return str(free.pods), free.cores, free.gib


def _lines(table: Sequence[Sequence[str]], left: int, notes: Mapping[int, str]) -> list[str]:
    """Columns two spaces apart, the first `left` columns left-aligned and the rest right-aligned; a row with a
    note prints its first `left` cells and the note instead of the others."""
    widths = [max((len(row[i]) for n, row in enumerate(table) if n not in notes or i < left), default=0)
              for i in range(len(table[0]))]
    lines = []
    for number, row in enumerate(table):
        cells = [c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        if number in notes:
            cells = [*cells[:left], notes[number]]
        lines.append("  ".join(cells).rstrip())
    return lines


def render_matrix(matrix: Matrix) -> str:
    """Rows: the bindings, then TOTAL (replicas per cluster) and the FREE rows; columns: the clusters, then
    TOTAL. `-`: not placed there (a cell), not known (a FREE figure)."""
    columns = matrix.columns
    table: list[list[str]] = [["BINDING", *(c.name for c in columns), "TOTAL"]]
    notes = {}
    for row in matrix.rows:
        if row.invalid is not None:
            notes[len(table)] = f"invalid: {row.invalid}"
        table.append([row.label, *(str(row.clusters[c.name]) if c.name in row.clusters else "-" for c in columns),
                      str(row.replicas)])
    table.append(["TOTAL", *(str(c.replicas) for c in columns), str(matrix.replicas)])
    per_cluster = [free_cells(c.free) for c in columns]
    fleet = free_cells(matrix.free)
    for i, label in enumerate(FREE_LABELS):
        table.append([label, *(cells[i] for cells in per_cluster), fleet[i]])
    return "\n".join(_lines(table, 1, notes))


def render_by_cluster(matrix: Matrix) -> str:
    """One row per cluster: its replicas, what it has free, and the bindings on it (`namespace/name:replicas`,
    a ClusterResourceBinding by its name alone), then TOTAL."""
    on: dict[str, list[str]] = {column.name: [] for column in matrix.columns}
    for row in matrix.rows:
        for name, replicas in row.clusters.items():
            on[name].append(f"{row.meta.key}:{replicas}")
    table = [["CLUSTER", "REPLICAS", *FREE_LABELS, "BINDINGS"]]
    for column in matrix.columns:
        table.append([column.name, str(column.replicas), *free_cells(column.free), ", ".join(on[column.name]) or "-"])
    placed = sum(1 for r in matrix.rows if r.clusters)
    table.append(["TOTAL", str(matrix.replicas), *free_cells(matrix.free),
                  f"{placed} binding{'' if placed == 1 else 's'}"])
    lines = _lines([row[:-1] for row in table], 1, {})
    return "\n".join(f"{line}  {row[-1]}" for line, row in zip(lines, table, strict=True))


def render(matrix: Matrix, output: str, layout: str = "auto") -> str:
    if output == "json":
        return dumps_indented(matrix.to_dict())
    if output == "svg":
        return render_svg(matrix)
    if layout == "clusters" or (layout == "auto" and len(matrix.columns) > MATRIX_CLUSTERS):
        return render_by_cluster(matrix)
    return render_matrix(matrix)


def summary(matrix: Matrix) -> str:
    rows, columns = len(matrix.rows), len(matrix.columns)
    text = (f"{rows} binding{'' if rows == 1 else 's'} on {columns} cluster{'' if columns == 1 else 's'}: "
            f"{matrix.replicas} replica{'' if matrix.replicas == 1 else 's'} placed")
    nowhere = sum(1 for r in matrix.rows if not r.clusters and r.invalid is None)
    invalid = sum(1 for r in matrix.rows if r.invalid is not None)
    if nowhere:
        text += f", {nowhere} binding{'' if nowhere == 1 else 's'} placed nowhere"
    if invalid:
        text += f", {invalid} invalid"
    if matrix.left_out:
        text += f" ({matrix.left_out} more on no cluster --clusters shows)"
    return text


async def _run(args: argparse.Namespace) -> int:
    inputs = await load_or_exit(args, need_bindings=False)
    matrix = build_matrix(inputs, cluster_patterns(args.clusters, inputs))
    for line in warnings(inputs, matrix):
        print(line, file=sys.stderr)
    print(render(matrix, args.output, args.layout))
    print(summary(matrix), file=sys.stderr)
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "placements",
        help="where the replicas are: bindings x clusters, with totals and free capacity (read-only)",
        description="Print where every ResourceBinding and ClusterResourceBinding has its replicas now (its "
        "spec.clusters; nothing is scheduled), bindings x clusters, with each cluster's total and what it has "
        "free. Free is what the general estimator reads in the Cluster's status.resourceSummary: allocatable "
        "minus allocated minus allocating, pods as a count, cpu in cores and memory in GiB rounded down to a "
        "tenth; negative when over-committed; '-' when the cluster has no resource summary or does not list "
        "the resource. Nothing is written.",
        epilog=f"Table layout: the matrix for at most {MATRIX_CLUSTERS} clusters, one row per cluster beyond "
        "(--layout chooses); --clusters narrows either, and the JSON and SVG too.",
    )
    add_source_arguments(parser, invalid="without it such a binding is a row saying why and a warning")
    parser.add_argument("-o", "--output", choices=("table", "json", "svg"), default="table",
                        help="table (default), json, or svg: the matrix as a heat map, to save as a file")
    parser.add_argument("--layout", choices=LAYOUTS, default="auto",
                        help=f"table only: matrix (bindings x clusters), clusters (one row per cluster, the bindings "
                        f"on it listed), or auto (default: matrix up to {MATRIX_CLUSTERS} clusters)")
    parser.add_argument("--clusters", action="append", default=[], metavar="PATTERN[,PATTERN]",
                        help="only these clusters (glob patterns, e.g. 'aws-*'; repeatable), and only the bindings "
                        "with replicas on them")
    parser.set_defaults(handler=run_command(_run))
