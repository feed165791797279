// The connection to the media server (LiveKit) for one voice room or call. livekit-client is large, so
// it is imported here on demand, the first time someone joins voice: the initial bundle stays small
// (docs/client.md). The service hands out the `url` and `token`; this module only carries media.

import type { Room as LkRoom, RemoteParticipant, RemoteTrack, Participant, Track as LkTrack } from "livekit-client";
import type { Id } from "../lib/types";

export interface VideoFeed {
  /** participant identity (the user id) and the source: camera or screen. */
  key: string;
  userId: Id;
  source: "camera" | "screen";
  local: boolean;
  attach(el: HTMLVideoElement): void;
  detach(el: HTMLVideoElement): void;
}

export interface MediaEvents {
  /** The connection dropped after it had been made (the server ended it, the network went away). */
  onDisconnected(): void;
  onReconnecting(): void;
  onReconnected(): void;
  /** The user ids speaking now, loudest first. */
  onSpeakers(userIds: Id[]): void;
  onVideos(feeds: VideoFeed[]): void;
}

export interface MediaLink {
  setMicrophone(on: boolean): Promise<void>;
  setCamera(on: boolean): Promise<void>;
  setScreen(on: boolean): Promise<void>;
  /** Sound off: nothing of the others is heard (self-deafened or deafened by a moderator). */
  setSound(on: boolean): void;
  disconnect(): Promise<void>;
}

export type Connect = (url: string, token: string, events: MediaEvents) => Promise<MediaLink>;

/** How long the client waits for the media server before it says it cannot be reached. */
const CONNECT_TIMEOUT_MS = 15000;

let audioBox: HTMLElement | null = null;

/** Remote sound plays through <audio> elements kept out of sight. */
function audioContainer(): HTMLElement {
  if (!audioBox || !audioBox.isConnected) {
    audioBox = document.createElement("div");
    audioBox.hidden = true;
    audioBox.dataset.voice = "media-audio";
    document.body.append(audioBox);
  }
  return audioBox;
}

export const connectLiveKit: Connect = async (url, token, events) => {
  const lk = await import("livekit-client");
  const { Room, RoomEvent, Track } = lk;
  const room: LkRoom = new Room({ adaptiveStream: true, dynacast: true });
  let soundOn = true;

  const applyVolume = (p: RemoteParticipant) => {
    p.setVolume(soundOn ? 1 : 0);
    p.setVolume(soundOn ? 1 : 0, Track.Source.ScreenShareAudio);
  };

  const feeds = (): VideoFeed[] => {
    const list: VideoFeed[] = [];
    const add = (p: Participant, local: boolean) => {
      for (const pub of p.trackPublications.values()) {
        const track = pub.track as LkTrack | undefined;
        if (!track || track.kind !== Track.Kind.Video || pub.isMuted) continue;
        const source = pub.source === Track.Source.ScreenShare ? "screen" : "camera";
        list.push({
          key: `${p.identity}:${source}`,
          userId: p.identity,
          source,
          local,
          attach: (el) => void track.attach(el),
          detach: (el) => void track.detach(el),
        });
      }
    };
    add(room.localParticipant, true);
    for (const p of room.remoteParticipants.values()) add(p, false);
    return list;
  };
  const videosChanged = () => events.onVideos(feeds());

  room
    .on(RoomEvent.TrackSubscribed, (track: RemoteTrack, _pub, participant: RemoteParticipant) => {
      if (track.kind === Track.Kind.Audio) {
        audioContainer().append(track.attach());
        applyVolume(participant);
      }
      videosChanged();
    })
    .on(RoomEvent.TrackUnsubscribed, (track: RemoteTrack) => {
      for (const el of track.detach()) el.remove();
      videosChanged();
    })
    .on(RoomEvent.TrackMuted, videosChanged)
    .on(RoomEvent.TrackUnmuted, videosChanged)
    .on(RoomEvent.LocalTrackPublished, videosChanged)
    .on(RoomEvent.LocalTrackUnpublished, videosChanged)
    .on(RoomEvent.ParticipantConnected, applyVolume)
    .on(RoomEvent.ParticipantDisconnected, videosChanged)
    .on(RoomEvent.ActiveSpeakersChanged, (speakers: Participant[]) => events.onSpeakers(speakers.map((p) => p.identity)))
    .on(RoomEvent.Reconnecting, () => events.onReconnecting())
    .on(RoomEvent.Reconnected, () => events.onReconnected())
    .on(RoomEvent.Disconnected, () => events.onDisconnected());

  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      room.connect(url, token, { autoSubscribe: true }),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("timeout")), CONNECT_TIMEOUT_MS);
      }),
    ]);
  } catch (err) {
    room.removeAllListeners();
    await room.disconnect().catch(() => undefined);
    throw err;
  } finally {
    clearTimeout(timer);
  }

  return {
    async setMicrophone(on) {
      await room.localParticipant.setMicrophoneEnabled(on);
    },
    async setCamera(on) {
      await room.localParticipant.setCameraEnabled(on);
      videosChanged();
    },
    async setScreen(on) {
      await room.localParticipant.setScreenShareEnabled(on, { audio: true });
      videosChanged();
    },
    setSound(on) {
      soundOn = on;
      for (const p of room.remoteParticipants.values()) applyVolume(p);
    },
    async disconnect() {
      room.removeAllListeners();
      await room.disconnect();
      for (const el of Array.from(audioContainer().children)) el.remove();
    },
  };
};
