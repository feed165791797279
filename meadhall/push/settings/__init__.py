"""Notification settings (docs/push.md, "Notification levels"; OpenAPI: getNotificationSettings,
setGuildNotificationSettings, setChannelNotificationSettings): a user's level per server, room and conversation,
the mutes, and which messages Web Push sends by them."""
