"""The agent's hello: sent before the inventory, with the MACs and the token; never fatal."""

from __future__ import annotations

from ironsight.agent import hello
from ironsight.agent.cli import EXIT_OK, main


def test_the_hello_url_sits_beside_discoverds_callback_url():
    assert hello.url_for("http://10.0.0.1:5050/v1/continue") == "http://10.0.0.1:5050/v1/hello"
    assert hello.url_for("http://h/v1/continue/") == "http://h/v1/hello"


def test_a_callback_url_that_is_not_discoverds_has_no_hello():
    assert hello.url_for("http://ironic:6385/v1/continue_inspection") is None
    assert hello.url_for("http://h/other") is None


def test_the_hello_lists_the_device_backed_interfaces_macs(qemu_vm):
    qemu_vm.virtual_nic("br0", "02:00:00:00:00:09")
    assert hello.macs(str(qemu_vm)) == ["52:54:00:12:34:56"]


def test_the_agent_says_hello_with_its_token_before_it_posts_the_report(
        qemu_vm, callback_server):
    qemu_vm.write("proc/cmdline", f"ironsight.callback_url={callback_server.url} "
                                  "ironsight.callback_token=T0ken\n")
    assert main(["--root", str(qemu_vm)]) == EXIT_OK
    assert callback_server.hellos == [({"macs": ["52:54:00:12:34:56"]}, "T0ken")]
    assert len(callback_server.received) == 1


def test_a_refused_hello_does_not_stop_the_report(qemu_vm, callback_server, capsys):
    callback_server.hello_replies = [(403, '{"error": "token"}')]
    assert main(["--root", str(qemu_vm), "--callback-url", callback_server.url]) == EXIT_OK
    assert len(callback_server.received) == 1
    assert "hello: HTTP 403" in capsys.readouterr().err


def test_printing_the_document_says_no_hello(qemu_vm, callback_server):
    args = ["--print", "--root", str(qemu_vm), "--callback-url", callback_server.url]
    assert main(args) == EXIT_OK
    assert callback_server.hellos == []


def test_after_its_hello_the_agent_sends_the_ramdisks_log_before_the_report(
        qemu_vm, callback_server):
    qemu_vm.write("tmp/ramdisk.log", "ironsight[1.50] network up: 10.0.0.5 (dhcp)\n")
    assert main(["--root", str(qemu_vm), "--callback-url", callback_server.url]) == EXIT_OK
    last = callback_server.beats[-1]
    assert last["stage"] == "posting" and last["macs"] == ["52:54:00:12:34:56"]
    assert "network up: 10.0.0.5" in "".join(str(b["log"]) for b in callback_server.beats)


def test_a_report_that_could_not_be_posted_is_followed_by_a_last_beat_saying_so(
        qemu_vm, callback_server):
    callback_server.replies = [(413, '{"error": "too large"}')]
    assert main(["--root", str(qemu_vm), "--callback-url", callback_server.url]) != EXIT_OK
    assert callback_server.beats[-1]["stage"] == "post_failed"


def test_without_a_hello_there_are_no_beats(qemu_vm, callback_server):
    callback_server.hello_replies = [(403, "{}")]
    assert main(["--root", str(qemu_vm), "--callback-url", callback_server.url]) == EXIT_OK
    assert callback_server.beats == []


def test_each_beat_carries_only_what_the_log_gained_since_the_last(qemu_vm, callback_server):
    from ironsight.agent.beats import Beats, url_for

    qemu_vm.write("tmp/ramdisk.log", "one\n")
    beats = Beats(url_for(callback_server.url.replace("/continue", "/hello")), "T",
                  ["52:54:00:12:34:56"], str(qemu_vm), interval=3600)
    assert beats.send()
    path = f"{qemu_vm}/tmp/ramdisk.log"
    with open(path, "a") as f:
        f.write("two\n")
    assert beats.send()
    assert [b["log"] for b in callback_server.beats] == ["one\n", "two\n"]
