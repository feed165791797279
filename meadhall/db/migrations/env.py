"""Alembic environment: runs on the connection handed over by `meadhall.db.migrate`."""

from typing import Any

from alembic import context

connection = context.config.attributes["connection"]
applied: list[str] = context.config.attributes["applied"]


def _record(ctx: Any, step: Any, heads: Any, run_args: Any) -> None:
    if step.is_upgrade:
        applied.append(step.up_revision_id)


context.configure(
    connection=connection,
    target_metadata=None,
    render_as_batch=connection.dialect.name == "sqlite",
    transaction_per_migration=True,
    on_version_apply=_record,
)
with context.begin_transaction():
    context.run_migrations()
