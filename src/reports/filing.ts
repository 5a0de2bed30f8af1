/**
 * How filings join a report, the same in both stores: one open report per brand (or domain)
 * and kind; each account votes once; the URLs and notes of later filings are attached.
 */
import { newId } from "../platform/ids";
import type { Filing, Report } from "./store/port";

/** Most distinct URLs and notes one report keeps (later ones are left out). */
export const URLS_MAX = 20;
export const NOTES_MAX = 50;

/** The key open reports are unique by: the brand (or the domain of a missing one) and kind. */
export const openKey = (r: Pick<Report, "brandId" | "domain" | "kind">) =>
  `${r.brandId === null ? `d:${r.domain}` : `b:${r.brandId}`}|${r.kind}`;

/** The report a first filing makes. */
export function firstFiling(report: Report, filing: Filing): Report {
  return withFiling({ ...report, urls: [], notes: [], votes: 0 }, filing, true);
}

/** `report` with `filing` joined: a vote when `voted`, its URL and note attached. */
export function withFiling(report: Report, filing: Filing, voted: boolean): Report {
  const urls =
    filing.url && !report.urls.includes(filing.url) && report.urls.length < URLS_MAX
      ? [...report.urls, filing.url]
      : report.urls;
  const notes =
    filing.note && report.notes.length < NOTES_MAX
      ? [...report.notes, { text: filing.note, at: filing.at, accountId: filing.accountId }]
      : report.notes;
  if (!voted && urls === report.urls && notes === report.notes) return report;
  return { ...report, urls, notes, votes: report.votes + (voted ? 1 : 0), updatedAt: filing.at };
}

/** A report stored before reports gathered URLs and notes (one `url`, one `note`). */
export function upgradeReport(stored: Report & { url?: string | null; note?: string | null }) {
  if (Array.isArray(stored.urls)) return stored as Report;
  const { url, note, ...rest } = stored;
  return {
    ...rest,
    domain: rest.domain ?? null,
    urls: url ? [url] : [],
    notes: note ? [{ text: note, at: rest.createdAt, accountId: rest.accountId }] : [],
    updatedAt: rest.createdAt,
  } satisfies Report;
}

/** Fold open reports of the same key into the oldest: votes summed, URLs and notes attached. */
export function foldDuplicates(reports: Report[]): { kept: Report[]; folded: Map<string, string> } {
  const byKey = new Map<string, Report>();
  const kept: Report[] = [];
  const folded = new Map<string, string>();
  for (const r of [...reports].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    const into = r.status === "open" ? byKey.get(openKey(r)) : undefined;
    if (!into) {
      if (r.status === "open") byKey.set(openKey(r), r);
      kept.push(r);
      continue;
    }
    let merged = into;
    for (const url of r.urls)
      merged = withFiling(
        merged,
        { accountId: r.accountId, url, note: null, at: r.createdAt },
        false,
      );
    for (const n of r.notes)
      merged = withFiling(
        merged,
        { accountId: n.accountId, url: null, note: n.text, at: n.at },
        false,
      );
    merged = { ...merged, votes: merged.votes + r.votes };
    kept[kept.indexOf(into)] = merged;
    byKey.set(openKey(r), merged);
    folded.set(r.id, into.id);
  }
  return { kept, folded };
}

/** A new open report of one filing (the store sets votes, URLs and notes). */
export function newReport(r: {
  brandId: number | null;
  slug: string | null;
  domain: string | null;
  kind: Report["kind"];
  accountId: string;
  at: string;
}): Report {
  return {
    id: newId(),
    brandId: r.brandId,
    slug: r.slug,
    domain: r.domain,
    kind: r.kind,
    urls: [],
    notes: [],
    status: "open",
    votes: 0,
    accountId: r.accountId,
    createdAt: r.at,
    updatedAt: r.at,
    decidedAt: null,
    decidedBy: null,
  };
}
