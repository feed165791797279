"""What Web Push adds when the app is built (`create_app`, docs/push.md): the VAPID key is checked at start; the
send path's hooks (messages know nothing of push) note each notification in the outbox inside the message's
transaction and wake the delivery after the commit; two periodic jobs keep the outbox moving (a poll on one node
per period, lease renewal on each); a graceful stop hands back what the node holds (a stop hook of the runtime)."""

from __future__ import annotations

from meadhall.config import ConfigError
from meadhall.messages.sent_hooks import message_sent, message_stored
from meadhall.push.delivery import LEASE_SECONDS, POLL_EVERY, deliveries_of, queue_push, wake_push
from meadhall.push.keys import load_private_key
from meadhall.runtime import Runtime


def setup(rt: Runtime) -> None:
    key = rt.settings.VAPID_PRIVATE_KEY
    if key:
        try:
            load_private_key(key)
        except Exception as exc:  # cryptography says what is wrong (format, curve, algorithm)
            raise ConfigError(f"invalid configuration: VAPID_PRIVATE_KEY: {exc}") from None
    message_stored.add("push", queue_push)
    message_sent.add("push", wake_push)
    if rt.settings.web_push_enabled:
        deliveries = deliveries_of(rt)
        rt.jobs.add("push-outbox-poll", POLL_EVERY, deliveries.poll)
        rt.jobs.add("push-outbox-leases", LEASE_SECONDS / 3, deliveries.renew, leader_only=False)
        rt.stop_hooks.append(deliveries.close)
