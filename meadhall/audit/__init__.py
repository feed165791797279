"""The audit log: written in the same transaction as the action it records."""
