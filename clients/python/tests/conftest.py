"""Fixtures shared by the client's tests against a real ``crucible serve`` (serving.py):
``server`` (one per test module, ``--slots 2``), ``client`` (a Client of it) and
``make_server`` (servers with other options, stopped after the test)."""
import pytest

from crucible_client import Client
from serving import Server, no_serve_reason


@pytest.fixture(scope="module")
def server():
    reason = no_serve_reason()
    if reason:
        pytest.skip(reason)
    srv = Server("--slots", "2")
    yield srv
    status = srv.stop()
    assert status == 0, "crucible serve did not exit 0 on SIGTERM (status %r); its log:\n%s" % (
        status, srv.final_output)


@pytest.fixture
def client(server):
    return Client(server.url, timeout=120)


@pytest.fixture
def make_server():
    reason = no_serve_reason()
    if reason:
        pytest.skip(reason)
    started = []

    def start(*args):
        srv = Server(*args)
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.stop()
