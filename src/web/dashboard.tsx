import type { Static } from "@sinclair/typebox";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import { BUCKETS } from "../quota/limits";
import type { AnalyticsSeriesResponse } from "../usage/analytics/model";
import type { UsageResponse } from "../usage/current/model";
import { api, call, session } from "./api";
import { CodeBlock, Link, Status, useDark } from "./ui";

/** The answers the page reads: the API's own schemas (type-only: nothing of them is bundled). */
type Usage = Static<typeof UsageResponse>;
/** The series answer of GET /v1/analytics/usage (granularity / group_by / limit). */
export type Series = Static<typeof AnalyticsSeriesResponse>;
type Group = Series["groups"][number];
type Granularity = "day" | "hour";

const RANGES: Record<Granularity, number[]> = { day: [7, 30, 90, 365], hour: [1, 3, 7] };
const COLOURS: Record<string, [string, string]> = {
  svg: ["#2563c9", "#5b9bf0"],
  png: ["#0f8a6a", "#4fd1a5"],
  webp: ["#7c3aed", "#c4a5fd"],
  catalog: ["#b45309", "#fbbf24"],
  search: ["#be185d", "#f9a8d4"],
  domain: ["#0e7490", "#67e8f9"],
  batch: ["#4b5563", "#cbd5e1"],
};
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const ms = (v: number | null) => (v === null ? "–" : `${v < 10 ? v.toFixed(1) : Math.round(v)} ms`);

export function dayBefore(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() - days);
  return d.toISOString().slice(0, 10);
}

/** Today's use against the plan's daily limit, one card per bucket. */
function TodayCards(props: { usage: Usage }) {
  return (
    <section aria-labelledby="today-h">
      <h2 id="today-h">
        Today ({props.usage.date}, UTC), plan {props.usage.tier}
      </h2>
      <ul class="cards">
        {BUCKETS.map((b) => {
          const e = props.usage.endpoints[b];
          return (
            <li key={b} class="card stat">
              <span class="stat-name">{b}</span>
              <span class="stat-value" data-bucket={b}>
                {e.used} / {e.limit ?? "unlimited"}
              </span>
              {e.limit === null ? (
                <span class="hint">no daily limit</span>
              ) : (
                <meter
                  aria-label={`${b} used today`}
                  min={0}
                  max={e.limit}
                  low={e.limit * 0.7}
                  high={e.limit * 0.9}
                  optimum={0}
                  value={e.used}
                />
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}

function when(t: number, g: Granularity): string {
  const iso = new Date(t * 1000).toISOString();
  return g === "hour" ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : iso.slice(0, 10);
}

/** Requests per day or hour, one stacked bar part per bucket; the legend shows each part's count. */
function StackedChart(props: { data: Series; dark: boolean }) {
  const el = useRef<HTMLDivElement>(null);
  const { data, dark } = props;
  // drawn in the same commit as its data: the chart on screen never lags the page's numbers
  useLayoutEffect(() => {
    const box = el.current;
    if (!box) return;
    const xs = data.series.map((p) => Date.parse(p.t) / 1000);
    const groups = data.groups;
    // cumulative heights: group i's bar reaches the sum of groups 0..i
    const stacks: number[][] = [];
    for (const [i, g] of groups.entries())
      stacks.push(g.series.map((p, j) => p.requests + (stacks[i - 1]?.[j] ?? 0)));
    // a part with no requests is not drawn (no hairline bars on empty periods)
    const drawn = stacks.map((s, i) =>
      s.map((v, j) => ((groups[i] as Group).series[j]?.requests ? v : null)),
    );
    const step = data.granularity === "hour" ? 3600 : 86_400;
    const day = data.granularity === "day";
    const ink = dark ? "#d0d4dc" : "#333";
    const grid = dark ? "#3a3f4a" : "#e4e4e4";
    const bars = uPlot.paths.bars?.({ size: [0.8, 40] });
    // drawn back to front: the tallest stack first, so each lower part paints over it
    const order = groups.map((_, i) => i).reverse();
    const plot = new uPlot(
      {
        width: Math.max(260, box.clientWidth || 600),
        height: 220,
        axes: [
          {
            stroke: ink,
            grid: { stroke: grid },
            incrs: day
              ? [1, 2, 7, 14, 28, 91].map((d) => d * 86_400)
              : [1, 3, 6, 12, 24, 48].map((h) => h * 3600),
            values: (_u, splits) =>
              splits.map((v) => {
                const iso = new Date(v * 1000).toISOString();
                return day || iso.slice(11, 13) === "00" ? iso.slice(5, 10) : iso.slice(11, 16);
              }),
          },
          { stroke: ink, grid: { stroke: grid } },
        ],
        scales: {
          // half a period either side, so the first and last bars are whole
          x: { time: true, range: (_u, min, max) => [min - step / 2, max + step / 2] },
          y: { range: (_u, _min, max) => [0, Math.max(4, max)] },
        },
        series: [
          {
            label: data.granularity === "hour" ? "Hour" : "Day",
            value: (_u, v) =>
              v == null ? `all ${data.from} to ${data.to}` : when(v, data.granularity),
          },
          ...order.map((i): uPlot.Series => {
            const g = groups[i] as Group;
            const c = COLOURS[g.id]?.[dark ? 1 : 0] ?? (dark ? "#cbd5e1" : "#4b5563");
            return {
              label: g.id,
              value: (_u, _v, _s, idx) =>
                String(idx === null ? g.requests : (g.series[idx]?.requests ?? 0)),
              fill: c,
              stroke: c,
              paths: bars,
              points: { show: false },
            };
          }),
        ],
      },
      [xs, ...order.map((i) => drawn[i] ?? [])],
      box,
    );
    // follows the box's width (a phone turned, a window resized)
    const resize = new ResizeObserver(() => {
      const width = Math.max(260, box.clientWidth);
      if (width !== plot.width) plot.setSize({ width, height: 220 });
    });
    resize.observe(box);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [data, dark]);
  return (
    <figure class="chart">
      <div
        ref={el}
        role="img"
        aria-label={`Requests per ${data.granularity} by bucket, ${data.from} to ${data.to}`}
      />
      <figcaption>
        {plural(data.totals.requests, "request")}, {plural(data.totals.errors, "error")},{" "}
        {data.totals.rateLimited} rate-limited
      </figcaption>
    </figure>
  );
}

/** A ranked table of groups with a share bar. */
function GroupTable(props: { caption: string; head: string; data: Series; empty: string }) {
  const total = props.data.totals.requests;
  if (!props.data.groups.length) return <p class="hint">{props.empty}</p>;
  return (
    <table class="groups">
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          <th scope="col">{props.head}</th>
          <th scope="col">Requests</th>
          <th scope="col">Share</th>
        </tr>
      </thead>
      <tbody>
        {props.data.groups.map((g) => (
          <tr key={g.id}>
            <th scope="row">{g.id}</th>
            <td>{g.requests}</td>
            <td>
              <span class="share" style={{ width: `${total ? (100 * g.requests) / total : 0}%` }} />
              <span class="share-n">{total ? Math.round((100 * g.requests) / total) : 0}%</span>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Raw events of the range as CSV, fetched with the caller's credential and saved by the browser. */
async function downloadEvents(from: string, to: string): Promise<string> {
  const r = await call(`/v1/analytics/events?${new URLSearchParams({ format: "csv", from, to })}`, {
    cred: "either",
  });
  if (!r.ok) return `The export failed (${r.status}).`;
  const url = URL.createObjectURL(await r.blob());
  const a = document.createElement("a");
  a.href = url;
  a.download = `usage-events-${from}-${to}.csv`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return r.headers.has("x-next-cursor")
    ? "Downloaded the first page of events (the API pages larger exports by cursor)."
    : "Events downloaded.";
}

export function DashboardPage() {
  const dark = useDark();
  const [usage, setUsage] = useState<Usage | null>(null);
  const [byBucket, setByBucket] = useState<Series | null>(null);
  const [byBrand, setByBrand] = useState<Series | null>(null);
  const [byStatus, setByStatus] = useState<Series | null>(null);
  const [granularity, setGranularity] = useState<Granularity>("day");
  const [days, setDays] = useState(30);
  const [msg, setMsg] = useState({ text: "", error: false });
  const [busy, setBusy] = useState(false);
  const latest = useRef(0);
  const signedIn = session.loggedIn() || Boolean(session.get("apiKey"));

  /** Reads today's use and the range's series; a load that a newer one overtook changes nothing. */
  const load = async () => {
    const n = ++latest.current;
    const current = () => n === latest.current;
    setBusy(true);
    try {
      const u = await api<Usage>("/v1/usage", { cred: "either" });
      if (!current()) return;
      if (!u.ok) return setMsg({ text: u.message, error: true });
      setUsage(u.data);
      const q = (extra: Record<string, string>) =>
        `/v1/analytics/usage?${new URLSearchParams({ from: dayBefore(u.data.date, days - 1), to: u.data.date, ...extra })}`;
      const [b, br, st] = await Promise.all([
        api<Series>(q({ granularity, group_by: "bucket", limit: "7" }), { cred: "either" }),
        api<Series>(q({ group_by: "brand", limit: "10" }), { cred: "either" }),
        api<Series>(q({ group_by: "status_class" }), { cred: "either" }),
      ]);
      if (!current()) return;
      const bad = [b, br, st].find((r) => !r.ok);
      if (bad) return setMsg({ text: bad.message, error: true });
      setByBucket(b.data);
      setByBrand(br.data);
      setByStatus(st.data);
      setMsg({ text: `Updated ${new Date().toLocaleTimeString()}.`, error: false });
    } finally {
      if (current()) setBusy(false);
    }
  };
  useEffect(() => {
    if (signedIn) void load();
  }, [days, granularity, signedIn]);

  if (!signedIn)
    return (
      <p>
        <Link href="/login">Log in</Link> or paste an API key in the <Link href="/">explorer</Link>{" "}
        to see your usage.
      </p>
    );
  const usedToday = usage ? BUCKETS.reduce((s, b) => s + usage.endpoints[b].used, 0) : 0;
  const empty = usage && byBucket && usedToday === 0 && byBucket.totals.requests === 0;
  const setGran = (g: Granularity) => {
    setGranularity(g);
    setDays(g === "hour" ? Math.min(days, 7) : days === 1 || days === 3 ? 7 : days);
  };
  return (
    <div class="dashboard" aria-busy={busy ? "true" : "false"}>
      <div class="controls">
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
        <fieldset class="segmented">
          <legend class="sr-only">Granularity</legend>
          {(["day", "hour"] as const).map((g) => (
            <label key={g}>
              <input
                type="radio"
                name="granularity"
                value={g}
                checked={granularity === g}
                onChange={() => setGran(g)}
              />
              {g === "day" ? "Per day" : "Per hour"}
            </label>
          ))}
        </fieldset>
        <label for="range">Range</label>
        <select
          id="range"
          value={days}
          onChange={(e) => setDays(Number((e.target as HTMLSelectElement).value))}
        >
          {RANGES[granularity].map((d) => (
            <option key={d} value={d}>
              {d === 1 ? "today" : `last ${d} days`}
            </option>
          ))}
        </select>
        {byBucket && (
          <button
            type="button"
            onClick={async () =>
              setMsg({ text: await downloadEvents(byBucket.from, byBucket.to), error: false })
            }
          >
            Download events (CSV)
          </button>
        )}
      </div>
      <Status {...msg} />
      {usage && <TodayCards usage={usage} />}
      {empty && (
        <div class="card empty">
          <p>
            <strong>No requests yet:</strong> try GET /v1/svg/github with your key, then press
            Refresh.
          </p>
          <CodeBlock
            code={`curl -H "X-API-Key: $KEY" ${location.origin}/v1/svg/github`}
            label="A first request"
            copyLabel="Copy the command"
          />
        </div>
      )}
      {byBucket && byBrand && byStatus && (
        <section aria-labelledby="history-h">
          <h2 id="history-h">
            History {byBucket.from} to {byBucket.to}
          </h2>
          <StackedChart data={byBucket} dark={dark} />
          <dl class="latency" aria-label="Latency over the range">
            {(["p50", "p95", "p99"] as const).map((p) => (
              <div key={p} class="card stat">
                <dt class="stat-name">latency {p}</dt>
                <dd class="stat-value" data-latency={p}>
                  {ms(byBucket.totals[p])}
                </dd>
              </div>
            ))}
          </dl>
          <div class="breakdowns">
            <GroupTable
              caption="Top brands"
              head="Brand"
              data={byBrand}
              empty="No brand requested in this range."
            />
            <GroupTable
              caption="Status mix"
              head="Status"
              data={byStatus}
              empty="No requests in this range."
            />
          </div>
        </section>
      )}
    </div>
  );
}
