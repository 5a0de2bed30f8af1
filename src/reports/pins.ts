/**
 * Operators' pins as an overlay on whatever the catalog holds: `apply` gives a brand with its
 * pinned fields and artwork over what the build, enrichment and discovery made; `hostSlug`
 * answers pinned domains before the catalog's own domain map. The catalog calls both where it
 * reads a brand and resolves a host, so a pin holds across catalog reloads, re-seeds and
 * rediscovery without being written into the catalog; removing a pin shows the brand as the
 * catalog has it.
 */
import { normalizeHost } from "../catalog/brand/domain";
import {
  type ArtworkSource,
  type Brand,
  type ColorRole,
  type StoredSvg,
  VARIANTS,
  type Variant,
} from "../catalog/built-catalog";
import { deriveBrandColors } from "../catalog/colors";
import type { AuditValue, Pin, PinField, PinnedArtwork, RemovedArtwork } from "./store/port";

/** The source label of pinned artwork and of the brand's pinned fields. */
export const PIN_SOURCE = "pin";

const artworkField = (f: PinField): Variant | null =>
  f.startsWith("artwork:") ? (f.slice("artwork:".length) as Variant) : null;

const COLOR_ROLES = new Set(["brand", "dark-mode", "contrast-text"]);

export class PinOverlay {
  private byBrand = new Map<number, Map<PinField, Pin>>();
  /** pinned host -> slug of the brand it is pinned to */
  private hosts = new Map<string, string>();
  /** a catalog brand -> the same brand with its pins (made once per brand object and pin set) */
  private made = new WeakMap<Brand, Brand>();
  private outputs = new WeakSet<Brand>();

  /** Replace the pins in force. */
  load(pins: Pin[]) {
    this.byBrand = new Map();
    this.hosts = new Map();
    this.made = new WeakMap();
    for (const p of pins) {
      const fields = this.byBrand.get(p.brandId) ?? new Map<PinField, Pin>();
      this.byBrand.set(p.brandId, fields);
      fields.set(p.field, p);
      if (p.field === "domains")
        for (const d of p.value as string[]) {
          const h = normalizeHost(d);
          if (h.ok) this.hosts.set(h.host, p.slug);
        }
    }
  }

  get size() {
    let n = 0;
    for (const fields of this.byBrand.values()) n += fields.size;
    return n;
  }

  pinsOf(brandId: number): Pin[] {
    return [...(this.byBrand.get(brandId)?.values() ?? [])];
  }

  /** The brand a pin names by this slug (a brand the catalog may no longer have). */
  pinnedBrand(slug: string): { id: number; slug: string } | undefined {
    for (const fields of this.byBrand.values())
      for (const p of fields.values()) if (p.slug === slug) return { id: p.brandId, slug };
    return undefined;
  }

  /** Ids of the brands with pins. */
  pinnedIds(): Iterable<number> {
    return this.byBrand.keys();
  }

  /** The slug a host is pinned to, if any (exact host). */
  hostSlug(host: string): string | undefined {
    return this.hosts.get(host);
  }

  /** The brand with its pins applied (the brand itself when it has none). */
  apply(b: Brand): Brand {
    const fields = this.byBrand.get(b.id);
    if (!fields || this.outputs.has(b)) return b;
    let out = this.made.get(b);
    if (!out) {
      out = pinned(b, fields);
      this.made.set(b, out);
      this.outputs.add(out);
    }
    return out;
  }

  /**
   * A brand about to be stored in the catalog, made from a pinned brand (enrichment and
   * discovery read brands through the overlay): what the overlay put there goes back to the
   * catalog's own value (`base`), what the writer changed stays, so removing a pin shows the
   * brand as the catalog has it.
   */
  strip(next: Brand, base: Brand | undefined): Brand {
    if (!base || !this.byBrand.has(next.id)) return next;
    const shown = this.apply(base);
    const out: Brand = { ...next, variants: { ...next.variants } };
    for (const v of VARIANTS) {
      const pinnedSvg = shown.variants[v];
      if (pinnedSvg === base.variants[v] || next.variants[v]?.sha256 !== pinnedSvg?.sha256)
        continue;
      const own = base.variants[v];
      if (own) out.variants[v] = own;
      else delete out.variants[v];
    }
    for (const k of OVERLAID) {
      if (shown[k] === base[k] || !same(next[k], shown[k])) continue;
      if (base[k] === undefined) delete out[k];
      else Object.assign(out, { [k]: base[k] });
    }
    return out;
  }
}

/** The fields a pin may change besides the variants. */
const OVERLAID = [
  "name",
  "brandColor",
  "darkModeColor",
  "contrastTextColor",
  "colors",
  "domains",
  "aliases",
  "artwork",
] as const satisfies (keyof Brand)[];

const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

/** The variants that make a brand's mark: a pin of either replaces all its own artwork. */
const MARKS: readonly Variant[] = ["color", "mono"];

export const isRemoval = (v: Pin["value"]): v is RemovedArtwork =>
  typeof v === "object" && v !== null && "removed" in v;

/**
 * `b` with the pins of `fields`. Pinned artwork: a color or mono pin is the brand's new mark,
 * so every variant of its own artwork goes (mono, icon and wordmark included) except those the
 * pin keeps; then what derives from the pins, then the pinned variants themselves (a variant
 * pinned itself beats one derived from another pin), then the variants a pin removes.
 */
function pinned(b: Brand, fields: Map<PinField, Pin>): Brand {
  const out: Brand = { ...b, variants: { ...b.variants } };
  const pinnedArt: [Variant, PinnedArtwork][] = [];
  const removed: Variant[] = [];
  for (const [field, pin] of fields) {
    const variant = artworkField(field);
    if (variant && isRemoval(pin.value)) removed.push(variant);
    else if (variant) pinnedArt.push([variant, pin.value as PinnedArtwork]);
    else if (field === "name") out.name = pin.value as string;
    else if (field === "domains") out.domains = pin.value as string[];
    else if (field === "aliases") out.aliases = pin.value as string[];
    else if (field === "brandColor") {
      const c = deriveBrandColors(pin.value as string, PIN_SOURCE);
      out.brandColor = c.brandColor;
      out.darkModeColor = c.darkModeColor;
      out.contrastTextColor = c.contrastTextColor;
      out.colors = [...c.colors, ...b.colors.filter((r: ColorRole) => !COLOR_ROLES.has(r.role))];
    }
  }
  if (!pinnedArt.length && !removed.length) return out;
  const marks = pinnedArt.filter(([v]) => MARKS.includes(v));
  if (marks.length) {
    const keep = new Set(marks.flatMap(([, art]) => art.keep ?? []));
    for (const v of VARIANTS) if (!keep.has(v)) delete out.variants[v];
  }
  const variants: Partial<Record<Variant, StoredSvg>> = {};
  for (const [, art] of pinnedArt) Object.assign(variants, art.derived);
  for (const [v, art] of pinnedArt) variants[v] = art.svg;
  for (const v of removed) delete variants[v];
  Object.assign(out.variants, variants);
  for (const v of removed) delete out.variants[v];
  const names = Object.keys(variants) as Variant[];
  const kept: ArtworkSource[] = (b.artwork ?? [])
    .map((a) => ({
      ...a,
      variants: a.variants.filter((v) => !names.includes(v) && out.variants[v] !== undefined),
    }))
    .filter((a) => a.variants.length > 0);
  out.artwork = names.length
    ? [
        ...kept,
        {
          source: PIN_SOURCE,
          package: "-",
          licence: "NOASSERTION",
          url: pinnedArt.map(([, a]) => a.origin).find((o) => o.startsWith("https:")) ?? "-",
          variants: names,
        },
      ]
    : kept;
  return out;
}

/** A pin's value as the audit records it: artwork by its sha256 and origin, never the markup. */
export function pinValue(p: Pin): AuditValue {
  const v = pinView(p).value;
  return Array.isArray(v) || typeof v === "string"
    ? { value: v, by: p.by, at: p.at }
    : { ...v, by: p.by, at: p.at };
}

/** A pin as operators see it: artwork by its source and hash, never the markup. */
export function pinView(p: Pin) {
  let value:
    | string
    | string[]
    | { removed: true }
    | { sha256: string; origin: string; derived: string[]; keep: string[] };
  if (isRemoval(p.value)) value = { removed: true };
  else if (p.field.startsWith("artwork:")) {
    const art = p.value as PinnedArtwork;
    value = {
      sha256: art.svg.sha256,
      origin: art.origin,
      derived: Object.keys(art.derived),
      keep: art.keep ?? [],
    };
  } else value = p.value as string | string[];
  return {
    slug: p.slug,
    brandId: p.brandId,
    field: p.field,
    value,
    by: p.by,
    at: p.at,
    why: p.why,
  };
}
