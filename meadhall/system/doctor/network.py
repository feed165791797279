"""Class `network`: the entries of OUTBOUND_ALLOWED_NETWORKS, which let link previews and Web Push reach
addresses the outbound guard refuses otherwise (docs/outbound.md). Pure."""

from __future__ import annotations

import ipaddress

from meadhall.config import Settings
from meadhall.integrations.outbound.addresses import Network, parse_networks
from meadhall.system.doctor.findings import Finding, error, ok, warning

KLASS = "network"
# Cloud metadata services answer on these: a link preview could read instance credentials from them.
_METADATA = (ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254"))
_LINK_LOCAL = (ipaddress.ip_network("169.254.0.0/16"), ipaddress.ip_network("fe80::/10"))
_LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))
_BROADEST = {4: 8, 6: 16}  # shorter prefixes span far more than an intranet


def _overlaps(net: Network, others: tuple[Network, ...]) -> bool:
    return any(net.version == o.version and net.overlaps(o) for o in others)


def entry_problem(net: Network) -> tuple[str, str] | None:
    """(severity, why) for a dangerous entry, None for a reasonable one."""
    if net.prefixlen < _BROADEST[net.version]:
        return "error", (f"{net} lets previews and pushes reach every private, loopback and metadata address "
                         "the guard exists to refuse")
    if any(addr in net for addr in _METADATA if addr.version == net.version):
        return "error", f"{net} contains a cloud metadata address (169.254.169.254): a preview could read its secrets"
    if _overlaps(net, _LINK_LOCAL):
        return "warning", f"{net} is link-local: hosts there are this machine's neighbours, not a service"
    if _overlaps(net, _LOOPBACK):
        return "warning", f"{net} is loopback: previews and pushes may reach services on this very host"
    return None


def check(settings: Settings) -> list[Finding]:
    value = settings.OUTBOUND_ALLOWED_NETWORKS
    networks = parse_networks(value)
    if not networks:
        return [ok(KLASS, "outbound_networks", "OUTBOUND_ALLOWED_NETWORKS is empty: every private address is refused")]
    found: list[Finding] = []
    for net in networks:
        problem = entry_problem(net)
        if problem is None:
            continue
        severity, why = problem
        kept = ",".join(str(n) for n in networks if entry_problem(n) is None)
        fix = (f"remove {net}, e.g. OUTBOUND_ALLOWED_NETWORKS={kept}" if kept else
               f"remove {net}: leave OUTBOUND_ALLOWED_NETWORKS empty") + \
            ", or list only the hosts needed (e.g. 10.1.2.3/32)"
        found.append((error if severity == "error" else warning)(
            KLASS, "outbound_networks", f"OUTBOUND_ALLOWED_NETWORKS: {why}", fix))
    if not found:
        found.append(ok(KLASS, "outbound_networks", f"OUTBOUND_ALLOWED_NETWORKS lets through {value.strip()}"))
    return found
