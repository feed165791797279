// Shapes of the interface's objects that the client reads (OpenAPI: getMe, getGatewayReady and the
// message operations; docs/reference/events.md for the events).

export type Id = string;

export interface UserSummary {
  id: Id;
  username: string;
  display_name: string;
  avatar: Id | null;
  bio: string;
  status: "online" | "idle" | "dnd" | "offline";
  custom_status: string | null;
  custom_status_emoji: string | null;
  badges: string[];
  created_at: string;
  deleted: boolean;
}

export interface User extends Omit<UserSummary, "status" | "deleted"> {
  email: string;
  status: "online" | "idle" | "dnd" | "invisible";
  totp_enabled: boolean;
  is_instance_admin: boolean;
  locale?: string;
  timezone?: string;
  onboarding_completed_at?: string | null;
  password_reset_required?: boolean;
}

/** A signed-in device (OpenAPI: listSessions). */
export interface Session {
  id: Id;
  created_at: string;
  last_used_at: string;
  expires_at: string;
  ip: string;
  user_agent: string | null;
  method: "password" | "passkey" | "cli";
  current: boolean;
  step_up_expires_at: string | null;
}

/** A passkey of the account (OpenAPI: listPasskeys); `backed_up` when it is synced beyond one device. */
export interface Passkey {
  id: Id;
  name: string;
  created_at: string;
  last_used_at: string | null;
  backed_up: boolean;
}

export interface SecurityEvent {
  id: Id;
  user_id: Id | null;
  type: string;
  ip: string;
  user_agent: string | null;
  data: Record<string, unknown>;
  created_at: string;
}

export interface PermissionOverride {
  id: Id;
  type: "role" | "member";
  allow: string;
  deny: string;
}

export interface Channel {
  id: Id;
  type: "text" | "voice" | "category";
  guild_id: Id;
  name: string;
  topic: string | null;
  position: number;
  parent_id: Id | null;
  slowmode_seconds: number;
  user_limit?: number | null;
  background_file_id?: Id | null;
  permission_overrides: PermissionOverride[];
  last_message_id: Id | null;
  created_at: string;
}

export interface Role {
  id: Id;
  guild_id: Id;
  name: string;
  color: number;
  position: number;
  permissions: string;
  hoist: boolean;
  is_default: boolean;
  frame_id?: Id | null;
  icon_id?: Id | null;
}

export interface Member {
  guild_id: Id;
  user: UserSummary;
  nick: string | null;
  roles: Id[];
  joined_at: string;
  timeout_until: string | null;
  /** The member's guild-scope personal style (docs/customisation.md, "Personal styles"). */
  style?: Style | null;
}

export interface Emoji {
  id: Id;
  name: string;
  guild_id?: Id;
  /** The image (purpose `avatar`), served at /files/<file_id>. */
  file_id?: Id;
  /** `<:name:id>` */
  token?: string;
  animated?: boolean;
  creator_id?: Id | null;
  created_at?: string;
}

/** The interface events an interface sound may replace (docs/customisation.md, "Sounds"). */
export type PaletteEvent =
  | "message" | "mention" | "dm_message" | "voice_join" | "voice_leave" | "mute" | "unmute" | "deafen"
  | "undeafen" | "call_ring" | "call_end" | "stream_start" | "stream_end";

/** A soundboard or interface sound of a server (OpenAPI: listSounds). */
export interface Sound {
  id: Id;
  guild_id: Id;
  name: string;
  /** A Unicode emoji or `<:name:id>`. */
  emoji: string | null;
  kind: "soundboard" | "interface";
  palette_event: PaletteEvent | null;
  /** Served at /files/<file_id>. */
  file_id: Id;
  duration_ms: number | null;
  creator_id: Id | null;
  created_at: string;
}

/** A frame or an icon of a server's cosmetics gallery (OpenAPI: listCosmetics). */
export interface Cosmetic {
  id: Id;
  guild_id: Id;
  kind: "frame" | "icon";
  name: string;
  file_id: Id;
  created_at: string;
}

/** A personal style: how one looks to the members of a server or to one's friends (OpenAPI: getMyStyles). */
export interface Style {
  scope: "friends" | "guild";
  guild_id: Id | null;
  frame_id: Id | null;
  icon_id: Id | null;
  color: number | null;
  updated_at: string;
}

export interface Guild {
  id: Id;
  name: string;
  description: string | null;
  icon_file_id: Id | null;
  owner_id: Id;
  member_count: number;
  system_channel_id: Id | null;
  banner_file_id?: Id | null;
  splash_file_id?: Id | null;
  public?: boolean;
  public_invite_code?: string | null;
  is_main?: boolean;
  created_at: string;
}

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

export interface Reaction {
  emoji: string;
  count: number;
  me: boolean;
}

export interface FileObject {
  id: Id;
  original_name: string;
  content_type: string;
  size: number;
  metadata: { width?: number; height?: number };
  url: string;
}

export interface ReferencedMessage {
  id: Id;
  author: UserSummary | null;
  content: string;
  kind: string;
  /** The snapshot of the webhook that posted it, if a webhook did. */
  webhook?: { id: Id; name: string; avatar: string | null } | null;
}

export interface Message {
  id: Id;
  channel_id: Id;
  guild_id: Id | null;
  author: UserSummary | null;
  webhook: { id: Id; name: string; avatar: string | null } | null;
  content: string;
  kind: "normal" | "action" | "whisper" | "scream" | "private" | "system";
  system_event: { type: string; user_id: Id | null; actor_id: Id | null; via: string | null } | null;
  attachments: FileObject[];
  nonce: string | null;
  reply_to_id: Id | null;
  referenced_message: ReferencedMessage | null;
  mentions: Id[];
  /** `@everyone` by a holder of MENTION_EVERYONE in a guild room; anyone else's `@everyone` is plain text. */
  mention_everyone?: boolean;
  /** The author lacked EMBED_LINKS when sending: no link preview cards. */
  suppress_embeds?: boolean;
  reactions: Reaction[];
  pinned: boolean;
  created_at: string;
  edited_at: string | null;
}

export interface ReadState {
  channel_id: Id;
  last_read_message_id: Id | null;
  mention_count: number;
  updated_at: string;
}

export interface Conversation {
  id: Id;
  type: "dm";
  is_group: boolean;
  name: string | null;
  /** Groups only (docs/social.md, "Name and icon"). */
  icon_file_id?: Id | null;
  owner_id?: Id | null;
  dm_owner_id?: Id | null;
  member_count?: number;
  /** All participants, the receiver included, earliest joined first. */
  members: UserSummary[];
  /** A one-to-one: the other participant; groups: null. */
  counterpart: UserSummary | null;
  avatar?: Id | null;
  status?: UserSummary["status"] | null;
  last_message?: Message | null;
  last_message_id: Id | null;
  created_at?: string;
}

/** What another user is to the receiver (OpenAPI: listRelationships, createRelationship). */
export type RelationshipType = "friend" | "incoming" | "outgoing" | "blocked";

export interface Relationship {
  id: Id;
  type: RelationshipType;
  user: UserSummary;
  since: string;
  style: unknown | null;
}

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

export interface Invite {
  code: string;
  url: string;
  guild_id: Id;
  channel_id: Id;
  max_age_seconds: number;
  max_uses: number;
  expires_at: string | null;
  inviter?: UserSummary | null;
  uses?: number;
  is_public?: boolean;
  background_file_id?: Id | null;
  created_at?: string;
}

/** A server anyone may join (OpenAPI: listPublicGuilds): joined with `POST /invites/{public_invite_code}`. */
export interface PublicGuild {
  id: Id;
  name: string;
  icon_file_id: Id | null;
  description: string | null;
  member_count: number;
  is_member: boolean;
  public_invite_code: string;
}

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

export interface Ban {
  user: UserSummary;
  reason: string | null;
  author: UserSummary | null;
  created_at: string;
}

export interface AuditEntry {
  id: Id;
  action: string;
  guild_id: Id | null;
  actor_id: Id | null;
  actor: UserSummary | null;
  target_type: string | null;
  target_id: Id | null;
  reason: string | null;
  data: Record<string, unknown>;
  created_at: string;
}

export interface Template {
  id: Id;
  name: string;
  description: string | null;
  owner_id: Id;
  source_guild_id: Id | null;
  structure: Record<string, unknown>;
  created_at: string;
}

/** Who is in a voice room of a server, with their flags (OpenAPI: listVoiceStates; docs/voice.md). */
export interface VoiceState {
  guild_id: Id;
  /** null in the VOICE_STATE_UPDATE that reports leaving. */
  channel_id: Id | null;
  user_id: Id;
  member: Member | null;
  microphone: boolean;
  /** false: the participant deafened themselves. */
  sound: boolean;
  camera: boolean;
  screen: boolean;
  server_mute: boolean;
  server_deafen: boolean;
  joined_at: string;
}

export interface CallParticipant {
  user_id: Id;
  state: "ringing" | "joined" | "left" | "declined" | "missed";
  microphone: boolean;
  camera: boolean;
  screen: boolean;
  joined_at: string | null;
  left_at: string | null;
}

/** A call in a direct conversation (OpenAPI: startCall; docs/social.md, "Calls"). */
export interface Call {
  id: Id;
  channel_id: Id;
  initiator_id: Id;
  status: "ringing" | "active" | "ended" | "missed" | "declined";
  media: "audio" | "video";
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  duration_seconds: number;
  end_reason: string | null;
  participants: CallParticipant[];
}

/** A room webhook (OpenAPI: createWebhook; docs/webhooks.md): `token` and `url` only in the answer that made them. */
export interface Webhook {
  id: Id;
  guild_id: Id;
  channel_id: Id;
  name: string;
  avatar: Id | null;
  creator_id: Id;
  created_at: string;
  token: string | null;
  url: string | null;
}

/** A link preview (OpenAPI: getLinkPreview): `card` only when `status` is `ok`. */
export interface LinkPreview {
  url: string;
  status: "ok" | "empty" | "blocked" | "error";
  card: { title: string | null; description: string | null; image_url: string | null; site_name: string | null } | null;
  fetched_at: string;
  expires_at: string;
}

/** One Web Push subscription of the signed-in person (OpenAPI: listPushSubscriptions). */
export interface PushSubscriptionInfo {
  id: Id;
  endpoint: string;
  created_at: string;
  failure_count: number;
  last_delivery_at: string | null;
}
