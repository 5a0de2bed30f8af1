// ad-hoc (not committed): p99 of app variants vs bare, interleaved
import { fmt, type LoadResult, load, loadArgs, percentile, startApp, startBare } from "./lib";

const { duration, connectionSets, rounds, values } = loadArgs(
  { duration: 4, connections: [16, 50], rounds: 3 },
  { variants: { type: "string", default: "" } },
);
const paths = ["github", "stripe", "slack", "google", "apple", "openai"].map((s) => `/v1/svg/${s}`);
const variants: [string, Record<string, string>][] = [["app", {}]];
for (const v of String(values.variants).split(";").filter(Boolean)) {
  const env = Object.fromEntries(v.split(",").map((kv) => kv.split("=") as [string, string]));
  variants.push([v, env]);
}
const apps = [];
for (const [name, env] of variants)
  apps.push({ name, s: await startApp({ tier: "internal", env }) });
const sample = await fetch(`${apps[0]!.s.url}/v1/svg/github`, {
  headers: { "x-api-key": apps[0]!.s.key },
});
const bare = await startBare(new Uint8Array(await sample.arrayBuffer()), {
  "content-type": "image/svg+xml",
});
const servers = [{ name: "bare", s: bare }, ...apps];
for (const c of connectionSets) {
  const runs: LoadResult[][] = servers.map(() => []);
  const run = (x: (typeof servers)[number], secs: number) =>
    load({
      url: x.s.url,
      paths,
      headers: x.s.key ? { "x-api-key": x.s.key } : {},
      duration: secs,
      connections: c,
      serverPid: x.s.pid,
    });
  for (const x of servers) await run(x, 1);
  for (let r = 0; r < rounds; r++)
    for (const [i, x] of servers.entries()) runs[i]!.push(await run(x, duration));
  console.log(`== ${c} connections, ${rounds} rounds of ${duration}s`);
  for (const [i, x] of servers.entries()) {
    const rr = runs[i]!;
    const m = (f: (r: LoadResult) => number | undefined) =>
      percentile(
        rr.map((r) => f(r) ?? NaN),
        50,
      );
    console.log(
      `${x.name.padEnd(40)} ${fmt(
        m((r) => r.rps),
        0,
      ).padStart(7)} req/s p50 ${fmt(
        m((r) => r.p50),
        2,
      )} p99 ${fmt(
        m((r) => r.p99),
        2,
      )} ms  p99s ${rr.map((r) => fmt(r.p99, 2)).join("/")}  cpu ${fmt(m((r) => r.cpuUsPerRequest))} µs`,
    );
  }
}
for (const x of servers) await x.s.stop();
