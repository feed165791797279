"""Web Push (docs/push.md): VAPID keys, device subscriptions, and delivery of notifications for mentions and
direct-conversation messages to users who have no client open."""
