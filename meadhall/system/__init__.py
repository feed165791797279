"""Service endpoints: liveness, readiness, meta, gateway address."""
