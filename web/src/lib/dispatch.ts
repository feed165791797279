// The gateway's dispatches as the client reads them: every type the service's registry names
// (generated/events.ts, made from meadhall/realtime/events.py by `make client-types`) with what its `d`
// carries (docs/reference/events.md). Payloads that are an object of the interface are its generated type
// (types.ts); the small ones are written here after the service's notify_* builders. A type the client
// never reads is `unknown`.

import { EVENT_NAMES, type EventName } from "./generated/events";
import type { ChannelNotificationSetting, GuildNotificationSetting } from "./notify";
import type {
  Call,
  Channel,
  Conversation,
  Cosmetic,
  Emoji,
  Guild,
  GuildSnapshot,
  Id,
  Member,
  Message,
  Presence,
  ReadState,
  Ready,
  Relationship,
  RelationshipType,
  Role,
  Sound,
  User,
  UserSummary,
  VoiceState,
} from "./types";

export { EVENT_NAMES, type EventName };

/** Where a message event happened: `guild_id` is null in a conversation. */
interface InRoom {
  channel_id: Id;
  guild_id: Id | null;
}

export interface ReactionEvent extends InRoom {
  message_id: Id;
  user_id: Id;
  emoji: string;
}

export interface EventPayloads {
  READY: Ready;
  RESUMED: unknown;
  USER_UPDATE: User;
  GUILD_CREATE: GuildSnapshot;
  GUILD_UPDATE: Guild;
  /** `reason`: deleted, or why the receiver is no longer in it (left, kicked, banned). */
  GUILD_DELETE: { id: Id; reason: string };
  CHANNEL_CREATE: Channel;
  CHANNEL_UPDATE: Channel;
  /** The whole room; the client reads which one it was. */
  CHANNEL_DELETE: Pick<Channel, "id" | "guild_id">;
  MEMBER_ADD: Member;
  MEMBER_UPDATE: Member;
  MEMBER_REMOVE: { guild_id: Id; user: UserSummary };
  ROLE_CREATE: Role;
  ROLE_UPDATE: Role;
  ROLE_DELETE: { guild_id: Id; role_id: Id };
  GUILD_EMOJIS_UPDATE: { guild_id: Id; emojis: Emoji[] };
  GUILD_SOUNDS_UPDATE: { guild_id: Id; sounds: Sound[] };
  GUILD_COSMETICS_UPDATE: { guild_id: Id; cosmetics: Cosmetic[] };
  MESSAGE_CREATE: Message;
  MESSAGE_UPDATE: Message;
  MESSAGE_DELETE: InRoom & { id: Id };
  MESSAGE_DELETE_BULK: InRoom & { ids: Id[] };
  MESSAGE_REACTION_ADD: ReactionEvent;
  MESSAGE_REACTION_REMOVE: ReactionEvent;
  CHANNEL_PINS_UPDATE: InRoom & { message_id: Id; pinned: boolean; last_pin_timestamp: string | null };
  TYPING_START: InRoom & { user_id: Id; timestamp: string };
  READ_STATE_UPDATE: ReadState;
  NOTIFICATION_SETTINGS_UPDATE: GuildNotificationSetting | ChannelNotificationSetting;
  PRESENCE_UPDATE: Presence;
  RELATIONSHIP_ADD: Relationship;
  /** `type` is the type removed (a later RELATIONSHIP_ADD of another type stands). */
  RELATIONSHIP_REMOVE: { id: Id; type: RelationshipType };
  DM_CHANNEL_CREATE: Conversation;
  DM_CHANNEL_UPDATE: Conversation;
  DM_CHANNEL_DELETE: { id: Id };
  CALL_CREATE: Call;
  CALL_UPDATE: Call;
  CALL_DELETE: Call;
  VOICE_STATE_UPDATE: VoiceState;
  SOUNDBOARD_PLAY: unknown;
  SESSION_INVALIDATED: { reason: string; session_id: Id };
}

/** One dispatch: a type with its payload, as `applyEvent` takes them. */
export type Dispatch = { [T in EventName]: [type: T, d: EventPayloads[T]] }[EventName];

const KNOWN: ReadonlySet<string> = new Set(EVENT_NAMES);

/** Whether the service's registry names this dispatch type (a newer service may send more). */
export function isEventName(type: string): type is EventName {
  return KNOWN.has(type);
}
