import { describe, expect, it } from "vitest";
import { clip, compactNumber, formatBytes, labelRoom, longDate, niceMax, shortDate, thinLabels, ticks } from "./charts/scale";

describe("chart scale", () => {
  it("rounds the top of an axis up to 1, 2, 2.5 or 5 times a power of ten", () => {
    expect(niceMax(0)).toBe(1);
    expect(niceMax(-3)).toBe(1);
    expect(niceMax(Number.NaN)).toBe(1);
    expect(niceMax(1)).toBe(1);
    expect(niceMax(3)).toBe(5);
    expect(niceMax(7)).toBe(10);
    expect(niceMax(10)).toBe(10);
    expect(niceMax(11)).toBe(20);
    expect(niceMax(23)).toBe(25);
    expect(niceMax(812)).toBe(1000);
    expect(niceMax(41000)).toBe(50000);
  });

  it("puts whole-number ticks from zero to the top", () => {
    expect(ticks(0)).toEqual([0, 1]);
    expect(ticks(2)).toEqual([0, 1, 2]);
    expect(ticks(3)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(ticks(9)).toEqual([0, 2, 4, 6, 8, 10]);
    expect(ticks(23)).toEqual([0, 5, 10, 15, 20, 25]);
    expect(ticks(812)).toEqual([0, 200, 400, 600, 800, 1000]);
    // A round step is preferred: 1000 rather than 1250, 500 rather than 625.
    expect(ticks(2522)).toEqual([0, 1000, 2000, 3000, 4000, 5000]);
    expect(ticks(2400)).toEqual([0, 500, 1000, 1500, 2000, 2500]);
    for (const max of [1, 4, 17, 99, 250, 4999, 123456]) {
      const t = ticks(max);
      expect(t[0]).toBe(0);
      expect(t[t.length - 1]).toBeGreaterThanOrEqual(max);
      expect(t.every(Number.isInteger)).toBe(true);
      expect(t.length).toBeLessThanOrEqual(6);
    }
  });

  it("thins date labels so they fit, always keeping the newest day", () => {
    expect(thinLabels(0, 5)).toEqual([]);
    expect(thinLabels(7, 10)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(thinLabels(30, 10)).toEqual([2, 5, 8, 11, 14, 17, 20, 23, 26, 29]);
    for (const [n, room] of [[365, 5], [90, 4], [30, 1], [365, 12]]) {
      const shown = thinLabels(n, room);
      expect(shown.length).toBeLessThanOrEqual(room);
      expect(shown[shown.length - 1]).toBe(n - 1);
      expect(shown[0]).toBeGreaterThanOrEqual(0);
    }
    // A phone (about 300 px of plot) gets 4 labels of 68 px, a desktop many more.
    expect(labelRoom(300)).toBe(4);
    expect(labelRoom(1000)).toBe(14);
    expect(labelRoom(10)).toBe(1);
  });

  it("writes sizes in binary units", () => {
    expect(formatBytes(0)).toBe("0 bytes");
    expect(formatBytes(1)).toBe("1 byte");
    expect(formatBytes(1023)).toBe("1023 bytes");
    expect(formatBytes(1024)).toBe("1 KiB");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatBytes(524288)).toBe("512 KiB");
    expect(formatBytes(1048575)).toBe("1 MiB");
    expect(formatBytes(73400320)).toBe("70 MiB");
    expect(formatBytes(1048576000)).toBe("1000 MiB");
    expect(formatBytes(5 * 1024 ** 3)).toBe("5 GiB");
    expect(formatBytes(-1)).toBe("—");
  });

  it("writes axis numbers short and dates without moving them across time zones", () => {
    expect(compactNumber(950)).toBe("950");
    expect(compactNumber(1200)).toBe("1.2K");
    expect(compactNumber(50000)).toBe("50K");
    expect(compactNumber(2.5)).toBe("2.5");
    expect(shortDate("2025-01-01")).toBe("Jan 1");
    expect(shortDate("2025-12-31")).toBe("Dec 31");
    expect(longDate("2025-03-09")).toBe("Mar 9, 2025");
    expect(shortDate("soon")).toBe("soon");
  });

  it("cuts long names with an ellipsis", () => {
    expect(clip("Longhouse", 20)).toBe("Longhouse");
    expect(clip("The Great Hall of the Northern Kingdoms", 12)).toBe("The Great H…");
    expect(clip("The Great Hall", 12).length).toBeLessThanOrEqual(12);
  });
});
