import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import { api, BUCKETS, type Bucket, session } from "./api";
import { Link, Status, useDark } from "./ui";

interface Usage {
  date: string;
  tier: string;
  endpoints: Record<Bucket, { used: number; limit: number | null }>;
}
interface Counts {
  requests: number;
  errors: number;
  rateLimited: number;
}
export interface History {
  from: string;
  to: string;
  days: { date: string; buckets: Partial<Record<Bucket, Counts>> }[];
  totals: Partial<Record<Bucket, Counts>>;
}

const RANGES = [7, 30, 90, 365];

export function dayBefore(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() - days);
  return d.toISOString().slice(0, 10);
}

/** The history as CSV: one row per day and bucket. */
export function toCsv(h: History): string {
  const rows = ["date,bucket,requests,errors,rate_limited"];
  for (const day of h.days)
    for (const b of BUCKETS) {
      const c = day.buckets[b];
      if (c) rows.push(`${day.date},${b},${c.requests},${c.errors},${c.rateLimited}`);
    }
  return `${rows.join("\n")}\n`;
}

function TodayBars(props: { usage: Usage }) {
  return (
    <table class="today">
      <caption>
        Today ({props.usage.date}, UTC), plan {props.usage.tier}
      </caption>
      <thead>
        <tr>
          <th scope="col">Bucket</th>
          <th scope="col">Used</th>
          <th scope="col">Of the daily limit</th>
        </tr>
      </thead>
      <tbody>
        {BUCKETS.map((b) => {
          const e = props.usage.endpoints[b];
          return (
            <tr key={b}>
              <th scope="row">{b}</th>
              <td data-bucket={b}>
                {e.used} / {e.limit ?? "unlimited"}
              </td>
              <td>
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
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** One bucket's history: successful, errors and rate-limited stacked per day (uPlot bars). */
function BucketChart(props: { bucket: Bucket; history: History; dark: boolean }) {
  const el = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const box = el.current;
    if (!box) return;
    const xs = props.history.days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
    const c = props.history.days.map(
      (d) => d.buckets[props.bucket] ?? { requests: 0, errors: 0, rateLimited: 0 },
    );
    const ok = c.map((v) => v.requests - v.errors - v.rateLimited);
    const withErr = c.map((v, i) => (ok[i] ?? 0) + v.errors);
    const total = c.map((v) => v.requests);
    const ink = props.dark ? "#d0d4dc" : "#333";
    const grid = props.dark ? "#3a3f4a" : "#e4e4e4";
    const bars = uPlot.paths.bars?.({ size: [0.8, 40] });
    // the legend shows each part's own count, not the stacked height
    const series = (label: string, fill: string, own: number[]): uPlot.Series => ({
      label,
      value: (_u, _v, _s, i) => (i === null ? "--" : String(own[i] ?? 0)),
      fill,
      stroke: fill,
      paths: bars,
      points: { show: false },
    });
    // drawn back to front: the total (rate-limited on top), then errors, then successful
    const plot = new uPlot(
      {
        width: Math.max(280, box.clientWidth || 600),
        height: 180,
        title: props.bucket,
        axes: [
          { stroke: ink, grid: { stroke: grid } },
          { stroke: ink, grid: { stroke: grid } },
        ],
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        series: [
          {},
          series(
            "rate-limited",
            "#d9822b",
            c.map((v) => v.rateLimited),
          ),
          series(
            "errors",
            "#d64545",
            c.map((v) => v.errors),
          ),
          series("successful", props.dark ? "#5b9bf0" : "#2563c9", ok),
        ],
      },
      [xs, total, withErr, ok],
      box,
    );
    return () => plot.destroy();
  }, [props.bucket, props.history, props.dark]);
  const t = props.history.totals[props.bucket];
  return (
    <figure class="chart">
      <div
        ref={el}
        role="img"
        aria-label={`Daily ${props.bucket} requests, errors and rate-limited`}
      />
      <figcaption>
        {props.bucket}: {t?.requests ?? 0} requests, {t?.errors ?? 0} errors, {t?.rateLimited ?? 0}{" "}
        rate-limited
      </figcaption>
    </figure>
  );
}

export function DashboardPage() {
  const dark = useDark();
  const [usage, setUsage] = useState<Usage | null>(null);
  const [history, setHistory] = useState<History | null>(null);
  const [days, setDays] = useState(30);
  const [msg, setMsg] = useState({ text: "", error: false });
  const [csvUrl, setCsvUrl] = useState("");
  const signedIn = session.loggedIn() || Boolean(session.get("apiKey"));

  const load = async () => {
    const u = await api<Usage>("/v1/usage", { cred: "either" });
    if (!u.ok) return setMsg({ text: u.message, error: true });
    setUsage(u.data);
    const q = new URLSearchParams({ from: dayBefore(u.data.date, days - 1), to: u.data.date });
    const h = await api<History>(`/v1/analytics/usage?${q}`, { cred: "either" });
    if (!h.ok) return setMsg({ text: h.message, error: true });
    setHistory(h.data);
    setMsg({ text: `Updated ${new Date().toLocaleTimeString()}.`, error: false });
  };
  useEffect(() => {
    if (signedIn) void load();
  }, [days, signedIn]);
  useEffect(() => {
    if (!history) return;
    const url = URL.createObjectURL(new Blob([toCsv(history)], { type: "text/csv" }));
    setCsvUrl(url);
    return () => URL.revokeObjectURL(url);
  }, [history]);

  if (!signedIn)
    return (
      <p>
        <Link href="/login">Log in</Link> or paste an API key in the <Link href="/">explorer</Link>{" "}
        to see your usage.
      </p>
    );
  const totals = history
    ? BUCKETS.reduce(
        (s, b) => {
          const t = history.totals[b];
          return t
            ? {
                requests: s.requests + t.requests,
                errors: s.errors + t.errors,
                rateLimited: s.rateLimited + t.rateLimited,
              }
            : s;
        },
        { requests: 0, errors: 0, rateLimited: 0 },
      )
    : null;
  return (
    <>
      <div class="controls">
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
        <label for="range">History range</label>
        <select
          id="range"
          value={days}
          onChange={(e) => setDays(Number((e.target as HTMLSelectElement).value))}
        >
          {RANGES.map((d) => (
            <option key={d} value={d}>
              last {d} days
            </option>
          ))}
        </select>
        {csvUrl && history && (
          <a class="button" href={csvUrl} download={`usage-${history.from}-${history.to}.csv`}>
            Download CSV
          </a>
        )}
      </div>
      <Status {...msg} />
      {usage && <TodayBars usage={usage} />}
      {history && totals && (
        <section aria-labelledby="history-h">
          <h2 id="history-h">
            History {history.from} to {history.to}
          </h2>
          <p class="totals">
            Totals: {totals.requests} requests, {totals.errors} errors, {totals.rateLimited}{" "}
            rate-limited.
          </p>
          <div class="charts">
            {BUCKETS.map((b) => (
              <BucketChart key={b} bucket={b} history={history} dark={dark} />
            ))}
          </div>
        </section>
      )}
    </>
  );
}
