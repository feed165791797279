// What the client does in voice: joining a voice room or a call with the service (OpenAPI: joinVoice,
// startCall, joinCall), connecting to the media server with the answer's `url` and `token`, the own
// flags, following the events about oneself (a moderator's mute, move or disconnection; the call
// ending), the soundboard and the interface sounds (docs/voice.md, "For client authors"). Plain
// TypeScript over injected parts, so it is tested without a browser (web/tests/voice.test.ts); the
// screens use the reactive instance of session.svelte.ts.

import { t } from "../i18n/index.svelte";
import { ApiError, type call, errorText } from "../lib/api";
import type { Dispatch } from "../lib/dispatch";
import { applyEvent, type State } from "../lib/state";
import type { Call, Id, VoiceState } from "../lib/types";
import type { Connect, MediaLink, VideoFeed } from "./media";
import type { Mixer } from "./mixer";
import { notificationFor } from "../lib/notify";
import { applyVoiceList, ongoing, ownState, paletteEvents, participantOf, voiceName, type MediaPhase } from "./reduce";

/** A sound of a server (OpenAPI: listSounds). */
export interface Sound {
  id: Id;
  guild_id: Id;
  name: string;
  emoji: string | null;
  kind: "soundboard" | "interface";
  palette_event: string | null;
  file_id: Id;
  duration_ms?: number | null;
}

export type Flag = "microphone" | "sound" | "camera" | "screen";

/** What the screens show; the reactive copy lives in session.svelte.ts. */
export interface VoiceView {
  kind: null | "room" | "call";
  /** The server of the voice room (null in a call). */
  guildId: Id | null;
  /** The voice room, or the conversation of the call. */
  channelId: Id | null;
  phase: MediaPhase;
  /** The last refusal or failure in words. */
  error: string | null;
  /** Something that happened to the user, in words (a moderator disconnected them, the call ended). */
  notice: string | null;
  pushToTalk: boolean;
  talking: boolean;
  /** In a call the sound is only the client's own (calls have no deafening). */
  callSound: boolean;
  speaking: Id[];
  videos: VideoFeed[];
  /** `<name> played <sound>`: the last soundboard sound heard. */
  played: string | null;
  busy: boolean;
  /** Whether this instance has voice at all (getMeta `features.voice_enabled`): null until known. Without
   * it voice rooms and call buttons show "Voice is not set up on this server" and nothing is tried. */
  available: boolean | null;
}

export function createView(): VoiceView {
  return {
    kind: null,
    guildId: null,
    channelId: null,
    phase: "idle",
    error: null,
    notice: null,
    pushToTalk: false,
    talking: false,
    callSound: true,
    speaking: [],
    videos: [],
    played: null,
    busy: false,
    available: null,
  };
}

export interface Deps {
  state: State;
  view: VoiceView;
  call: typeof call;
  connect: Connect;
  mixer: Mixer;
  /** Whether a room is on screen now (a message there needs no sound). */
  showing?: (channelId: Id) => boolean;
}

interface Credentials {
  token: string;
  url: string;
}

export interface Flags {
  microphone: boolean;
  sound: boolean;
  camera: boolean;
  screen: boolean;
  serverMute: boolean;
  serverDeafen: boolean;
}

const INTERFACE_VOLUME = 0.6;

export class VoiceController {
  private link: MediaLink | null = null;
  /** Counts connections: an answer for an older one is dropped. */
  private generation = 0;
  /** The voice states of the user's room as last seen, to tell what changed (interface sounds). */
  private seen: Record<Id, VoiceState> = {};
  readonly soundboard: Record<Id, Sound[]> = {};
  private interfaceSounds: Record<Id, Sound[]> = {};
  private loadingInterface = new Set<Id>();

  constructor(private readonly deps: Deps) {}

  private voiceEnabledOnce: Promise<boolean> | null = null;

  /** Whether the instance offers voice (`getMeta`), asked once (again after a failed request); the
   * answer is kept in the view for the screens. */
  voiceEnabled(): Promise<boolean> {
    this.voiceEnabledOnce ??= this.deps
      .call("getMeta")
      .then((meta) => (this.view.available = meta.features?.voice_enabled === true))
      .catch(() => {
        this.voiceEnabledOnce = null;
        return false;
      });
    return this.voiceEnabledOnce;
  }

  /** A `voice.disabled` refusal: the instance has no media server. The screens say so where voice is
   * offered, so it is not also shown as an error that stays. */
  private disabledBy(err: unknown): boolean {
    if (!(err instanceof ApiError && err.code === "voice.disabled")) return false;
    this.view.available = false;
    return true;
  }

  private get view(): VoiceView {
    return this.deps.view;
  }

  private get me(): Id | undefined {
    return this.deps.state.me?.id;
  }

  /** The current call of the user, when in one. */
  call(): Call | undefined {
    return this.view.kind === "call" && this.view.channelId ? this.deps.state.calls[this.view.channelId] : undefined;
  }

  /** The flags as the service knows them (the own voice state, or the own call entry). */
  flags(): Flags {
    const v = this.view;
    if (v.kind === "room") {
      const s = ownState(this.deps.state, v.guildId);
      return {
        microphone: !!s?.microphone,
        sound: s ? s.sound : true,
        camera: !!s?.camera,
        screen: !!s?.screen,
        serverMute: !!s?.server_mute,
        serverDeafen: !!s?.server_deafen,
      };
    }
    const p = participantOf(this.call(), this.me);
    return {
      microphone: !!p?.microphone,
      sound: v.callSound,
      camera: !!p?.camera,
      screen: !!p?.screen,
      serverMute: false,
      serverDeafen: false,
    };
  }

  // ---- joining and leaving -------------------------------------------------------------------------

  async joinRoom(guildId: Id, channelId: Id): Promise<void> {
    const v = this.view;
    if (v.available === false) return;
    if (v.kind === "room" && v.channelId === channelId && v.phase !== "failed") return;
    await this.dropMedia();
    Object.assign(v, { kind: "room", guildId, channelId, phase: "joining", error: null, notice: null, played: null });
    this.seen = {};
    try {
      const answer = await this.deps.call("joinVoice", { path: { channel_id: channelId } });
      if (v.channelId !== channelId) return;
      // A voice state's member is the types.ts Member, which the document leaves open.
      const voiceState = answer.voice_state as VoiceState;
      applyEvent(this.deps.state, "VOICE_STATE_UPDATE", voiceState);
      v.pushToTalk = answer.push_to_talk_required;
      this.note(voiceState);
      void this.loadInterfaceSounds(guildId);
      await this.connectMedia(answer);
    } catch (err) {
      if (v.channelId !== channelId) return;
      this.reset();
      if (!this.disabledBy(err)) v.error = errorText(err);
    }
  }

  async startCall(conversationId: Id, media: "audio" | "video" = "audio"): Promise<void> {
    await this.enterCall(conversationId, async () => {
      try {
        return await this.deps.call("startCall", { path: { channel_id: conversationId }, body: { media } });
      } catch (err) {
        // Someone started one meanwhile: join theirs.
        if (err instanceof ApiError && err.code === "call.already_exists") {
          return this.deps.call("joinCall", { path: { channel_id: conversationId } });
        }
        throw err;
      }
    });
  }

  async acceptCall(conversationId: Id): Promise<void> {
    await this.enterCall(conversationId, () =>
      this.deps.call("joinCall", { path: { channel_id: conversationId } }),
    );
  }

  private async enterCall(conversationId: Id, ask: () => Promise<Credentials & { call: Call }>): Promise<void> {
    const v = this.view;
    if (v.available === false) return;
    await this.dropMedia();
    Object.assign(v, {
      kind: "call", guildId: null, channelId: conversationId, phase: "joining", error: null, notice: null,
      pushToTalk: false, callSound: true, played: null,
    });
    try {
      const answer = await ask();
      if (v.channelId !== conversationId) return;
      applyEvent(this.deps.state, "CALL_UPDATE", answer.call);
      await this.connectMedia(answer);
    } catch (err) {
      if (v.channelId !== conversationId) return;
      this.reset();
      if (!this.disabledBy(err)) v.error = errorText(err);
    }
  }

  async declineCall(conversationId: Id): Promise<void> {
    try {
      const { call } = await this.deps.call("declineCall", { path: { channel_id: conversationId } });
      applyEvent(this.deps.state, "CALL_UPDATE", call);
    } catch (err) {
      this.view.error = errorText(err);
    }
  }

  /** Leaves the voice room or the call: the service first, then the media server. */
  async leave(): Promise<void> {
    const v = this.view;
    const { kind, channelId, guildId } = v;
    if (!kind || !channelId) {
      this.reset();
      return;
    }
    if (kind === "room" && guildId) this.palette(guildId, "voice_leave");
    await this.dropMedia();
    this.reset();
    try {
      if (kind === "room" && guildId) {
        await this.leaveListed(guildId, channelId);
      } else {
        const { call } = await this.deps.call("leaveCall", { path: { channel_id: channelId } });
        applyEvent(this.deps.state, "CALL_UPDATE", call);
      }
    } catch (err) {
      // Not listed any more is what leaving wanted.
      if (!(err instanceof ApiError && (err.code === "call.invalid_state" || err.code === "call.not_found"))) v.error = errorText(err);
    }
  }

  /** Takes the user out of a voice room the page is not connected to (listed from another tab or from
   * before a reload); the list follows at once. */
  async leaveListed(guildId: Id, channelId: Id): Promise<void> {
    const me = this.me;
    const mine = me ? this.deps.state.voiceStates[guildId]?.[me] : undefined;
    if (mine && mine.channel_id === channelId) applyEvent(this.deps.state, "VOICE_STATE_UPDATE", { ...mine, channel_id: null });
    await this.deps.call("leaveVoice", { path: { channel_id: channelId } });
  }

  /** Forgets the voice context without telling the service (it already knows, or the session ended). */
  reset(): void {
    this.generation++;
    const link = this.link;
    this.link = null;
    if (link) void link.disconnect().catch(() => undefined);
    Object.assign(this.view, {
      kind: null, guildId: null, channelId: null, phase: "idle", pushToTalk: false, talking: false,
      speaking: [], videos: [], busy: false, callSound: true,
    });
    this.seen = {};
  }

  private async dropMedia(): Promise<void> {
    this.generation++;
    const link = this.link;
    this.link = null;
    this.view.speaking = [];
    this.view.videos = [];
    if (link) await link.disconnect().catch(() => undefined);
  }

  private async connectMedia(credentials: Credentials): Promise<void> {
    const v = this.view;
    const generation = ++this.generation;
    v.phase = "connecting";
    let link: MediaLink;
    try {
      link = await this.deps.connect(credentials.url, credentials.token, {
        onDisconnected: () => {
          if (generation !== this.generation) return;
          this.link = null;
          v.phase = "failed";
          v.speaking = [];
          v.videos = [];
        },
        onReconnecting: () => {
          if (generation === this.generation) v.phase = "reconnecting";
        },
        onReconnected: () => {
          if (generation === this.generation) v.phase = "connected";
        },
        onSpeakers: (ids) => {
          if (generation === this.generation) v.speaking = ids;
        },
        onVideos: (feeds) => {
          if (generation === this.generation) v.videos = feeds;
        },
      });
    } catch {
      if (generation === this.generation) v.phase = "failed";
      return;
    }
    if (generation !== this.generation) {
      await link.disconnect().catch(() => undefined);
      return;
    }
    this.link = link;
    v.phase = "connected";
    await this.applyLocal();
  }

  /** Brings the media server in line with the flags: what is published and whether others are heard. */
  async applyLocal(): Promise<void> {
    const link = this.link;
    if (!link) return;
    const f = this.flags();
    const v = this.view;
    link.setSound(f.sound && !f.serverDeafen);
    const talk = f.microphone && !f.serverMute && (!v.pushToTalk || v.talking);
    try {
      await link.setMicrophone(talk);
    } catch (err) {
      v.error = t("voice.error.microphone", { reason: errorText(err) });
    }
    try {
      await link.setCamera(f.camera);
    } catch (err) {
      v.error = t("voice.error.camera", { reason: errorText(err) });
      if (f.camera) await this.setFlag("camera", false, false);
    }
    try {
      await link.setScreen(f.screen);
    } catch (err) {
      v.error = t("voice.error.screen", { reason: errorText(err) });
      if (f.screen) await this.setFlag("screen", false, false);
    }
  }

  // ---- own flags -----------------------------------------------------------------------------------

  async toggle(flag: Flag): Promise<void> {
    const current = this.flags()[flag];
    await this.setFlag(flag, !current, true);
  }

  async setFlag(flag: Flag, value: boolean, publish: boolean): Promise<void> {
    const v = this.view;
    if (!v.kind || !v.channelId) return;
    v.error = null;
    try {
      if (v.kind === "room" && v.guildId) {
        const voice_state = (await this.deps.call("updateOwnVoiceState", { path: { guild_id: v.guildId }, body: { [flag]: value } })).voice_state as VoiceState;
        applyEvent(this.deps.state, "VOICE_STATE_UPDATE", voice_state);
        this.note(voice_state);
      } else if (flag === "sound") {
        v.callSound = value;
      } else {
        const { call } = await this.deps.call("updateCallFlags", { path: { channel_id: v.channelId }, body: { [flag]: value } });
        applyEvent(this.deps.state, "CALL_UPDATE", call);
      }
    } catch (err) {
      v.error = errorText(err);
      return;
    }
    if (publish) await this.applyLocal();
  }

  /** Push to talk: the microphone carries sound only while the Talk control is held. */
  async hold(talking: boolean): Promise<void> {
    if (this.view.talking === talking) return;
    this.view.talking = talking;
    await this.applyLocal();
  }

  // ---- moderation (OpenAPI: updateVoiceState, moveVoiceState, disconnectVoiceState) ----------------

  async moderate(guildId: Id, userId: Id, change: { server_mute?: boolean; server_deafen?: boolean }): Promise<void> {
    const voice_state = (await this.deps.call("updateVoiceState", { path: { guild_id: guildId, user_id: userId }, body: change })).voice_state as VoiceState;
    this.observe("VOICE_STATE_UPDATE", voice_state);
  }

  async move(guildId: Id, userId: Id, channelId: Id): Promise<void> {
    const { voice_state: moved } = await this.deps.call("moveVoiceState", { path: { guild_id: guildId, user_id: userId }, body: {
      channel_id: channelId,
    } });
    this.observe("VOICE_STATE_UPDATE", moved as VoiceState);
  }

  async disconnect(guildId: Id, userId: Id): Promise<void> {
    const known = this.deps.state.voiceStates[guildId]?.[userId];
    await this.deps.call("disconnectVoiceState", { path: { guild_id: guildId, user_id: userId } });
    if (known) this.observe("VOICE_STATE_UPDATE", { ...known, channel_id: null });
  }

  /** Applies an answer as its event would be, and acts on it like on the event. */
  private observe(...dispatch: Dispatch): void {
    applyEvent(this.deps.state, ...dispatch);
    this.onEvent(dispatch[0], dispatch[1]);
  }

  // ---- sounds --------------------------------------------------------------------------------------

  async loadSoundboard(guildId: Id): Promise<Sound[]> {
    const { sounds } = await this.deps.call("listSounds", { path: { guild_id: guildId }, query: { kind: "soundboard" } });
    this.soundboard[guildId] = sounds;
    return sounds;
  }

  private async loadInterfaceSounds(guildId: Id): Promise<void> {
    if (this.interfaceSounds[guildId] || this.loadingInterface.has(guildId)) return;
    this.loadingInterface.add(guildId);
    try {
      const { sounds } = await this.deps.call("listSounds", { path: { guild_id: guildId }, query: { kind: "interface" } });
      this.interfaceSounds[guildId] = sounds;
    } catch {
      // Interface sounds are a nicety: without the list the client stays quiet.
    } finally {
      this.loadingInterface.delete(guildId);
    }
  }

  /** Plays a soundboard sound to the voice room; a refusal (429 included) comes back in words. */
  async play(guildId: Id, soundId: Id): Promise<void> {
    await this.deps.call("playSound", { path: { guild_id: guildId, sound_id: soundId } }, { retries: 0 });
  }

  private hearing(): boolean {
    const f = this.flags();
    return f.sound && !f.serverDeafen;
  }

  /** The server's interface sound for a palette event (Appendix C.2 of the contract), when it has one. */
  palette(guildId: Id, event: string): boolean {
    if (this.view.kind && !this.hearing()) return false;
    const sound = this.interfaceSounds[guildId]?.find((s) => s.palette_event === event);
    if (!sound) return false;
    this.deps.mixer.play(`/files/${sound.file_id}`, INTERFACE_VOLUME);
    return true;
  }

  /** A voice state of the user's room: remembers it and plays what changed. */
  private note(after: VoiceState): void {
    const v = this.view;
    if (v.kind !== "room" || after.guild_id !== v.guildId) return;
    const before = this.seen[after.user_id];
    if (after.channel_id === v.channelId) this.seen[after.user_id] = after;
    else delete this.seen[after.user_id];
    if (!before && after.user_id === this.me) return; // one's own arrival: the join itself
    for (const event of paletteEvents(before, after, v.channelId, this.me)) this.palette(after.guild_id, event);
  }

  // ---- events --------------------------------------------------------------------------------------

  /** Called with each gateway dispatch after the store applied it. */
  onEvent(type: string, d: any): void {
    const v = this.view;
    switch (type) {
      case "READY":
        this.afterReady(d);
        break;
      case "GUILD_CREATE":
        // A server joined mid-session carries no voice states: read them, but only where there is a voice
        // room and the instance has voice at all (a refused request would be an error for nothing).
        if (!(d.channels ?? []).some((c: { type: string }) => c.type === "voice")) break;
        void this.voiceEnabled()
          .then((enabled) => (enabled ? this.deps.call("listVoiceStates", { path: { guild_id: d.id } }) : null))
          .then((answer) => answer && applyVoiceList(this.deps.state, d.id, answer.voice_states as VoiceState[]))
          .catch(() => undefined);
        break;
      case "GUILD_DELETE":
        if (v.kind === "room" && v.guildId === d.id) {
          this.reset();
          v.notice = t("voice.notice.removed");
        }
        break;
      case "GUILD_SOUNDS_UPDATE":
        if (Array.isArray(d.sounds)) {
          this.soundboard[d.guild_id] = (d.sounds as Sound[]).filter((s) => s.kind === "soundboard");
          this.interfaceSounds[d.guild_id] = (d.sounds as Sound[]).filter((s) => s.kind === "interface");
        } else {
          delete this.interfaceSounds[d.guild_id];
        }
        break;
      case "VOICE_STATE_UPDATE":
        this.onVoiceState(d as VoiceState);
        break;
      case "CALL_UPDATE":
      case "CALL_DELETE":
        this.onCall(d as Call);
        break;
      case "SOUNDBOARD_PLAY":
        if (v.kind === "room" && d.channel_id === v.channelId && d.sound) {
          v.played = t("voice.notice.played", { name: voiceName(this.deps.state, d.guild_id, d.user_id), sound: d.sound.name });
          if (this.hearing()) this.deps.mixer.play(`/files/${d.sound.file_id}`);
        }
        break;
      case "MESSAGE_CREATE": {
        if (!d.guild_id || !d.author || d.author.id === this.me) break;
        // The person's notification level decides (lib/notify.ts), as for desktop notifications and Web Push.
        const kind = notificationFor(this.deps.state.notificationSettings, d, this.me);
        if (kind === "mention") this.palette(d.guild_id, "mention");
        else if (kind === "message" && !this.deps.showing?.(d.channel_id)) this.palette(d.guild_id, "message");
        break;
      }
    }
  }

  private afterReady(ready: { guilds?: { id: Id; sounds?: Sound[] }[] }): void {
    for (const g of ready.guilds ?? []) {
      if (!Array.isArray(g.sounds)) continue;
      this.interfaceSounds[g.id] = g.sounds.filter((s) => s.kind === "interface");
      this.soundboard[g.id] = g.sounds.filter((s) => s.kind === "soundboard");
    }
    const v = this.view;
    if (v.kind === "room" && v.phase !== "joining") {
      const mine = ownState(this.deps.state, v.guildId);
      if (!mine || mine.channel_id !== v.channelId) {
        this.reset();
        v.notice = t("voice.notice.offline");
      } else {
        this.seen = {};
        for (const s of Object.values(this.deps.state.voiceStates[v.guildId ?? ""] ?? {})) if (s.channel_id === v.channelId) this.seen[s.user_id] = s;
      }
    } else if (v.kind === "call" && v.phase !== "joining") {
      if (participantOf(this.call(), this.me)?.state !== "joined") {
        this.reset();
        v.notice = t("voice.notice.callEnded");
      }
    }
  }

  private onVoiceState(s: VoiceState): void {
    const v = this.view;
    if (s.user_id === this.me && v.kind === "room" && s.guild_id === v.guildId && v.phase !== "joining") {
      if (!s.channel_id) {
        this.palette(s.guild_id, "voice_leave");
        this.reset();
        v.notice = t("voice.notice.disconnected");
        return;
      }
      if (s.channel_id !== v.channelId) {
        // A moderator moved the user: the service answers a token for the new room without changing the state.
        void this.followMove(s.guild_id, s.channel_id);
        return;
      }
      this.note(s);
      void this.applyLocal();
      return;
    }
    if (s.user_id === this.me && v.kind === "room" && s.guild_id !== v.guildId && s.channel_id && v.phase !== "joining") {
      // Joined another server's voice room elsewhere: this one was left by the service.
      this.reset();
      v.notice = t("voice.notice.elsewhere");
      return;
    }
    if (s.user_id === this.me && v.kind === "call" && s.channel_id && v.phase !== "joining") {
      this.reset();
      v.notice = t("voice.notice.callLeft");

      return;
    }
    this.note(s);
  }

  private async followMove(guildId: Id, channelId: Id): Promise<void> {
    const v = this.view;
    await this.dropMedia();
    Object.assign(v, { channelId, phase: "joining", notice: "A moderator moved you to another voice room." });
    this.seen = {};
    try {
      const answer = await this.deps.call("joinVoice", { path: { channel_id: channelId } });
      if (v.channelId !== channelId || v.guildId !== guildId) return;
      v.pushToTalk = answer.push_to_talk_required;
      for (const s of Object.values(this.deps.state.voiceStates[guildId] ?? {})) if (s.channel_id === channelId) this.seen[s.user_id] = s;
      await this.connectMedia(answer);
    } catch (err) {
      if (v.channelId !== channelId) return;
      v.phase = "failed";
      v.error = errorText(err);
    }
  }

  private onCall(call: Call): void {
    const v = this.view;
    if (v.kind !== "call" || call.channel_id !== v.channelId || v.phase === "joining") return;
    if (!ongoing(call) || participantOf(call, this.me)?.state !== "joined") {
      this.reset();
      v.notice = t("voice.notice.callEnded");
    }
  }
}
