"""`python -m ironsight.agent` entry point: print, post, exit codes."""

from __future__ import annotations

import json

import click
from click.testing import CliRunner

from ironsight.agent.cli import EXIT_NO_URL, EXIT_OK, EXIT_POST_FAILED, main
from ironsight.cli import agent as agent_command

FAST = ["--backoff", "0.001"]


def test_print_writes_the_document_as_indented_json(qemu_vm, capsys):
    assert main(["--print", "--root", str(qemu_vm)]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith('{\n  "inventory"')
    assert json.loads(out)["inventory"]["cpu"]["count"] == 2


def test_print_does_not_post(qemu_vm, callback_server, capsys):
    args = ["--print", "--root", str(qemu_vm), "--callback-url", callback_server.url]
    assert main(args) == EXIT_OK
    assert callback_server.received == []


def test_posts_to_the_callback_url_option(qemu_vm, callback_server):
    assert main(["--root", str(qemu_vm), "--callback-url", callback_server.url]) == EXIT_OK
    assert callback_server.received[0]["inventory"]["interfaces"][0]["name"] == "eth0"


def test_posts_to_the_kernel_command_line_url(qemu_vm, callback_server):
    qemu_vm.write("proc/cmdline", f"quiet ironsight.callback_url={callback_server.url}\n")
    assert main(["--root", str(qemu_vm)]) == EXIT_OK
    assert len(callback_server.received) == 1


def test_sends_the_kernel_command_lines_callback_token_and_never_prints_it(
        qemu_vm, callback_server, capsys):
    qemu_vm.write("proc/cmdline", f"ironsight.callback_url={callback_server.url} "
                                  "ironsight.callback_token=s3cret-T0ken_x\n")
    assert main(["--root", str(qemu_vm)]) == EXIT_OK
    assert callback_server.tokens == ["s3cret-T0ken_x"]
    out = capsys.readouterr()
    assert "s3cret-T0ken_x" not in out.out + out.err
    assert "s3cret-T0ken_x" not in json.dumps(callback_server.received)


def test_without_a_token_no_token_header_is_sent_and_it_says_so(
        qemu_vm, callback_server, capsys):
    assert main(["--root", str(qemu_vm), "--callback-url", callback_server.url]) == EXIT_OK
    assert callback_server.tokens == [None]
    assert "no callback token" in capsys.readouterr().err


def test_retries_after_503_then_succeeds(qemu_vm, callback_server, capsys):
    callback_server.replies = [(503, "busy"), (503, "busy")]
    assert main(["--root", str(qemu_vm), "--callback-url", callback_server.url, *FAST]) == 0
    assert len(callback_server.received) == 3
    assert "callback accepted" in capsys.readouterr().out


def test_a_400_is_not_retried_and_exits_1(qemu_vm, callback_server, capsys):
    callback_server.replies = [(400, '{"error_message": "bad"}')]
    args = ["--root", str(qemu_vm), "--callback-url", callback_server.url, *FAST]
    assert main(args) == EXIT_POST_FAILED
    assert len(callback_server.received) == 1
    assert "HTTP 400" in capsys.readouterr().err


def test_the_next_url_is_tried_when_one_fails(qemu_vm, callback_server, dead_url):
    urls = f"{dead_url},{callback_server.url}"
    args = ["--root", str(qemu_vm), "--callback-url", urls, "--retries", "0"]
    assert main(args) == EXIT_OK
    assert len(callback_server.received) == 1


def test_retries_option_bounds_the_attempts(qemu_vm, callback_server):
    callback_server.replies = [(503, "busy")] * 5
    args = ["--root", str(qemu_vm), "--callback-url", callback_server.url, "--retries", "2",
            *FAST]
    assert main(args) == EXIT_POST_FAILED
    assert len(callback_server.received) == 3


def test_no_callback_url_exits_2(tree, capsys):
    assert main(["--root", str(tree)]) == EXIT_NO_URL
    assert "no callback URL" in capsys.readouterr().err


def test_the_ironsight_cli_forwards_its_arguments(qemu_vm):
    @click.group()
    def cli() -> None:
        pass

    agent_command.register(cli)
    result = CliRunner().invoke(cli, ["agent", "--print", "--root", str(qemu_vm)])
    assert result.exit_code == 0
    assert json.loads(result.output)["inventory"]["hostname"] == "node-1"


def test_the_ironsight_cli_forwards_help_to_the_agent():
    @click.group()
    def cli() -> None:
        pass

    agent_command.register(cli)
    result = CliRunner().invoke(cli, ["agent", "--help"])
    assert result.exit_code == 0
    assert result.output.startswith("usage: ironsight agent [-h] [--print]")
