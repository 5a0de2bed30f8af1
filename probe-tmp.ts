import { MongoClient } from "mongodb";
import { startMongoLocal } from "./scripts/mongo-local";
import { MongoUsageStore } from "./src/store/mongo/usage";
import { usageSeries } from "./src/usage/analytics/series";
import { eventOf } from "./src/usage/serialize";
const m = await startMongoLocal();
const c = new MongoClient(m.url); await c.connect();
const db = c.db("probe");
await MongoUsageStore.ensureIndexes(db);
const store = new MongoUsageStore(db);
const now = Date.now(), first = now - 365 * 86400e3, N = 200000;
const B = ["svg","png","webp","catalog","search","domain","batch"], W=[50,20,5,10,8,5,2];
let seed = 42; const rand = () => { seed = (seed * 16807) % 2147483647; return seed / 2147483647; };
const pick = (l: any[], w: number[]) => { let r = rand() * w.reduce((a,b)=>a+b,0); for (let i=0;i<l.length;i++){ r-=w[i]; if (r<=0) return l[i]; } return l[l.length-1]; };
const BR = Array.from({length:200},(_, i)=>`brand-${i}`), BW = BR.map((_, i)=>1/(i+1));
const keys = ["k1","key-b","key-c","key-d",""];
for (let i = 0; i < N; i += 20000) {
  const batch = [];
  for (let j = i; j < i + 20000; j++) {
    const bucket = pick(B, W); const r = rand();
    const status = r < 0.03 ? 404 : r < 0.08 ? 304 : r < 0.1 ? 429 : r < 0.102 ? 500 : 200;
    const image = ["svg","png","webp"].includes(bucket);
    const e = eventOf({ at: first + Math.floor((365*86400e3 * j) / N), accountId: "acct", keyId: keys[j%5], tier: "pro", bucket, route: "/x", slug: bucket === "search" ? null : pick(BR, BW), variant: image ? ["mono","color","icon","wordmark"][j%4] : null, format: image ? bucket : undefined, status, latencyMs: Math.round(Math.exp(Math.log(1.5)+0.8*Math.sqrt(-2*Math.log(rand()||1e-9)))*100)/100 } as any);
    batch.push({ _id: e.id, ...e });
  }
  await db.collection<any>("usage_events").insertMany(batch, { ordered: false });
}
let t0 = performance.now();
await store.rebuildDaily();
console.log("rebuild", (performance.now() - t0).toFixed(0), "ms");
for (const g of ["usage_daily","usage_view_day_bs","usage_view_day_b","usage_view_day_all","usage_view_day_all_b","usage_view_hour_all"]) {
  const st = await db.command({ collStats: g }).catch(() => null);
  const docs = await db.collection<any>(g).find({}).toArray();
  const bytes = docs.reduce((a, d) => a + (d.c?.buffer?.length ?? 0), 0);
  console.log(g, "docs", docs.length, "packed bytes", bytes);
}
await store.append([eventOf({ at: Date.now(), accountId: "acct", keyId: "k1", tier: "pro", bucket: "svg", route: "/x", slug: "brand-3", variant: "mono", format: "svg", status: 200, latencyMs: 1 } as any)]);
const cold = new MongoUsageStore(db);
const P = { accountId: "acct", tier: "pro" } as any;
const from = new Date(first).toISOString().slice(0,10), to = new Date(now).toISOString().slice(0,10);
async function t(label: string, f: () => Promise<unknown>, n = 10) {
  await f(); const ms: number[] = []; for (let i = 0; i < n; i++) { const s = performance.now(); await f(); ms.push(performance.now() - s); }
  ms.sort((a,b)=>a-b); console.log(label.padEnd(40), "p50", ms[n>>1].toFixed(1), "max", ms[n-1].toFixed(1));
}
const s: any = store;
for (const [label, q] of [["cold none", { from, to, granularity: "day" }], ["cold brand,status_class", { from, to, group_by: "brand,status_class" }], ["cold brand=", { from, to, brand: "brand-3", group_by: "key" }], ["cold hist", null]] as const) { const s0 = performance.now(); q ? await usageSeries(cold, P, q as any) : await cold.daily("acct", from, to); console.log(label, (performance.now() - s0).toFixed(1)); }
await t("slotIds", () => s.slotIds());
await t("readDocs daily", () => s.readDocs("daily", "acct", from, to));
await t("daily()", () => store.daily("acct", from, to));
await t("readDocs day.bs", () => s.readDocs("day.bs", "acct", from, to));
await t("cells day.bs", () => store.cells("acct", "day.bs", from, to));
await t("series none", () => usageSeries(store, P, { from, to, granularity: "day" }));
await t("readDocs day.b", () => s.readDocs("day.b", "acct", from, to));
await t("cells day.b", () => store.cells("acct", "day.b", from, to));
await t("series brand,status_class", () => usageSeries(store, P, { from, to, group_by: "brand,status_class" }));
await t("cells day.all brand", () => store.cells("acct", "day.all", from, to, { brand: "brand-3" }));
await t("series brand= by key", () => usageSeries(store, P, { from, to, brand: "brand-3", group_by: "key" }));
await t("13 findOne day.bs raw", () => Promise.all(Array.from({length: 13}, (_, i) => db.collection<any>("usage_view_day_bs").findOne({ _id: `acct|2026-${String(i%12+1).padStart(2,"0")}|r` }))));
await t("1 findOne day.bs raw", () => db.collection<any>("usage_view_day_bs").findOne({ _id: `acct|2026-05|r` }));
await c.close(); await m.stop();
