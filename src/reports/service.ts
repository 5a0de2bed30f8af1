/**
 * Corrections: users report a problem with a brand, or a company the catalog lacks
 * (POST /v1/reports) and follow their reports (GET /v1/reports); operators accept or reject
 * reports and pin the right artwork and fields (src/reports/admin.ts, the admin CLI); every
 * change to a brand leaves an audit event with who made it and the value before and after.
 * Pins reach readers through the overlay (pins.ts) the catalog and the domain resolver consult;
 * a reported URL is fetched only when an operator accepts the report with a pin, through
 * discovery's guarded fetcher.
 */
import type { Principal } from "../accounts/model";
import { normalizeHost, registrableDomain } from "../catalog/brand/domain";
import type { BrandResolver } from "../catalog/brand/service";
import { type Brand, type StoredSvg, VARIANTS, type Variant } from "../catalog/built-catalog";
import type { GuardedFetcher } from "../catalog/discovery/fetcher";
import type { CatalogService } from "../catalog/service";
import { systemTimers, type Timers } from "../platform/clock";
import { conflict, notFound } from "../platform/domain-errors";
import { log } from "../platform/log";
import { auditEvent, servedValue } from "./audit";
import { recordBuild, type ServedBuild } from "./builds";
import { newReport } from "./filing";
import { type ArtworkInput, artworkBytes, badInput, pinnedArtwork, reportUrl } from "./pin-artwork";
import { PinOverlay, pinValue, pinView } from "./pins";
import {
  type AuditEvent,
  type CorrectionsStore,
  type OwnReport,
  type Pin,
  type PinField,
  REPORT_KINDS,
  type Report,
  type ReportKind,
  type ReportStatus,
  SYSTEM_ACCOUNT,
} from "./store/port";

export const NOTE_MAX = 1000;
/** The variants a pin of the brand's mark (color, mono) may keep of its own artwork. */
const MARKS: readonly Variant[] = ["color", "mono"];

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

export interface CorrectionsDeps {
  store: CorrectionsStore;
  catalog: CatalogService;
  brands: BrandResolver;
  /** discovery's guarded fetcher: SSRF checks at every hop, size and time caps */
  fetcher: GuardedFetcher;
  /** queue discovery of a domain no brand has; false when discovery is off (or not queued) */
  discover?: (domain: string) => boolean;
  /** the timers the first build record waits on (tests move them) */
  timers?: Timers;
  /** how long after the start a fresh store records its first build */
  firstRecordMs?: number;
}

/** A fresh store's first build record waits this long after the start (see start()). */
const FIRST_RECORD_MS = 10_000;

/** A page of a list, and the cursor of the next one (null: the last page). */
export interface Page<T> {
  items: T[];
  next: string | null;
}

const page = <T extends { id: string }>(items: T[], limit: number): Page<T> => ({
  items,
  next: items.length === limit ? (items[items.length - 1]?.id ?? null) : null,
});

export class CorrectionsService {
  readonly overlay = new PinOverlay();
  /** public so tests can point it at their loopback fixtures */
  fetcher: GuardedFetcher;
  private store: CorrectionsStore;
  private catalog: CatalogService;
  private brands: BrandResolver;
  private discover: (domain: string) => boolean;
  /** brand id -> its pins' fields and times, to see which brands a refresh changed */
  private pinned = new Map<number, string>();
  private timer: ReturnType<typeof setInterval> | null = null;
  /** the recording of the catalog version being served (see builds.ts) */
  private build: Promise<void> = Promise.resolve();
  /** a fresh store's first record, waiting (see start) */
  private firstRecord: unknown = null;
  private timers: Timers;
  private firstRecordMs: number;

  constructor(deps: CorrectionsDeps) {
    this.store = deps.store;
    this.catalog = deps.catalog;
    this.fetcher = deps.fetcher;
    this.brands = deps.brands;
    this.discover = deps.discover ?? (() => false);
    this.timers = deps.timers ?? systemTimers;
    this.firstRecordMs = deps.firstRecordMs ?? FIRST_RECORD_MS;
    deps.catalog.useOverlay(this.overlay);
  }

  /**
   * Read the pins, and record the catalog's build (at start and after every reload). A store
   * that recorded no build and holds no pin records its first (a copy of every built brand's
   * state) `firstRecordMs` after the start, in the background: nothing is waiting for it, and
   * an instance stopped before then leaves it to the next. A reload before then records the
   * outgoing version first, so the reload's changes are still told brand by brand.
   */
  async start() {
    await this.refreshPins();
    const fresh = (await this.store.catalogStateVersion()) === null && this.overlay.size === 0;
    if (fresh)
      this.firstRecord = this.timers.setTimeout(() => {
        this.firstRecord = null;
        void this.recordBuild();
      }, this.firstRecordMs);
    else await this.recordBuild();
    this.catalog.beforeSwap((outgoing) => {
      if (this.firstRecord === null || !outgoing.meta) return;
      this.timers.clearTimeout(this.firstRecord);
      this.firstRecord = null;
      void this.recordBuild({ version: outgoing.meta.version, brands: outgoing.builtBrands() });
    });
    this.catalog.onChange((updated) => {
      if (!updated && this.firstRecord === null) void this.recordBuild();
    });
  }

  /** Resolves once the catalog version in use is recorded (its changes, its pins moved). */
  settled(): Promise<void> {
    return this.build;
  }

  private recordBuild(first?: ServedBuild) {
    this.build = this.build.then(() =>
      recordBuild(
        {
          store: this.store,
          catalog: this.catalog,
          refreshPins: () => this.refreshPins(),
          pinsOf: (id) => this.overlay.pinsOf(id),
          pins: () => [...this.overlay.pinnedIds()].flatMap((id) => this.overlay.pinsOf(id)),
          reportOrphan: (brand, note) => this.reportOrphan(brand, note),
        },
        first,
      ).catch((err) =>
        log("warn", "catalog build audit failed", { reason: (err as Error).message }),
      ),
    );
    return this.build;
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
    if (this.firstRecord !== null) this.timers.clearTimeout(this.firstRecord);
    this.firstRecord = null;
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

  /** Append events to the trail; a failed write (after the change was made) is logged. */
  private append(...events: AuditEvent[]) {
    return this.store
      .appendAudit(events)
      .catch((err) => log("warn", "audit event not stored", { reason: (err as Error).message }));
  }

  /** A brand by slug, 404 when the catalog has none. */
  brandOf(slug: string): Brand {
    const b = this.catalog.brand(slug);
    if (!b) throw notFound("service_not_found", `No brand with slug ${slug}.`);
    return b;
  }

  /**
   * File a report: a new one, or the caller's filing joins the open report of the same brand
   * (or domain) and kind (one vote per account, URL and note attached). A `missing_brand`
   * report names a domain no brand has and queues its discovery when discovery is on.
   * Input errors are 400 with the field.
   */
  async fileReport(principal: Principal, input: ReportInput) {
    if (!(REPORT_KINDS as readonly string[]).includes(input.kind))
      throw badInput("invalid_report", "kind", `kind must be one of ${REPORT_KINDS.join(", ")}.`);
    const kind = input.kind as ReportKind;
    const target = kind === "missing_brand" ? this.missingDomain(input) : this.reportedBrand(input);
    const url = input.url === undefined ? null : reportUrl(input.url);
    const note = input.note?.trim() || null;
    if (note !== null && [...note].length > NOTE_MAX)
      throw badInput("invalid_report", "note", `note is longer than ${NOTE_MAX} characters.`);
    const at = new Date().toISOString();
    const { report, voted } = await this.store.fileReport(
      newReport({ ...target, kind, accountId: principal.accountId, at }),
      { accountId: principal.accountId, url, note, at },
    );
    const queued =
      target.domain !== null && report.status === "open" && this.discover(target.domain);
    return { report, voted, queued };
  }

  /** The brand a report names by slug or domain: 404 when the catalog has none. */
  private reportedBrand(input: ReportInput) {
    if ((input.slug === undefined) === (input.domain === undefined))
      throw badInput("invalid_report", "slug", "Pass one of slug or domain.");
    let b: Brand | null | undefined;
    if (input.slug !== undefined) b = this.brandOf(input.slug);
    else {
      const h = normalizeHost(input.domain as string);
      if (!h.ok) throw badInput("invalid_report", "domain", "domain is not a domain name.");
      b = this.brands.resolveHost(h.host);
      if (!b)
        throw notFound(
          "domain_not_found",
          `No brand matches the domain ${h.host}. To report a company we are missing, send kind missing_brand.`,
        );
    }
    return { brandId: b.id, slug: b.slug, domain: null };
  }

  /** The domain of a missing_brand report: a public domain no brand has (409 when one has). */
  private missingDomain(input: ReportInput) {
    if (input.domain === undefined || input.slug !== undefined)
      throw badInput("invalid_report", "domain", "A missing brand is reported by its domain.");
    const h = normalizeHost(input.domain);
    const domain = h.ok ? registrableDomain(h.host) : null;
    if (!h.ok || !domain)
      throw badInput("invalid_report", "domain", "domain is not a public domain name.");
    const b = this.brands.resolveHost(h.host) ?? this.brands.resolveHost(domain);
    if (b)
      throw conflict(
        "brand_exists",
        `The catalog has ${h.host}: ${b.name} (${b.slug}). Report a problem with it by slug.`,
        { slug: b.slug },
      );
    return { brandId: null, slug: null, domain };
  }

  /** A pin a catalog build left without its brand, in the queue (once per open report). */
  private async reportOrphan(brand: { id: number; slug: string }, note: string) {
    const at = new Date().toISOString();
    const { report } = await this.store.fileReport(
      newReport({
        brandId: brand.id,
        slug: brand.slug,
        domain: null,
        kind: "pin_orphaned",
        accountId: SYSTEM_ACCOUNT,
        at,
      }),
      { accountId: SYSTEM_ACCOUNT, url: null, note, at },
    );
    return report;
  }

  /** The caller's own reports (filed or joined), newest first. */
  async reportsOf(principal: Principal, limit: number, cursor?: string): Promise<Page<OwnReport>> {
    return page(await this.store.reportsOf(principal.accountId, limit, cursor), limit);
  }

  async reports(status: ReportStatus | undefined, limit: number, cursor?: string) {
    return page(await this.store.reports(status, limit, cursor), limit);
  }

  /**
   * A report with its brand's current artwork variants, their provenance and pins (a
   * missing_brand report: the brand its domain names now, once discovery or a build added it).
   */
  reportView(r: Report) {
    const b = r.slug
      ? this.catalog.brand(r.slug)
      : r.domain
        ? (this.brands.resolveHost(r.domain) ?? undefined)
        : undefined;
    return {
      ...r,
      brand: b
        ? {
            slug: b.slug,
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
      throw conflict("report_decided", `Report ${id} is already ${r.status}.`);
    return r;
  }

  /**
   * Accept a report; with `pin`, the report's URL (the first one given, or `url`, one of its
   * URLs) is fetched now through the guarded fetcher and pinned as the brand's artwork
   * (`variant`, default color) in the same step.
   */
  async accept(
    id: string,
    by: string,
    opts: { pin?: boolean; variant?: Variant; url?: string } = {},
  ) {
    const r = await this.openReport(id);
    let pin: Pin | null = null;
    if (opts.pin) {
      if (r.slug === null)
        throw badInput("invalid_pin", "pin", `Report ${id} names no brand in the catalog.`);
      const url = opts.url ?? r.urls[0];
      if (!url)
        throw badInput("invalid_pin", "pin", `Report ${id} has no url to pin artwork from.`);
      if (!r.urls.includes(url))
        throw badInput("invalid_pin", "url", `${url} is not one of report ${id}'s urls.`);
      pin = await this.pinArtwork(r.slug, opts.variant ?? "color", { url }, by, {
        why: `report ${id}`,
      });
    }
    return { report: await this.decide(r, "accepted", by, pin), pin: pin ? pinView(pin) : null };
  }

  reject(id: string, by: string) {
    return this.openReport(id).then((r) => this.decide(r, "rejected", by, null));
  }

  private async decide(r: Report, status: "accepted" | "rejected", by: string, pin: Pin | null) {
    const decided = await this.store.decideReport(r.id, status, by, new Date().toISOString());
    if (!decided) throw conflict("report_decided", `Report ${r.id} was decided meanwhile.`);
    await this.append(
      auditEvent(
        r.brandId === null ? null : { id: r.brandId, slug: r.slug },
        status === "accepted" ? "report_accepted" : "report_rejected",
        by,
        {
          before: { status: "open", votes: r.votes },
          after: { status, votes: decided.votes, pinned: pin?.field ?? null },
          detail: { report: r.id, kind: r.kind, domain: r.domain },
        },
      ),
    );
    return decided;
  }

  /**
   * Pin artwork (an upload or a URL) as one of a brand's variants, or (`remove`) pin the
   * variant's removal. A color or mono pin replaces all the brand's own artwork except the
   * variants in `keep`.
   */
  async pinArtwork(
    slug: string,
    variant: Variant,
    input: ArtworkInput,
    by: string,
    opts: { why?: string | null; keep?: Variant[] } = {},
  ): Promise<Pin> {
    const brand = this.brandOf(slug);
    if (opts.keep?.length && !MARKS.includes(variant))
      throw badInput("invalid_pin", "keep", "keep applies to color and mono pins only.");
    let value: Pin["value"];
    if ("remove" in input) {
      if (opts.keep?.length) throw badInput("invalid_pin", "keep", "A removal keeps nothing.");
      value = { removed: true };
    } else {
      const { bytes, kind, origin } = await artworkBytes(input, this.fetcher);
      const art = await pinnedArtwork(brand, variant, kind, bytes, origin);
      const keep = (opts.keep ?? []).filter((v) => v !== variant && !(v in art.derived));
      value = keep.length ? { ...art, keep: [...new Set(keep)] } : art;
    }
    return this.setPin(brand, `artwork:${variant}`, value, by, opts.why ?? null);
  }

  /** Remove a variant's pin: the catalog's own artwork is served again. */
  async unpinArtwork(slug: string, variant: Variant, by: string) {
    return this.removePin(this.pinTarget(slug), `artwork:${variant}`, by);
  }

  /** Pin any of name, brandColor, domains, aliases (a null value removes that pin). */
  async patchBrand(slug: string, patch: BrandPatch, by: string): Promise<Pin[]> {
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
    if (!pins.length) return [];
    // every field checked before any is stored; the brand is shown anew once
    const brand = this.brandOf(slug);
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

  /**
   * The brand whose pin is removed: the catalog's brand of that slug, else the brand a pin
   * names by it (one the catalog no longer has: taken down, or retired by a build, whose slug
   * may now redirect to another brand).
   */
  private pinTarget(slug: string): Pick<Brand, "id" | "slug"> {
    const key = slug.toLowerCase();
    const b = this.catalog.brand(key);
    if (b?.slug === key) return b;
    return this.overlay.pinnedBrand(key) ?? b ?? this.brandOf(slug);
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
    const replaced = await this.store.setPin(pin);
    await this.append(
      auditEvent(brand, replaced ? "pin_replaced" : "pin_set", by, {
        before: replaced ? pinValue(replaced) : servedValue(brand, field),
        after: pinValue(pin),
        detail: { field, why },
      }),
    );
    if (refresh) await this.refreshPins();
    return pin;
  }

  private async removePin(brand: Pick<Brand, "id" | "slug">, field: PinField, by: string) {
    const removed = await this.store.removePin(brand.id, field);
    if (!removed) throw notFound("pin_not_found", `${brand.slug} has no pin on ${field}.`);
    await this.refreshPins();
    await this.append(
      auditEvent(brand, "pin_removed", by, {
        before: pinValue(removed),
        after: servedValue(this.catalog.brandById(brand.id), field),
        detail: { field },
      }),
    );
    return pinView(removed);
  }

  async pins() {
    return (await this.store.pins()).map(pinView);
  }

  /**
   * A brand's trail, newest first, a page at a time: its own events and those of the slugs it
   * had (retired slugs that redirect to it); a brand the catalog no longer has by its slug.
   */
  async auditOf(slug: string, limit: number, cursor?: string): Promise<Page<AuditEvent>> {
    const key = slug.toLowerCase();
    const b = this.catalog.brand(key);
    const scope = b
      ? { brandIds: [b.id], slugs: [b.slug, ...(b.formerSlugs ?? [])] }
      : { brandIds: [], slugs: [key] };
    const events = await this.store.audit(scope, limit, cursor);
    if (!b && !events.length && !cursor)
      throw notFound("service_not_found", `No brand with slug ${slug}.`);
    return page(events, limit);
  }
}
