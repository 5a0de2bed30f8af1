import { Refused } from "./address";
import { type Artwork, sha256 } from "./artwork";
import { type ArtworkReading, asset, type Found, type TrailEntry } from "./artwork-choice";
import {
  BIMI_PEM_MAX_BYTES,
  BIMI_SVG_MAX_BYTES,
  type BimiRecord,
  parseBimi,
  type TxtResolver,
  tinyPsProblem,
} from "./bimi";
import { CANDIDATE_SCORES, type Candidate } from "./extract";
import type { FetchResult } from "./fetcher";
import { verifyMark } from "./mark";
import type { BimiCheck } from "./store/port";
import type { X509Certificate } from "./x509";

/** What reading a BIMI logo needs besides the artwork's fetcher and worker. */
export interface BimiReading extends ArtworkReading {
  /** TXT lookups for BIMI records (system DNS or DoH); null: BIMI is not tried */
  txt: TxtResolver | null;
  /** trust anchors of mark certificates (the bundled roots, DISCOVERY_VMC_ROOTS) */
  vmcRoots: X509Certificate[];
}

/** A domain's BIMI logo (null when unusable) and the record of its checks. */
export type BimiResult = { found: Found | null; check: BimiCheck };

/**
 * The domain's BIMI record, its logo and its mark certificate: the SVG the record names
 * (https, at most 32 KB, SVG Tiny PS-like: square viewBox, no script) and, when the record
 * names a certificate, every check of mark.ts at `ctx.now`. Null without a record;
 * a record whose logo is unusable gives no artwork and says why (`check.unusable`); an
 * address the SSRF rules refuse refuses the domain, as for any candidate.
 */
export async function bimiLogo(
  ctx: BimiReading,
  domain: string,
  deadline: number,
  trail?: TrailEntry[],
): Promise<BimiResult | null> {
  if (!ctx.txt) return null;
  let record: BimiRecord | null;
  try {
    record = parseBimi(await ctx.txt(`default._bimi.${domain}`));
  } catch {
    return null; // no DNS answer: as if there were no record
  }
  if (!record?.logo) return null;
  const entry: TrailEntry = {
    origin: "bimi",
    url: record.logo,
    score: CANDIDATE_SCORES.bimi,
    outcome: "",
  };
  trail?.push(entry);
  const check: BimiCheck = {
    logo: record.logo,
    certificate: record.certificate,
    verifiedMark: false,
    failed: [],
  };
  const get = (url: string, maxBytes: number, accept: string) =>
    ctx.fetcher.get(url, { maxBytes, deadline, accept });
  let svg: FetchResult;
  let artwork: Artwork;
  try {
    if (!record.logo.startsWith("https://")) throw new Error("l= is not an https URL");
    svg = await get(record.logo, BIMI_SVG_MAX_BYTES, "image/svg+xml");
    if (svg.status !== 200) throw new Error(`HTTP ${svg.status}`);
    const text = svg.body.toString("utf8");
    const problem = tinyPsProblem(text);
    if (problem) throw new Error(problem);
    artwork = await ctx.artworkPool.process({
      kind: "svg",
      text,
      idPrefix: `w${sha256(record.logo).slice(0, 6)}`,
      forceMono: false,
    });
  } catch (err) {
    if (err instanceof Refused) throw err;
    entry.outcome = `failed: ${(err as Error).message}`;
    return { found: null, check: { ...check, unusable: (err as Error).message } };
  }
  if (record.certificate) {
    try {
      if (!record.certificate.startsWith("https://")) throw new Error("a= is not an https URL");
      const pem = await get(record.certificate, BIMI_PEM_MAX_BYTES, "application/x-pem-file");
      if (pem.status !== 200) throw new Error(`HTTP ${pem.status}`);
      const verdict = await verifyMark(pem.body.toString("utf8"), {
        domain,
        svg: svg.body,
        now: new Date(ctx.now()),
        roots: ctx.vmcRoots,
      });
      Object.assign(check, {
        verifiedMark: verdict.verified,
        failed: verdict.failed,
        organization: verdict.organization,
        notAfter: verdict.notAfter,
      });
    } catch (err) {
      if (err instanceof Refused) throw err;
      check.failed = [{ check: "certificate", reason: `not fetched: ${(err as Error).message}` }];
    }
  }
  const c: Candidate = {
    origin: "bimi",
    score: CANDIDATE_SCORES.bimi,
    url: record.logo,
    declared: 0,
  };
  const read = asset(c, svg.url, new Date(ctx.now()).toISOString(), sha256(svg.body), artwork, svg);
  return {
    found: {
      artwork,
      asset: {
        ...read,
        provenance: check.verifiedMark ? "bimi-verified" : "bimi",
        ...(record.certificate ? { verifiedMark: check.verifiedMark } : {}),
      },
    },
    check,
  };
}
