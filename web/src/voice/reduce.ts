// Voice states and calls as plain data: how READY and the gateway events change them (docs/voice.md,
// "For client authors"; docs/social.md, "Calls"), and the questions the screens ask of them. Pure
// functions over the store's shape, tested without a browser (web/tests/voice.test.ts).

import { t } from "../i18n/index.svelte";
import { displayName, type State } from "../lib/state";
import type { Call, CallParticipant, GuildSnapshot, Id, Ready, VoiceState } from "../lib/types";
import { compareIds } from "../lib/ids";

export function applyVoiceReady(state: State, ready: Ready): void {
  state.voiceStates = {};
  for (const g of ready.guilds) putGuildStates(state, g);
  state.calls = {};
  for (const c of ready.calls ?? []) if (ongoing(c)) state.calls[c.channel_id] = c;
}

function putGuildStates(state: State, g: GuildSnapshot): void {
  const byUser: Record<Id, VoiceState> = {};
  for (const v of g.voice_states ?? []) if (v.channel_id) byUser[v.user_id] = v;
  state.voiceStates[g.id] = byUser;
}

/** The list of a server's voice states (the answer of listVoiceStates) replaces what the client held. */
export function applyVoiceList(state: State, guildId: Id, list: VoiceState[]): void {
  const byUser: Record<Id, VoiceState> = {};
  for (const v of list) if (v.channel_id) byUser[v.user_id] = v;
  state.voiceStates[guildId] = byUser;
}

export function ongoing(call: Call): boolean {
  return call.status === "ringing" || call.status === "active";
}

/** The voice and call events; any other type changes nothing here. */
export function applyVoiceEvent(state: State, type: string, d: any): void {
  switch (type) {
    case "VOICE_STATE_UPDATE": {
      const v = d as VoiceState;
      const byUser = (state.voiceStates[v.guild_id] ??= {});
      if (v.channel_id) byUser[v.user_id] = v;
      else delete byUser[v.user_id];
      break;
    }
    case "CALL_CREATE":
    case "CALL_UPDATE": {
      const c = d as Call;
      if (ongoing(c)) state.calls[c.channel_id] = c;
      else delete state.calls[c.channel_id];
      break;
    }
    case "CALL_DELETE":
      if (state.calls[d.channel_id]?.id === d.id || !state.calls[d.channel_id]) delete state.calls[d.channel_id];
      break;
    case "GUILD_CREATE":
      // A snapshot carries no voice states yet; the list is read after it (voice/session.svelte.ts).
      state.voiceStates[d.id] ??= {};
      break;
    case "GUILD_DELETE":
      delete state.voiceStates[d.id];
      break;
    case "MEMBER_REMOVE": {
      const byUser = state.voiceStates[d.guild_id];
      if (byUser && d.user?.id) delete byUser[d.user.id];
      break;
    }
    case "DM_CHANNEL_DELETE":
      delete state.calls[d.id];
      break;
  }
}

/** The participants of one voice room, earliest joined first. */
export function participantsOf(state: State, guildId: Id, channelId: Id): VoiceState[] {
  return Object.values(state.voiceStates[guildId] ?? {})
    .filter((v) => v.channel_id === channelId)
    .sort((a, b) => a.joined_at.localeCompare(b.joined_at) || compareIds(a.user_id, b.user_id));
}

/** A participant's name: the member of their voice state (the member list may not be loaded), else what the
 * store knows. */
export function voiceName(state: State, guildId: Id, userId: Id): string {
  const m = state.voiceStates[guildId]?.[userId]?.member;
  return m?.nick || m?.user.display_name || displayName(state, userId, guildId);
}

/** The user's own voice state in a server, if they are in one of its voice rooms. */
export function ownState(state: State, guildId: Id | null): VoiceState | null {
  if (!guildId || !state.me) return null;
  return state.voiceStates[guildId]?.[state.me.id] ?? null;
}

export function participantOf(call: Call | undefined, userId: Id | undefined): CallParticipant | undefined {
  return userId ? call?.participants.find((p) => p.user_id === userId) : undefined;
}

/** The call of a conversation rings for the user (they may accept or decline it). */
export function ringsFor(call: Call | undefined, userId: Id | undefined): boolean {
  return !!call && ongoing(call) && participantOf(call, userId)?.state === "ringing";
}

/** Conversations whose call rings for the user now, newest first. */
export function ringingCalls(state: State): Call[] {
  return Object.values(state.calls)
    .filter((c) => ringsFor(c, state.me?.id))
    .sort((a, b) => compareIds(b.id, a.id));
}

export function joinedIn(call: Call | undefined): CallParticipant[] {
  return call ? call.participants.filter((p) => p.state === "joined") : [];
}

/** Interface-sound events (palette events) that a change of a voice state in the user's room makes. */
export function paletteEvents(before: VoiceState | undefined, after: VoiceState, myRoom: Id | null, me: Id | undefined): string[] {
  if (!myRoom) return [];
  const wasHere = before?.channel_id === myRoom;
  const isHere = after.channel_id === myRoom;
  const events: string[] = [];
  if (!wasHere && isHere) events.push("voice_join");
  else if (wasHere && !isHere) events.push("voice_leave");
  else if (wasHere && isHere && before) {
    if (!before.screen && after.screen) events.push("stream_start");
    if (before.screen && !after.screen) events.push("stream_end");
    // One's own microphone and sound: a moderator's change counts too.
    if (after.user_id === me) {
      const mutedBefore = !before.microphone || before.server_mute;
      const mutedAfter = !after.microphone || after.server_mute;
      if (!mutedBefore && mutedAfter) events.push("mute");
      if (mutedBefore && !mutedAfter) events.push("unmute");
      const deafBefore = !before.sound || before.server_deafen;
      const deafAfter = !after.sound || after.server_deafen;
      if (!deafBefore && deafAfter) events.push("deafen");
      if (deafBefore && !deafAfter) events.push("undeafen");
    }
  }
  return events;
}

/** The highest role position of a member (the owner outranks everyone): the hierarchy of moderation. */
export function rank(guild: GuildSnapshot, userId: Id, roleIds: Id[]): number {
  if (guild.owner_id === userId) return Number.POSITIVE_INFINITY;
  let top = 0;
  for (const r of guild.roles) if (roleIds.includes(r.id) && r.position > top) top = r.position;
  return top;
}

/** Whether the user may act on a participant: never on themselves or the owner, only below their rank. */
export function outranks(guild: GuildSnapshot, me: Id, myRoles: Id[], target: Id, targetRoles: Id[]): boolean {
  if (me === target || guild.owner_id === target) return false;
  return rank(guild, me, myRoles) > rank(guild, target, targetRoles);
}

export type MediaPhase = "idle" | "joining" | "connecting" | "connected" | "reconnecting" | "failed";

/** The connection to the media server in words. */
export function phaseWords(phase: MediaPhase): string {
  switch (phase) {
    case "joining":
    case "connecting":
      return t("voice.phase.connecting");
    case "connected":
      return t("voice.phase.connected");
    case "reconnecting":
      return t("voice.phase.reconnecting");
    case "failed":
      return t("voice.phase.failed");
    default:
      return t("voice.phase.idle");
  }
}

