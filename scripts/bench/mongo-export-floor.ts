#!/usr/bin/env bun
/**
 * The floor of an event export on the test MongoDB (FerretDB v1, scripts/mongo-local.ts): how fast the
 * plainest reads stream one account's events, with nothing of the app in between. Compare with
 * the app's export in analytics-dash.ts. Prints figures only.
 *
 * --events usage-event-shaped documents (--accounts accounts, interleaved) are inserted into a
 * fresh collection with the index the store keeps ({accountId: 1, _id: 1}), then read:
 *  - one account's events, `find({accountId}).sort({_id: 1})`, streamed through one cursor
 *    (what any export must at least do);
 *  - the same without the sort;
 *  - every document of the collection, `find({})`, no filter (the wire and decoding alone).
 *   bun scripts/bench/mongo-export-floor.ts [--events 100000] [--accounts 1]
 */
import { MongoClient } from "mongodb";
import { newId } from "../../src/platform/ids";
import { findFerretDb, startMongoLocal } from "../mongo-local";
import { loadArgs } from "./args";
import { fmt } from "./stats";

const { values } = loadArgs(
  {},
  {
    events: { type: "string", default: "100000" },
    accounts: { type: "string", default: "1" },
  },
);
const EVENTS = Number(values.events);
const ACCOUNTS = Number(values.accounts);
const found = findFerretDb();
if (found.bin === null) {
  console.log(`skipped: ${found.reason}`);
  process.exit(0);
}
const server = await startMongoLocal({ bin: found.bin });
const client = await MongoClient.connect(server.url);
try {
  const events = client
    .db("floor")
    .collection<{ _id: string } & Record<string, unknown>>("usage_events");
  await events.createIndex({ accountId: 1, _id: 1 });
  const start = Date.now() - EVENTS * 1000;
  for (let i = 0; i < EVENTS; i += 10_000) {
    const docs = [];
    for (let j = i; j < Math.min(EVENTS, i + 10_000); j++) {
      const at = start + j * 1000;
      const ts = new Date(at).toISOString();
      docs.push({
        _id: newId(at),
        ts,
        day: ts.slice(0, 10),
        accountId: `acc-${j % ACCOUNTS}`,
        keyId: `key-${j % 5}`,
        tier: "pro",
        bucket: "svg",
        route: "/v1/svg/:slug",
        slug: `brand-${j % 200}`,
        variant: "color",
        format: "svg",
        status: 200,
        latencyMs: 1.5,
      });
    }
    await events.insertMany(docs, { ordered: false });
  }
  const read = async (label: string, cursor: AsyncIterable<unknown>) => {
    const t0 = performance.now();
    let n = 0;
    for await (const _ of cursor) n++;
    const s = (performance.now() - t0) / 1000;
    console.log(`  ${label.padEnd(58)} ${n} events in ${fmt(s, 2)} s = ${fmt(n / s, 0)} events/s`);
  };
  console.log(
    `FerretDB v1 (${server.backend}), ${EVENTS} events over ${ACCOUNTS} account(s); one account holds ${Math.ceil(EVENTS / ACCOUNTS)}`,
  );
  await read(
    "find({accountId}).sort({_id: 1}), one cursor",
    events.find({ accountId: "acc-0" }).sort({ _id: 1 }).batchSize(10_000),
  );
  await read("find({accountId}), no sort", events.find({ accountId: "acc-0" }).batchSize(10_000));
  await read("find({}), every document, no filter", events.find({}).batchSize(10_000));
} finally {
  await client.close();
  await server.stop();
}
