"""`binding-scheduler examples [DIR]`: the bundled examples, written out for `simulate -f DIR`."""

from __future__ import annotations

from pathlib import Path

import pytest

from binding_scheduler.cli.examples import bundled_examples
from binding_scheduler.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def test_the_bundled_examples_are_written_byte_for_byte(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["examples", str(tmp_path / "fleet")]) == 0
    written = sorted((tmp_path / "fleet").iterdir())
    assert [p.name for p in written] == ["bindings.yaml", "clusters.yaml", "scheduler-configuration.yaml"]
    assert all(p.read_bytes() == (ROOT / "examples" / p.name).read_bytes() for p in written)
    assert capsys.readouterr().out.split() == [str(p) for p in written]


def test_the_default_folder_is_examples_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["examples"]) == 0
    assert (tmp_path / "examples" / "clusters.yaml").is_file()


def test_existing_files_are_kept_unless_forced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "clusters.yaml").write_text("mine\n")
    assert main(["examples", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"examples: not overwriting {tmp_path / 'clusters.yaml'} (--force does)\n"
    assert (tmp_path / "clusters.yaml").read_text() == "mine\n"
    assert not (tmp_path / "bindings.yaml").exists()  # nothing is half-written
    assert main(["examples", str(tmp_path), "--force"]) == 0
    assert (tmp_path / "clusters.yaml").read_bytes() == (ROOT / "examples" / "clusters.yaml").read_bytes()


def test_the_written_examples_simulate_as_the_repository_ones_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["examples", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["simulate", "-f", str(tmp_path), "-o", "json"]) == 0
    written = capsys.readouterr().out
    assert main(["simulate", "-f", str(ROOT / "examples"), "-o", "json"]) == 0
    assert written == capsys.readouterr().out


def test_the_bundled_examples_are_read_through_importlib_resources() -> None:
    assert [item.name for item in bundled_examples()] == [
        "bindings.yaml", "clusters.yaml", "scheduler-configuration.yaml"
    ]
