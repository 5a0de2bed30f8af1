import { describe, expect, test } from "bun:test";
import {
  contrastRatio,
  contrastTextColor,
  DARK_SURFACE,
  darkModeColor,
  deriveBrandColors,
  dominantColor,
  hexToRgb,
  isNearGrey,
  normalizeHex,
  relativeLuminance,
  rgbToHsl,
} from "../../../src/catalog/colors";

const hue = (hex: string) => rgbToHsl(hexToRgb(hex))[0];
const hueDistance = (a: string, b: string) => {
  const d = Math.abs(hue(a) - hue(b)) % 360;
  return Math.min(d, 360 - d);
};

describe("hex parsing", () => {
  test("normalizes shorthand, case, # and alpha", () => {
    expect(normalizeHex("#ABC")).toBe("aabbcc");
    expect(normalizeHex("FF0000")).toBe("ff0000");
    expect(normalizeHex("#11223344")).toBe("112233");
    expect(normalizeHex("#fffa")).toBe("ffffff");
    expect(normalizeHex("red")).toBeNull();
    expect(normalizeHex("#12345")).toBeNull();
    expect(normalizeHex("")).toBeNull();
  });
});

describe("WCAG contrast", () => {
  test("luminance of black and white", () => {
    expect(relativeLuminance("000000")).toBe(0);
    expect(relativeLuminance("ffffff")).toBeCloseTo(1, 10);
  });
  test("known ratios", () => {
    expect(contrastRatio("000000", "ffffff")).toBeCloseTo(21, 5);
    expect(contrastRatio("ffffff", "ffffff")).toBeCloseTo(1, 5);
    expect(contrastRatio("777777", "ffffff")).toBeCloseTo(4.48, 2);
    // symmetric
    expect(contrastRatio("1db954", "121212")).toBeCloseTo(contrastRatio("121212", "1db954"), 10);
  });
});

describe("darkModeColor", () => {
  const samples = [
    "000000",
    "181717",
    "4a154b",
    "0a66c2",
    "1877f2",
    "e01e5a",
    "635bff",
    "24292f",
    "ff0000",
    "0000ff",
    "00ff00",
    "ffffff",
    "121212",
    "5c2d91",
    "003087",
  ];
  for (const hex of samples) {
    test(`${hex} reaches 4.5:1 on #121212 and keeps its hue (greys become white)`, () => {
      const dark = darkModeColor(hex);
      expect(dark).toMatch(/^[0-9a-f]{6}$/);
      expect(contrastRatio(dark, DARK_SURFACE)).toBeGreaterThanOrEqual(4.5);
      if (isNearGrey(hex) && contrastRatio(hex, DARK_SURFACE) < 4.5) expect(dark).toBe("ffffff");
      if (!isNearGrey(hex)) expect(hueDistance(dark, hex)).toBeLessThan(4);
      // never darker than the brand colour
      expect(relativeLuminance(dark)).toBeGreaterThanOrEqual(relativeLuminance(hex) - 1e-9);
    });
  }
  test("keeps colours that already pass", () => {
    expect(darkModeColor("1db954")).toBe("1db954");
    expect(darkModeColor("ffffff")).toBe("ffffff");
    expect(darkModeColor("#FF9900")).toBe("ff9900");
  });
  test("lightens only as far as needed", () => {
    const dark = darkModeColor("4a154b");
    expect(dark).not.toBe("4a154b");
    expect(contrastRatio(dark, DARK_SURFACE)).toBeGreaterThanOrEqual(4.5);
    expect(contrastRatio(dark, DARK_SURFACE)).toBeLessThan(4.8);
  });
});

describe("contrastTextColor", () => {
  test("picks the text colour with the higher contrast", () => {
    expect(contrastTextColor("000000")).toBe("ffffff");
    expect(contrastTextColor("ffffff")).toBe("000000");
    expect(contrastTextColor("ffd700")).toBe("000000");
    expect(contrastTextColor("0a66c2")).toBe("ffffff");
    for (const hex of ["1db954", "e01e5a", "635bff", "f7df1e", "777777", "808080"]) {
      const pick = contrastTextColor(hex);
      const other = pick === "000000" ? "ffffff" : "000000";
      expect(contrastRatio(hex, pick)).toBeGreaterThanOrEqual(contrastRatio(hex, other));
    }
  });
});

describe("dominantColor", () => {
  test("prefers the most frequent chromatic colour over black, white and grey", () => {
    expect(dominantColor(["#000", "#000", "#000", "#fff", "#e01e5a", "#36c5f0", "#36c5f0"])).toBe(
      "36c5f0",
    );
  });
  test("ties go to the first occurrence", () => {
    expect(dominantColor(["#f00", "#00f"])).toBe("ff0000");
  });
  test("falls back to a dark grey, then to anything", () => {
    expect(dominantColor(["#ffffff", "#161614", "#161614"])).toBe("161614");
    expect(dominantColor(["#ffffff"])).toBe("ffffff");
    expect(dominantColor([])).toBeNull();
  });
});

describe("deriveBrandColors", () => {
  test("builds the three colour roles", () => {
    const c = deriveBrandColors("#4A154B", "artwork");
    expect(c.brandColor).toBe("4a154b");
    expect(c.contrastTextColor).toBe("ffffff");
    expect(c.colors.map((r) => r.role)).toEqual(["brand", "dark-mode", "contrast-text"]);
    expect(c.colors[0]).toEqual({ role: "brand", hex: "4a154b", source: "artwork" });
    expect(c.colors[1]).toEqual({ role: "dark-mode", hex: c.darkModeColor, source: "derived" });
    expect(c.colors[2]?.source).toBe("derived");
  });
});
