"""Both APIs on HTTPS with a certificate of a CA made in the test: clients that trust that CA
get through, others are refused by their own TLS check, and the services' calls to each other
(checked against the configured CA) carry a whole inspection."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ..conftest import free_tcp_port
from ..inspection.helpers import (
    Service,
    enroll,
    inspect,
    machine,
    run_agent,
    wait_node,
    wait_ramdisk_booted,
)
from ..security import Pki, as_ini, auth_sections, basic, make_pki, tls_sections, write_htpasswd

pytestmark = pytest.mark.functional


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, pki: Pki) -> Iterator[Service]:
    state = tmp_path_factory.mktemp("tls")
    users = write_htpasswd(state / "htpasswd")
    svc = Service(state, as_ini(auth_sections(users), tls_sections(pki)))
    # the ramdisk's endpoints on a listener of their own, plain HTTP (the ramdisk has no CA)
    svc.ramdisk_url = f"http://127.0.0.1:{free_tcp_port()}"
    svc.configure(introspection={"ramdisk_host": "127.0.0.1",
                                 "ramdisk_port": svc.ramdisk_url.rsplit(":", 1)[1]})
    # and the bare-metal API's (/v1/continue_inspection), over HTTPS as its main listener
    bm_ramdisk_port = free_tcp_port()
    svc.configure(api={"ramdisk_host": "127.0.0.1", "ramdisk_port": str(bm_ramdisk_port)})
    svc.use_https(pki.ca_file)
    svc.bm_ramdisk_url = f"https://127.0.0.1:{bm_ramdisk_port}"  # type: ignore[attr-defined]
    svc.configure(discoverd={"service_url": f"{svc.di_url}/v1"})
    svc.auth = basic("admin")
    svc.start()
    try:
        yield svc
    finally:
        svc.stop()


def test_both_apis_answer_over_https_to_a_client_trusting_the_ca(service: Service) -> None:
    for url in (service.url, service.di_url):
        assert httpx.get(f"{url}/v1", verify=service.verify).status_code == 200


def test_a_client_not_trusting_the_ca_is_refused_by_its_tls_check(service: Service) -> None:
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        httpx.get(f"{service.url}/v1")


def test_plain_http_is_not_served(service: Service) -> None:
    with pytest.raises(httpx.TransportError):
        httpx.get(service.url.replace("https:", "http:") + "/v1", timeout=5)


def test_an_inspection_runs_over_https_between_the_services(service: Service,
                                                            tmp_path: Path) -> None:
    spec, tree = machine(tmp_path, cpus=5)
    with service.client() as admin:
        node = enroll(admin, spec)
        inspect(admin, node)
        wait_ramdisk_booted(service, admin, node)
        proc = run_agent(tree, f"{service.ramdisk_url}/v1/continue")
        assert proc.returncode == 0, proc.stderr
        assert wait_node(admin, node, provision="manageable")["properties"]["cpus"] == 5


def test_the_ramdisk_listener_serves_only_the_open_endpoints(service: Service) -> None:
    assert httpx.get(f"{service.ramdisk_url}/v1").status_code == 200
    # the authenticated API is not there at all, with or without credentials
    for auth in (None, basic("admin")):
        resp = httpx.get(f"{service.ramdisk_url}/v1/introspection", auth=auth)
        assert resp.status_code == 404


def test_the_bare_metal_ramdisk_listener_serves_only_the_ramdisk_endpoint(service: Service
                                                                          ) -> None:
    url = service.bm_ramdisk_url  # type: ignore[attr-defined]
    assert httpx.get(f"{url}/v1", verify=service.verify).status_code == 200
    # open (no 401), and the report is checked as on the main listener
    resp = httpx.post(f"{url}/v1/continue_inspection", json=[], verify=service.verify)
    assert resp.status_code == 400
    for auth in (None, basic("admin")):
        resp = httpx.get(f"{url}/v1/nodes", auth=auth, verify=service.verify)
        assert resp.status_code == 404


def test_the_log_says_the_apis_listen_on_https(service: Service) -> None:
    log = service.log.read_text()
    assert f"Bare-metal API listening on {service.url}" in log
    assert f"discoverd API listening on {service.di_url}" in log
