"""The WebSocket gateway (API.md section 4): protocol, per-node hub, resume state and READY."""
