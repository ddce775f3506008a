"""The spec-by-spec table of docs/karmada-e2e.md, from the two JSON reports of one `dev.py karmada e2e` run per
scheduler: `python -m testsupport.karmada table KARMADA.json OURS.json` prints it (Markdown)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from testsupport.karmada.suite import SCHEDULING_SPEC_FILES, SpecResult, results

SYMBOL = {"passed": "passed", "failed": "FAILED", "skipped": "skipped", "pending": "pending",
          "panicked": "PANICKED", "timedout": "TIMED OUT", "interrupted": "interrupted", "aborted": "aborted"}


def rows(karmada: Sequence[SpecResult], ours: Sequence[SpecResult]) -> list[tuple[str, str, str, str, str]]:
    """(file, spec and its labels, karmada-scheduler's state, binding-scheduler's, the first failure line) per
    spec of the scheduling files, in file order then the suite's order."""
    theirs = {(r.file, r.name): r for r in karmada}
    mine = {(r.file, r.name): r for r in ours}
    keys = list(dict.fromkeys([*theirs, *mine]))
    order = {name: index for index, name in enumerate(SCHEDULING_SPEC_FILES)}
    keys = [key for key in keys if key[0] in order]
    keys.sort(key=lambda key: order[key[0]])
    found = []
    for key in keys:
        a, b = theirs.get(key), mine.get(key)
        failure = next((r.failure for r in (a, b) if r is not None and r.state != "passed" and r.failure), "")
        labels = next((r.labels for r in (a, b) if r is not None), ())
        name = f"{key[1]} [{', '.join(labels)}]" if labels else key[1]
        found.append((key[0], name, SYMBOL.get(a.state, a.state) if a else "-",
                      SYMBOL.get(b.state, b.state) if b else "-", failure))
    return found


def markdown(karmada: Sequence[SpecResult], ours: Sequence[SpecResult], why: Mapping[str, str]) -> str:
    """The table; `why` maps a spec-name fragment to the reason a spec fails (the first fragment found in the
    spec's name is used), for every spec that does not pass with both."""
    lines = ["| file | spec | karmada-scheduler | binding-scheduler | why not passed |", "|---|---|---|---|---|"]
    for file, name, theirs, mine, failure in rows(karmada, ours):
        reason = ""
        if (theirs, mine) != ("passed", "passed") and "skipped" not in (theirs, mine):
            reason = next((text for fragment, text in why.items() if fragment in name), failure)
        lines.append(f"| {file} | {name.replace('|', '/')} | {theirs} | {mine} | {reason.replace('|', '/')} |")
    return "\n".join(lines)


def counts(found: Sequence[SpecResult]) -> dict[str, int]:
    total: dict[str, int] = {}
    for result in found:
        if result.file in SCHEDULING_SPEC_FILES:
            total[result.state] = total.get(result.state, 0) + 1
    return total


def main(argv: Sequence[str]) -> int:
    karmada, ours = (results(Path(path)) for path in argv)
    print(markdown(karmada, ours, ENVIRONMENT))
    print()
    print(f"karmada-scheduler: {counts(karmada)}; binding-scheduler: {counts(ours)}")
    return 0


ENVIRONMENT = {
    "needCreateCluster": "environment: the spec creates a member cluster with kind (Docker), which this machine "
                         "does not have",
}
"""Why a spec fails here when the cause is the environment, not a scheduler."""
