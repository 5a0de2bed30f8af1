/** Derived mono marks (scripts/catalog/mono.ts) on small hand-made artwork. */
import { describe, expect, test } from "bun:test";
import { Resvg } from "@resvg/resvg-js";
import { deriveMono, type MonoResult, SKIP } from "../../../scripts/catalog/mono";
import { nonBlackPaint } from "./paint-scan";
import { svgHazards } from "./svg-scan";

const svg = (body: string, box = "0 0 100 100") =>
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="${box}"><title>T</title>${body}</svg>`;

function derived(r: MonoResult): string {
  if (!("svg" in r)) throw new Error(`expected a mono mark, got: ${r.skipped}`);
  return r.svg;
}

/** Painted pixels of an SVG rendered at 50x50 (alpha at least `min`, of 255). */
function opaque(markup: string, min = 128): boolean[] {
  const px = new Resvg(markup, { fitTo: { mode: "width", value: 50 } }).render().pixels;
  return Array.from({ length: px.length / 4 }, (_, i) => (px[i * 4 + 3] as number) >= min);
}

const SEPARATE = svg(
  '<rect width="45" height="45" fill="#f25022"/><rect x="55" width="45" height="45" fill="#7fba00"/>' +
    '<rect y="55" width="45" height="45" fill="#00a4ef"/><rect x="55" y="55" width="45" height="45" fill="#ffb900"/>',
);

describe("derived mono marks", () => {
  test("separate coloured shapes flatten to black with the same silhouette", () => {
    const out = derived(deriveMono(SEPARATE));
    expect(nonBlackPaint(out)).toEqual([]);
    expect(svgHazards(out)).toEqual([]);
    expect(out).toContain('viewBox="0 0 100 100"');
    expect(out).toContain("<title>T</title>");
    expect(opaque(out)).toEqual(opaque(SEPARATE));
  });

  test("gradients become plain black and their definitions go", () => {
    const art = svg(
      '<defs><linearGradient id="g"><stop offset="0" stop-color="#f00"/><stop offset="1" stop-color="#00f"/></linearGradient></defs>' +
        '<circle cx="50" cy="50" r="40" fill="url(#g)"/>',
    );
    const out = derived(deriveMono(art));
    expect(out).not.toContain("Gradient");
    expect(out).not.toContain("url(");
    expect(nonBlackPaint(out)).toEqual([]);
  });

  test("strokes, currentColor and inherited group colours are flattened too", () => {
    const art = svg(
      '<g fill="#123456"><path d="M10 10h30v30H10z"/></g><path d="M60 60h30v30H60z" fill="currentColor"/>' +
        '<path d="M10 90L90 10" stroke="#e00" stroke-width="4" fill="none"/>',
    );
    const out = derived(deriveMono(art));
    expect(nonBlackPaint(out)).toEqual([]);
    expect(out).toMatch(/stroke="#000"/);
  });

  test("a translucent white highlight is dropped, not turned into a grey haze", () => {
    const art = svg(
      '<path d="M10 10h40v80H10z" fill="#06c"/><path d="M0 0h100v100H0z" fill="#fff" fill-opacity=".2"/>',
    );
    const out = derived(deriveMono(art));
    expect(opaque(out, 1)).toEqual(opaque(svg('<path d="M10 10h40v80H10z"/>'), 1));
    expect(nonBlackPaint(out)).toEqual([]);
  });

  test("white detail (negative space) is skipped", () => {
    const art = svg(
      '<circle cx="50" cy="50" r="45" fill="#00a1e0"/><path d="M30 45h40v10H30z" fill="#fff"/>',
    );
    expect(deriveMono(art)).toEqual({ skipped: SKIP.white });
    const pale = svg(
      '<circle cx="50" cy="50" r="45" fill="#24a148"/><path d="M30 45h40v10H30z" fill="#defbe6"/>',
    );
    expect(deriveMono(pale)).toMatchObject({ skipped: SKIP.white });
  });

  test("a mark painted in white alone (made for dark surfaces) flattens to the same shape in black", () => {
    const art = svg('<path d="M10 10h80v20H10zM40 30h20v60H40z" fill="#fff"/>');
    const out = derived(deriveMono(art));
    expect(nonBlackPaint(out)).toEqual([]);
    // the same silhouette: every pixel the white original paints, the black mark paints
    expect(opaque(out)).toEqual(opaque(art));
  });

  test("a glyph on a coloured tile is skipped (it would vanish into the tile)", () => {
    const art = svg(
      '<rect width="100" height="100" rx="20" fill="#242938"/><path d="M30 30h40v40H30z" fill="#61dafb"/>',
    );
    expect(deriveMono(art)).toMatchObject({ skipped: SKIP.contrast });
  });

  test("a small glyph on a tile is skipped although its outline is short", () => {
    const art = svg(
      '<rect width="100" height="100" fill="#e00"/><circle cx="50" cy="50" r="7" fill="#222"/>',
    );
    expect(deriveMono(art)).toMatchObject({ skipped: SKIP.contrast });
  });

  test("pieces fitted edge to edge are skipped; separate pieces are not", () => {
    const jigsaw = svg(
      '<path d="M0 0h50v50H0z" fill="#9dd6e3"/><path d="M50 0h50v50H50z" fill="#3f72ab"/>' +
        '<path d="M0 50h50v50H0z" fill="#00a9d1"/><path d="M50 50h50v50H50z" fill="#e00"/>',
    );
    expect(deriveMono(jigsaw)).toMatchObject({ skipped: SKIP.contrast });
    expect("svg" in deriveMono(SEPARATE)).toBe(true);
  });

  test("shading steps of one colour count as one colour", () => {
    const steps = Array.from({ length: 30 }, (_, i) => {
      const hex = (0x30 + i).toString(16);
      return `<path d="M${i * 3} 0h4v100h-4z" fill="#ff${hex}90"/>`;
    }).join("");
    expect("svg" in deriveMono(svg(steps))).toBe(true);
  });

  test("fades to transparent, filters, images, patterns and colour masks are skipped", () => {
    const fade = svg(
      '<defs><linearGradient id="g"><stop offset="0" stop-color="#f00"/><stop offset="1" stop-color="#f00" stop-opacity="0"/></linearGradient></defs>' +
        '<path d="M0 0h100v100H0z" fill="url(#g)"/>',
    );
    expect(deriveMono(fade)).toEqual({ skipped: SKIP.fade });
    const filter = svg(
      '<filter id="f"><feGaussianBlur stdDeviation="2"/></filter><path d="M0 0h50v50H0z" fill="#f00" filter="url(#f)"/>',
    );
    expect(deriveMono(filter)).toEqual({ skipped: SKIP.filter });
    const image = svg('<image href="#x" width="10" height="10"/><path d="M0 0h50v50H0z"/>');
    expect(deriveMono(image)).toEqual({ skipped: SKIP.image });
    const pattern = svg(
      '<pattern id="p" width="4" height="4"><path d="M0 0h2v2H0z"/></pattern><path d="M0 0h50v50H0z" fill="url(#p)"/>',
    );
    expect(deriveMono(pattern)).toEqual({ skipped: SKIP.pattern });
    const greyMask = svg(
      '<mask id="m"><path d="M0 0h100v100H0z" fill="#888"/></mask><path d="M0 0h50v50H0z" fill="#f00" mask="url(#m)"/>',
    );
    expect(deriveMono(greyMask)).toEqual({ skipped: SKIP.mask });
  });

  test("a plain white mask becomes the clip path it amounts to", () => {
    const art = svg(
      '<defs><path id="a" d="M0 0h60v60H0z"/></defs><mask id="m" fill="#fff"><use href="#a"/></mask>' +
        '<path d="M20 20h80v80H20z" fill="#0065a9" mask="url(#m)"/>',
    );
    const out = derived(deriveMono(art));
    expect(out).not.toContain("<mask");
    expect(out).toContain("clip-path");
    expect(opaque(out)).toEqual(opaque(svg('<path d="M20 20h40v40H20z"/>')));
  });

  test("force overrules the contrast heuristics, never a structural problem", () => {
    const tile = svg(
      '<rect width="100" height="100" fill="#242938"/><path d="M30 30h40v40H30z" fill="#61dafb"/>',
    );
    expect(nonBlackPaint(derived(deriveMono(tile, { force: true })))).toEqual([]);
    const filter = svg(
      '<filter id="f"><feGaussianBlur stdDeviation="2"/></filter><path d="M0 0h50v50H0z" fill="#f00" filter="url(#f)"/>',
    );
    expect(deriveMono(filter, { force: true })).toEqual({ skipped: SKIP.filter });
  });
});
