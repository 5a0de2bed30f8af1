import { invalid } from "../../platform/domain-errors";
import type { UsageEvent } from "../event";
import type { UsageLog } from "../log/port";
import { type HistoryQuery, resolveRange } from "./service";

export const EXPORT_DEFAULT_LIMIT = 10_000;
export const EXPORT_MAX_LIMIT = 50_000;
const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface ExportRequest extends HistoryQuery {
  cursor?: string;
  format?: "ndjson" | "csv";
  limit?: number;
}

export interface ExportPage {
  contentType: string;
  /** the id to pass as `cursor` for the next page; null when this page was the last */
  next: string | null;
  body: ReadableStream<Uint8Array>;
}

/** CSV columns, in order (miss: the misses joined by a space). */
export const CSV_COLUMNS = [
  "id",
  "ts",
  "day",
  "accountId",
  "keyId",
  "tier",
  "bucket",
  "route",
  "slug",
  "variant",
  "format",
  "miss",
  "status",
  "latencyMs",
  "count",
] as const;

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote or line break. A text that a
 * spreadsheet would read as a formula (starting with = + - @, a tab or CR: a search query or slug
 * someone typed) gets a leading apostrophe.
 */
function csvField(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "number") return String(v);
  let s = Array.isArray(v) ? v.join(" ") : String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const csvLine = (e: UsageEvent) =>
  CSV_COLUMNS.map((c) => csvField((e as unknown as Record<string, unknown>)[c])).join(",");

/**
 * One page of the account's raw events, oldest id first: those of days from..to, after the event
 * id `cursor`, up to the first batch holding an event metered less than `settleMs` ago. Its body
 * is streamed from the store a chunk at a time (NDJSON: one stored event per line; CSV: a header
 * line, then CSV_COLUMNS). Event ids sort by their batch, a batch is written within seconds of
 * its first event, and a page ends before any batch that is not settled, so a page never misses
 * or repeats an event when events are appended between two pages.
 */
export async function exportPage(
  store: Pick<UsageLog, "exportStream">,
  accountId: string,
  q: ExportRequest,
  settleMs: number,
  now = new Date(),
): Promise<ExportPage> {
  const { from, to } = resolveRange(q, now);
  if (q.cursor !== undefined && !ID.test(q.cursor))
    throw invalid(
      "Invalid query parameter cursor: must be an event id (X-Next-Cursor of the previous page)",
    );
  const limit = q.limit ?? EXPORT_DEFAULT_LIMIT;
  const csv = q.format === "csv";
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const toCsv = (ndjson: Uint8Array) =>
    decoder
      .decode(ndjson)
      .split("\n")
      .filter(Boolean)
      .map((l) => `${csvLine(JSON.parse(l) as UsageEvent)}\n`)
      .join("");
  // streamed from the store a chunk at a time: the page is never in memory whole
  const page = await store.exportStream(accountId, {
    from,
    to,
    after: q.cursor ?? null,
    before: now.getTime() - settleMs,
    limit,
  });
  let head = csv;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (head) {
        head = false;
        controller.enqueue(encoder.encode(`${CSV_COLUMNS.join(",")}\n`));
        return;
      }
      for (;;) {
        const chunk = await page.next();
        if (!chunk) return controller.close();
        if (chunk.length === 0) continue;
        controller.enqueue(csv ? encoder.encode(toCsv(chunk)) : chunk);
        return;
      }
    },
    cancel() {
      page.close();
    },
  });
  return {
    contentType: csv ? "text/csv; charset=utf-8" : "application/x-ndjson",
    next: page.events === limit ? page.last : null,
    body,
  };
}
