"""Moving a community in and out (docs/migrating.md): Discord imports, guild archives, imported authors.
Operator commands only: it writes across the domains in large batches, below the CLI and above everything
the service serves."""
