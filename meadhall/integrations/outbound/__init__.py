"""Everything the service fetches from outside goes through here (docs/outbound.md): link previews and
Web Push deliveries. `addresses` says which destinations are refused; `client` enforces it at connect time."""

from meadhall.integrations.outbound.addresses import (
    MalformedURL,
    RefusedURL,
    parse_networks,
    refusal,
    url_target,
)
from meadhall.integrations.outbound.client import Answer, Outbound, OutboundBlocked, OutboundFailed

__all__ = ["Answer", "MalformedURL", "Outbound", "OutboundBlocked", "OutboundFailed", "RefusedURL", "parse_networks", "refusal",
           "url_target"]
