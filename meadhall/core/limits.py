"""Content, size and count limits of API.md 5.1 and 5.3, named once."""

MESSAGE_LENGTH = 4000
ATTACHMENTS_PER_MESSAGE = 10
EDIT_WINDOW_SECONDS = 86_400
PASSWORD_MIN_LENGTH = 10
PASSWORD_MAX_LENGTH = 256
EMOJIS_PER_GUILD = 100
SOUNDBOARD_SOUNDS_PER_GUILD = 30
INTERFACE_SOUNDS_PER_GUILD = 30
GROUP_DM_MIN_INVITED = 2
GROUP_DM_MAX_INVITED = 9
PAGE_DEFAULT = 50
PAGE_MAX = 100

DEFAULT_MEDIA_LIMITS = {
    "avatar_max_bytes": 8_388_608,
    "guild_image_max_bytes": 8_388_608,
    "emoji_max_bytes": 524_288,
    "sound_max_bytes": 524_288,
    "gallery_max_bytes": 1_048_576,
}
# Room positions are stored as 32-bit integers (API.md 2.10: 0 ... 2147483647, outside -> 422).
ROOM_POSITION_MAX = 2_147_483_647
# Read-state mention counts stop here; clients show "99+" above 99 (API.md 2.32).
MENTION_COUNT_MAX = 100
