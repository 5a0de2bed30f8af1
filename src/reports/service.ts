/**
 * Corrections: users report a problem with a brand (POST /v1/reports), operators accept or
 * reject reports and pin the right artwork and fields (src/reports/admin.ts, the admin CLI),
 * and every change to a brand leaves an audit event. Pins reach readers through the overlay
 * (pins.ts) the catalog and the domain resolver consult; a reported URL is fetched only when an
 * operator accepts the report with a pin, through discovery's guarded fetcher.
 */
import type { Principal } from "../accounts/model";
import { normalizeHost } from "../catalog/brand/domain";
import type { BrandResolver } from "../catalog/brand/service";
import { checkUrl, Refused } from "../catalog/discovery/address";
import {
  type Artwork,
  rasterArtwork,
  rasterSource,
  sha256,
  svgArtwork,
} from "../catalog/discovery/artwork";
import { type GuardedFetcher, IMAGE_MAX_BYTES } from "../catalog/discovery/fetcher";
import { deriveEnrichment, recolorMono } from "../catalog/enrichment";
import type { CatalogService } from "../catalog/service";
import { type Brand, type StoredSvg, VARIANTS, type Variant } from "../catalog/types";
import { ApiError, notFound } from "../http/errors";
import { newId } from "../platform/ids";
import { log } from "../platform/log";
import { PIN_SOURCE, PinOverlay } from "./pins";
import {
  type AuditEvent,
  type CorrectionsStore,
  type Pin,
  type PinField,
  type PinnedArtwork,
  REPORT_KINDS,
  type Report,
  type ReportKind,
  type ReportStatus,
} from "./port";

export const NOTE_MAX = 1000;
export const URL_MAX = 2048;
/** Largest pinned artwork accepted, uploaded or fetched (discovery's image cap). */
export const PIN_MAX_BYTES = IMAGE_MAX_BYTES;
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** Markup the sanitizer would strip from an upload: refused outright, never quietly cleaned. */
const ACTIVE_SVG = /<script\b|<foreignObject\b|\son[a-z]+\s*=|javascript:/i;

/** 400 invalid_report / invalid_pin naming the field at fault. */
const badInput = (code: string, field: string, message: string) =>
  new ApiError(400, code, message, { field });

export interface ReportInput {
  slug?: string;
  domain?: string;
  kind: string;
  url?: string;
  note?: string;
}

export interface BrandPatch {
  name?: string;
  brandColor?: string;
  domains?: string[];
  aliases?: string[];
  why?: string;
}

/** Pinned artwork as sent: the body's bytes (SVG or PNG), or a URL to fetch. */
export type ArtworkInput = { kind: "svg" | "png"; bytes: Uint8Array } | { url: string };

const isPng = (b: Uint8Array) => PNG_SIGNATURE.every((x, i) => b[i] === x);
const looksSvg = (b: Uint8Array) =>
  /^\s*(?:<\?xml|<svg|<!--|<!DOCTYPE svg)/i.test(
    Buffer.from(b.subarray(0, 512))
      .toString("utf8")
      .replace(/^\uFEFF/, ""),
  );

export interface CorrectionsDeps {
  store: CorrectionsStore;
  catalog: CatalogService;
  brands: BrandResolver;
  /** discovery's guarded fetcher: SSRF checks at every hop, size and time caps */
  fetcher: GuardedFetcher;
}

export class CorrectionsService {
  readonly overlay = new PinOverlay();
  /** public so tests can point it at their loopback fixtures */
  fetcher: GuardedFetcher;
  private store: CorrectionsStore;
  private catalog: CatalogService;
  private brands: BrandResolver;
  /** brand id -> its pins' fields and times, to see which brands a refresh changed */
  private pinned = new Map<number, string>();
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(deps: CorrectionsDeps) {
    this.store = deps.store;
    this.catalog = deps.catalog;
    this.fetcher = deps.fetcher;
    this.brands = deps.brands;
    deps.catalog.useOverlay(this.overlay);
  }

  /** Read the pins, and record the catalog's build version (now and after every reload). */
  async start() {
    await this.refreshPins();
    await this.recordCatalogVersion();
    this.catalog.onChange((updated) => {
      if (!updated) void this.recordCatalogVersion();
    });
  }

  /** Re-read the pins every `ms` (pins set by other instances and the admin CLI). */
  watch(ms: number) {
    let busy = false;
    this.timer = setInterval(async () => {
      if (busy) return;
      busy = true;
      try {
        await this.refreshPins();
      } catch (err) {
        log("warn", "pin refresh failed", { reason: (err as Error).message });
      } finally {
        busy = false;
      }
    }, ms);
    (this.timer as { unref?: () => void }).unref?.();
  }

  stop() {
    if (this.timer) clearInterval(this.timer);
  }

  /** Load the stored pins; the brands whose pins changed are shown anew. */
  async refreshPins() {
    const pins = await this.store.pins();
    const after = new Map<number, string>();
    for (const p of pins) after.set(p.brandId, `${after.get(p.brandId) ?? ""}${p.field}@${p.at},`);
    const before = this.pinned;
    const changed = [...new Set([...before.keys(), ...after.keys()])].filter(
      (id) => before.get(id) !== after.get(id),
    );
    if (!changed.length) return;
    this.pinned = after;
    this.overlay.load(pins);
    for (const id of changed) this.catalog.overlayChanged(id);
  }

  private async recordCatalogVersion() {
    const version = this.catalog.version;
    if (!version) return;
    try {
      const last = await this.store.lastCatalogEvent("catalog_version");
      if (last?.detail.version === version) return;
      await this.audit(null, "catalog_version", "catalog", {
        version,
        previous: (last?.detail.version as string | undefined) ?? null,
        brands: this.catalog.size,
      });
    } catch (err) {
      log("warn", "catalog version audit failed", { reason: (err as Error).message });
    }
  }

  /** Append one audit event (brand null: the whole catalog). */
  private async audit(
    brand: Pick<Brand, "id" | "slug"> | null,
    type: AuditEvent["type"],
    by: string,
    detail: AuditEvent["detail"],
  ) {
    await this.store.appendAudit({
      id: newId(),
      brandId: brand?.id ?? null,
      slug: brand?.slug ?? null,
      type,
      at: new Date().toISOString(),
      by,
      detail,
    });
  }

  /** A brand by slug, 404 when the catalog has none. */
  brandOf(slug: string): Brand {
    const b = this.catalog.brand(slug);
    if (!b) throw notFound("service_not_found", `No brand with slug ${slug}.`);
    return b;
  }

  /** File a report (or vote on the same open one). Input errors are 400 with the field. */
  async fileReport(principal: Principal, input: ReportInput): Promise<Report> {
    const brand = this.reportedBrand(input);
    if (!(REPORT_KINDS as readonly string[]).includes(input.kind))
      throw badInput("invalid_report", "kind", `kind must be one of ${REPORT_KINDS.join(", ")}.`);
    const url = input.url === undefined ? null : reportUrl(input.url);
    const note = input.note?.trim() || null;
    if (note !== null && [...note].length > NOTE_MAX)
      throw badInput("invalid_report", "note", `note is longer than ${NOTE_MAX} characters.`);
    const now = new Date().toISOString();
    return this.store.fileReport({
      id: newId(),
      brandId: brand.id,
      slug: brand.slug,
      kind: input.kind as ReportKind,
      url,
      note,
      status: "open",
      votes: 1,
      accountId: principal.accountId,
      createdAt: now,
      decidedAt: null,
      decidedBy: null,
    });
  }

  private reportedBrand(input: ReportInput): Brand {
    if ((input.slug === undefined) === (input.domain === undefined))
      throw badInput("invalid_report", "slug", "Pass one of slug or domain.");
    if (input.slug !== undefined) return this.brandOf(input.slug);
    const h = normalizeHost(input.domain as string);
    if (!h.ok) throw badInput("invalid_report", "domain", "domain is not a domain name.");
    const b = this.brands.resolveHost(h.host);
    if (!b) throw notFound("domain_not_found", `No brand matches the domain ${h.host}.`);
    return b;
  }

  reports(status: ReportStatus | undefined, limit: number) {
    return this.store.reports(status, limit);
  }

  /** A report with the brand's current artwork variants and their provenance. */
  reportView(r: Report) {
    const b = this.catalog.brand(r.slug);
    return {
      ...r,
      brand: b
        ? {
            name: b.name,
            variants: VARIANTS.filter((v) => b.variants[v] !== undefined).map((v) => ({
              variant: v,
              source: (b.variants[v] as StoredSvg).source,
              sha256: (b.variants[v] as StoredSvg).sha256,
            })),
            artwork: b.artwork ?? [],
            pins: this.overlay.pinsOf(b.id).map(pinView),
          }
        : null,
    };
  }

  /** The open report `id`: 404 unknown, 409 decided already. */
  private async openReport(id: string) {
    const r = await this.store.report(id);
    if (!r) throw notFound("report_not_found", `No report ${id}.`);
    if (r.status !== "open")
      throw new ApiError(409, "report_decided", `Report ${id} is already ${r.status}.`);
    return r;
  }

  /**
   * Accept a report; with `pin`, the report's URL is fetched (now, through the guarded fetcher)
   * and pinned as the brand's artwork (`variant`, default color) in the same step.
   */
  async accept(id: string, by: string, opts: { pin?: boolean; variant?: Variant } = {}) {
    const r = await this.openReport(id);
    let pin: Pin | null = null;
    if (opts.pin) {
      if (!r.url)
        throw badInput("invalid_pin", "pin", `Report ${id} has no url to pin artwork from.`);
      pin = await this.pinArtwork(r.slug, opts.variant ?? "color", { url: r.url }, by, {
        why: `report ${id}`,
      });
    }
    const decided = await this.store.decideReport(id, "accepted", by, new Date().toISOString());
    if (!decided) throw new ApiError(409, "report_decided", `Report ${id} was decided meanwhile.`);
    await this.audit({ id: r.brandId, slug: r.slug }, "report_accepted", by, {
      report: id,
      kind: r.kind,
      pinned: pin ? pin.field : null,
    });
    return { report: decided, pin: pin ? pinView(pin) : null };
  }

  async reject(id: string, by: string) {
    const r = await this.openReport(id);
    const decided = await this.store.decideReport(id, "rejected", by, new Date().toISOString());
    if (!decided) throw new ApiError(409, "report_decided", `Report ${id} was decided meanwhile.`);
    await this.audit({ id: r.brandId, slug: r.slug }, "report_rejected", by, {
      report: id,
      kind: r.kind,
    });
    return decided;
  }

  /** Pin artwork (an upload or a URL) as one of a brand's variants. */
  async pinArtwork(
    slug: string,
    variant: Variant,
    input: ArtworkInput,
    by: string,
    opts: { why?: string | null } = {},
  ): Promise<Pin> {
    const brand = this.brandOf(slug);
    const { bytes, kind, origin } = await this.artworkBytes(input);
    const value = await pinnedArtwork(brand, variant, kind, bytes, origin);
    return this.setPin(brand, `artwork:${variant}`, value, by, opts.why ?? null);
  }

  private async artworkBytes(input: ArtworkInput) {
    if (!("url" in input)) {
      if (input.bytes.byteLength > PIN_MAX_BYTES)
        throw badInput("invalid_pin", "body", `Artwork over ${PIN_MAX_BYTES} bytes.`);
      return { bytes: input.bytes, kind: input.kind, origin: "upload" };
    }
    const url = artworkUrl(input.url);
    let r: Awaited<ReturnType<GuardedFetcher["get"]>>;
    try {
      r = await this.fetcher.get(url, {
        maxBytes: PIN_MAX_BYTES,
        deadline: Date.now() + 15_000,
        accept: "image/svg+xml,image/png;q=0.9",
      });
    } catch (err) {
      // refused by the SSRF rules, a failed DNS lookup, connection, size or time cap
      throw badInput("invalid_pin", "url", `The URL cannot be fetched: ${(err as Error).message}`);
    }
    if (r.status !== 200)
      throw badInput("invalid_pin", "url", `The URL answered HTTP ${r.status}.`);
    const bytes = new Uint8Array(r.body);
    const kind = isPng(bytes) ? "png" : looksSvg(bytes) ? "svg" : null;
    if (!kind) throw badInput("invalid_pin", "url", "The URL gives neither an SVG nor a PNG.");
    return { bytes, kind, origin: r.url } as const;
  }

  /** Remove a variant's pinned artwork: the catalog's own artwork is served again. */
  async unpinArtwork(slug: string, variant: Variant, by: string) {
    return this.removePin(this.pinTarget(slug), `artwork:${variant}`, by);
  }

  /** Pin any of name, brandColor, domains, aliases (a null value removes that pin). */
  async patchBrand(slug: string, patch: BrandPatch, by: string): Promise<Pin[]> {
    const brand = this.brandOf(slug);
    const pins: [PinField, Pin["value"]][] = [];
    const why = patch.why ?? null;
    if (patch.name !== undefined) {
      const name = patch.name.trim();
      if (!name) throw badInput("invalid_pin", "name", "name is empty.");
      pins.push(["name", name]);
    }
    if (patch.brandColor !== undefined) {
      const hex = patch.brandColor.replace(/^#/, "").toLowerCase();
      if (!/^[0-9a-f]{6}$/.test(hex))
        throw badInput("invalid_pin", "brandColor", "brandColor is not 6 hex digits.");
      pins.push(["brandColor", hex]);
    }
    if (patch.domains !== undefined) {
      const domains: string[] = [];
      for (const d of patch.domains) {
        const h = normalizeHost(d);
        if (!h.ok) throw badInput("invalid_pin", "domains", `${d} is not a domain name.`);
        if (!domains.includes(h.host)) domains.push(h.host);
      }
      pins.push(["domains", domains]);
    }
    if (patch.aliases !== undefined) {
      pins.push(["aliases", [...new Set(patch.aliases.map((a) => a.trim()).filter(Boolean))]]);
    }
    // every field checked before any is stored; the brand is shown anew once
    const set: Pin[] = [];
    for (const [field, value] of pins)
      set.push(await this.setPin(brand, field, value, by, why, false));
    if (set.length) await this.refreshPins();
    return set;
  }

  /** Remove one field's pin of a brand. */
  async unpinField(slug: string, field: PinField, by: string) {
    return this.removePin(this.pinTarget(slug), field, by);
  }

  /** The brand whose pin is removed: in the catalog, or named by a pin only (taken down). */
  private pinTarget(slug: string): Pick<Brand, "id" | "slug"> {
    return (
      this.catalog.brand(slug) ?? this.overlay.pinnedBrand(slug.toLowerCase()) ?? this.brandOf(slug)
    );
  }

  private async setPin(
    brand: Brand,
    field: PinField,
    value: Pin["value"],
    by: string,
    why: string | null,
    refresh = true,
  ): Promise<Pin> {
    const pin: Pin = {
      brandId: brand.id,
      slug: brand.slug,
      field,
      value,
      by,
      at: new Date().toISOString(),
      why,
    };
    await this.store.setPin(pin);
    await this.audit(brand, "pin_set", by, { field, why });
    if (refresh) await this.refreshPins();
    return pin;
  }

  private async removePin(brand: Pick<Brand, "id" | "slug">, field: PinField, by: string) {
    const removed = await this.store.removePin(brand.id, field);
    if (!removed) throw notFound("pin_not_found", `${brand.slug} has no pin on ${field}.`);
    await this.audit(brand, "pin_removed", by, { field });
    await this.refreshPins();
    return pinView(removed);
  }

  async pins() {
    return (await this.store.pins()).map(pinView);
  }

  /** A brand's trail; a brand the catalog no longer has (taken down) by its slug. */
  async auditOf(slug: string, limit: number) {
    const b = this.catalog.brand(slug);
    const events = await this.store.audit(b?.id ?? null, slug.toLowerCase(), limit);
    if (!b && !events.some((e) => e.slug !== null))
      throw notFound("service_not_found", `No brand with slug ${slug}.`);
    return events;
  }
}

/** A pin as operators see it: artwork by its source and hash, never the markup. */
export function pinView(p: Pin) {
  const art = p.field.startsWith("artwork:") ? (p.value as PinnedArtwork) : null;
  return {
    slug: p.slug,
    brandId: p.brandId,
    field: p.field,
    value: art
      ? { sha256: art.svg.sha256, origin: art.origin, derived: Object.keys(art.derived) }
      : (p.value as string | string[]),
    by: p.by,
    at: p.at,
    why: p.why,
  };
}

/** A reported URL: https, a DNS name (no IP literal, no local name), ports 443 only. */
function reportUrl(input: string): string {
  if (input.length > URL_MAX)
    throw badInput("invalid_report", "url", `url is longer than ${URL_MAX} characters.`);
  try {
    const url = checkUrl(input);
    if (url.protocol !== "https:") throw new Refused("the url must be https");
    return url.href;
  } catch (err) {
    throw badInput("invalid_report", "url", `url: ${(err as Error).message}.`);
  }
}

/** An artwork URL an operator gives (http or https; discovery's fetcher checks every hop). */
function artworkUrl(input: string): string {
  try {
    return checkUrl(input).href;
  } catch (err) {
    throw badInput("invalid_pin", "url", `url: ${(err as Error).message}.`);
  }
}

const stored = (svg: string, source: string): StoredSvg => ({ svg, sha256: sha256(svg), source });

/**
 * Sanitized artwork for a pin, with what derives from it as for any mark: a single-colour
 * mark pinned as mono or color gives mono in black and dark/light in the brand's colour where
 * it stays visible (the enrichment rules); multi-colour color artwork serves dark and light as
 * it is. Refused with 400: script-bearing or unparsable SVG, a PNG body that is no PNG.
 */
export async function pinnedArtwork(
  brand: Brand,
  variant: Variant,
  kind: "svg" | "png",
  bytes: Uint8Array,
  origin: string,
): Promise<PinnedArtwork> {
  let art: Artwork;
  if (kind === "png") {
    if (!isPng(bytes)) throw badInput("invalid_pin", "body", "The body is not a PNG image.");
    art = await rasterArtwork(bytes).catch((err: Error) => {
      throw badInput("invalid_pin", "body", `PNG refused: ${err.message}`);
    });
  } else {
    const text = Buffer.from(bytes).toString("utf8");
    if (ACTIVE_SVG.test(text))
      throw badInput(
        "invalid_pin",
        "body",
        "The SVG has script, event handlers or foreignObject; send static artwork.",
      );
    art = await svgArtwork(text, `p${brand.id}`, variant === "mono").catch((err: Error) => {
      throw badInput("invalid_pin", "body", `SVG refused: ${err.message}`);
    });
  }
  const single = art.kind === "svg" && art.single !== null;
  if (variant === "mono" && !single)
    throw badInput("invalid_pin", "body", "A mono pin must be single-colour SVG artwork.");
  // the raster label keeps the PNG routes from drawing it larger than its pixels allow
  const source = art.kind === "svg" ? PIN_SOURCE : rasterSource(art.width, art.height, PIN_SOURCE);
  const black = single ? recolorMono(art.svg, "000000").svg : null;
  const svg = stored(variant === "mono" && black ? black : art.svg, source);
  const derived: Partial<Record<Variant, StoredSvg>> = {};
  const fromPin = `${PIN_SOURCE}:derived`;
  if ((variant === "mono" || variant === "color") && black) {
    const mono = stored(black, fromPin);
    if (variant === "color") derived.mono = mono;
    const r = deriveEnrichment({ ...brand, variants: { mono }, verifiedAt: "-" });
    for (const v of ["dark", "light"] as const) {
      const d = r.variants[v];
      if (d) derived[v] = stored(d.svg, fromPin);
    }
  } else if (variant === "color") {
    derived.dark = svg;
    derived.light = svg;
  }
  return { svg, derived, origin };
}
