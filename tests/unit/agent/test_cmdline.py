"""Kernel command line: parameters, callback URLs and BOOTIF."""

from __future__ import annotations

import pytest

from ironsight.agent import cmdline


def test_parameters_are_split_into_keys_and_values():
    assert cmdline.parse("console=ttyS0 quiet BOOTIF=01-aa-bb-cc-dd-ee-ff\n") == {
        "console": "ttyS0", "quiet": "", "BOOTIF": "01-aa-bb-cc-dd-ee-ff"}


def test_quoted_values_keep_their_spaces():
    assert cmdline.parse('a="b c" d=e')["a"] == "b c"


def test_arguments_after_double_dash_belong_to_init():
    assert cmdline.parse("a=1 -- b=2") == {"a": "1"}


def test_the_last_occurrence_wins():
    assert cmdline.parse("a=1 a=2") == {"a": "2"}


def test_read_params_uses_the_roots_proc_cmdline(qemu_vm):
    assert cmdline.read_params(str(qemu_vm))["BOOTIF"] == "01-52-54-00-12-34-56"


def test_callback_url_from_the_ironsight_key():
    params = cmdline.parse("ironsight.callback_url=http://a/v1/continue")
    assert cmdline.callback_urls(params) == ["http://a/v1/continue"]


@pytest.mark.parametrize("key", ["discoverd_callback_url", "ipa-inspection-callback-url"])
def test_callback_url_from_discoverd_and_ipa_keys(key):
    assert cmdline.callback_urls({key: "http://b/v1/continue"}) == ["http://b/v1/continue"]


def test_the_ironsight_key_wins_over_the_others():
    params = {"ipa-inspection-callback-url": "http://ipa", "discoverd_callback_url": "http://d",
              "ironsight.callback_url": "http://i"}
    assert cmdline.callback_urls(params) == ["http://i"]


def test_a_comma_separated_list_gives_urls_in_order(server):
    assert cmdline.callback_urls(cmdline.read_params(str(server))) == [
        "http://192.0.2.1:5050/v1/continue", "http://192.0.2.2:5050/v1/continue"]


def test_ipas_mdns_value_is_not_a_url():
    assert cmdline.callback_urls({"ipa-inspection-callback-url": "mdns"}) == []


def test_no_callback_key_gives_no_url():
    assert cmdline.callback_urls({"console": "ttyS0"}) == []


@pytest.mark.parametrize(("bootif", "mac"), [
    ("01-52-54-00-12-34-56", "52:54:00:12:34:56"),
    ("01-3C-FD-FE-AA-BB-01", "3c:fd:fe:aa:bb:01"),
    ("52:54:00:12:34:56", "52:54:00:12:34:56"),
    ("junk", None),
    (None, None),
], ids=["pxelinux", "uppercase", "plain-mac", "junk", "absent"])
def test_bootif_is_normalised_to_a_mac(bootif, mac):
    assert cmdline.bootif_mac(bootif) == mac


def test_callback_token_is_read_from_its_own_key() -> None:
    assert cmdline.callback_token(cmdline.parse("a=1 ironsight.callback_token=Ab-9_z")) == "Ab-9_z"


@pytest.mark.parametrize("text", ["quiet", "ironsight.callback_token=", "ironsight.callback_token"])
def test_no_or_an_empty_callback_token_is_none(text: str) -> None:
    assert cmdline.callback_token(cmdline.parse(text)) is None
