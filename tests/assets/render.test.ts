import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import sharp from "sharp";
import { OPTICAL_SQUARE, placement, renderRaster, squareFrame } from "../../src/assets/render";
import { createRenderer, inlineRenderer } from "../../src/assets/render-pool";
import { WORKER_NICE } from "../../src/platform/worker-script";
import { ALLOWED_SKIPS, testIf } from "../support/skip";
import { until } from "../usage/util";
import { opaqueBox, pngSize } from "./util";

const WIDE =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 10" role="img"><rect width="40" height="10" fill="#f00"/></svg>';

describe("squareFrame", () => {
  test("widens the shorter side of the viewBox equally on both sides", () => {
    expect(squareFrame(WIDE)).toBe(
      '<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 -15 40 40"><rect width="40" height="10" fill="#f00"/></svg>',
    );
    expect(squareFrame('<svg viewBox="5,5 10 30"><g/></svg>')).toBe(
      '<svg viewBox="-5 5 30 30"><g/></svg>',
    );
  });

  test("drops width, height and preserveAspectRatio; keeps other attributes and quotes", () => {
    const out = squareFrame(
      `<svg width="2em" height="1em" preserveAspectRatio="none" viewBox="0 0 2 1" data-x='a"b'><path/></svg>`,
    );
    expect(out).toBe('<svg data-x="a&quot;b" viewBox="0 -0.5 2 2"><path/></svg>');
  });

  test("without a viewBox: plain width/height, else the given intrinsic size, else null", () => {
    expect(squareFrame('<svg width="30px" height="10"><g/></svg>')).toBe(
      '<svg viewBox="0 -10 30 30"><g/></svg>',
    );
    expect(squareFrame('<svg width="100%"><g/></svg>', { width: 10, height: 20 })).toBe(
      '<svg viewBox="-5 0 20 20"><g/></svg>',
    );
    expect(squareFrame('<svg width="100%"><g/></svg>')).toBeNull();
    expect(squareFrame('<svg viewBox="0 0 0 10"/>')).toBeNull();
    expect(squareFrame("not svg")).toBeNull();
  });

  test("a self-closing root stays a valid document", () => {
    expect(squareFrame('<svg viewBox="0 0 4 2"/>')).toBe('<svg viewBox="0 -1 4 4"></svg>');
  });
});

describe("placement", () => {
  const optical = { fit: "optical" as const, padding: 8 };
  test("optical: a square mark and a 3:2 mark get the same area, inside the safe area", () => {
    const square = placement(10, 10, 100, optical);
    const wide = placement(15, 10, 100, optical);
    expect(square.w).toBeCloseTo(OPTICAL_SQUARE * 84, 6);
    expect(wide.w * wide.h).toBeCloseTo(square.w * square.h, 6);
    expect(wide.w).toBeLessThanOrEqual(84);
  });
  test("optical: a 6:1 wordmark is capped by the safe area's width; centred", () => {
    const p = placement(60, 10, 100, optical);
    expect(p.w).toBeCloseTo(84, 6);
    expect(p.h).toBeCloseTo(14, 6);
    expect(p.x).toBeCloseTo(8, 6);
    expect(p.y).toBeCloseTo(43, 6);
  });
  test("contain: the longer side fills the safe area", () => {
    expect(placement(10, 40, 200, { fit: "contain", padding: 10 })).toEqual({
      w: 40,
      h: 160,
      x: 80,
      y: 20,
    });
  });
});

describe("renderRaster", () => {
  test("a wide mark with contain, no padding: exactly size x size, full width", async () => {
    const png = await renderRaster(WIDE, 80, "png", { fit: "contain", padding: 0 });
    expect(pngSize(png)).toEqual({ width: 80, height: 80 });
    const { data } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const alpha = (x: number, y: number) => data[(y * 80 + x) * 4 + 3];
    const rgba = (x: number, y: number) => [
      ...data.subarray((y * 80 + x) * 4, (y * 80 + x) * 4 + 4),
    ];
    expect(alpha(40, 5)).toBe(0); // above the mark
    expect(alpha(40, 75)).toBe(0); // below the mark
    expect(rgba(0, 40)).toEqual([255, 0, 0, 255]); // left edge, middle row
    expect(rgba(79, 40)).toEqual([255, 0, 0, 255]); // right edge
    expect(alpha(40, 29)).toBe(0); // the 40x10 mark at 2x is 20 px tall: rows 30..49
    expect(alpha(40, 30)).toBe(255);
    expect(alpha(40, 49)).toBe(255);
    expect(alpha(40, 50)).toBe(0);
  });

  test("placement uses the painted bounds, not the viewBox (a mark in a corner is centred)", async () => {
    const corner =
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><rect x="70" y="0" width="30" height="30" fill="#00f"/></svg>';
    const png = await renderRaster(corner, 100, "png", { fit: "contain", padding: 10 });
    const box = await opaqueBox(png);
    expect([box.minX, box.minY, box.maxX, box.maxY]).toEqual([10, 10, 89, 89]);
  });

  test("an SVG with no usable frame still renders (intrinsic size from resvg)", async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"><circle cx="50" cy="50" r="40"/></svg>';
    const png = await renderRaster(svg, 32, "png");
    expect(pngSize(png)).toEqual({ width: 32, height: 32 });
  });

  test("broken markup rejects (the service then serves the placeholder)", async () => {
    await expect(renderRaster("<svg><g></svg", 32, "png")).rejects.toThrow();
  });
});

describe("renderers", () => {
  const pool = createRenderer({ workers: 2 });
  afterAll(() => pool.close());

  test("the worker pool gives byte-identical output to the inline renderer", async () => {
    for (const format of ["png", "webp"] as const) {
      const [a, b] = await Promise.all([
        pool.render(WIDE, 64, format),
        inlineRenderer.render(WIDE, 64, format),
      ]);
      expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    }
    expect(pool.mode).toBe("workers");
  });

  test("many concurrent jobs all come back to the right caller", async () => {
    const sizes = Array.from({ length: 24 }, (_, i) => 16 + i * 3);
    const out = await Promise.all(sizes.map((s) => pool.render(WIDE, s, "png")));
    expect(out.map((png) => pngSize(png).width)).toEqual(sizes);
  });

  test("a render error in a worker rejects that job only", async () => {
    await expect(pool.render("<svg", 32, "png")).rejects.toThrow();
    expect(pngSize(await pool.render(WIDE, 20, "png")).width).toBe(20);
  });

  test("a worker script that cannot start: falls back to rendering inline", async () => {
    const broken = createRenderer({
      workers: 1,
      workerUrl: new URL("./no-such-worker.ts", import.meta.url),
    });
    const png = await broken.render(WIDE, 24, "png");
    expect(pngSize(png)).toEqual({ width: 24, height: 24 });
    await until(() => broken.mode === "inline", 10_000, "the fallback to inline");
    expect(broken.mode).toBe("inline");
    expect(pngSize(await broken.render(WIDE, 25, "png")).width).toBe(25);
    await broken.close();
  });

  // only meaningful where the nice value is per thread and the runner itself is not niced
  const nice = (stat: string) => Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
  const mainNice =
    process.platform === "linux" ? nice(readFileSync("/proc/self/stat", "utf8")) : Number.NaN;
  testIf(mainNice < WORKER_NICE, ALLOWED_SKIPS.runnerNiced)(
    "render threads run at a lower priority than the request thread (Linux per-thread nice)",
    async () => {
      await pool.render(WIDE, 16, "png");
      // a thread may end between the listing and its read (another test's worker): skipped
      const threads = readdirSync("/proc/self/task").flatMap((tid) => {
        try {
          return [nice(readFileSync(`/proc/self/task/${tid}/stat`, "utf8"))];
        } catch {
          return [];
        }
      });
      expect(threads.filter((n) => n === WORKER_NICE).length).toBeGreaterThanOrEqual(1);
      expect(nice(readFileSync("/proc/self/stat", "utf8"))).toBe(mainNice);
    },
  );

  test("workers: 0 renders inline", () => {
    expect(createRenderer({ workers: 0 }).mode).toBe("inline");
  });
});
