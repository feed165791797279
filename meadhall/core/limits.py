"""Content, size and count limits, named once.

`MEANINGS` says what each limit governs; docs/reference/limits.md is generated from this module
(`make docs`), so a limit added here without a meaning fails the reference test.
"""

MESSAGE_LENGTH = 4000
ATTACHMENTS_PER_MESSAGE = 10
EDIT_WINDOW_SECONDS = 86_400
PASSWORD_MIN_LENGTH = 10
PASSWORD_MAX_LENGTH = 256
EMOJIS_PER_GUILD = 100
SOUNDBOARD_SOUNDS_PER_GUILD = 30
INTERFACE_SOUNDS_PER_GUILD = 30
COSMETICS_PER_GUILD = 100
WEBHOOKS_PER_ROOM = 15
GROUP_DM_MIN_INVITED = 2
GROUP_DM_MAX_INVITED = 9
CALL_RINGING_SECONDS = 60
CALL_DISCONNECT_SECONDS = 120
MEDIA_TOKEN_MINUTES = 10
VOICE_GHOST_SECONDS = 60
MEDIA_WEBHOOK_JOURNAL_DAYS = 7
PAGE_DEFAULT = 50
PAGE_MAX = 100

DEFAULT_MEDIA_LIMITS = {
    "avatar_max_bytes": 8_388_608,
    "guild_image_max_bytes": 8_388_608,
    "emoji_max_bytes": 524_288,
    "sound_max_bytes": 524_288,
    "gallery_max_bytes": 1_048_576,
}
# Room positions are stored as 32-bit integers (0 ... 2147483647; outside -> 422).
ROOM_POSITION_MAX = 2_147_483_647
# Read-state mention counts stop here; clients show "99+" above 99.
MENTION_COUNT_MAX = 100
# Outbound fetches: link previews (docs/outbound.md) and Web Push (docs/push.md).
LINK_PREVIEW_URL_LENGTH = 2048
LINK_PREVIEW_REDIRECTS = 3
LINK_PREVIEW_SECONDS = 5
LINK_PREVIEW_MAX_BYTES = 524_288
LINK_PREVIEW_OK_SECONDS = 86_400
LINK_PREVIEW_EMPTY_SECONDS = 3_600
LINK_PREVIEW_ERROR_SECONDS = 600
PUSH_SUBSCRIPTIONS_PER_USER = 10
PUSH_TTL_SECONDS = 43_200
PUSH_FAILURES_MAX = 5
PUSH_BODY_LENGTH = 200

# What each limit governs (the rows of docs/reference/limits.md).
MEANINGS: dict[str, str] = {
    "MESSAGE_LENGTH": "characters of message content",
    "ATTACHMENTS_PER_MESSAGE": "files attached to one message",
    "EDIT_WINDOW_SECONDS": "seconds after sending during which a message may be edited (24 hours)",
    "PASSWORD_MIN_LENGTH": "fewest characters of a password",
    "PASSWORD_MAX_LENGTH": "most characters of a password",
    "EMOJIS_PER_GUILD": "custom emojis of one server",
    "SOUNDBOARD_SOUNDS_PER_GUILD": "soundboard sounds of one server",
    "INTERFACE_SOUNDS_PER_GUILD": "interface sounds of one server",
    "COSMETICS_PER_GUILD": "items (frames and icons) of one server's cosmetics gallery",
    "WEBHOOKS_PER_ROOM": "webhooks of one text room",
    "GROUP_DM_MIN_INVITED": "fewest users invited when a group conversation is created (3 participants)",
    "GROUP_DM_MAX_INVITED": "most users invited to a group conversation (10 participants)",
    "CALL_RINGING_SECONDS": "seconds a call rings before the unanswered are marked missed",
    "CALL_DISCONNECT_SECONDS": "seconds without any gateway connection after which a joined call participant leaves",
    "MEDIA_TOKEN_MINUTES": "minutes a media-server token stays valid (the media server refreshes the token of a connected participant; a client that reconnects later joins again)",
    "VOICE_GHOST_SECONDS": "seconds a voice participant may be missing from the media server before the reconciliation clears their voice state",
    "MEDIA_WEBHOOK_JOURNAL_DAYS": "days a processed media-server webhook id is remembered (a repeat within them has no effect)",
    "PAGE_DEFAULT": "items of a list page when `limit` is not given",
    "PAGE_MAX": "largest `limit` of a list page",
    "ROOM_POSITION_MAX": "largest room position (stored as a 32-bit integer; larger answers 422)",
    "MENTION_COUNT_MAX": "where a read state's mention count stops (clients show 99+ above 99)",
    "LINK_PREVIEW_URL_LENGTH": "characters of the `url` of a link preview request",
    "LINK_PREVIEW_REDIRECTS": "redirects a link preview fetch follows (each hop checked again)",
    "LINK_PREVIEW_SECONDS": "seconds a link preview fetch may take in all, redirects included",
    "LINK_PREVIEW_MAX_BYTES": "bytes of a page read for a link preview (512 KB)",
    "LINK_PREVIEW_OK_SECONDS": "seconds an `ok` link preview is cached (1 day)",
    "LINK_PREVIEW_EMPTY_SECONDS": "seconds an `empty` or `blocked` link preview is cached (1 hour)",
    "LINK_PREVIEW_ERROR_SECONDS": "seconds an `error` link preview is cached (10 minutes)",
    "PUSH_SUBSCRIPTIONS_PER_USER": "Web Push subscriptions of one user",
    "PUSH_TTL_SECONDS": "seconds a push service keeps an undelivered Web Push message (12 hours)",
    "PUSH_FAILURES_MAX": "consecutive failed deliveries after which a push subscription is removed",
    "PUSH_BODY_LENGTH": "characters of the `body` of a Web Push payload",
}
# What each default media limit governs; the instance settings' `media_limits` replace these values.
MEDIA_LIMIT_MEANINGS: dict[str, str] = {
    "avatar_max_bytes": "bytes of a user avatar, webhook avatar or group conversation icon",
    "guild_image_max_bytes": "bytes of a server icon, banner or splash, a room background or an invitation background",
    "emoji_max_bytes": "bytes of a custom emoji",
    "sound_max_bytes": "bytes of a sound",
    "gallery_max_bytes": "bytes of a cosmetics gallery item",
}
