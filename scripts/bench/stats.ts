/** Figures from repeated runs: paired ratios, median intervals, verdicts, percentiles, formats. */

/** One load run's figures (load.ts). */
export interface LoadResult {
  rps: number;
  /** latency percentiles in ms */
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  /**
   * CPU time (user + system, all threads) the server process used during the run, per request,
   * in µs; present when `serverPid` was given and /proc can be read. Steadier than req/s on a
   * shared machine, since a slower run also serves fewer requests.
   */
  cpuUsPerRequest?: number;
}

/**
 * Per round of interleaved runs, `of(a[i])` as a percentage of `of(b[i])` (throughput by
 * default; NaN where a figure is missing).
 */
export function roundRatios(
  a: LoadResult[],
  b: LoadResult[],
  of: (r: LoadResult) => number | undefined = (r) => r.rps,
): number[] {
  const n = Math.min(a.length, b.length);
  return Array.from(
    { length: n },
    (_, i) => (100 * (of(a[i]!) ?? Number.NaN)) / (of(b[i]!) ?? Number.NaN),
  );
}

/**
 * Throughput of `a` as a percentage of `b`, from interleaved runs: the median of the per-round
 * ratios a[i] / b[i]. Pairing runs made seconds apart cancels the slow drift of a shared
 * machine's speed, which a ratio of two separate medians does not.
 */
export function pairedRatio(a: LoadResult[], b: LoadResult[]): number {
  return percentile(roundRatios(a, b), 50);
}

/**
 * A distribution-free confidence interval for the median of `values` (default 95%): the pair
 * of order statistics x(k), x(n+1-k) with the largest k such that a Binomial(n, 1/2) count
 * falls below k with probability at most (1 - confidence) / 2. Needs at least 6 values for
 * 95%; with fewer the interval is the whole range.
 */
export function medianInterval(values: number[], confidence = 0.95): [number, number] {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  const n = sorted.length;
  if (!n) return [Number.NaN, Number.NaN];
  const tail = (1 - confidence) / 2;
  // P(X <= j) for X ~ Binomial(n, 1/2), accumulated until it passes the tail
  let k = 0;
  let cdf = 0;
  let pmf = 0.5 ** n;
  for (let j = 0; j < n; j++) {
    cdf += pmf;
    if (cdf > tail) break;
    k = j + 1;
    pmf = (pmf * (n - j)) / (j + 1);
  }
  const lo = Math.max(k, 1);
  return [sorted[lo - 1] as number, sorted[n - lo] as number];
}

/**
 * Whether a target is met, judged on the 95% interval of the median rather than the median
 * alone: MET when the whole interval is on the target's side, MISSED when none of it is, and
 * UNDECIDED (more rounds needed) when the interval straddles the target.
 */
export function verdict(interval: [number, number], target: number, want: "above" | "below") {
  const [lo, hi] = interval;
  const ok = want === "above" ? lo >= target : hi < target;
  const bad = want === "above" ? hi < target : lo >= target;
  return ok ? "MET" : bad ? "MISSED" : "UNDECIDED (interval straddles the target; run more rounds)";
}

/** "median% (95% interval lo..hi%)" */
export const fmtMedian = (values: number[], digits = 1) => {
  const [lo, hi] = medianInterval(values);
  return `${fmt(percentile(values, 50), digits)}% (95% interval ${fmt(lo, digits)}..${fmt(hi, digits)}%)`;
};

/** "median% (95% interval ..) (target >= 60%): MISSED", judged on the interval (see verdict) */
export const judged = (values: number[], target: number, want: "above" | "below") =>
  `${fmtMedian(values)} (target ${want === "above" ? ">=" : "<"} ${target}%): ${verdict(medianInterval(values), target, want)}`;

/** Per-round percentages for printing, e.g. "37% 32% 41%". */
export const fmtRounds = (ratios: number[], digits = 0) =>
  ratios.map((r) => `${fmt(r, digits)}%`).join(" ");

/** p-th percentile (0..100) of a list of numbers. */
export function percentile(values: number[], p: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : String(n));
