"""Guild voice rooms on an external media server (docs/voice.md)."""
