// Shapes of the interface's objects that the client reads, named as the rest of the client imports them.
// Each is the OpenAPI schema of the same object (generated/openapi.ts, made from the service's document by
// `make client-types`; docs/client.md, "Types from the interface"), so a change of the service shows here as
// a type error instead of drifting. Where the document leaves a field open (an object of any keys, which is
// how the service declares a nested view it builds as a dict), the field is refined below to what the
// service puts there. The gateway-only payloads (READY and the guild snapshot) are composed from the same
// schemas (docs/gateway.md; docs/reference/events.md for the events).

import type { components } from "./generated/openapi";

type Schemas = components["schemas"];
/** A schema with the fields of `R` put in place of its own. */
type Refined<T, R> = Omit<T, keyof R> & R;

export type Id = string;

export type UserSummary = Schemas["UserSummary"];

export type User = Schemas["User"];

/** The statuses one may choose for oneself (OpenAPI: updateMe); a user's `status` is any string. */
export type OwnStatus = NonNullable<Schemas["ProfilePatch"]["status"]>;

/** A signed-in device (OpenAPI: listSessions). */
export type Session = Schemas["Session"];

/** A passkey of the account (OpenAPI: listPasskeys); `backed_up` when it is synced beyond one device. */
export type Passkey = Schemas["Passkey"];

export type SecurityEvent = Schemas["SecurityEvent"];

export type PermissionOverride = Refined<Schemas["PermissionOverride"], { type: "role" | "member" }>;

/** A room of a server (OpenAPI: getChannel); the schema also describes conversations, which are never this. */
export type Channel = Refined<Schemas["Channel"], {
  type: "text" | "voice" | "category";
  guild_id: Id;
  name: string;
  permission_overrides: PermissionOverride[];
}>;

export type Role = Schemas["Role"];

export type Member = Refined<Schemas["Member"], {
  user: UserSummary;
  /** The member's guild-scope personal style (docs/customisation.md, "Personal styles"). */
  style: Style | null;
}>;

export type Emoji = Schemas["Emoji"];

/** A soundboard or interface sound of a server (OpenAPI: listSounds). */
export type Sound = Schemas["Sound"];

/** The interface events an interface sound may replace (docs/customisation.md, "Sounds"). */
export type PaletteEvent = NonNullable<Sound["palette_event"]>;

/** A frame or an icon of a server's cosmetics gallery (OpenAPI: listCosmetics). */
export type Cosmetic = Schemas["Cosmetic"];

/** A personal style: how one looks to the members of a server or to one's friends (OpenAPI: getMyStyles). */
export type Style = Schemas["Style"];

export type Guild = Schemas["Guild"];

/** A server as the gateway sends it (READY, GUILD_CREATE): the server with what its member sees of it. */
export interface GuildSnapshot extends Guild {
  roles: Role[];
  channels: Channel[];
  emojis: Emoji[];
  /** Soundboard and interface sounds (READY, GUILD_SOUNDS_UPDATE). */
  sounds?: Sound[];
  /** The frames and icons of the cosmetics gallery (READY, GUILD_COSMETICS_UPDATE). */
  cosmetics?: Cosmetic[];
  member: Member;
  /** Who is in the server's voice rooms (READY; empty in GUILD_CREATE, docs/voice.md). */
  voice_states?: VoiceState[];
}

export type Reaction = Schemas["Reaction"];

/** A file as a message carries it (the attachment view of OpenAPI's File). */
export type FileObject = Pick<Schemas["File"], "id" | "original_name" | "content_type" | "size" | "url"> & {
  metadata: { width?: number; height?: number };
};

/** The snapshot of the webhook that posted a message. */
export interface WebhookSnapshot {
  id: Id;
  name: string;
  avatar: string | null;
}

export interface ReferencedMessage {
  id: Id;
  author: UserSummary | null;
  content: string;
  kind: string;
  /** The snapshot of the webhook that posted it, if a webhook did. */
  webhook?: WebhookSnapshot | null;
}

/** A message (OpenAPI: getMessage). `mention_everyone`: `@everyone` by a holder of MENTION_EVERYONE in a guild
 * room (anyone else's is plain text); `suppress_embeds`: the author lacked EMBED_LINKS, so no preview cards. */
export type Message = Refined<Schemas["Message"], {
  author: UserSummary | null;
  webhook: WebhookSnapshot | null;
  kind: "normal" | "action" | "whisper" | "scream" | "private" | "system";
  system_event: { type: string; user_id: Id | null; actor_id: Id | null; via: string | null } | null;
  attachments: FileObject[];
  referenced_message: ReferencedMessage | null;
}>;

export type ReadState = Schemas["ReadState"];

/** A direct conversation (OpenAPI: listConversations): `members` are all participants, the receiver included,
 * earliest joined first; `counterpart` the other participant of a one-to-one (groups: null). */
export type Conversation = Refined<Schemas["Conversation"], {
  members: UserSummary[];
  counterpart: UserSummary | null;
  status: UserSummary["status"] | null;
  last_message: Message | null;
}>;

/** What another user is to the receiver (OpenAPI: listRelationships, createRelationship). */
export type Relationship = Refined<Schemas["Relationship"], { user: UserSummary }>;

export type RelationshipType = Relationship["type"];

export interface RelationshipLists {
  friends: Relationship[];
  incoming: Relationship[];
  outgoing: Relationship[];
  blocked: Relationship[];
}

export interface Presence {
  user: UserSummary;
  style: unknown | null;
}

export type Invite = Refined<Schemas["Invite"], { inviter: UserSummary | null }>;

/** A server anyone may join (OpenAPI: listPublicGuilds): joined with `POST /invites/{public_invite_code}`. */
export type PublicGuild = Schemas["PublicGuild"];

/** The gateway's READY payload (docs/gateway.md). */
export interface Ready {
  v: number;
  session_id: string;
  user: User;
  guilds: GuildSnapshot[];
  dm_channels: Conversation[];
  read_states: ReadState[];
  relationships?: RelationshipLists;
  presences?: Presence[];
  /** The ongoing calls of the user's conversations (docs/social.md, "Calls"). */
  calls?: Call[];
}

export type Ban = Refined<Schemas["Ban"], { user: UserSummary; author: UserSummary | null }>;

export type AuditEntry = Refined<Schemas["AuditEntry"], { actor: UserSummary | null }>;

export type Template = Schemas["Template"];

/** Who is in a voice room of a server, with their flags (OpenAPI: listVoiceStates; docs/voice.md):
 * `channel_id` null in the VOICE_STATE_UPDATE that reports leaving, `sound` false when deafened. */
export type VoiceState = Refined<Schemas["VoiceState"], { member: Member | null }>;

export type CallParticipant = Schemas["CallParticipant"];

/** A call in a direct conversation (OpenAPI: startCall; docs/social.md, "Calls"). */
export type Call = Schemas["Call"];

/** A room webhook (OpenAPI: createWebhook; docs/webhooks.md): `token` and `url` only in the answer that made them. */
export type Webhook = Schemas["Webhook"];

/** A link preview (OpenAPI: getLinkPreview): `card` only when `status` is `ok`. */
export type LinkPreview = Schemas["LinkPreview"];

/** One Web Push subscription of the signed-in person (OpenAPI: listPushSubscriptions). */
export type PushSubscriptionInfo = Schemas["PushSubscription"];
