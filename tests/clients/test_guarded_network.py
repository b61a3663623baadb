"""The address a remote judge connects to is the address that was checked, whatever DNS says."""

from __future__ import annotations

import ipaddress
import socket

import pytest
from support.fault_server import completion
from support.remote_helpers import REQUEST

from localjudge._clients.endpoint import embedded_ipv4, refused_address
from localjudge._clients.guarded_network import AddressRefused
from localjudge._clients.remote import AsyncOpenAICompatibleClient, OpenAICompatibleClient


@pytest.mark.parametrize(
    ("address", "refused"),
    [
        ("169.254.169.254", True),
        ("::ffff:169.254.169.254", True),  # IPv4-mapped
        ("64:ff9b::a9fe:a9fe", True),  # NAT64
        ("::169.254.169.254", True),  # IPv4-compatible
        ("64:ff9b:1::a9fe:a9fe", True),  # NAT64, local-use prefix
        ("::ffff:0:a9fe:a9fe", True),  # SIIT
        ("2002:a9fe:a9fe::1", True),  # 6to4
        ("2001:0:4136:e378:8000:63bf:5601:5601", True),  # Teredo, client 169.254.169.254
        ("fe80::1", True),
        ("fd00:ec2::254", True),
        ("100.100.100.200", True),
        ("127.0.0.1", False),
        ("::1", False),
        ("::", False),
        ("10.1.2.3", False),  # private networks stay allowed: local servers live there
        ("::ffff:127.0.0.1", False),
        ("64:ff9b::7f00:1", False),
        ("2001:db8::1", False),
    ],
)
def test_which_addresses_are_refused_in_every_form(address, refused):
    assert refused_address(ipaddress.ip_address(address)) is refused


def test_the_ipv4_inside_an_ipv6_address():
    assert embedded_ipv4(ipaddress.ip_address("64:ff9b::a9fe:a9fe")) == ipaddress.ip_address("169.254.169.254")
    assert embedded_ipv4(ipaddress.ip_address("::1")) is None
    assert embedded_ipv4(ipaddress.ip_address("10.0.0.1")) is None


@pytest.fixture
def dns(monkeypatch):
    """A resolver under the test's control: name -> addresses, for names under .test."""
    answers: dict[str, list[str]] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host in answers:
            family = lambda a: socket.AF_INET6 if ":" in a else socket.AF_INET  # noqa: E731
            return [(family(a), socket.SOCK_STREAM, 6, "", (a, port)) for a in answers[host]]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return answers


def test_a_name_that_resolves_to_a_metadata_address_is_never_connected_to(dns):
    dns["judge.test"] = ["169.254.169.254"]
    client = OpenAICompatibleClient("http://judge.test:8080/v1", max_retries=0)  # the name alone passes
    with pytest.raises(AddressRefused, match=r"judge\.test resolves to 169\.254\.169\.254"):
        client.chat.completions.create(**REQUEST)
    client.close()
    dns["mapped.test"] = ["::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe"]
    with pytest.raises(AddressRefused):
        OpenAICompatibleClient("http://mapped.test/v1", max_retries=0).chat.completions.create(**REQUEST)


def test_with_a_proxy_configured_the_proxy_connects(monkeypatch):
    from localjudge._clients.guarded_network import guarded_client

    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:3128")
    client = guarded_client()
    assert client._mounts  # httpx mounts the proxy only for a client without a transport of its own
    client.close()


def test_the_connection_goes_to_the_checked_address(dns, fault_server):
    server = fault_server(completion(), completion())
    port = server.base_url.rsplit(":", 1)[1].split("/")[0]
    dns["judge.test"] = ["169.254.169.254", "127.0.0.1"]  # the refused one is skipped, the next is used
    client = OpenAICompatibleClient(f"http://judge.test:{port}/v1", max_retries=0)
    response = client.chat.completions.create(**REQUEST)
    assert response.choices[0].message.content == '{"score": true}'
    assert server.requests[0].headers["host"] == f"judge.test:{port}"  # the name still goes in the request
    client.close()


async def test_the_async_client_checks_too(dns, fault_server):
    dns["judge.test"] = ["169.254.169.254"]
    with pytest.raises(AddressRefused):
        await AsyncOpenAICompatibleClient("http://judge.test/v1", max_retries=0).chat.completions.create(**REQUEST)
    server = fault_server(completion())
    port = server.base_url.rsplit(":", 1)[1].split("/")[0]
    dns["ok.test"] = ["127.0.0.1"]
    response = await AsyncOpenAICompatibleClient(f"http://ok.test:{port}/v1").chat.completions.create(**REQUEST)
    assert response.choices[0].message.content == '{"score": true}'
