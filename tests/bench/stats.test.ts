import { describe, expect, test } from "bun:test";
import { fmtMedian, medianInterval, verdict } from "../../scripts/bench/stats";

// The benchmarks decide MET / MISSED from these, so they are checked against known values.
describe("medianInterval (distribution-free 95% interval of the median)", () => {
  const ranks = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

  test("matches the order statistics of the standard tables", () => {
    // n: [k, n + 1 - k] for 95% (e.g. Conover, Practical Nonparametric Statistics, table A3)
    const table: Record<number, [number, number]> = {
      6: [1, 6],
      9: [2, 8],
      10: [2, 9],
      15: [4, 12],
      20: [6, 15],
      30: [10, 21],
      60: [22, 39],
    };
    for (const [n, interval] of Object.entries(table))
      expect(medianInterval(ranks(Number(n)))).toEqual(interval);
  });

  test("does not depend on the order of the values, and ignores non-numbers", () => {
    const values = [5, -3, 12, 8, 0, 7, 2, 9, 4, 11];
    expect(medianInterval([...values].reverse())).toEqual(medianInterval(values));
    expect(medianInterval([...values, Number.NaN])).toEqual(medianInterval(values));
    expect(medianInterval(values)).toEqual([0, 11]);
  });

  test("too few values give the whole range; none give NaN", () => {
    expect(medianInterval([3, 1, 2])).toEqual([1, 3]);
    expect(medianInterval([]).every(Number.isNaN)).toBe(true);
  });

  test("a wider confidence gives a wider interval", () => {
    const [lo95, hi95] = medianInterval(ranks(40));
    const [lo80, hi80] = medianInterval(ranks(40), 0.8);
    expect(lo80).toBeGreaterThan(lo95);
    expect(hi80).toBeLessThan(hi95);
  });
});

describe("verdict", () => {
  test("a cost target (below): met only when the whole interval is under it", () => {
    expect(verdict([2.6, 8.9], 10, "below")).toBe("MET");
    expect(verdict([2.6, 18.9], 10, "below")).toStartWith("UNDECIDED");
    expect(verdict([10, 18.9], 10, "below")).toBe("MISSED");
  });

  test("a throughput target (above): met only when the whole interval reaches it", () => {
    expect(verdict([60, 71], 60, "above")).toBe("MET");
    expect(verdict([55, 63], 60, "above")).toStartWith("UNDECIDED");
    expect(verdict([27, 41], 60, "above")).toBe("MISSED");
  });

  test("fmtMedian prints the median with its interval", () => {
    expect(fmtMedian([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])).toBe("5.0% (95% interval 2.0..9.0%)");
  });
});
