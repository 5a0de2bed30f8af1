/**
 * Derived mono marks: a single-colour version of a brand's own artwork, for brands that have
 * no mono mark in any data set (mostly iconify-only brands such as Slack or Microsoft).
 *
 * The artwork is flattened the simple-icons way: every fill and stroke colour (solid,
 * gradient, currentColor) becomes black, "none" stays none, gradients are dropped and svgo
 * then removes the fills that equal the default, so the mark is black with few or no fill
 * attributes and CSS or the dark/light derivation can recolour it. Translucent white
 * highlights (glare overlays) are removed: they are invisible on white in the original.
 *
 * Flattening is only faithful when the artwork draws its shapes by silhouette. It is skipped,
 * with a reason, when details are drawn by colour contrast instead:
 *  - white or near-white paint (negative space: lettering or a glyph "cut out" of a coloured
 *    shape, or a white plate behind the mark);
 *  - colours drawn over or fitted against each other: each colour is rendered alone (resvg,
 *    96 px) and the edges between colours inside the mark, which flattening erases, are
 *    measured (see measureHiddenEdges). Near-identical colours (blends, shading steps) count
 *    as one colour and translucent overlays (opacity below one half) do not count;
 *  - gradients that fade to transparent on drawn shapes (the silhouette would change);
 *  - filters, patterns, embedded images, stylesheets that set paint, and masks other than a
 *    plain white one (which is turned into the clip path it amounts to): their result
 *    depends on colour or cannot be recoloured safely.
 * Works on svgo's parsed tree (custom plugins), like src/catalog/sanitize.ts.
 */
import { Resvg } from "@resvg/resvg-js";
import type { CustomPlugin, XastElement, XastRoot } from "svgo";
import { optimize } from "svgo";
import { sanitizePlugin } from "../../src/catalog/sanitize";
import { parseCssColor } from "./artwork";

export interface EdgeScore {
  /** the largest share of one colour's outline that borders other colours */
  enclosed: number;
  /** edges between colours inside the mark, against the length of the mark's outline */
  seams: number;
}

export type MonoResult =
  | { svg: string; score?: EdgeScore }
  | { skipped: string; score?: EdgeScore };

/** Skip reasons, as counted in the build report. */
export const SKIP = {
  image: "embedded image",
  mask: "mask that depends on colour",
  filter: "filter effect",
  pattern: "pattern fill",
  stylesheet: "stylesheet sets paint",
  unknownPaint: "unrecognised paint value",
  white: "white/near-white paint (negative-space detail)",
  contrast: "colours drawn over or fitted against each other (detail drawn by contrast)",
  tooManyColors: "too many colours to judge",
  fade: "gradient fades to transparent",
  empty: "nothing painted",
  failed: "could not be processed",
} as const;

/** Skip reasons a person may overrule after looking at the result (fixtures/mono-overrides.json). */
const HEURISTIC = new Set<string>([SKIP.white, SKIP.contrast, SKIP.fade, SKIP.tooManyColors]);

/** A colour is white when its HSL lightness is at least this (0..255 scale: 0.87). */
const WHITE_MIN = 222;
/** Paint at or above this effective opacity draws; below it, it is shading. */
const SOLID_ALPHA = 0.5;
/** Longer side of the coverage renders, in pixels. */
const RENDER_SIZE = 96;
/** Colours this close on every channel (0..255) are one colour (blends, shading steps). */
const SIMILAR = 24;
/** More colours than this (after merging similar ones): not judged, skipped. */
const MAX_GROUPS = 12;
/** Skip when some colour's outline borders other colours for this share ... */
const ENCLOSED = 0.9;
/** ... or the edges between colours are this long against the mark's outline. */
const SEAMS = 0.2;
/** Colours covering less than this share of the mark are not judged by ENCLOSED. */
const MIN_AREA = 0.005;

const SHAPES = new Set([
  "path",
  "rect",
  "circle",
  "ellipse",
  "line",
  "polyline",
  "polygon",
  "text",
  "tspan",
  "textPath",
  "use",
]);
const GRADIENTS = new Set(["linearGradient", "radialGradient"]);
const PAINT_PROPS = ["fill", "stroke"] as const;
type PaintProp = (typeof PAINT_PROPS)[number];
/** Class names the analysis gives paint declarations ("<prefix><n>"). */
const LAYER_CLASS = "zzmonolayer";
const BLACK = "000000";

type Paint =
  | { kind: "none" }
  | { kind: "inherit" }
  | { kind: "color"; key: string; hex: string }
  | { kind: "url"; key: string; id: string }
  | { kind: "unknown" };

function parsePaint(raw: string): Paint {
  const value = raw.trim();
  const lower = value.toLowerCase();
  if (lower === "none" || lower === "transparent") return { kind: "none" };
  if (lower === "inherit") return { kind: "inherit" };
  if (lower === "currentcolor") return { kind: "color", key: BLACK, hex: BLACK };
  const url = /^url\(\s*['"]?#([^'")\s]+)['"]?\s*\)/i.exec(value);
  if (url?.[1]) return { kind: "url", key: `url:${url[1]}`, id: url[1] };
  const hex = parseCssColor(value);
  return hex ? { kind: "color", key: hex, hex } : { kind: "unknown" };
}

const channels = (hex: string) => [0, 2, 4].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));

function isWhite(hex: string): boolean {
  const ch = channels(hex);
  return (Math.max(...ch) + Math.min(...ch)) / 2 >= WHITE_MIN;
}

/** An opacity value clamped to 0..1 ("50%" too); `dflt` when absent or unreadable. */
function num(value: string | undefined, dflt = 1): number {
  if (value === undefined) return dflt;
  const v = value.trim();
  const n = v.endsWith("%") ? Number.parseFloat(v) / 100 : Number.parseFloat(v);
  return Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : dflt;
}

/** style="a:b;c:d" -> [[a, b], [c, d]] */
function parseStyle(style: string): [string, string][] {
  const out: [string, string][] = [];
  for (const decl of style.split(";")) {
    const i = decl.indexOf(":");
    const key = decl.slice(0, i).trim().toLowerCase();
    if (i > 0 && key) out.push([key, decl.slice(i + 1).trim()]);
  }
  return out;
}

/** A property's own value on an element (style wins over the attribute). */
function own(node: XastElement, prop: string): string | undefined {
  const style = node.attributes.style;
  const fromStyle = style ? parseStyle(style).findLast(([k]) => k === prop) : undefined;
  return fromStyle ? fromStyle[1] : node.attributes[prop];
}

/** Remove a property from an element, attribute and style alike. */
function removeProp(node: XastElement, prop: string): void {
  delete node.attributes[prop];
  const style = node.attributes.style;
  if (style === undefined) return;
  const rest = parseStyle(style).filter(([k]) => k !== prop);
  if (rest.length) node.attributes.style = rest.map(([k, v]) => `${k}:${v}`).join(";");
  else delete node.attributes.style;
}

function addClass(node: XastElement, cls: string): void {
  node.attributes.class = node.attributes.class ? `${node.attributes.class} ${cls}` : cls;
}

const elementsOf = (node: XastElement | XastRoot): XastElement[] =>
  node.children.filter((c): c is XastElement => c.type === "element");

function walk(node: XastElement | XastRoot, visit: (el: XastElement) => void): void {
  for (const child of elementsOf(node)) {
    visit(child);
    walk(child, visit);
  }
}

function textOf(node: XastElement): string {
  return node.children
    .map((c) => (c.type === "text" || c.type === "cdata" ? c.value : ""))
    .join("");
}

const CLIP_SHAPES = new Set(["path", "rect", "circle", "ellipse", "polygon", "polyline", "use"]);
const GEOMETRY_ATTRS = new Set(
  "id d x y width height rx ry cx cy r points transform fill fill-rule clip-rule href xlink:href".split(
    " ",
  ),
);
const URL_REF = /^url\(\s*['"]?#([^'")\s]+)['"]?\s*\)$/;

/**
 * svgo plugin: a mask that only paints opaque white shapes (Figma's `<mask fill="#fff"><use
 * href="#a"/></mask>`) lets exactly its shapes' area through, so it becomes the clip path it
 * amounts to (whose meaning does not depend on colour). Other masks are left alone.
 */
const masksToClipsPlugin: CustomPlugin = {
  name: "monoMasksToClips",
  fn: (root) => {
    const byId = new Map<string, XastElement>();
    walk(root, (el) => {
      if (el.attributes.id) byId.set(el.attributes.id, el);
    });
    const white = (v: string | undefined, inherited: boolean) => {
      if (v === undefined) return inherited;
      const paint = parsePaint(v);
      return paint.kind === "color" && paint.hex === "ffffff";
    };
    const plainShape = (el: XastElement, inheritedWhite: boolean): boolean => {
      if (!CLIP_SHAPES.has(el.name) || elementsOf(el).length) return false;
      if (Object.keys(el.attributes).some((k) => !GEOMETRY_ATTRS.has(k))) return false;
      if (!white(el.attributes.fill, inheritedWhite)) return false;
      if (el.name !== "use") return true;
      const ref = byId.get((el.attributes.href ?? el.attributes["xlink:href"] ?? "").slice(1));
      return ref !== undefined && ref.name !== "use" && plainShape(ref, true);
    };
    const convertible = new Set<string>();
    for (const [id, el] of byId) {
      if (el.name !== "mask") continue;
      if (Object.keys(el.attributes).some((k) => k !== "id" && k !== "fill")) continue;
      const kids = elementsOf(el);
      const inherited = white(el.attributes.fill, false);
      if (kids.length && kids.every((k) => plainShape(k, inherited))) convertible.add(id);
    }
    // an element that has a clip path already keeps its mask
    walk(root, (el) => {
      const id = URL_REF.exec(el.attributes.mask ?? "")?.[1];
      if (id && el.attributes["clip-path"] !== undefined) convertible.delete(id);
    });
    walk(root, (el) => {
      const id = URL_REF.exec(el.attributes.mask ?? "")?.[1];
      if (id && convertible.has(id)) {
        el.attributes["clip-path"] = el.attributes.mask as string;
        delete el.attributes.mask;
      }
    });
    for (const id of convertible) {
      const mask = byId.get(id) as XastElement;
      mask.name = "clipPath";
      delete mask.attributes.fill;
    }
    return null;
  },
};

interface Analysis {
  /** skip reasons found while reading the artwork */
  problems: string[];
  /** paint keys drawn by some shape: a 6-hex colour or "url:<gradient id>" */
  keys: Set<string>;
  /** paint key -> its colours (a gradient's stop colours) */
  colors: Map<string, string[]>;
  /** the SVG with every drawing paint declaration replaced by a class (see classes) */
  layered: string;
  /** class name -> [property, paint key] */
  classes: Map<string, [PaintProp, string]>;
  /** every solid paint drawn is white or near-white: a knockout mark made for dark surfaces */
  onlyWhite: boolean;
}

interface Inherited {
  fill: Paint;
  stroke: Paint;
  opacity: number;
  fillOpacity: number;
  strokeOpacity: number;
}

/** The stops of a gradient, following href to the gradient that defines them; null if no gradient. */
function gradientStops(gradients: Map<string, XastElement>, id: string): XastElement[] | null {
  let current = gradients.get(id);
  if (!current) return null;
  for (let depth = 0; current && depth < 8; depth++) {
    const stops = elementsOf(current).filter((c) => c.name === "stop");
    if (stops.length) return stops;
    const href = current.attributes.href ?? current.attributes["xlink:href"] ?? "";
    current = gradients.get(href.replace(/^#/, ""));
  }
  return [];
}

/**
 * One svgo pass over the artwork: structural problems, white paint, the paint layers, and a
 * rewrite of every paint declaration into a class naming its layer, so each layer can be
 * rendered alone by adding a stylesheet (no parse per layer) and the mono mark is made from
 * the same rewrite. Translucent white highlights get fill/stroke "none" on the shape.
 */
function analyze(svg: string): Analysis {
  const a: Analysis = {
    problems: [],
    keys: new Set(),
    colors: new Map(),
    layered: "",
    classes: new Map(),
    onlyWhite: true,
  };
  const fail = (why: string) => {
    if (!a.problems.includes(why)) a.problems.push(why);
  };
  const classOf = (prop: PaintProp, key: string) => {
    for (const [cls, [p, k]] of a.classes) if (p === prop && k === key) return cls;
    const cls = `${LAYER_CLASS}${a.classes.size}`;
    a.classes.set(cls, [prop, key]);
    return cls;
  };
  const gradients = new Map<string, XastElement>();
  /** gradient id -> the highest effective opacity a drawn shape paints it with */
  const drawnUrls = new Map<string, number>();
  const stopColors = (id: string) =>
    (gradientStops(gradients, id) ?? []).map(
      (s) => parseCssColor(own(s, "stop-color") ?? "") ?? BLACK,
    );

  const visit = (node: XastElement, up: Inherited, isRoot: boolean) => {
    const name = node.name;
    if (name === "image" || name === "feImage") fail(SKIP.image);
    if (name === "mask" || node.attributes.mask !== undefined) fail(SKIP.mask);
    if (name === "filter" || node.attributes.filter !== undefined) fail(SKIP.filter);
    if (name === "pattern") fail(SKIP.pattern);
    if (name === "style" && /(?:fill|stroke|color|opacity)\s*:/i.test(textOf(node))) {
      fail(SKIP.stylesheet);
    }
    // clip paths are geometry only; gradients are dropped from the mono mark
    if (name === "clipPath" || GRADIENTS.has(name)) return;
    const state: Inherited = {
      ...up,
      opacity: up.opacity * num(own(node, "opacity")),
      fillOpacity: num(own(node, "fill-opacity"), up.fillOpacity),
      strokeOpacity: num(own(node, "stroke-opacity"), up.strokeOpacity),
    };
    for (const prop of PAINT_PROPS) {
      const raw = own(node, prop);
      if (raw === undefined) continue;
      const paint = parsePaint(raw);
      if (paint.kind === "unknown") fail(SKIP.unknownPaint);
      if (paint.kind === "inherit" || paint.kind === "unknown") continue;
      state[prop] = paint;
      removeProp(node, prop);
      if (paint.kind === "none") node.attributes[prop] = "none";
      else addClass(node, classOf(prop, paint.key));
    }
    if (isRoot && own(node, "fill") === undefined) addClass(node, classOf("fill", BLACK));
    if (SHAPES.has(name)) {
      for (const prop of PAINT_PROPS) {
        const paint = state[prop];
        if (paint.kind !== "color" && paint.kind !== "url") continue;
        if (prop === "stroke" && num(own(node, "stroke-width")) === 0) continue;
        const alpha = state.opacity * (prop === "fill" ? state.fillOpacity : state.strokeOpacity);
        const colors = paint.kind === "color" ? [paint.hex] : stopColors(paint.id);
        const white = colors.length > 0 && colors.every(isWhite);
        if (alpha < SOLID_ALPHA && white) {
          // a highlight: invisible on white in the original, so gone in the mono mark
          const kept = (node.attributes.class ?? "")
            .split(/\s+/)
            .filter((c) => c && a.classes.get(c)?.[0] !== prop);
          if (kept.length) node.attributes.class = kept.join(" ");
          else delete node.attributes.class;
          node.attributes[prop] = "none";
          continue;
        }
        a.keys.add(paint.key);
        if (paint.kind === "url")
          drawnUrls.set(paint.id, Math.max(alpha, drawnUrls.get(paint.id) ?? 0));
        if (paint.kind === "color" && alpha >= SOLID_ALPHA && white) fail(SKIP.white);
        else a.onlyWhite = false;
      }
    }
    for (const child of elementsOf(node)) visit(child, state, false);
  };

  const plugin: CustomPlugin = {
    name: "monoAnalyze",
    fn: (root) => {
      walk(root, (el) => {
        if (GRADIENTS.has(el.name) && el.attributes.id) gradients.set(el.attributes.id, el);
      });
      const top: Inherited = {
        fill: { kind: "color", key: BLACK, hex: BLACK },
        stroke: { kind: "none" },
        opacity: 1,
        fillOpacity: 1,
        strokeOpacity: 1,
      };
      for (const el of elementsOf(root)) visit(el, top, true);
      return null;
    },
  };
  a.layered = optimize(svg, { plugins: [plugin] }).data;

  for (const key of a.keys) {
    if (!key.startsWith("url:")) {
      a.colors.set(key, [key]);
      continue;
    }
    const id = key.slice(4);
    const stops = gradientStops(gradients, id);
    if (!stops) {
      fail(SKIP.pattern); // url() to something that is not a gradient
      continue;
    }
    const alpha = drawnUrls.get(id) ?? 0;
    if (alpha >= SOLID_ALPHA && stops.some((s) => num(own(s, "stop-opacity")) < SOLID_ALPHA)) {
      fail(SKIP.fade);
    }
    a.colors.set(key, stops.length ? stopColors(id) : [BLACK]);
  }
  return a;
}

const channelDistance = (a: string, b: string) => {
  const [x, y] = [channels(a), channels(b)];
  return Math.max(...x.map((v, i) => Math.abs(v - (y[i] as number))));
};

/**
 * Paint keys grouped into colours: keys whose colours are within SIMILAR of each other
 * (chained) are one colour, so blends and shading steps count as one.
 */
export function colorGroups(colors: Map<string, string[]>): Set<string>[] {
  const keys = [...colors.keys()];
  const parent = keys.map((_, i) => i);
  const find = (i: number): number => {
    let r = i;
    while (parent[r] !== r) r = parent[r] as number;
    return r;
  };
  for (let i = 0; i < keys.length; i++) {
    for (let j = i + 1; j < keys.length; j++) {
      if (find(i) === find(j)) continue;
      const x = colors.get(keys[i] as string) ?? [];
      const y = colors.get(keys[j] as string) ?? [];
      if (x.some((p) => y.some((q) => channelDistance(p, q) <= SIMILAR))) parent[find(i)] = find(j);
    }
  }
  const groups = new Map<number, Set<string>>();
  keys.forEach((k, i) => {
    const g = groups.get(find(i)) ?? new Set<string>();
    g.add(k);
    groups.set(find(i), g);
  });
  return [...groups.values()];
}

/** Coverage bitmaps (alpha >= one half) of each group of paint keys, rendered alone. */
function coverages(a: Analysis, groups: Set<string>[]): { maps: Uint8Array[]; width: number } {
  const font = { loadSystemFonts: false };
  const probe = new Resvg(a.layered, { font });
  const mode = probe.width >= probe.height ? "width" : "height";
  let width = 0;
  const maps = groups.map((group) => {
    const rules = [...a.classes]
      .map(([cls, [prop, key]]) => `.${cls}{${prop}:${group.has(key) ? "#000" : "none"}}`)
      .join("");
    const svg = a.layered.replace(/<svg\b[^>]*>/, (rootTag) => `${rootTag}<style>${rules}</style>`);
    const image = new Resvg(svg, { font, fitTo: { mode, value: RENDER_SIZE } }).render();
    width = image.width;
    const px = image.pixels;
    const out = new Uint8Array(px.length / 4);
    for (let i = 0; i < out.length; i++) out[i] = (px[i * 4 + 3] as number) >= 128 ? 1 : 0;
    return out;
  });
  return { maps, width };
}

/**
 * The edges flattening erases. Each colour is rendered alone; a pixel's signature is the set
 * of colours covering it. Per colour, the share of its outline that borders other colours
 * rather than the outside (`enclosed`: a glyph on a tile or in a hole is 1); globally, the
 * length of the edges between colours against the mark's outline (`seams`: pieces fitted
 * together edge to edge score high, Slack's separate pieces 0, Google's G cut into coloured
 * segments low). Null when nothing is painted.
 */
function measureHiddenEdges(a: Analysis, groups: Set<string>[]): EdgeScore | null {
  if (groups.length < 2) return { enclosed: 0, seams: 0 };
  const { maps, width } = coverages(a, groups);
  const size = maps[0]?.length ?? 0;
  const height = size / width;
  const sig = new Uint16Array(size);
  maps.forEach((m, j) => {
    for (let i = 0; i < size; i++) if (m[i]) sig[i] = (sig[i] as number) | (1 << j);
  });
  const inner = new Array<number>(maps.length).fill(0);
  const outer = new Array<number>(maps.length).fill(0);
  const area = new Array<number>(maps.length).fill(0);
  let union = 0;
  let seams = 0;
  let outline = 0;
  for (let i = 0; i < size; i++) {
    const here = sig[i] as number;
    if (!here) continue;
    union++;
    const x = i % width;
    const y = (i - x) / width;
    const around = [
      x > 0 ? (sig[i - 1] as number) : 0,
      x < width - 1 ? (sig[i + 1] as number) : 0,
      y > 0 ? (sig[i - width] as number) : 0,
      y < height - 1 ? (sig[i + width] as number) : 0,
    ];
    for (const there of around) {
      if (!there) outline++;
      else if (there !== here) seams++;
    }
    for (let j = 0; j < maps.length; j++) {
      const bit = 1 << j;
      if (!(here & bit)) continue;
      area[j] = (area[j] as number) + 1;
      for (const there of around) {
        if (there & bit) continue;
        if (there) inner[j] = (inner[j] as number) + 1;
        else outer[j] = (outer[j] as number) + 1;
      }
    }
  }
  if (!union) return null;
  let enclosed = 0;
  for (let j = 0; j < maps.length; j++) {
    const edge = (inner[j] as number) + (outer[j] as number);
    if ((area[j] as number) / union >= MIN_AREA && edge > 0) {
      enclosed = Math.max(enclosed, (inner[j] as number) / edge);
    }
  }
  // every seam is seen from both sides
  return { enclosed, seams: seams / 2 / Math.max(1, outline) };
}

/** svgo plugin over the layered SVG: layer classes become black paint, gradients go. */
function paintBlackPlugin(classes: Analysis["classes"]): CustomPlugin {
  return {
    name: "monoPaintBlack",
    fn: () => ({
      element: {
        enter(node, parent) {
          if (GRADIENTS.has(node.name)) {
            parent.children = parent.children.filter((c) => c !== node);
            return;
          }
          removeProp(node, "color");
          const cls = node.attributes.class;
          if (cls === undefined) return;
          const kept: string[] = [];
          for (const name of cls.split(/\s+/)) {
            const layer = classes.get(name);
            if (!layer) {
              if (name) kept.push(name);
              continue;
            }
            // the root's implicit black stays implicit
            if (!(parent.type === "root" && layer[0] === "fill"))
              node.attributes[layer[0]] = "#000";
          }
          if (kept.length) node.attributes.class = kept.join(" ");
          else delete node.attributes.class;
        },
      },
    }),
  };
}

/**
 * The mono mark from an analysed artwork: black paint, sanitized, and the few svgo plugins
 * that tidy up after it (the artwork was optimized already): default fills removed, groups
 * collapsed, paths that now look alike merged, emptied defs dropped.
 */
function paintBlack(a: Analysis): string {
  return optimize(a.layered, {
    plugins: [
      paintBlackPlugin(a.classes),
      "removeUselessDefs",
      "removeUnknownsAndDefaults",
      "removeUselessStrokeAndFill",
      "moveElemsAttrsToGroup",
      "collapseGroups",
      "mergePaths",
      "removeEmptyContainers",
      "removeEmptyAttrs",
      // svgo drops role as an unknown attribute; with the <title> it names the image
      { name: "addAttributesToSVGElement", params: { attributes: [{ role: "img" }] } },
      sanitizePlugin,
    ],
  }).data;
}

/**
 * The mono mark derived from one piece of artwork (sanitized and optimized; its ids keep
 * whatever prefix they have), or the reason it would not be faithful. `force` derives it in
 * spite of the contrast heuristics (white paint, colours over each other, fades), never in
 * spite of masks, filters, patterns or images; `darkSurface` only treats white paint as ink.
 */
export function deriveMono(
  input: string,
  options: { force?: boolean; darkSurface?: boolean } = {},
): MonoResult {
  try {
    const svg = input.includes("<mask")
      ? optimize(input, { plugins: [masksToClipsPlugin] }).data
      : input;
    const a = analyze(svg);
    if (!a.keys.size) return { skipped: SKIP.empty };
    // white paint is negative space beside other colours, but a mark painted in white alone,
    // or one the caller measured as made for dark surfaces (`darkSurface`: near-white paint
    // that fails 3:1 on white), draws with its white: its mono is that shape in black
    const problems = a.problems.filter(
      (p) => !(p === SKIP.white && (a.onlyWhite || options.darkSurface)),
    );
    let score: EdgeScore | undefined;
    if (!problems.length) {
      const groups = colorGroups(a.colors);
      if (groups.length > MAX_GROUPS) problems.push(SKIP.tooManyColors);
      else {
        const measured = measureHiddenEdges(a, groups);
        if (!measured) return { skipped: SKIP.empty };
        score = measured;
        if (score.enclosed >= ENCLOSED || score.seams >= SEAMS) problems.push(SKIP.contrast);
      }
    }
    const withScore = score ? { score } : {};
    const [first] = problems;
    if (first && !(options.force && problems.every((p) => HEURISTIC.has(p)))) {
      return { skipped: first, ...withScore };
    }
    return { svg: paintBlack(a), ...withScore };
  } catch {
    return { skipped: SKIP.failed };
  }
}
