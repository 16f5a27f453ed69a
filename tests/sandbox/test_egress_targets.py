"""How the egress proxy reads a target: one normalised form for the decision, the audit and the refusal, and
the addresses no role can open (pure functions, no sockets)."""

from __future__ import annotations

import ipaddress

import pytest

from polter.sandbox.egress_targets import BadTarget, Resolver, forbidden_kind, parse_authority, parse_http_url


@pytest.mark.parametrize(
    ("authority", "host", "port"),
    [
        ("GitHub.COM.:443", "github.com", 443),
        ("bücher.example:8443", "xn--bcher-kva.example", 8443),
        ("[2001:DB8::1]:443", "2001:db8::1", 443),
        ("93.184.216.34:80", "93.184.216.34", 80),
    ],
)
def test_a_host_is_compared_lowercase_without_its_trailing_dot_in_ascii(authority: str, host: str, port: int) -> None:
    target = parse_authority(authority)
    assert (target.host, target.port) == (host, port)


@pytest.mark.parametrize(
    "authority",
    [
        "evil.example",
        "evil.example:",
        "evil.example:0",
        "evil.example:99999",
        "::1:443",
        "[::1",
        "[127.0.0.1]:1",
        "a..b:443",
        "-a.example:443",
        "a b:443",
        ":443",
        "127.1:443",
        "0x7f000001:443",
        "2130706433:443",
        "[fe80::1%eth0]:443",
        "user@host:443",
    ],
)
def test_a_target_that_does_not_parse_is_refused(authority: str) -> None:
    with pytest.raises(BadTarget):
        parse_authority(authority)


def test_an_absolute_url_gives_its_target_and_path() -> None:
    target, path = parse_http_url("http://Example.ORG:8080/a/b?c=1#fragment")
    assert (target.host, target.port, path) == ("example.org", 8080, "/a/b?c=1")
    assert parse_http_url("http://example.org?q")[1] == "/?q"
    with pytest.raises(BadTarget, match="credentials"):
        parse_http_url("http://allowed.example@evil.example/")
    with pytest.raises(BadTarget):
        parse_http_url("ftp://example.org/")


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("93.184.216.34", None),
        ("10.1.2.3", None),
    ],
)
def test_no_role_opens_loopback_link_local_or_unspecified_addresses(address: str, kind: str | None) -> None:
    assert forbidden_kind(ipaddress.ip_address(address)) == kind


def test_only_localhost_and_the_two_loopback_literals_can_be_a_declared_model_port() -> None:
    assert parse_authority("localhost:8080").is_loopback_name
    assert parse_authority("127.0.0.1:8080").is_loopback_name
    assert parse_authority("[::1]:8080").is_loopback_name
    assert not parse_authority("127.0.0.2:8080").is_loopback_name


def test_the_test_hook_maps_names_only_when_given() -> None:
    production = Resolver()
    target = parse_authority("allowed.test:80")
    assert not production.is_test_host(target)
    hooked = Resolver({"Allowed.Test.": "127.0.0.1"})
    assert hooked.is_test_host(target) and hooked.resolve(target) == [ipaddress.ip_address("127.0.0.1")]
