// The one store of the client, as plain data, and the reducers that READY and the gateway events apply
// to it (no polling). The screens read a reactive instance of it (store.svelte.ts); the reducers are
// pure functions over this shape so they are tested without a browser (web/tests/state.test.ts).

import { compareIds, newer } from "./ids";
import { applyVoiceEvent, applyVoiceReady } from "../voice/reduce";
import { applySetting, effectiveLevel, emptySettings, forgetGuild, settingsFrom, type NotificationSettings, type NotificationSettingsList } from "./notify";
import type { Dispatch, ReactionEvent } from "./dispatch";
import { t } from "../i18n/index.svelte";
import type {
  Channel,
  Conversation,
  GuildSnapshot,
  Id,
  Member,
  Message,
  ReadState,
  Ready,
  Relationship,
  RelationshipType,
  User,
  UserSummary,
  VoiceState,
  Call,
} from "./types";

export interface MessageList {
  /** Oldest first. */
  items: Message[];
  /** Older messages exist beyond items[0]. */
  hasMore: boolean;
  /** The newest page was fetched since the last (re)connection. */
  fresh: boolean;
}

export interface State {
  me: User | null;
  guilds: Record<Id, GuildSnapshot>;
  guildOrder: Id[];
  conversations: Record<Id, Conversation>;
  readStates: Record<Id, ReadState>;
  messages: Record<Id, MessageList>;
  members: Record<Id, Record<Id, Member>>;
  /** channel id -> user id -> when the typing mark lapses (ms since the epoch). */
  typing: Record<Id, Record<Id, number>>;
  users: Record<Id, UserSummary>;
  /** other user's id -> what they are to the user (docs/social.md, "Relationships and blocking"). */
  relationships: Record<Id, Relationship>;
  /** guild id -> user id -> who is in that server's voice rooms (docs/voice.md). */
  voiceStates: Record<Id, Record<Id, VoiceState>>;
  /** conversation id -> its ongoing call (docs/social.md, "Calls"). */
  calls: Record<Id, Call>;
  /** The person's notification levels by server and room (lib/notify.ts). */
  notificationSettings: NotificationSettings;
  /** room id -> the id of its `channel_create` notice, as seen in a MESSAGE_CREATE (isUnread). */
  creationNotices: Record<Id, Id>;
}

export const TYPING_MS = 10000;
/** Without the message at hand (READY carries ids only), a room's newest message this close to the room's
 * creation is taken for its creation notice (isUnread). */
export const CREATION_MESSAGE_MS = 1000;
/** History kept per room in memory; older pages are fetched again when scrolled to. */
export const KEEP_PER_ROOM = 5000;

export function createState(): State {
  return {
    me: null,
    guilds: {},
    guildOrder: [],
    conversations: {},
    readStates: {},
    messages: {},
    members: {},
    typing: {},
    users: {},
    relationships: {},
    voiceStates: {},
    calls: {},
    notificationSettings: emptySettings(),
    creationNotices: {},
  };
}

export function applyReady(state: State, ready: Ready): void {
  state.me = ready.user;
  state.guilds = {};
  state.guildOrder = [];
  for (const g of ready.guilds) {
    state.guilds[g.id] = g;
    state.guildOrder.push(g.id);
    addMember(state, g.member);
  }
  state.conversations = {};
  for (const c of ready.dm_channels ?? []) state.conversations[c.id] = c;
  applyReadySocial(state, ready);
  state.readStates = {};
  for (const r of ready.read_states ?? []) state.readStates[r.channel_id] = r;
  state.notificationSettings = settingsFrom((ready as Ready & { notification_settings?: NotificationSettingsList }).notification_settings);
  // After a new IDENTIFY events may have been missed: every cached room is fetched again when shown.
  for (const list of Object.values(state.messages)) list.fresh = false;
  state.typing = {};
  applyVoiceReady(state, ready);
}

export function markStale(state: State): void {
  for (const list of Object.values(state.messages)) list.fresh = false;
}

function channelOwner(state: State, channelId: Id): GuildSnapshot | undefined {
  for (const g of Object.values(state.guilds)) if (g.channels.some((c) => c.id === channelId)) return g;
  return undefined;
}

export function findChannel(state: State, channelId: Id): Channel | undefined {
  return channelOwner(state, channelId)?.channels.find((c) => c.id === channelId);
}

function upsert<T extends { id: Id }>(list: T[], item: T): void {
  const i = list.findIndex((x) => x.id === item.id);
  if (i >= 0) list[i] = item;
  else list.push(item);
}

function addMember(state: State, member: Member): void {
  const byUser = (state.members[member.guild_id] ??= {});
  byUser[member.user.id] = member;
  state.users[member.user.id] = member.user;
}

function updateUser(state: State, user: UserSummary): void {
  state.users[user.id] = user;
  for (const byUser of Object.values(state.members)) {
    const m = byUser[user.id];
    if (m) m.user = user;
  }
  updateSocialUser(state, user);
}

// ---- friends and conversations (docs/social.md) --------------------------------------------------------

/** READY `relationships` (the four lists) and `presences` (friends who are not offline). */
function applyReadySocial(state: State, ready: Ready): void {
  state.relationships = {};
  const lists = ready.relationships;
  if (lists) {
    for (const r of [...lists.friends, ...lists.incoming, ...lists.outgoing, ...lists.blocked]) {
      state.relationships[r.id] = r;
      state.users[r.id] ??= r.user;
    }
  }
  for (const c of ready.dm_channels ?? []) for (const u of c.members) state.users[u.id] ??= u;
  for (const p of ready.presences ?? []) updateUser(state, p.user);
}

/** A newer summary of a user (PRESENCE_UPDATE) reaches their relationship and every conversation showing them. */
function updateSocialUser(state: State, user: UserSummary): void {
  const r = state.relationships[user.id];
  if (r) r.user = user;
  for (const c of Object.values(state.conversations)) {
    const i = c.members.findIndex((m) => m.id === user.id);
    if (i >= 0) c.members[i] = user;
    if (c.counterpart?.id === user.id) {
      c.counterpart = user;
      c.status = user.status;
      c.avatar = user.avatar;
    }
  }
}

function putConversation(state: State, c: Conversation): void {
  const known = state.conversations[c.id];
  // An update may carry an older last message than one the client already holds (sent meanwhile).
  if (known && newer(known.last_message_id, c.last_message_id)) {
    c.last_message_id = known.last_message_id;
    c.last_message = known.last_message ?? c.last_message;
  }
  state.conversations[c.id] = c;
  for (const u of c.members) if (u.id !== state.me?.id) state.users[u.id] = u;
}

/** The relationships of one type, by display name. */
export function relationshipsOf(state: State, type: RelationshipType): Relationship[] {
  return Object.values(state.relationships)
    .filter((r) => r.type === type)
    .sort((a, b) => a.user.display_name.localeCompare(b.user.display_name) || compareIds(a.id, b.id));
}

export function relationshipWith(state: State, userId: Id): RelationshipType | null {
  return state.relationships[userId]?.type ?? null;
}

/** Conversations by last activity, newest first (the newest message, else the creation). */
export function sortedConversations(state: State): Conversation[] {
  return Object.values(state.conversations).sort(
    (a, b) => compareIds(b.last_message_id ?? b.id, a.last_message_id ?? a.id) || compareIds(b.id, a.id),
  );
}

/** The 1:1 conversation with a user, if the client knows one (the pair's oldest, as the service opens it). */
export function directWith(state: State, userId: Id): Conversation | undefined {
  return Object.values(state.conversations)
    .filter((c) => !c.is_group && c.counterpart?.id === userId)
    .sort((a, b) => compareIds(a.id, b.id))[0];
}

/** The owner of a group (`dm_owner_id`; `owner_id` carries the same value). */
export function groupOwner(c: Conversation): Id | null {
  return c.dm_owner_id ?? c.owner_id ?? null;
}

/** A page of history (newest first, as the interface answers) merged into a room's list. */
export function applyHistory(state: State, channelId: Id, page: Message[], hasMore: boolean, older: boolean): void {
  const list = (state.messages[channelId] ??= { items: [], hasMore: true, fresh: false });
  const byId = new Map(list.items.map((m) => [m.id, m]));
  for (const m of page) byId.set(m.id, m);
  const merged = [...byId.values()].sort((a, b) => compareIds(a.id, b.id));
  if (!older) {
    // The newest page: when it does not reach what was cached, the cached part is not contiguous.
    const oldestNew = page.length ? page[page.length - 1].id : null;
    const kept = hasMore && oldestNew ? merged.filter((m) => compareIds(m.id, oldestNew) >= 0) : merged;
    list.items = kept;
    list.hasMore = hasMore || kept.length < merged.length;
    list.fresh = true;
  } else {
    list.items = merged;
    list.hasMore = hasMore;
  }
  for (const m of page) if (m.author) state.users[m.author.id] = m.author;
}

function addMessage(state: State, message: Message): void {
  if (isCreationNotice(message)) state.creationNotices[message.channel_id] = message.id;
  const list = state.messages[message.channel_id];
  if (list) {
    const items = list.items;
    const i = items.findIndex((m) => m.id === message.id || (message.nonce && m.nonce === message.nonce && m.id.startsWith("pending:")));
    if (i >= 0) items[i] = message;
    else if (!items.length || compareIds(items[items.length - 1].id, message.id) < 0) items.push(message);
    else {
      items.push(message);
      items.sort((a, b) => compareIds(a.id, b.id));
    }
    if (items.length > KEEP_PER_ROOM) {
      items.splice(0, items.length - KEEP_PER_ROOM);
      list.hasMore = true;
    }
  }
  const channel = findChannel(state, message.channel_id);
  if (channel && message.kind !== "private" && newer(message.id, channel.last_message_id)) channel.last_message_id = message.id;
  const conversation = state.conversations[message.channel_id];
  if (conversation && newer(message.id, conversation.last_message_id)) {
    conversation.last_message_id = message.id;
    conversation.last_message = message;
  }
  if (message.author) {
    state.users[message.author.id] = message.author;
    const typing = state.typing[message.channel_id];
    if (typing) delete typing[message.author.id];
    if (message.author.id === state.me?.id) {
      // One's own message is read by sending it.
      state.readStates[message.channel_id] = {
        channel_id: message.channel_id,
        last_read_message_id: message.id,
        mention_count: 0,
        updated_at: message.created_at,
      };
    } else if (state.me && (message.mentions.includes(state.me.id))) {
      const rs = state.readStates[message.channel_id];
      if (rs) rs.mention_count += 1;
      else state.readStates[message.channel_id] = { channel_id: message.channel_id, last_read_message_id: null, mention_count: 1, updated_at: message.created_at };
    }
  }
}

function messageOf(state: State, channelId: Id, messageId: Id): Message | undefined {
  return state.messages[channelId]?.items.find((m) => m.id === messageId);
}

function reaction(state: State, d: ReactionEvent, delta: 1 | -1): void {
  const message = messageOf(state, d.channel_id, d.message_id);
  if (!message) return;
  const mine = d.user_id === state.me?.id;
  const i = message.reactions.findIndex((r) => r.emoji === d.emoji);
  if (delta > 0) {
    if (i >= 0) {
      const r = message.reactions[i];
      if (mine && r.me) return; // already counted (an optimistic add)
      r.count += 1;
      if (mine) r.me = true;
    } else {
      message.reactions.push({ emoji: d.emoji, count: 1, me: mine });
    }
  } else if (i >= 0) {
    const r = message.reactions[i];
    if (mine && !r.me) return; // already removed (an optimistic removal)
    r.count -= 1;
    if (mine) r.me = false;
    if (r.count <= 0) message.reactions.splice(i, 1);
  }
}

/** Applies one gateway dispatch, typed by its payload (dispatch.ts); `now` times typing marks. Types this
 * reducer does not show change nothing. */
export function applyEvent(state: State, ...[type, d, now]: [...Dispatch, now?: number]): void {
  switch (type) {
    case "READY":
      applyReady(state, d);
      break;
    case "USER_UPDATE":
      state.me = d;
      break;
    case "GUILD_CREATE": {
      const g: GuildSnapshot = d;
      if (!state.guilds[g.id]) state.guildOrder.push(g.id);
      state.guilds[g.id] = g;
      addMember(state, g.member);
      break;
    }
    case "GUILD_UPDATE": {
      const g = state.guilds[d.id];
      if (g) Object.assign(g, d);
      break;
    }
    case "GUILD_DELETE":
      forgetGuild(state.notificationSettings, d.id, state.guilds[d.id]?.channels.map((c) => c.id) ?? []);
      delete state.guilds[d.id];
      state.guildOrder = state.guildOrder.filter((id) => id !== d.id);
      delete state.members[d.id];
      break;
    case "CHANNEL_CREATE":
    case "CHANNEL_UPDATE": {
      const g = state.guilds[d.guild_id];
      if (g) upsert(g.channels, d);
      break;
    }
    case "CHANNEL_DELETE": {
      const g = state.guilds[d.guild_id];
      if (g) g.channels = g.channels.filter((c) => c.id !== d.id);
      delete state.messages[d.id];
      break;
    }
    case "MEMBER_ADD":
    case "MEMBER_UPDATE": {
      addMember(state, d);
      const g = state.guilds[d.guild_id];
      if (g && d.user.id === state.me?.id) g.member = d;
      if (type === "MEMBER_ADD" && g) g.member_count += 1;
      break;
    }
    case "MEMBER_REMOVE": {
      const byUser = state.members[d.guild_id];
      if (byUser) delete byUser[d.user.id];
      const g = state.guilds[d.guild_id];
      if (g) g.member_count = Math.max(0, g.member_count - 1);
      break;
    }
    case "ROLE_CREATE":
    case "ROLE_UPDATE": {
      const g = state.guilds[d.guild_id];
      if (g) upsert(g.roles, d);
      break;
    }
    case "ROLE_DELETE": {
      const g = state.guilds[d.guild_id];
      if (g) g.roles = g.roles.filter((r) => r.id !== d.role_id);
      break;
    }
    // Each carries the server's whole list after an upload, rename or delete (docs/customisation.md).
    case "GUILD_EMOJIS_UPDATE": {
      const g = state.guilds[d.guild_id];
      if (g) g.emojis = d.emojis ?? [];
      break;
    }
    case "GUILD_SOUNDS_UPDATE": {
      const g = state.guilds[d.guild_id];
      // Without the list the known one is dropped, so whoever shows sounds reads them again.
      if (g) g.sounds = Array.isArray(d.sounds) ? d.sounds : undefined;
      break;
    }
    case "GUILD_COSMETICS_UPDATE": {
      const g = state.guilds[d.guild_id];
      if (g) g.cosmetics = d.cosmetics ?? [];
      break;
    }
    case "MESSAGE_CREATE":
      addMessage(state, d);
      break;
    case "MESSAGE_UPDATE": {
      const list = state.messages[d.channel_id];
      const i = list ? list.items.findIndex((m) => m.id === d.id) : -1;
      if (list && i >= 0) list.items[i] = d;
      break;
    }
    case "MESSAGE_DELETE": {
      const list = state.messages[d.channel_id];
      if (list) list.items = list.items.filter((m) => m.id !== d.id);
      break;
    }
    // A ban that deleted the banned person's recent messages (docs/moderation.md): one event per room.
    case "MESSAGE_DELETE_BULK": {
      const list = state.messages[d.channel_id];
      const gone = new Set<string>(d.ids ?? []);
      if (list) list.items = list.items.filter((m) => !gone.has(m.id));
      break;
    }
    case "MESSAGE_REACTION_ADD":
      reaction(state, d, 1);
      break;
    case "MESSAGE_REACTION_REMOVE":
      reaction(state, d, -1);
      break;
    case "CHANNEL_PINS_UPDATE": {
      const m = messageOf(state, d.channel_id, d.message_id);
      if (m) m.pinned = d.pinned;
      break;
    }
    case "TYPING_START": {
      const byUser = (state.typing[d.channel_id] ??= {});
      byUser[d.user_id] = (now ?? Date.now()) + TYPING_MS;
      break;
    }
    case "NOTIFICATION_SETTINGS_UPDATE":
      applySetting(state.notificationSettings, d);
      break;
    case "READ_STATE_UPDATE":
      state.readStates[d.channel_id] = d;
      break;
    case "PRESENCE_UPDATE":
      updateUser(state, d.user);
      break;
    case "DM_CHANNEL_CREATE":
    case "DM_CHANNEL_UPDATE":
      putConversation(state, d);
      break;
    case "RELATIONSHIP_ADD": {
      const r: Relationship = d;
      state.relationships[r.id] = r;
      state.users[r.id] = r.user;
      break;
    }
    case "RELATIONSHIP_REMOVE":
      // `type` is the removed type: a later RELATIONSHIP_ADD of another type must not be undone.
      if (state.relationships[d.id]?.type === d.type) delete state.relationships[d.id];
      break;
    case "DM_CHANNEL_DELETE":
      delete state.conversations[d.id];
      delete state.messages[d.id];
      break;
  }
  applyVoiceEvent(state, type, d);
}

/** The creation time in the id (a snowflake's upper bits, in ms since the service's epoch). */
function idMs(id: Id): number {
  try {
    return Number(BigInt(id) >> 22n);
  } catch {
    return NaN;
  }
}

/** The notice the service writes with a new room ("freya created this room.", Appendix C `channel_create`). */
function isCreationNotice(m: Pick<Message, "kind" | "system_event">): boolean {
  return m.kind === "system" && m.system_event?.type === "channel_create";
}

/** Whether a room's newest message is its creation notice: told by the message's type when the client has
 * seen it (its MESSAGE_CREATE, or the room's history); otherwise (after READY, which names only ids) by its
 * id, made within a moment of the room's own in the same transaction. */
function newestIsCreationNotice(state: State, channelId: Id, lastMessageId: Id): boolean {
  const notice = state.creationNotices[channelId];
  if (notice !== undefined) return notice === lastMessageId; // else a later message came since
  const items = state.messages[channelId]?.items;
  const newest = items?.length ? items[items.length - 1] : undefined;
  if (newest?.id === lastMessageId) return isCreationNotice(newest);
  return newer(lastMessageId, channelId) && idMs(lastMessageId) - idMs(channelId) <= CREATION_MESSAGE_MS;
}

/** Whether a room holds a message newer than the user's read mark. A new room's creation notice leaves it
 * read until a real message arrives (a room with mentions is unread whatever its age). Conversations have no
 * such notice. */
export function isUnread(state: State, channelId: Id, lastMessageId: Id | null): boolean {
  if (!lastMessageId) return false;
  if (!state.conversations[channelId] && !mentionCount(state, channelId)
    && newestIsCreationNotice(state, channelId, lastMessageId)) {
    return false;
  }
  const rs = state.readStates[channelId];
  return newer(lastMessageId, rs?.last_read_message_id ?? null);
}

export function mentionCount(state: State, channelId: Id): number {
  return state.readStates[channelId]?.mention_count ?? 0;
}

/** What the tab title counts (docs/client.md, "Notification levels"): the mentions waiting in rooms that may
 * notify, one for each other unread room set to every message, and each unread conversation (its mentions
 * when more). Rooms and servers at `nothing` or muted count nothing; they still show unread in the list. */
export function attentionCount(state: State, now: number = Date.now()): number {
  let count = 0;
  for (const g of Object.values(state.guilds)) {
    for (const c of g.channels) {
      if (c.type === "category") continue;
      const level = effectiveLevel(state.notificationSettings, { guildId: g.id, channelId: c.id }, now);
      if (level === "nothing") continue;
      const mentions = mentionCount(state, c.id);
      if (mentions) count += mentions;
      else if (level === "all" && isUnread(state, c.id, c.last_message_id)) count += 1;
    }
  }
  for (const c of Object.values(state.conversations)) {
    if (effectiveLevel(state.notificationSettings, { guildId: null, channelId: c.id }, now) === "nothing") continue;
    if (isUnread(state, c.id, c.last_message_id)) count += Math.max(1, mentionCount(state, c.id));
  }
  return count;
}

/** The users typing in a room now (never oneself). */
export function typingIn(state: State, channelId: Id, now: number = Date.now()): Id[] {
  const byUser = state.typing[channelId];
  if (!byUser) return [];
  return Object.entries(byUser)
    .filter(([id, until]) => until > now && id !== state.me?.id)
    .map(([id]) => id);
}

export function displayName(state: State, userId: Id, guildId?: Id | null): string {
  const member = guildId ? state.members[guildId]?.[userId] : undefined;
  if (member?.nick) return member.nick;
  return (member?.user ?? state.users[userId])?.display_name ?? t("shell.someone");
}

/** Rooms of a guild grouped under their categories, each group in position order. */
export function roomTree(guild: GuildSnapshot): { category: Channel | null; rooms: Channel[] }[] {
  const byPosition = (a: Channel, b: Channel) => a.position - b.position || compareIds(a.id, b.id);
  const categories = guild.channels.filter((c) => c.type === "category").sort(byPosition);
  const rooms = guild.channels.filter((c) => c.type !== "category").sort(byPosition);
  const known = new Set(categories.map((c) => c.id));
  const groups: { category: Channel | null; rooms: Channel[] }[] = [
    { category: null, rooms: rooms.filter((r) => !r.parent_id || !known.has(r.parent_id)) },
  ];
  for (const c of categories) groups.push({ category: c, rooms: rooms.filter((r) => r.parent_id === c.id) });
  return groups.filter((g) => g.category !== null || g.rooms.length > 0);
}

export function conversationName(state: State, c: Conversation): string {
  if (c.name) return c.name;
  if (c.counterpart) return c.counterpart.display_name;
  return c.members.filter((m) => m.id !== state.me?.id).map((m) => m.display_name).join(", ") || t("shell.conversation");
}
