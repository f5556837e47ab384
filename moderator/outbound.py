"""Posts to addresses on the internet, and only there: the webhooks of games
(games.notify.webhooks) and the push services of players' browsers (games.notify.push).

An address is checked when it is set and again when posting: its host is looked up once,
every address of that look-up must be public, and the post connects to one of them, never
looking the name up again (a name that later resolves to this machine or a private network
reaches nothing). ``WEBHOOK_ALLOW_LOCAL_HTTP`` lets tests and a local try post to this
machine. What went wrong is an exception that says whether anything was sent:
``NoConnection`` and ``Local`` (nothing), ``Answer`` (the server answered, not 2xx),
``Unknown`` (sent, and no answer came: it may have arrived)."""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
from collections.abc import Sequence
from urllib.parse import SplitResult, urlsplit

from django.conf import settings

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost"})

# Posts go to the internet only: an address on this machine or a private network (a
# service behind the firewall) is refused when set and again when posting, where its name
# is looked up once and the post connects to an address of that look-up (docs/webhooks.md),
# unless WEBHOOK_ALLOW_LOCAL_HTTP (tests, a local try).
LOCAL_REFUSED = "the address leads to this machine or a private network, where nothing is sent"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# IPv6 addresses that carry an IPv4 one in their last 32 bits and reach it: NAT64's
# well-known prefix (RFC 6052). The local-use one (RFC 8215) and the deprecated
# IPv4-compatible ::a.b.c.d (with :: and ::1) are refused whole.
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
REFUSED_V6 = (ipaddress.IPv6Network("64:ff9b:1::/48"), ipaddress.IPv6Network("::/96"))


def is_public(address: Address) -> bool:
    """Whether ``address`` is on the public internet, the IPv4 address an IPv6 one carries
    (mapped, NAT64, 6to4, Teredo) included."""
    if isinstance(address, ipaddress.IPv4Address):
        return _public_alone(address)
    if address.ipv4_mapped is not None:
        return _public_alone(address.ipv4_mapped)
    if address in NAT64:
        return _public_alone(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if any(address in network for network in REFUSED_V6):
        return False
    carried: list[ipaddress.IPv4Address] = []
    if address.sixtofour is not None:
        carried.append(address.sixtofour)
    if address.teredo is not None:
        carried += address.teredo
    return _public_alone(address) and all(_public_alone(inner) for inner in carried)


def _public_alone(address: Address) -> bool:
    return address.is_global and not (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or (isinstance(address, ipaddress.IPv6Address) and address.is_site_local)
    )


def _local_name(host: str) -> bool:
    """Whether ``host`` names this machine or a private network without a look-up: a
    local name, or an address that is not a public one."""
    host = host.lower().rstrip(".")
    if host in LOCAL_HOSTS or host.endswith(".localhost"):
        return True
    try:
        return not is_public(ipaddress.ip_address(host.partition("%")[0]))
    except ValueError:
        return False  # a name: looked up


def local_now(url: str) -> bool:
    """Whether ``url``'s host is, or is looked up now as, an address that is not public.
    A name that cannot be looked up now is left to the post, which looks it up again."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if _local_name(host):
        return True
    try:
        addresses = look_up(host, port(parts))
    except (OSError, UnicodeError):
        return False
    return not all(is_public(ipaddress.ip_address(address)) for address in addresses)


def port(parts: SplitResult) -> int:
    return parts.port or (443 if parts.scheme == "https" else 80)


def look_up(host: str, port: int) -> list[str]:
    """The addresses the name ``host`` is looked up as (the system's resolver), in its
    order; OSError when it cannot be now."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]).partition("%")[0] for info in found))


class Answer(Exception):
    """The server answered with a status other than 2xx (a redirect included: it is an
    answer, not an address to post to, since it may lead anywhere)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(status, reason)
        self.status, self.reason = status, reason


class NoConnection(Exception):
    """No connection was made: nothing was sent."""


class Unknown(Exception):
    """The request went out and no answer came: it may have arrived."""


class Local(Exception):
    """The address is looked up as this machine or a private network: nothing is sent."""


class _Pinned(http.client.HTTPConnection):
    """An HTTP connection to the addresses its host was looked up as and checked, in turn:
    the host names the request (its Host header, and for TLS the name the server's
    certificate must show) and is never looked up again."""

    def __init__(self, host: str, port: int, addresses: Sequence[str], timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.addresses = addresses

    def connect(self) -> None:
        error: OSError = OSError("the name was looked up as no address")
        for address in self.addresses:
            try:
                self.sock = socket.create_connection((address, self.port), self.timeout)
            except OSError as failed:
                error = failed
            else:
                return
        raise error


class _PinnedTLS(_Pinned):
    default_port = 443

    def connect(self) -> None:
        super().connect()
        tls = ssl.create_default_context()
        self.sock = tls.wrap_socket(self.sock, server_hostname=self.host)


def _addresses(host: str, port: int) -> list[str]:
    """The addresses to connect to for ``host``, from one look-up: all of them public
    (unless WEBHOOK_ALLOW_LOCAL_HTTP), else Local; NoConnection when the name cannot be
    looked up now."""
    if not settings.WEBHOOK_ALLOW_LOCAL_HTTP and _local_name(host):
        raise Local
    try:
        addresses = look_up(host, port)
    except (OSError, UnicodeError) as error:
        raise NoConnection(f"the name could not be looked up ({type(error).__name__})") from None
    if not settings.WEBHOOK_ALLOW_LOCAL_HTTP and not all(
        is_public(ipaddress.ip_address(address)) for address in addresses
    ):
        raise Local
    return addresses


def send(
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    method: str = "POST",
    read: int = 1024,
) -> bytes:
    """Send ``body`` to ``url`` (``method``, with ``headers``), connecting to an address
    its host was looked up as, once, and checked; the first ``read`` bytes of a 2xx answer.
    Raises Local (nothing sent) when one of the addresses is not public, NoConnection when
    no connection was made, Answer for an answer other than 2xx, Unknown when the answer
    never came."""
    parts = urlsplit(url)
    host, number = parts.hostname or "", port(parts)
    pinned = _PinnedTLS if parts.scheme == "https" else _Pinned
    connection = pinned(host, number, _addresses(host, number), settings.WEBHOOK_TIMEOUT_SECONDS)
    try:
        try:
            connection.connect()
        except OSError as error:
            raise NoConnection(str(error)[:300]) from None
        target = parts.path or "/"
        if parts.query:
            target += f"?{parts.query}"
        try:
            connection.request(method, target, body=body, headers=headers)
            answer = connection.getresponse()
            content = answer.read(read)
        except (OSError, http.client.HTTPException) as error:
            raise Unknown(type(error).__name__) from error
    finally:
        connection.close()
    if not 200 <= answer.status < 300:
        raise Answer(answer.status, answer.reason)
    return content
