import { describe, expect, it } from "vitest";
import { KIB, LIMITS, MAX_BYTES, MIB, MIN_BYTES, changedLimits, fromUnit, limitProblem, limitWords, toUnit, unitFor, type MediaLimits } from "./charts/limits";

const defaults = (): MediaLimits => Object.fromEntries(LIMITS.map((l) => [l.key, l.defaultBytes])) as MediaLimits;

describe("media limits", () => {
  it("knows the five limits with their decided defaults", () => {
    expect(defaults()).toEqual({
      avatar_max_bytes: 8388608, guild_image_max_bytes: 8388608, emoji_max_bytes: 524288,
      sound_max_bytes: 524288, gallery_max_bytes: 1048576,
    });
    for (const l of LIMITS) expect(l.governs).toMatch(/\.$/);
    expect([MIN_BYTES, MAX_BYTES]).toEqual([1024, 104857600]);
  });

  it("shows a size in KiB below 1 MiB and in MiB from there", () => {
    expect(unitFor(512 * KIB)).toBe("KiB");
    expect(unitFor(MIB)).toBe("MiB");
    expect(toUnit(8 * MIB, "MiB")).toBe(8);
    expect(toUnit(1536 * KIB, "MiB")).toBe(1.5);
    expect(toUnit(MIB, "KiB")).toBe(1024);
    expect(limitWords(524288)).toBe("512 KiB");
    expect(limitWords(8388608)).toBe("8 MiB");
    expect(limitWords(1572864)).toBe("1.5 MiB");
  });

  it("turns what was typed into whole bytes", () => {
    expect(fromUnit(2, "MiB")).toBe(2 * MIB);
    expect(fromUnit("0.5", "MiB")).toBe(512 * KIB);
    expect(fromUnit("1,5", "MiB")).toBe(1572864);
    expect(fromUnit(300, "KiB")).toBe(307200);
    expect(fromUnit(0.1, "KiB")).toBe(102);
    expect(fromUnit("", "KiB")).toBeNull();
    expect(fromUnit(null, "MiB")).toBeNull();
    expect(fromUnit("lots", "MiB")).toBeNull();
  });

  it("refuses what the service would refuse, before sending", () => {
    expect(limitProblem(null)).toBe("Enter a size.");
    expect(limitProblem(1023)).toMatch(/1 KiB/);
    expect(limitProblem(1024)).toBeNull();
    expect(limitProblem(100 * MIB)).toBeNull();
    expect(limitProblem(100 * MIB + 1)).toMatch(/100 MiB/);
  });

  it("sends only the values that changed", () => {
    const saved = defaults();
    expect(changedLimits(saved, { ...saved })).toEqual({});
    expect(changedLimits(saved, { ...saved, avatar_max_bytes: 2 * MIB })).toEqual({ avatar_max_bytes: 2 * MIB });
    expect(changedLimits(saved, { emoji_max_bytes: null, sound_max_bytes: 256 * KIB })).toEqual({ sound_max_bytes: 256 * KIB });
  });
});
