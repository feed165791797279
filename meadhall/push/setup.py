"""Wire Web Push into an app (docs/push.md): the VAPID key is checked at start, and the send path's hook
(messages know nothing of push) queues deliveries."""

from __future__ import annotations

from meadhall.config import ConfigError
from meadhall.messages.sent_hooks import on_message_sent
from meadhall.push.delivery import on_message_sent as queue_push
from meadhall.push.keys import load_private_key
from meadhall.runtime import Runtime


def install_push(rt: Runtime) -> None:
    key = rt.settings.VAPID_PRIVATE_KEY
    if key:
        try:
            load_private_key(key)
        except Exception as exc:  # cryptography says what is wrong (format, curve, algorithm)
            raise ConfigError(f"invalid configuration: VAPID_PRIVATE_KEY: {exc}") from None
    on_message_sent("push", queue_push)
