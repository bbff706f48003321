"""`make demo`'s ending: the console's URL, and KEEP=1 keeping everything up until Enter."""

from __future__ import annotations

import io

import pytest

from ironsight.lab import demo


def test_without_keep_the_demo_says_how_to_keep_the_lab_and_does_not_wait(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv(demo.KEEP, raising=False)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    demo._keep_running("http://127.0.0.1:6385/ui/")
    out = capsys.readouterr().out
    assert "http://127.0.0.1:6385/ui/" in out and "make demo KEEP=1" in out


def test_keep_waits_for_enter_before_the_demo_cleans_up(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(demo.KEEP, "1")
    stdin = io.StringIO("\nlater\n")
    monkeypatch.setattr("sys.stdin", stdin)
    demo._keep_running("http://127.0.0.1:6385/ui/")
    assert "kept running" in capsys.readouterr().out
    assert stdin.read() == "later\n"  # it read one line: Enter


def test_keep_ends_at_the_end_of_input(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(demo.KEEP, "1")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    demo._keep_running("http://127.0.0.1:6385/ui/")
