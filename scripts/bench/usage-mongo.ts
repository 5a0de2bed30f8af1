#!/usr/bin/env bun
/**
 * The usage log on MongoDB: what it writes, which indexes its queries use, how fast it takes
 * traffic. Prints every figure (and the load average), asserts nothing.
 *
 *   bun scripts/bench/usage-mongo.ts [--events 200000] [--accounts 50] [--rate 15000]
 *     [--url mongodb://...]   (default: a FerretDB on PostgreSQL started for the run, as the
 *                              tests start it: scripts/mongo-local.ts)
 *
 *  1. Ingest: --events events of dense traffic (usage-gen.ts: --accounts accounts, 200 brands,
 *     batched as the recorder batches them: one batch per account per 250 ms flush window, at
 *     --rate events/s of traffic time), appended in the recorder's appends (at most 65,536
 *     events each), one at a time, then `settled()` (every batch counted into the
 *     projections, by the projector running meanwhile): events/s stored, and events/s stored
 *     and counted.
 *  2. Writes per 1,000 events, from the driver's command monitoring during the ingest:
 *     documents inserted and updated (per collection) and the bytes of the write commands sent.
 *  3. Each read the service makes (history, series by day and hour, a brand= read, misses, an
 *     export page from today and from the first day, the day's tally, the projector's reads for
 *     a batch it counts), captured as the driver sends it and run again with `explain`: the
 *     indexes each one uses (MongoDB: the winning plan's stages; FerretDB: whether the filter
 *     and sort were pushed down to its backend, and the backend's plan).
 */
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { BSON, type CommandStartedEvent, MongoClient } from "mongodb";
import { DAY_MS } from "../../src/platform/day";
import { MongoUsageLog } from "../../src/usage/log/mongo";
import { startMongoLocal } from "../mongo-local";
import { fmt } from "./stats";
import { usageFlushes } from "./usage-gen";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "200000" },
    accounts: { type: "string", default: "50" },
    rate: { type: "string", default: "15000" },
    url: { type: "string" },
  },
});
const EVENTS = Number(values.events);
const ACCOUNTS = Number(values.accounts);
const RATE = Number(values.rate);
const APPEND = 65_536;
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");

const local = values.url ? null : await startMongoLocal({ backend: "pg" });
const url = values.url ?? (local?.url as string);
const server = local ? `FerretDB (${local.backend} backend, started for the run)` : url;
console.log(
  `Usage log on ${server}: ${EVENTS} events, ${ACCOUNTS} accounts, ${RATE} events/s of traffic time; load average ${load()}`,
);

const client = new MongoClient(url, { monitorCommands: true, serverSelectionTimeoutMS: 5000 });
await client.connect();
const db = client.db(`bench_usage_mongo_${process.pid}`);
try {
  await MongoUsageLog.ensureIndexes(db, { retentionDays: 90 });
  const log = new MongoUsageLog(db, { hourlyDays: 90 });

  // commands as the driver sends them
  let capture: CommandStartedEvent[] | null = null;
  client.on("commandStarted", (e) => capture?.push(e));

  // 1 and 2: ingest, with the writes it sends
  const to = Date.now() - 60_000;
  const from = to - Math.ceil((EVENTS / RATE) * 1000);
  const accountId = "bench-account-0";
  const flushes = usageFlushes({
    accountId,
    keys: ["key-a", "key-b", "key-c", "key-d", ""],
    count: EVENTS,
    from,
    to,
    accounts: ACCOUNTS,
    share: 1 / ACCOUNTS,
    variants: 3,
    svgOnly: true,
    perAppend: APPEND,
  });
  const sent: CommandStartedEvent[] = [];
  capture = sent;
  let events = 0;
  let batches = 0;
  const started = performance.now();
  for (const list of flushes) {
    await log.append(list);
    for (const b of list) events += b.n;
    batches += list.length;
  }
  const stored = (performance.now() - started) / 1000;
  await log.settled();
  const counted = (performance.now() - started) / 1000;
  capture = null;
  console.log(
    `ingest: ${events} events in ${batches} batches: stored in ${fmt(stored, 1)} s = ${fmt(events / stored / 1000, 1)}k events/s; stored and counted in ${fmt(counted, 1)} s = ${fmt(events / counted / 1000, 1)}k events/s; load ${load()}`,
  );
  const per = new Map<
    string,
    { inserted: number; updated: number; deleted: number; bytes: number }
  >();
  for (const e of sent) {
    const c = e.command as Record<string, unknown>;
    const op = ["insert", "update", "delete"].find((k) => typeof c[k] === "string");
    if (!op) continue;
    const coll = c[op] as string;
    const row = per.get(coll) ?? { inserted: 0, updated: 0, deleted: 0, bytes: 0 };
    const docs = (c.documents ?? c.updates ?? c.deletes ?? []) as unknown[];
    if (op === "insert") row.inserted += docs.length;
    else if (op === "update") row.updated += docs.length;
    else row.deleted += docs.length;
    row.bytes += BSON.calculateObjectSize(c as BSON.Document);
    per.set(coll, row);
  }
  const k = events / 1000;
  let total = 0;
  let docs = 0;
  console.log("writes per 1,000 events (the write commands the driver sent):");
  for (const [coll, r] of [...per].sort((a, b) => b[1].bytes - a[1].bytes)) {
    total += r.bytes;
    docs += r.inserted + r.updated + r.deleted;
    console.log(
      `  ${coll.padEnd(18)} ${fmt(r.inserted / k, 1)} inserted, ${fmt(r.updated / k, 1)} updated, ${fmt(r.deleted / k, 1)} deleted; ${fmt(r.bytes / k / 1024, 1)} KiB`,
    );
  }
  console.log(
    `  all: ${fmt(docs / k, 1)} documents, ${fmt(total / k / 1024, 1)} KiB (${fmt(total / events, 0)} bytes an event)`,
  );
  const sizes = await Promise.all(
    ["usage_log", "usage_periods", "usage_misses"].map(async (name) => {
      const s = (await db.command({ collStats: name }).catch(() => null)) as {
        count?: number;
        size?: number;
        totalIndexSize?: number;
      } | null;
      return `${name} ${s?.count ?? "?"} documents, ${fmt((s?.size ?? 0) / events, 1)} bytes/event (+ indexes ${fmt((s?.totalIndexSize ?? 0) / events, 1)})`;
    }),
  );
  console.log(`stored: ${sizes.join("; ")}`);

  // 3: each read, explained (a reader of its own: no projector timer among its commands)
  const reader = new MongoUsageLog(db, { hourlyDays: 90, projectEveryMs: 0 });
  const today = new Date(to).toISOString().slice(0, 10);
  const firstDay = new Date(from - 30 * DAY_MS).toISOString().slice(0, 10);
  const reads: [string, () => Promise<unknown>][] = [
    ["history (daily, 366 days)", () => reader.daily(accountId, firstDay, today)],
    ["series by day (cells, day)", () => reader.cells(accountId, "day", "bs", firstDay, today)],
    ["series by hour (cells, hour)", () => reader.cells(accountId, "hour", "bs", today, today)],
    [
      "brand= read (cells, all)",
      () => reader.cells(accountId, "day", "all", firstDay, today, { brand: "brand-3" }),
    ],
    ["misses", () => reader.misses(accountId, firstDay, today)],
    [
      "export page from today",
      async () =>
        (
          await reader.exportStream(accountId, {
            from: today,
            to: today,
            after: null,
            before: Date.now(),
            limit: 1000,
          })
        ).close(),
    ],
    [
      "export page from the first day",
      async () =>
        (
          await reader.exportStream(accountId, {
            from: firstDay,
            to: today,
            after: null,
            before: Date.now(),
            limit: 1000,
          })
        ).close(),
    ],
    [
      "the day's tally (counters at start)",
      async () => {
        for await (const _ of reader.tallyOfDay(today));
      },
    ],
  ];
  // the projector's look for batches to count, and its group's reads: one more batch counted
  const more = [
    ...usageFlushes({
      accountId,
      keys: ["key-a"],
      count: 50,
      from: to,
      to: to + 1000,
      accounts: 1,
      perAppend: 50,
    }),
  ].flat();
  reads.push([
    "the projector (a batch appended, then counted)",
    async () => {
      await log.append(more);
      await log.settled();
    },
  ]);
  console.log("indexes per query (explain of each read command the service sends):");
  for (const [label, read] of reads) {
    const cmds: CommandStartedEvent[] = [];
    capture = cmds;
    await read();
    capture = null;
    const seen = new Set<string>();
    for (const e of cmds) {
      if (!["find", "aggregate", "count", "distinct"].includes(e.commandName)) continue;
      const {
        lsid: _l,
        $db: _d,
        $clusterTime: _c,
        ...command
      } = e.command as Record<string, unknown>;
      const what = `${e.commandName} ${String(command[e.commandName])} ${JSON.stringify(command.filter ?? command.pipeline ?? {}).slice(0, 100)}`;
      if (seen.has(what)) continue;
      seen.add(what);
      const plan = await db
        .command({ explain: command, verbosity: "queryPlanner" })
        .catch((err) => ({ error: (err as Error).message }));
      console.log(`  ${label}: ${what}\n    -> ${planSummary(plan)}`);
    }
  }
  await reader.close();
  await log.close();
} finally {
  await db.dropDatabase().catch(() => {});
  await client.close();
  await local?.stop();
}

/** The indexes and stages of an explain answer, on MongoDB or FerretDB. */
function planSummary(plan: unknown): string {
  const text = JSON.stringify(plan);
  const out: string[] = [];
  // MongoDB: the winning plan's stages and index names
  const stages = [...text.matchAll(/"stage":"([A-Z_]+)"/g)].map((m) => m[1]);
  const indexes = [...text.matchAll(/"indexName":"([^"]+)"/g)].map((m) => m[1]);
  if (stages.length) out.push(`stages ${[...new Set(stages)].join(", ")}`);
  if (indexes.length) out.push(`index ${[...new Set(indexes)].join(", ")}`);
  // FerretDB: what its backend was given, and the backend's plan nodes
  for (const key of ["filterPushdown", "sortPushdown", "limitPushdown", "pushdown"]) {
    const m = new RegExp(`"${key}":(true|false)`).exec(text);
    if (m) out.push(`${key} ${m[1]}`);
  }
  const nodes = [...text.matchAll(/"(?:Node Type|Plan)":"([^"]+)"/g)].map((m) => m[1]);
  const scans = [...text.matchAll(/"Index Name":"([^"]+)"/g)].map((m) => m[1]);
  if (nodes.length) out.push(`backend ${[...new Set(nodes)].join(", ")}`);
  if (scans.length) out.push(`backend index ${[...new Set(scans)].join(", ")}`);
  if (out.length === 0) out.push(text.slice(0, 300));
  return out.join("; ");
}
