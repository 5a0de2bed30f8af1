import { MongoClient } from "mongodb";
import { startMongoLocal, findFerretDb } from "./scripts/mongo-local";
import { MongoUsageStore } from "./src/store/mongo/usage";
import { event } from "./tests/usage/util";
const m = await startMongoLocal({ bin: (findFerretDb() as { bin: string }).bin });
const clients = [new MongoClient(m.url), new MongoClient(m.url)];
const dbs = clients.map((c) => c.db("race"));
await MongoUsageStore.ensureIndexes(dbs[0]!);
const stores = dbs.map((db) => new MongoUsageStore(db));
const t0 = performance.now();
for (let a = 0; a < 10; a++) {
  const accountId = `acc${a}`;
  for (let round = 0; round < 3; round++) {
    const t = performance.now();
    await Promise.all(stores.map((s) => s.append([event({ accountId, ts: "2025-09-01T12:00:00.000Z" }), event({ accountId, ts: "2025-09-01T12:00:00.000Z", status: 429 })]).catch((e) => console.log("ERR", e.message))));
    console.log(a, round, (performance.now() - t).toFixed(0));
  }
}
console.log("total", (performance.now() - t0).toFixed(0), JSON.stringify(await stores[0]!.daily("acc3", "2025-09-01", "2025-09-01")));
await Promise.all(stores.map((s) => s.close())); await Promise.all(clients.map((c) => c.close())); await m.stop();
