// Voice rooms and calls in the client (docs/voice.md, "For client authors"; docs/social.md, "Calls"):
// the reducers of READY and the voice/call events, interface-sound events, the hierarchy of moderation,
// the mixer's limit of eight sounds, and the controller joining, failing to reach the media server,
// following a moderator's mute, move and disconnection, the soundboard and calls.
import { describe, expect, it } from "vitest";
import { ApiError, operationPath, type ApiOperationId, type call as apiCall } from "../src/lib/api";
import { OPERATIONS } from "../src/lib/generated/operations";
import { applyEvent, createState, type State } from "../src/lib/state";
import type { Call, GuildSnapshot, Member, Ready, User, VoiceState } from "../src/lib/types";
import { VoiceController, createView, type Sound } from "../src/voice/controller";
import type { Connect, MediaEvents, MediaLink } from "../src/voice/media";
import { MAX_OVERLAPPING, Mixer, type Playable } from "../src/voice/mixer";
import {
  outranks,
  ownState,
  paletteEvents,
  participantsOf,
  phaseWords,
  ringingCalls,
  ringsFor,
} from "../src/voice/reduce";

const G = "100";
const ROOM = "200";
const OTHER_ROOM = "201";
const DM = "300";

const me: User = {
  id: "1", username: "ann", display_name: "Ann", avatar: null, bio: "", status: "online", custom_status: null,
  custom_status_emoji: null, badges: [], created_at: "2026-01-01T00:00:00Z", email: "a@x.test", totp_enabled: false,
  is_instance_admin: false, locale: "en", timezone: "UTC", onboarding_completed_at: null, last_seen_at: null, password_reset_required: false,
};

function member(userId: string, roles: string[] = []): Member {
  return {
    guild_id: G, nick: null, roles, joined_at: "2026-01-01T00:00:00Z", timeout_until: null, style: null,
    user: { id: userId, username: `u${userId}`, display_name: `User ${userId}`, avatar: null, bio: "", status: "online",
      custom_status: null, custom_status_emoji: null, badges: [], created_at: "2026-01-01T00:00:00Z", deleted: false },
  };
}

function vs(userId: string, channelId: string | null, extra: Partial<VoiceState> = {}): VoiceState {
  return {
    guild_id: G, channel_id: channelId, user_id: userId, member: member(userId), microphone: true, sound: true,
    camera: false, screen: false, server_mute: false, server_deafen: false,
    joined_at: `2026-01-01T00:00:0${userId}Z`, ...extra,
  };
}

function guild(voiceStates: VoiceState[] = []): GuildSnapshot {
  return {
    id: G, name: "Hall", description: null, icon_file_id: null, banner_file_id: null, splash_file_id: null, public: false, public_invite_code: null, is_main: false, owner_id: "9", member_count: 3, system_channel_id: null,
    created_at: "2026-01-01T00:00:00Z", emojis: [], member: member("1", ["r-mod"]),
    roles: [
      { id: G, guild_id: G, name: "@everyone", color: 0, position: 0, permissions: "VIEW_CHANNEL|CONNECT_VOICE|SPEAK", hoist: false, is_default: true, frame_id: null, icon_id: null },
      { id: "r-mod", guild_id: G, name: "Mods", color: 0, position: 5, permissions: "MUTE_MEMBERS", hoist: false, is_default: false, frame_id: null, icon_id: null },
      { id: "r-high", guild_id: G, name: "Admins", color: 0, position: 8, permissions: "", hoist: false, is_default: false, frame_id: null, icon_id: null },
    ],
    channels: [
      { id: ROOM, type: "voice", guild_id: G, name: "Lounge", topic: null, position: 0, parent_id: null, slowmode_seconds: 0,
        user_limit: null, background_file_id: null, icon_file_id: null, dm_owner_id: null, permission_overrides: [], last_message_id: null, created_at: "2026-01-01T00:00:00Z" },
      { id: OTHER_ROOM, type: "voice", guild_id: G, name: "Stage", topic: null, position: 1, parent_id: null, slowmode_seconds: 0,
        user_limit: null, background_file_id: null, icon_file_id: null, dm_owner_id: null, permission_overrides: [], last_message_id: null, created_at: "2026-01-01T00:00:00Z" },
    ],
    voice_states: voiceStates,
  };
}

function call(status: Call["status"], parts: [string, Call["participants"][number]["state"]][], id = "400"): Call {
  return {
    id, channel_id: DM, initiator_id: "2", status, media: "audio", created_at: "2026-01-01T00:00:00Z", started_at: null,
    ended_at: null, duration_seconds: 0, end_reason: null,
    participants: parts.map(([user_id, state]) => ({ user_id, state, microphone: true, camera: false, screen: false, joined_at: null, left_at: null })),
  };
}

function ready(voiceStates: VoiceState[] = [], calls: Call[] = [], sounds: Sound[] = []): Ready {
  return {
    v: 1, session_id: "s", user: me, guilds: [{ ...guild(voiceStates), sounds } as GuildSnapshot], dm_channels: [],
    read_states: [], calls,
  };
}

function readyState(voiceStates: VoiceState[] = [], calls: Call[] = []): State {
  const state = createState();
  applyEvent(state, "READY", ready(voiceStates, calls));
  return state;
}

describe("voice states in the store", () => {
  it("READY lists who is in each voice room and the ongoing calls", () => {
    const state = readyState([vs("2", ROOM), vs("3", OTHER_ROOM), vs("4", ROOM)], [call("ringing", [["2", "joined"], ["1", "ringing"]])]);
    expect(participantsOf(state, G, ROOM).map((v) => v.user_id)).toEqual(["2", "4"]);
    expect(participantsOf(state, G, OTHER_ROOM).map((v) => v.user_id)).toEqual(["3"]);
    expect(state.calls[DM].id).toBe("400");
  });

  it("VOICE_STATE_UPDATE adds, moves, changes and removes a participant live", () => {
    const state = readyState();
    applyEvent(state, "VOICE_STATE_UPDATE", vs("2", ROOM));
    expect(participantsOf(state, G, ROOM).map((v) => v.user_id)).toEqual(["2"]);
    applyEvent(state, "VOICE_STATE_UPDATE", vs("2", OTHER_ROOM, { microphone: false }));
    expect(participantsOf(state, G, ROOM)).toEqual([]);
    expect(participantsOf(state, G, OTHER_ROOM)[0].microphone).toBe(false);
    applyEvent(state, "VOICE_STATE_UPDATE", vs("2", null));
    expect(participantsOf(state, G, OTHER_ROOM)).toEqual([]);
  });

  it("leaving the server or losing it drops its voice states", () => {
    const state = readyState([vs("2", ROOM), vs("3", ROOM)]);
    applyEvent(state, "MEMBER_REMOVE", { guild_id: G, user: member("2").user });
    expect(participantsOf(state, G, ROOM).map((v) => v.user_id)).toEqual(["3"]);
    applyEvent(state, "GUILD_DELETE", { id: G, reason: "deleted" });
    expect(state.voiceStates[G]).toBeUndefined();
  });

  it("a call rings until it is answered, and goes when it is finished", () => {
    const state = readyState();
    applyEvent(state, "CALL_CREATE", call("ringing", [["2", "joined"], ["1", "ringing"]]));
    expect(ringsFor(state.calls[DM], "1")).toBe(true);
    expect(ringingCalls(state).map((c) => c.id)).toEqual(["400"]);
    applyEvent(state, "CALL_UPDATE", call("active", [["2", "joined"], ["1", "joined"]]));
    expect(ringsFor(state.calls[DM], "1")).toBe(false);
    expect(ringingCalls(state)).toEqual([]);
    applyEvent(state, "CALL_DELETE", call("ended", [["2", "left"], ["1", "left"]]));
    expect(state.calls[DM]).toBeUndefined();
  });

  it("a finished call of an older id does not remove a newer ongoing one", () => {
    const state = readyState();
    applyEvent(state, "CALL_CREATE", call("ringing", [["2", "joined"], ["1", "ringing"]], "401"));
    applyEvent(state, "CALL_DELETE", call("missed", [["2", "left"]], "400"));
    expect(state.calls[DM].id).toBe("401");
  });
});

describe("interface sounds and the hierarchy", () => {
  it("names the palette events of a change in the user's room", () => {
    expect(paletteEvents(undefined, vs("2", ROOM), ROOM, "1")).toEqual(["voice_join"]);
    expect(paletteEvents(vs("2", ROOM), vs("2", null), ROOM, "1")).toEqual(["voice_leave"]);
    expect(paletteEvents(vs("2", ROOM), vs("2", ROOM, { screen: true }), ROOM, "1")).toEqual(["stream_start"]);
    expect(paletteEvents(vs("1", ROOM), vs("1", ROOM, { server_mute: true }), ROOM, "1")).toEqual(["mute"]);
    expect(paletteEvents(vs("1", ROOM, { microphone: false }), vs("1", ROOM), ROOM, "1")).toEqual(["unmute"]);
    expect(paletteEvents(vs("1", ROOM), vs("1", ROOM, { sound: false }), ROOM, "1")).toEqual(["deafen"]);
    // Someone else muting themselves is not the user's mute; another room is not the user's room.
    expect(paletteEvents(vs("2", ROOM), vs("2", ROOM, { microphone: false }), ROOM, "1")).toEqual([]);
    expect(paletteEvents(undefined, vs("2", OTHER_ROOM), ROOM, "1")).toEqual([]);
    expect(paletteEvents(undefined, vs("2", ROOM), null, "1")).toEqual([]);
  });

  it("a moderator acts only on members ranked below, never on the owner or themselves", () => {
    const g = guild();
    expect(outranks(g, "1", ["r-mod"], "2", [])).toBe(true);
    expect(outranks(g, "1", ["r-mod"], "2", ["r-high"])).toBe(false);
    expect(outranks(g, "1", ["r-mod"], "3", ["r-mod"])).toBe(false);
    expect(outranks(g, "1", ["r-mod"], "9", [])).toBe(false);
    expect(outranks(g, "1", ["r-mod"], "1", [])).toBe(false);
    expect(outranks(g, "9", [], "2", ["r-high"])).toBe(true);
  });

  it("says the media connection in words", () => {
    expect(phaseWords("connecting")).toBe("Connecting…");
    expect(phaseWords("connected")).toBe("Connected");
    expect(phaseWords("failed")).toBe("Media server unreachable — you are listed but cannot hear anyone");
  });
});

class FakeAudio implements Playable {
  volume = 1;
  paused = false;
  removed = false;
  listeners: Record<string, (() => void)[]> = {};
  constructor(public src: string, private readonly refuse = false) {}
  play() {
    return this.refuse ? Promise.reject(new Error("NotAllowedError")) : Promise.resolve();
  }
  pause() {
    this.paused = true;
  }
  remove() {
    this.removed = true;
  }
  addEventListener(type: string, fn: () => void) {
    (this.listeners[type] ??= []).push(fn);
  }
  emit(type: string) {
    for (const fn of this.listeners[type] ?? []) fn();
  }
}

describe("the mixer", () => {
  it("plays at most eight sounds at once: a ninth stops the oldest", () => {
    const made: FakeAudio[] = [];
    const mixer = new Mixer((src) => {
      const a = new FakeAudio(src);
      made.push(a);
      return a;
    });
    for (let i = 0; i < MAX_OVERLAPPING; i++) mixer.play(`/files/${i}`);
    expect(mixer.count).toBe(8);
    expect(made.some((a) => a.paused)).toBe(false);
    mixer.play("/files/8");
    expect(mixer.count).toBe(8);
    expect(made[0].paused && made[0].removed).toBe(true);
    expect(made.slice(1).every((a) => !a.paused)).toBe(true);
  });

  it("forgets a sound when it ends or cannot play", async () => {
    const made: FakeAudio[] = [];
    const mixer = new Mixer((src) => {
      const a = new FakeAudio(src, src.endsWith("refused"));
      made.push(a);
      return a;
    });
    mixer.play("/files/a");
    mixer.play("/files/refused");
    await Promise.resolve();
    await Promise.resolve();
    expect(mixer.count).toBe(1);
    made[0].emit("ended");
    expect(mixer.count).toBe(0);
  });
});

// ---- the controller ------------------------------------------------------------------------------------

interface Sent {
  method: string;
  path: string;
  body?: unknown;
}

/** A `call` answering "METHOD /path" (the query left out) from `answers`, recording what was sent. */
function fakeApi(answers: Record<string, (body: unknown) => unknown>): { call: typeof apiCall; sent: Sent[] } {
  const sent: Sent[] = [];
  const answer = async (op: ApiOperationId, args: { path?: Record<string, string>; body?: unknown } = {}) => {
    const [method] = OPERATIONS[op];
    const path = operationPath(op, args.path);
    sent.push({ method, path, body: args.body });
    const fn = answers[`${method} ${path}`];
    if (!fn) throw new Error(`unexpected ${method} ${path}`);
    return fn(args.body) as never;
  };
  return { sent, call: answer as unknown as typeof apiCall };
}

function fakeLink() {
  const link = {
    mic: [] as boolean[],
    camera: [] as boolean[],
    sound: [] as boolean[],
    closed: false,
    events: null as MediaEvents | null,
    async setMicrophone(on: boolean) {
      link.mic.push(on);
    },
    async setCamera(on: boolean) {
      link.camera.push(on);
    },
    async setScreen() {},
    setSound(on: boolean) {
      link.sound.push(on);
    },
    async disconnect() {
      link.closed = true;
    },
  };
  return link;
}

function setup(options: { mediaFails?: boolean; answers?: Record<string, (body: unknown) => unknown>; state?: State } = {}) {
  const state = options.state ?? readyState([vs("2", ROOM)]);
  const view = createView();
  const links: ReturnType<typeof fakeLink>[] = [];
  const connects: { url: string; token: string }[] = [];
  const connect: Connect = async (url, token, events) => {
    connects.push({ url, token });
    if (options.mediaFails) throw new Error("could not establish signal connection");
    const link = fakeLink();
    link.events = events;
    links.push(link);
    return link as MediaLink;
  };
  const played: string[] = [];
  const mixer = new Mixer((src) => {
    played.push(src);
    return new FakeAudio(src);
  });
  const api = fakeApi({
    [`POST /channels/${ROOM}/voice/join`]: () => ({ token: "t1", url: "ws://media.test/rtc", room: `guild_${G}_channel_${ROOM}`, voice_state: vs("1", ROOM), push_to_talk_required: false }),
    [`POST /channels/${OTHER_ROOM}/voice/join`]: () => ({ token: "t2", url: "ws://media.test/rtc", room: "x", voice_state: vs("1", OTHER_ROOM), push_to_talk_required: false }),
    [`POST /channels/${ROOM}/voice/leave`]: () => undefined,
    [`GET /guilds/${G}/sounds`]: () => ({ sounds: [] }),
    ...options.answers,
  });
  const controller = new VoiceController({ state, view, call: api.call, connect, mixer });
  return { state, view, api, controller, links, connects, played };
}

const flush = () => new Promise((r) => setTimeout(r, 0));

describe("the voice controller", () => {
  it("joins with the service, connects to the answer's url and token, and publishes the microphone", async () => {
    const t = setup();
    await t.controller.joinRoom(G, ROOM);
    expect(t.api.sent[0]).toMatchObject({ method: "POST", path: `/channels/${ROOM}/voice/join` });
    expect(t.connects).toEqual([{ url: "ws://media.test/rtc", token: "t1" }]);
    expect(t.view).toMatchObject({ kind: "room", guildId: G, channelId: ROOM, phase: "connected" });
    expect(ownState(t.state, G)?.channel_id).toBe(ROOM);
    expect(t.links[0].mic).toEqual([true]);
    expect(t.links[0].sound).toEqual([true]);
  });

  it("stays listed when the media server cannot be reached, and says so", async () => {
    const t = setup({ mediaFails: true });
    await t.controller.joinRoom(G, ROOM);
    expect(t.view.phase).toBe("failed");
    expect(phaseWords(t.view.phase)).toBe("Media server unreachable — you are listed but cannot hear anyone");
    expect(participantsOf(t.state, G, ROOM).map((v) => v.user_id)).toContain("1");
  });

  it("a refused join is shown in words and leaves no voice context", async () => {
    const t = setup({
      answers: {
        [`POST /channels/${ROOM}/voice/join`]: () => {
          throw new ApiError(409, { code: "voice.channel_full", message: "This voice room is full." });
        },
      },
    });
    await t.controller.joinRoom(G, ROOM);
    expect(t.view.kind).toBeNull();
    expect(t.view.error).toBe("This voice room is full.");
  });

  it("a moderator's mute stops the microphone and locks it off", async () => {
    const t = setup();
    await t.controller.joinRoom(G, ROOM);
    const muted = vs("1", ROOM, { server_mute: true });
    applyEvent(t.state, "VOICE_STATE_UPDATE", muted);
    t.controller.onEvent("VOICE_STATE_UPDATE", muted);
    await flush();
    expect(t.controller.flags().serverMute).toBe(true);
    expect(t.links[0].mic.at(-1)).toBe(false);
  });

  it("toggles a flag through the service and the media server", async () => {
    const t = setup({
      answers: { [`PATCH /guilds/${G}/voice-states/@me`]: (body) => ({ voice_state: vs("1", ROOM, body as Partial<VoiceState>) }) },
    });
    await t.controller.joinRoom(G, ROOM);
    await t.controller.toggle("microphone");
    expect(t.api.sent.at(-1)).toEqual({ method: "PATCH", path: `/guilds/${G}/voice-states/@me`, body: { microphone: false } });
    expect(t.controller.flags().microphone).toBe(false);
    expect(t.links[0].mic.at(-1)).toBe(false);
    await t.controller.toggle("sound");
    expect(t.links[0].sound.at(-1)).toBe(false);
  });

  it("follows a move to another room with a token for it, and a disconnection by leaving", async () => {
    const t = setup();
    await t.controller.joinRoom(G, ROOM);
    const moved = vs("1", OTHER_ROOM);
    applyEvent(t.state, "VOICE_STATE_UPDATE", moved);
    t.controller.onEvent("VOICE_STATE_UPDATE", moved);
    await flush();
    expect(t.links[0].closed).toBe(true);
    expect(t.connects.at(-1)).toEqual({ url: "ws://media.test/rtc", token: "t2" });
    expect(t.view.channelId).toBe(OTHER_ROOM);
    const gone = vs("1", null);
    applyEvent(t.state, "VOICE_STATE_UPDATE", gone);
    t.controller.onEvent("VOICE_STATE_UPDATE", gone);
    expect(t.view.kind).toBeNull();
    expect(t.links[1].closed).toBe(true);
    expect(t.view.notice).toMatch(/disconnected/);
  });

  it("leaving tells the service and disconnects from the media server", async () => {
    const t = setup();
    await t.controller.joinRoom(G, ROOM);
    await t.controller.leave();
    expect(t.api.sent.at(-1)).toMatchObject({ method: "POST", path: `/channels/${ROOM}/voice/leave` });
    expect(t.links[0].closed).toBe(true);
    expect(t.view.kind).toBeNull();
    expect(ownState(t.state, G)).toBeNull();
  });

  it("plays a soundboard sound heard in the room and names who played it", async () => {
    const t = setup();
    await t.controller.joinRoom(G, ROOM);
    const sound: Sound = { id: "50", guild_id: G, name: "Horn", emoji: null, kind: "soundboard", palette_event: null, file_id: "77" };
    t.controller.onEvent("SOUNDBOARD_PLAY", { guild_id: G, channel_id: ROOM, user_id: "2", sound });
    expect(t.played).toContain("/files/77");
    expect(t.view.played).toBe("User 2 played Horn");
  });

  it("a deafened user hears no soundboard sound", async () => {
    const t = setup({ state: readyState([vs("2", ROOM), vs("1", ROOM, { server_deafen: true })]) });
    await t.controller.joinRoom(G, ROOM);
    applyEvent(t.state, "VOICE_STATE_UPDATE", vs("1", ROOM, { server_deafen: true }));
    const sound: Sound = { id: "50", guild_id: G, name: "Horn", emoji: null, kind: "soundboard", palette_event: null, file_id: "77" };
    t.controller.onEvent("SOUNDBOARD_PLAY", { guild_id: G, channel_id: ROOM, user_id: "2", sound });
    expect(t.played).not.toContain("/files/77");
  });

  it("plays the server's interface sound when someone joins the user's room", async () => {
    const joinSound: Sound = { id: "60", guild_id: G, name: "Door", emoji: null, kind: "interface", palette_event: "voice_join", file_id: "88" };
    const t = setup({ answers: { [`GET /guilds/${G}/sounds`]: () => ({ sounds: [joinSound] }) } });
    await t.controller.joinRoom(G, ROOM);
    await flush();
    const arrival = vs("3", ROOM);
    applyEvent(t.state, "VOICE_STATE_UPDATE", arrival);
    t.controller.onEvent("VOICE_STATE_UPDATE", arrival);
    expect(t.played).toEqual(["/files/88"]);
    // The same state again (the event after the answer) plays nothing more.
    t.controller.onEvent("VOICE_STATE_UPDATE", arrival);
    expect(t.played).toEqual(["/files/88"]);
  });

  it("accepting a call joins it and connects; the call ending disconnects", async () => {
    const state = readyState([], [call("ringing", [["2", "joined"], ["1", "ringing"]])]);
    const t = setup({
      state,
      answers: {
        [`POST /channels/${DM}/call/join`]: () => ({ call: call("active", [["2", "joined"], ["1", "joined"]]), token: "tc", url: "ws://media.test/rtc", room: `dm_${DM}` }),
      },
    });
    await t.controller.acceptCall(DM);
    expect(t.view).toMatchObject({ kind: "call", channelId: DM, phase: "connected" });
    expect(t.connects).toEqual([{ url: "ws://media.test/rtc", token: "tc" }]);
    const ended = call("ended", [["2", "left"], ["1", "left"]]);
    applyEvent(t.state, "CALL_DELETE", ended);
    t.controller.onEvent("CALL_DELETE", ended);
    expect(t.view.kind).toBeNull();
    expect(t.links[0].closed).toBe(true);
  });

  it("starting a call that someone else started meanwhile joins theirs", async () => {
    const t = setup({
      state: readyState(),
      answers: {
        [`POST /channels/${DM}/call`]: () => {
          throw new ApiError(409, { code: "call.already_exists", message: "A call is already going on." });
        },
        [`POST /channels/${DM}/call/join`]: () => ({ call: call("active", [["2", "joined"], ["1", "joined"]]), token: "tc", url: "ws://m/rtc", room: `dm_${DM}` }),
      },
    });
    await t.controller.startCall(DM);
    expect(t.api.sent.map((s) => s.path)).toEqual([`/channels/${DM}/call`, `/channels/${DM}/call/join`]);
    expect(t.view.kind).toBe("call");
  });

  it("joining a voice room while in a call leaves the call's media first", async () => {
    const t = setup({
      state: readyState([], [call("active", [["2", "joined"], ["1", "joined"]])]),
      answers: {
        [`POST /channels/${DM}/call/join`]: () => ({ call: call("active", [["2", "joined"], ["1", "joined"]]), token: "tc", url: "ws://m/rtc", room: `dm_${DM}` }),
      },
    });
    await t.controller.acceptCall(DM);
    await t.controller.joinRoom(G, ROOM);
    expect(t.links[0].closed).toBe(true);
    expect(t.view).toMatchObject({ kind: "room", channelId: ROOM, phase: "connected" });
  });

  it("a moderator's mute of someone else applies the answer at once", async () => {
    const t = setup({
      answers: { [`PATCH /guilds/${G}/voice-states/2`]: (body) => ({ voice_state: vs("2", ROOM, body as Partial<VoiceState>) }) },
    });
    await t.controller.moderate(G, "2", { server_mute: true });
    expect(t.api.sent.at(-1)).toEqual({ method: "PATCH", path: `/guilds/${G}/voice-states/2`, body: { server_mute: true } });
    expect(participantsOf(t.state, G, ROOM)[0].server_mute).toBe(true);
  });

  it("after a server with a voice room is joined mid-session its voice states are read", async () => {
    const t = setup({ answers: { "GET /meta": () => ({ features: { voice_enabled: true } }),
      [`GET /guilds/${G}/voice-states`]: () => ({ voice_states: [vs("5", ROOM)] }) } });
    t.controller.onEvent("GUILD_CREATE", { id: G, channels: [{ id: ROOM, type: "voice" }] });
    await flush();
    await flush();
    expect(t.api.sent).toContainEqual({ method: "GET", path: `/guilds/${G}/voice-states`, body: undefined });
    expect(participantsOf(t.state, G, ROOM).map((v) => v.user_id)).toEqual(["5"]);
  });

  it("nothing is asked when the instance has no voice or the server no voice room", async () => {
    const t = setup({ answers: { "GET /meta": () => ({ features: { voice_enabled: false } }) } });
    t.controller.onEvent("GUILD_CREATE", { id: G, channels: [{ id: "9", type: "text" }] });
    t.controller.onEvent("GUILD_CREATE", { id: G, channels: [{ id: ROOM, type: "voice" }] });
    await flush();
    await flush();
    expect(t.api.sent.map((x) => `${x.method} ${x.path}`)).toEqual(["GET /meta"]);
  });

  it("an instance without voice is known from the meta, and then nothing is tried", async () => {
    const t = setup({ answers: { "GET /meta": () => ({ features: { voice_enabled: false } }) } });
    expect(t.view.available).toBe(null);
    expect(await t.controller.voiceEnabled()).toBe(false);
    expect(t.view.available).toBe(false);
    await t.controller.joinRoom(G, ROOM);
    await t.controller.startCall("77");
    expect(t.api.sent.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /meta"]);
    expect(t.view).toMatchObject({ kind: null, phase: "idle", error: null, notice: null });
  });

  it("a voice.disabled refusal is remembered, not shown as an error that stays", async () => {
    const t = setup({
      answers: {
        [`POST /channels/${ROOM}/voice/join`]: () => {
          throw new ApiError(403, { code: "voice.disabled", message: "Voice is not enabled on this server." });
        },
      },
    });
    await t.controller.joinRoom(G, ROOM);
    expect(t.view).toMatchObject({ kind: null, phase: "idle", error: null, available: false });
    await t.controller.joinRoom(G, ROOM);
    expect(t.api.sent.filter((r) => r.path.endsWith("/voice/join"))).toHaveLength(1);
  });

  it("a meta that could not be read is asked again, and is not taken for no voice", async () => {
    let fail = true;
    const t = setup({
      answers: {
        "GET /meta": () => {
          if (fail) throw new ApiError(0, { code: "network", message: "offline" });
          return { features: { voice_enabled: true } };
        },
      },
    });
    expect(await t.controller.voiceEnabled()).toBe(false);
    expect(t.view.available).toBe(null);
    fail = false;
    expect(await t.controller.voiceEnabled()).toBe(true);
    expect(t.view.available).toBe(true);
  });
});
