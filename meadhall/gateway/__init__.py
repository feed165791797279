"""The WebSocket gateway (docs/gateway.md): protocol, per-node hub, resume state and READY."""
