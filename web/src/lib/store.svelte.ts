// The reactive store the screens read (one instance of state.ts), the session's life (sign-in, the
// gateway, sign-out) and the actions that call the interface. Events change the store; nothing polls.

import { api, ApiError, call, type CallBody, errorText, onUnauthorized, request, resend, SEND_TIMEOUT_MS, wakeResends } from "./api";
import { GatewayClient, type Phase } from "./gateway";
import { isEventName, type Dispatch } from "./dispatch";
import { compareIds, newer } from "./ids";
import { navigate } from "./router.svelte";
import { browserOffline, isNetworkError, waitForNetwork } from "./offline.svelte";
import { clearDrafts, forgetPush, resetClientState } from "./signout";
import type { FileObject } from "./types";
import { applyEvent, applyHistory, createState, findChannel } from "./state";
import type { Channel, Conversation, GuildSnapshot, Id, Invite, Member, Message, Relationship, User, UserSummary } from "./types";
import { t } from "../i18n/index.svelte";

export const store = $state(createState());

export const session = $state({
  status: "unknown" as "unknown" | "signed-out" | "signed-in",
  connection: "idle" as Phase,
  /** Set when the gateway ended the session (signed out elsewhere, revoked). */
  endedReason: null as string | null,
});

/** Ticks every second so typing marks lapse on screen. */
export const clock = $state({ now: Date.now() });
/** A tick this late in a shown tab means the computer slept (timers do not run meanwhile); a hidden tab's
 * timers are throttled to once a minute, which is no sleep. */
const SLEPT_MS = 15000;
setInterval(() => {
  const now = Date.now();
  if (now - clock.now > SLEPT_MS && document.visibilityState === "visible") wokeUp();
  clock.now = now;
}, 1000);

export interface Pending {
  nonce: string;
  channelId: Id;
  content: string;
  replyTo: Id | null;
  /** Files uploaded for this message (OpenAPI: uploadAttachment), bound when it is sent. */
  attachments: FileObject[];
  status: "sending" | "failed";
  error: string | null;
}

export const outbox = $state({ items: [] as Pending[] });

let gateway: GatewayClient | null = null;
let openChannel: Id | null = null;

export const loading = $state({ history: {} as Record<Id, boolean> });

/** Modules that act on events beyond the store (voice: playing sounds, following moves) listen here. */
const dispatchListeners: ((type: string, data: any) => void)[] = [];

/** Called with each dispatch after it changed the store; the answer stops it (for a screen that closes). */
export function onDispatch(listener: (type: string, data: any) => void): () => void {
  dispatchListeners.push(listener);
  return () => {
    const i = dispatchListeners.indexOf(listener);
    if (i >= 0) dispatchListeners.splice(i, 1);
  };
}

/** The public profile of a user as an event carries it: their own USER_UPDATE, a member's MEMBER_UPDATE, a
 * friend's PRESENCE_UPDATE. */
function profileIn(type: string, data: any): Pick<UserSummary, "id" | "username" | "display_name" | "avatar"> | null {
  const user = type === "USER_UPDATE" ? data : type === "MEMBER_UPDATE" || type === "PRESENCE_UPDATE" ? data?.user : null;
  return user && typeof user.id === "string" && typeof user.display_name === "string" ? user : null;
}

/** Messages keep the author as it was when they were fetched; a changed name or avatar is copied into those
 * in memory (and into reply previews), and one's own change also into the known users and memberships, so
 * avatars, the member list and replies follow at once (state.ts keeps the rest). */
function followProfile(user: Pick<UserSummary, "id" | "username" | "display_name" | "avatar">, own: boolean): void {
  const { id, username, display_name, avatar } = user;
  const stale = (u: UserSummary | null | undefined) =>
    !!u && u.id === id && (u.display_name !== display_name || u.avatar !== avatar || u.username !== username);
  const fresh = (u: UserSummary): UserSummary => ({ ...u, username, display_name, avatar });
  for (const list of Object.values(store.messages)) {
    for (const m of list.items) {
      if (stale(m.author)) m.author = fresh(m.author!);
      const ref = m.referenced_message;
      if (ref && stale(ref.author)) ref.author = fresh(ref.author!);
    }
  }
  if (!own) return;
  if (stale(store.users[id])) store.users[id] = fresh(store.users[id]);
  for (const byUser of Object.values(store.members)) {
    const member = byUser[id];
    if (member && stale(member.user)) member.user = fresh(member.user);
  }
}

function handleDispatch(type: string, data: unknown): void {
  if (type === "SESSION_RESET") {
    // The IDENTIFY that follows brings a READY, after which every held room fetches what it missed
    // (catchUp); marking the rooms stale now would have the open one reload its newest page first.
    return;
  }
  // The service sends each type with its payload (dispatch.ts); a type it added since is not read here.
  if (isEventName(type)) applyEvent(store, ...([type, data] as Dispatch));
  const profile = profileIn(type, data);
  if (profile) followProfile(profile, type === "USER_UPDATE");
  for (const listener of dispatchListeners) {
    try {
      listener(type, data);
    } catch (err) {
      console.error(err);
    }
  }
  if (type === "READY") {
    session.status = "signed-in";
    wakeResends();
    void catchUp(heldCursors());
  } else if (type === "RESUMED") {
    wakeResends();
  } else if (type === "MESSAGE_CREATE") {
    const m = data as Message;
    if (m.nonce) outbox.items = outbox.items.filter((p) => p.nonce !== m.nonce);
    if (m.channel_id === openChannel && m.author?.id !== store.me?.id) scheduleAck(m.channel_id);
  }
}

function startGateway(): void {
  gateway?.stop();
  gateway = new GatewayClient({
    // Bounded: a load balancer still sending to a dead node must not leave the reconnect waiting for ever.
    url: async () => (await call("getGateway", undefined, { timeout: 10000, retries: 0 })).url,
    socket: (url) => new WebSocket(url) as unknown as import("./gateway").SocketLike,
    onDispatch: handleDispatch,
    onPhase: (phase) => (session.connection = phase),
    onSessionEnded: (reason) => {
      session.endedReason = reason;
      if (reason !== "replaced") signedOut();
    },
  });
  gateway.start();
  (window as unknown as { meadhallGateway?: GatewayClient }).meadhallGateway = gateway;
  listenForConnectivity();
}

let connectivityHeard = false;

function listenForConnectivity(): void {
  if (connectivityHeard) return;
  connectivityHeard = true;
  window.addEventListener("online", wokeUp);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") wokeUp();
  });
}

/** Back from a sleep, offline or a hidden tab: a connection that may be dead is checked now, a waiting
 * reconnect and sends waiting on the connection try now. */
function wokeUp(): void {
  gateway?.checkAlive();
  gateway?.reconnectNow();
  wakeResends();
}

/** Whether a session exists: the cookie is HttpOnly, so the client asks the service. */
export async function boot(): Promise<void> {
  onUnauthorized(() => {
    if (session.status === "signed-in") signedOut();
  });
  await start();
}

/** Without a network the question waits for it (lib/offline.svelte.ts): it is no answer, not "signed out". */
async function start(): Promise<void> {
  if (browserOffline()) return waitForNetwork(start);
  // The page came without a session cookie (meadhall/web/client.py says so): signed out for sure, and
  // no request whose 401 would be a console error on every signed-out load.
  if (document.querySelector('meta[name="meadhall-session"]')?.getAttribute("content") === "none") {
    session.status = "signed-out";
    return;
  }
  try {
    const { user } = await call("getMe");
    store.me = user;
    session.status = "signed-in";
    startGateway();
  } catch (err) {
    if (err instanceof ApiError && err.code === "auth.unauthorized") session.status = "signed-out";
    else if (isNetworkError(err)) waitForNetwork(start);
    else {
      session.status = "signed-out";
    }
  }
}

function signedOut(): void {
  gateway?.stop();
  gateway = null;
  Object.assign(store, createState());
  outbox.items = [];
  forgetSessionState();
  // However the session ended (here, elsewhere, revoked): the next person at this browser finds neither
  // the drafts nor a device still subscribed to this account's notifications (docs/client.md "Sessions").
  clearDrafts();
  void forgetPush(false);
  session.status = "signed-out";
  navigate("/login", { replace: true });
}

/** Everything this module keeps for the signed-in person beside the store, forgotten when the session
 * ends so that the next account in this tab starts fresh: the open room (a READY would fetch the last
 * person's room: "Unknown room"), the guilds whose members were fetched (the next person's member list
 * and role colours are fetched again), pending read marks, jumps and typing. Other modules register
 * theirs with `onSignOut` (signout.ts). */
function forgetSessionState(): void {
  openChannel = null;
  if (ackTimer) clearTimeout(ackTimer);
  ackTimer = null;
  heldUnread.clear();
  membersLoaded.clear();
  loading.history = {};
  jump.channelId = null;
  jump.messageId = null;
  lastTyping = 0;
  resetClientState();
}

export interface SignIn {
  login: string;
  password: string;
  totp_code?: string;
  backup_code?: string;
}

export async function signIn(body: SignIn): Promise<void> {
  const answer = await call("login", { body });
  store.me = answer.user;
  session.endedReason = null;
  session.status = "signed-in";
  startGateway();
}

/** A sign-in the screen finished itself (a passkey: passkeyLoginVerify set the session cookie). */
export function signedInAs(user: User): void {
  store.me = user;
  session.endedReason = null;
  session.status = "signed-in";
  startGateway();
}

export async function register(body: { username: string; email: string; password: string; timezone?: string; locale?: string }): Promise<void> {
  // The zone and the locale are the browser's, which the service checks (the zone against its list).
  const answer = await call("register", { body: body as CallBody<"register"> });
  store.me = answer.user;
  session.status = "signed-in";
  startGateway();
}

/** The person ended this session from the settings (sign out everywhere): back to sign-in at once,
 * without waiting for the gateway to hear of it. */
export function endSession(): void {
  if (session.status === "signed-in") signedOut();
}

export async function signOut(): Promise<void> {
  try {
    await forgetPush(true); // while the session is valid, so that the service is told (docs/push.md)
    await call("logout");
  } finally {
    signedOut();
  }
}

// ---- servers and invitations ----------------------------------------------------------------------

/** A new server, empty or from one of the person's templates (`personal:<id>`, OpenAPI: createGuild). */
export async function createGuild(name: string, templateId?: string): Promise<GuildSnapshot | null> {
  const body: CallBody<"createGuild"> = { name };
  if (templateId) body.template_id = templateId;
  const { guild } = await call("createGuild", { body });
  navigate(`/channels/${guild.id}/${guild.system_channel_id ?? ""}`);
  return store.guilds[guild.id] ?? null;
}

/** The code of an invitation from a link (`…/invite/<code>`) or the bare code. */
export function inviteCode(text: string): string {
  const trimmed = text.trim();
  const m = trimmed.match(/\/invite\/([a-z0-9]+)\/?$/i);
  return (m ? m[1] : trimmed).toLowerCase();
}

export async function joinByInvite(text: string): Promise<void> {
  const code = inviteCode(text);
  const preview = await call("previewInvite", { path: { code } });
  const { guild_id } = await call("joinInvite", { path: { code } });
  navigate(`/channels/${guild_id}/${preview.invite.channel_id}`);
}

export async function createInvite(channelId: Id): Promise<Invite> {
  const { invite } = await call("createInvite", { path: { channel_id: channelId }, body: { max_age_seconds: 604800 } as CallBody<"createInvite"> });
  return invite;
}

// ---- history ----------------------------------------------------------------------------------------

export const PAGE = 50;

export function setOpenChannel(channelId: Id | null): void {
  if (channelId !== openChannel) heldUnread.clear();
  openChannel = channelId;
  if (!channelId) return;
  const list = store.messages[channelId];
  if (!list || !list.fresh) void loadLatest(channelId);
  scheduleAck(channelId);
}

export async function loadLatest(channelId: Id): Promise<void> {
  if (loading.history[channelId]) return;
  loading.history[channelId] = true;
  try {
    await fetchLatest(channelId);
  } finally {
    loading.history[channelId] = false;
  }
}

async function fetchLatest(channelId: Id): Promise<void> {
  const page = await call("listMessages", { path: { channel_id: channelId }, query: { limit: PAGE } });
  applyHistory(store, channelId, page.messages as Message[], page.has_more, false);
  scheduleAck(channelId);
}

// ---- catching up after a new gateway session (docs/client.md "Reconnects and resends") ---------------

/** Pages of what came after a room's newest held message fetched before the room is reloaded at its
 * newest page instead (a long absence in a busy room: the reader starts from the present again). */
export const CATCH_UP_PAGES = 5;
const CATCH_UP_LIMIT = 100;

/** Each room with messages in memory and the newest of them, taken when READY arrives: what a live
 * event adds after that moment is no part of the gap. */
function heldCursors(): [Id, Id][] {
  const out: [Id, Id][] = [];
  for (const [channelId, list] of Object.entries(store.messages)) {
    for (let i = list.items.length - 1; i >= 0; i--) {
      const id = list.items[i].id;
      if (!id.startsWith("pending:")) {
        out.push([channelId, id]);
        break;
      }
    }
  }
  return out;
}

/** A new gateway session (READY after INVALID_SESSION, an expired session, a fresh IDENTIFY) says nothing
 * of the events the last one missed: every room whose messages are held fetches what came after the
 * newest it holds, the open room first, merged by id so nothing shows twice. Read states came with READY. */
async function catchUp(cursors: [Id, Id][]): Promise<void> {
  const open = openChannel;
  if (open && !cursors.some(([c]) => c === open)) void loadLatest(open);
  cursors.sort(([a], [b]) => Number(b === open) - Number(a === open));
  for (const [channelId, after] of cursors) {
    if (session.status !== "signed-in") return;
    await fillGap(channelId, after);
  }
}

/** One's own message found in history with the nonce of a send still waiting for its answer is that send:
 * the pending entry goes, so the message never shows twice while a retry waits out a Retry-After. */
function settleFromHistory(messages: Message[]): void {
  const nonces = new Set(messages.filter((m) => m.nonce && m.author?.id === store.me?.id).map((m) => m.nonce));
  if (nonces.size && outbox.items.some((p) => nonces.has(p.nonce))) {
    outbox.items = outbox.items.filter((p) => !nonces.has(p.nonce));
  }
}

async function fillGap(channelId: Id, after: Id): Promise<void> {
  for (let i = 0; loading.history[channelId] && i < 200; i++) await new Promise((r) => setTimeout(r, 50));
  if (loading.history[channelId] || !store.messages[channelId]) return;
  loading.history[channelId] = true;
  try {
    let cursor = after;
    for (let page = 0; page < CATCH_UP_PAGES; page++) {
      const answer = await call("listMessages", { path: { channel_id: channelId }, query: { after: cursor, limit: CATCH_UP_LIMIT } });
      const list = store.messages[channelId];
      if (!list) return; // the room went away meanwhile
      // Merged as older pages are: by id, without touching what lies before the held messages.
      applyHistory(store, channelId, answer.messages as Message[], list.hasMore, true);
      settleFromHistory(answer.messages as Message[]);
      if (!answer.has_more || !answer.messages.length) {
        list.fresh = true;
        if (channelId === openChannel) scheduleAck(channelId);
        return;
      }
      cursor = answer.messages[0].id; // newest first
    }
    await fetchLatest(channelId);
  } catch (err) {
    // A room that can no longer be read is forgotten; any other failure leaves it stale, so it is
    // fetched again when shown.
    if (err instanceof ApiError && (err.status === 403 || err.status === 404)) delete store.messages[channelId];
  } finally {
    loading.history[channelId] = false;
  }
}

export async function loadOlder(channelId: Id): Promise<void> {
  const list = store.messages[channelId];
  if (!list || !list.hasMore || !list.items.length || loading.history[channelId]) return;
  loading.history[channelId] = true;
  try {
    const page = await call("listMessages", { path: { channel_id: channelId }, query: { before: list.items[0].id, limit: PAGE } });
    applyHistory(store, channelId, page.messages as Message[], page.has_more, true);
  } finally {
    loading.history[channelId] = false;
  }
}

// ---- read marks ---------------------------------------------------------------------------------------

let ackTimer: ReturnType<typeof setTimeout> | null = null;
/** Rooms marked unread by hand: not acknowledged again until the person leaves them and comes back. */
const heldUnread = new Set<Id>();

function scheduleAck(channelId: Id): void {
  if (ackTimer) clearTimeout(ackTimer);
  ackTimer = setTimeout(() => void ack(channelId), 600);
}

async function ack(channelId: Id): Promise<void> {
  if (channelId !== openChannel || document.visibilityState !== "visible" || heldUnread.has(channelId)) return;
  const items = store.messages[channelId]?.items;
  const newest = items?.length ? items[items.length - 1].id : null;
  if (!newest || newest.startsWith("pending:")) return;
  const rs = store.readStates[channelId];
  if (rs && !newer(newest, rs.last_read_message_id) && rs.mention_count === 0) return;
  try {
    const { read_state } = await call("ackChannel", { path: { channel_id: channelId }, body: {
      message_id: newest,
    } });
    store.readStates[channelId] = read_state;
  } catch {
    // A read mark is best effort; the next message tries again.
  }
}

/** "Mark unread" on a message: the read mark moves back to the message before it (the service lets an
 * acknowledgement move backwards), and stays there while the room stays open. */
export async function markUnread(m: Message): Promise<void> {
  const items = store.messages[m.channel_id]?.items ?? [];
  const at = items.findIndex((x) => x.id === m.id);
  let before: Id | null = at > 0 ? items[at - 1].id : null;
  if (!before) {
    const page = await call("listMessages", { path: { channel_id: m.channel_id }, query: { before: m.id, limit: 1 } });
    before = page.messages[0]?.id ?? null;
  }
  if (!before) throw new Error(t("shell.markUnread.first"));
  if (ackTimer) clearTimeout(ackTimer);
  heldUnread.add(m.channel_id);
  const { read_state } = await call("ackChannel", { path: { channel_id: m.channel_id }, body: {
    message_id: before,
  } });
  store.readStates[m.channel_id] = read_state;
}

// ---- sending ------------------------------------------------------------------------------------------

function nonce(): string {
  return `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
}

export async function send(channelId: Id, content: string, replyTo: Id | null, attachments: FileObject[] = []): Promise<void> {
  const pending: Pending = { nonce: nonce(), channelId, content, replyTo, attachments, status: "sending", error: null };
  outbox.items.push(pending);
  await deliver(pending.nonce);
}

export async function retry(nonceValue: string): Promise<void> {
  const p = outbox.items.find((x) => x.nonce === nonceValue);
  if (!p) return;
  p.status = "sending";
  p.error = null;
  await deliver(nonceValue);
}

export function discard(nonceValue: string): void {
  outbox.items = outbox.items.filter((p) => p.nonce !== nonceValue);
}

async function deliver(nonceValue: string): Promise<void> {
  const p = outbox.items.find((x) => x.nonce === nonceValue);
  if (!p) return;
  const body: Record<string, unknown> = { content: p.content, nonce: p.nonce };
  if (p.replyTo) body.reply_to_id = p.replyTo;
  if (p.attachments.length) body.attachment_ids = p.attachments.map((f) => f.id);
  const entry = () => outbox.items.find((x) => x.nonce === nonceValue);
  try {
    // Every attempt carries the same nonce, so the server answers a repeat with the message the first
    // one made (docs/client.md "Reconnects and resends"); the echo on the gateway settles it as well.
    const answer = await resend(
      () => call("sendMessage", { path: { channel_id: p.channelId }, body: body as CallBody<"sendMessage"> }, { retries: 0, timeout: SEND_TIMEOUT_MS }),
      {
        settled: () => entry()?.status !== "sending",
        onRetry: ({ delayMs, error }) => {
          const q = entry();
          if (!q) return;
          const s = Math.max(1, Math.round(delayMs / 1000));
          q.error =
            error.status === 429 ? t("shell.send.rateLimited", { seconds: s })
            : error.status === 0 ? t("shell.send.noAnswer")
            : t("shell.send.busy", { seconds: s });
        },
      },
    );
    if (!answer) return;
    applyEvent(store, "MESSAGE_CREATE", answer.message as Message);
    outbox.items = outbox.items.filter((x) => x.nonce !== nonceValue);
  } catch (err) {
    const q = entry();
    if (q) {
      q.status = "failed";
      q.error = errorText(err);
    }
  }
}

export async function editMessage(m: Message, content: string): Promise<void> {
  const { message } = await call("editMessage", { path: { channel_id: m.channel_id, message_id: m.id }, body: { content } });
  applyEvent(store, "MESSAGE_UPDATE", message as Message);
}

export async function deleteMessage(m: Message): Promise<void> {
  await call("deleteMessage", { path: { channel_id: m.channel_id, message_id: m.id } });
  applyEvent(store, "MESSAGE_DELETE", { id: m.id, channel_id: m.channel_id, guild_id: m.guild_id });
}

export async function setPinned(m: Message, pinned: boolean): Promise<void> {
  if (pinned) await call("pinMessage", { path: { channel_id: m.channel_id, message_id: m.id } });
  else await call("unpinMessage", { path: { channel_id: m.channel_id, message_id: m.id } });
  m.pinned = pinned;
}

export async function toggleReaction(m: Message, emoji: string): Promise<void> {
  const mine = m.reactions.find((r) => r.emoji === emoji)?.me ?? false;
  const path = { channel_id: m.channel_id, message_id: m.id, emoji };
  const d = { channel_id: m.channel_id, guild_id: m.guild_id, message_id: m.id, user_id: store.me?.id ?? "", emoji };
  if (mine) {
    await call("removeOwnReaction", { path });
    applyEvent(store, "MESSAGE_REACTION_REMOVE", d);
  } else {
    await call("addReaction", { path });
    applyEvent(store, "MESSAGE_REACTION_ADD", d);
  }
}

let lastTyping = 0;

/** Tells the room at most every 8 s while one types (the service allows one per 3 s). */
export function typing(channelId: Id): void {
  const now = Date.now();
  if (now - lastTyping < 8000) return;
  lastTyping = now;
  call("sendTyping", { path: { channel_id: channelId } }, { retries: 0 }).catch(() => undefined);
}

/** After a send, typing is told again soon after the service takes it (one per 3 s; a second of margin,
 * since a request that waited in a busy server counts from when it was handled). */
export function sentTyping(): void {
  lastTyping -= 8000 - 4000;
}

// ---- search ------------------------------------------------------------------------------------------

export async function searchMessages(channelId: Id, q: string, before?: Id): Promise<{ messages: Message[]; has_more: boolean }> {
  return (await call("searchMessages", { path: { channel_id: channelId }, query: { q, before, limit: 25 } })) as { messages: Message[]; has_more: boolean };
}

/** Server-wide search (OpenAPI: searchGuildMessages): the rooms the person may read, newest first across them. */
export async function searchServer(guildId: Id, q: string, filters: { channelId?: Id | null; authorId?: Id | null; before?: Id },
): Promise<{ messages: Message[]; has_more: boolean }> {
  const query = { q, channel_id: filters.channelId ?? undefined, author_id: filters.authorId ?? undefined, before: filters.before, limit: 25 };
  return (await call("searchGuildMessages", { path: { guild_id: guildId }, query })) as { messages: Message[]; has_more: boolean };
}

/** The message the list should scroll to and mark; `seq` changes on every jump. */
export const jump = $state({ channelId: null as Id | null, messageId: null as Id | null, seq: 0 });

/** Brings a message of the open room into the list (fetching older pages, at most `pages` of them)
 * and asks the list to show it. False when it is further back than that. */
export async function jumpTo(channelId: Id, messageId: Id, pages = 10): Promise<boolean> {
  const present = () => store.messages[channelId]?.items.some((m) => m.id === messageId) ?? false;
  if (!store.messages[channelId]) await loadLatest(channelId);
  for (let i = 0; i < pages && !present(); i++) {
    const list = store.messages[channelId];
    if (!list?.hasMore) break;
    while (loading.history[channelId]) await new Promise((r) => setTimeout(r, 50));
    const before = list.items.length;
    await loadOlder(channelId);
    if ((store.messages[channelId]?.items.length ?? 0) === before) break;
  }
  if (!present()) return false;
  jump.channelId = channelId;
  jump.messageId = messageId;
  jump.seq += 1;
  return true;
}

// ---- pins -------------------------------------------------------------------------------------------

/** A room's pinned messages, most recently pinned first (OpenAPI: listPins). */
export async function listPins(channelId: Id): Promise<Message[]> {
  const { messages } = await call("listPins", { path: { channel_id: channelId } });
  return messages as Message[];
}

// ---- members ------------------------------------------------------------------------------------------

const membersLoaded = new Set<Id>();

export async function loadMembers(guildId: Id): Promise<void> {
  if (membersLoaded.has(guildId)) return;
  membersLoaded.add(guildId);
  let after: Id | undefined;
  // A member an event told about while a page was on its way is newer than that page (a name changed after
  // the server answered): the page does not write over them.
  const told = new Set<Id>();
  const stop = onDispatch((type, d) => {
    if (type.startsWith("MEMBER_") && d?.guild_id === guildId && typeof d.user?.id === "string") told.add(d.user.id);
  });
  try {
    for (let page = 0; page < 10; page++) {
      const answer = await call("listMembers", { path: { guild_id: guildId }, query: { limit: 100, after } });
      for (const m of answer.members as Member[]) if (!told.has(m.user.id)) applyEvent(store, "MEMBER_UPDATE", m);
      if (!answer.has_more || !answer.members.length) break;
      after = answer.members[answer.members.length - 1].user.id;
    }
  } catch {
    membersLoaded.delete(guildId);
  } finally {
    stop();
  }
}

// ---- friends and conversations (docs/social.md) --------------------------------------------------------
// Each answer is applied at once as the matching event would be; the event that follows changes nothing.

export async function addFriend(username: string): Promise<Relationship> {
  const { relationship } = await call("createRelationship", { body: { username } });
  applyEvent(store, "RELATIONSHIP_ADD", relationship);
  return relationship;
}

/** Accept a request (or ask), or block (OpenAPI: updateRelationship). */
export async function setRelationship(userId: Id, type: "friend" | "blocked"): Promise<Relationship> {
  const { relationship } = await call("updateRelationship", { path: { user_id: userId }, body: { type } });
  applyEvent(store, "RELATIONSHIP_ADD", relationship);
  return relationship;
}

/** Unfriend, decline, cancel or unblock (OpenAPI: deleteRelationship). */
export async function removeRelationship(userId: Id): Promise<void> {
  const type = store.relationships[userId]?.type;
  await call("deleteRelationship", { path: { user_id: userId } });
  if (type) applyEvent(store, "RELATIONSHIP_REMOVE", { id: userId, type });
}

/** Opens (or finds) the 1:1 with a user and shows it. */
export async function openDirect(userId: Id): Promise<Conversation> {
  const channel = (await call("openConversation", { body: { recipient_id: userId } })).channel as Conversation;
  applyEvent(store, "DM_CHANNEL_CREATE", channel);
  navigate(`/channels/@me/${channel.id}`);
  return channel;
}

export async function createGroup(recipientIds: Id[], name: string): Promise<Conversation> {
  const body: CallBody<"createGroupConversation"> = { recipient_ids: recipientIds };
  if (name.trim()) body.name = name.trim();
  const channel = (await call("createGroupConversation", { body })).channel as Conversation;
  applyEvent(store, "DM_CHANNEL_CREATE", channel);
  navigate(`/channels/@me/${channel.id}`);
  return channel;
}

export async function renameGroup(channelId: Id, name: string): Promise<void> {
  const channel = (await call("updateChannel", { path: { channel_id: channelId }, body: { name } })).channel as Conversation;
  applyEvent(store, "DM_CHANNEL_UPDATE", channel);
}

export async function addRecipient(channelId: Id, userId: Id): Promise<void> {
  const channel = (await call("addRecipient", { path: { channel_id: channelId, user_id: userId } })).channel as Conversation;
  applyEvent(store, "DM_CHANNEL_UPDATE", channel);
}

/** The owner removes someone; the service answers DM_CHANNEL_UPDATE with the new members. */
export async function removeRecipient(channelId: Id, userId: Id): Promise<void> {
  await call("removeRecipient", { path: { channel_id: channelId, user_id: userId } });
}

/** Leaving: the conversation goes from this user's list (a conversation of two is deleted for both). */
export async function leaveConversation(channelId: Id): Promise<void> {
  // By path, not `call`: the operation's user_id would be encoded (%40me), and the service's word is @me.
  await request(`/channels/${channelId}/recipients/@me`, { method: "DELETE" });
  applyEvent(store, "DM_CHANNEL_DELETE", { id: channelId });
  navigate("/channels/@me", { replace: true });
}

/** A group's icon: a multipart upload (OpenAPI: setConversationIcon), the owner only. */
export async function setGroupIcon(channelId: Id, file: File): Promise<void> {
  const { channel } = await api.upload<{ channel: Conversation }>(`/channels/${channelId}/icon`, file, {
    retries: 0,
    reword: (envelope) =>
      envelope.code === "file.unsupported_type" ? { ...envelope, message: t("shell.group.iconNotImage") } : envelope,
  });
  applyEvent(store, "DM_CHANNEL_UPDATE", channel);
}

export async function removeGroupIcon(channelId: Id): Promise<void> {
  const channel = (await call("removeConversationIcon", { path: { channel_id: channelId } })).channel as Conversation;
  applyEvent(store, "DM_CHANNEL_UPDATE", channel);
}

// ---- drafts -------------------------------------------------------------------------------------------

export function loadDraft(channelId: Id): string {
  try {
    return localStorage.getItem(`draft:${channelId}`) ?? "";
  } catch {
    return "";
  }
}

export function saveDraft(channelId: Id, text: string): void {
  try {
    if (text) localStorage.setItem(`draft:${channelId}`, text);
    else localStorage.removeItem(`draft:${channelId}`);
  } catch {
    // Private browsing without storage: drafts live only as long as the page.
  }
}

// ---- helpers for screens ------------------------------------------------------------------------------

export function firstRoom(guild: GuildSnapshot): Channel | undefined {
  const rooms = guild.channels.filter((c) => c.type === "text");
  const sys = rooms.find((c) => c.id === guild.system_channel_id);
  return sys ?? rooms.sort((a, b) => a.position - b.position || compareIds(a.id, b.id))[0];
}

export { findChannel };
