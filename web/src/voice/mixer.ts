// Soundboard and interface sounds: each plays in its own <audio> element, at most eight at once — a ninth
// stops the oldest (docs/voice.md, "For client authors").

export const MAX_OVERLAPPING = 8;

/** The part of an <audio> element the mixer uses (tests pass plain objects). */
export interface Playable {
  src: string;
  volume: number;
  play(): Promise<void> | void;
  pause(): void;
  remove?(): void;
  addEventListener(type: "ended" | "error", listener: () => void): void;
}

export class Mixer {
  private playing: Playable[] = [];

  constructor(
    private readonly make: (src: string) => Playable,
    private readonly max = MAX_OVERLAPPING,
    /** What happens to a stopped sound's element (by default it leaves the page). */
    private readonly release: (audio: Playable) => void = (audio) => audio.remove?.(),
  ) {}

  get count(): number {
    return this.playing.length;
  }

  play(src: string, volume = 1): Playable {
    while (this.playing.length >= this.max) this.stop(this.playing[0]);
    const audio = this.make(src);
    audio.volume = volume;
    this.playing.push(audio);
    const done = () => this.stop(audio);
    audio.addEventListener("ended", done);
    audio.addEventListener("error", done);
    try {
      const started = audio.play();
      // A browser may refuse to play before the first click on the page: the sound is skipped.
      if (started && typeof started.catch === "function") started.catch(done);
    } catch {
      done();
    }
    return audio;
  }

  stop(audio: Playable): void {
    const i = this.playing.indexOf(audio);
    if (i < 0) return;
    this.playing.splice(i, 1);
    audio.pause();
    this.release(audio);
  }

  stopAll(): void {
    for (const a of [...this.playing]) this.stop(a);
  }
}

/** A mixer of <audio> elements kept in a hidden box of the page; the last few stay there after they
 * played (paused), so what was heard can be looked at. */
export function pageMixer(): Mixer {
  const make = (src: string) => {
    let box = document.querySelector<HTMLElement>('[data-voice="sounds"]');
    if (!box) {
      box = document.createElement("div");
      box.hidden = true;
      box.dataset.voice = "sounds";
      document.body.append(box);
    }
    const audio = document.createElement("audio");
    audio.src = src;
    audio.preload = "auto";
    box.append(audio);
    while (box.children.length > MAX_OVERLAPPING * 2) box.firstElementChild?.remove();
    return audio;
  };
  return new Mixer(make, MAX_OVERLAPPING, () => undefined);
}
