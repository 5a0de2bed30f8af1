/**
 * Every stored SVG of the whole built catalog, fetched through GET /v1/svg/{slug}, is scanned
 * for anything that could run code or load something when opened directly in a browser. The
 * scanner is written here on purpose: it shares no code with the sanitizer it double-checks.
 * A whole-catalog sweep (every stored SVG served and rendered): test:fast leaves this out.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createRenderer } from "../../src/assets/render-pool";
import { PLACEHOLDER_SVG } from "../../src/assets/service";
import { VARIANTS } from "../../src/catalog/built-catalog";
import { makeApp, type TestApp } from "../support/app";
import { pngSize } from "./util";

const ACTIVE_ELEMENTS = new Set(
  [
    "script",
    "foreignobject",
    "iframe",
    "embed",
    "object",
    "image",
    "feimage",
    "animate",
    "animatemotion",
    "animatetransform",
    "animatecolor",
    "set",
    "handler",
    "listener",
    "audio",
    "video",
    "canvas",
    "discard",
  ].map((s) => s.toLowerCase()),
);

/** Problems found in one SVG document (empty when clean). */
export function svgHazards(svg: string): string[] {
  const problems: string[] = [];
  if (/<!DOCTYPE|<!ENTITY/i.test(svg)) problems.push("doctype/entity declaration");
  if (/<\?(?!xml\s)/i.test(svg)) problems.push("processing instruction");
  if (/javascript:|vbscript:|livescript:/i.test(svg)) problems.push("script URL");
  if (/data:/i.test(svg)) problems.push("data: URL");
  if (/@import|expression\s*\(|-moz-binding|behaviou?r\s*:/i.test(svg)) problems.push("active CSS");
  for (const m of svg.matchAll(/url\(\s*(['"]?)([^'")]*)\1\s*\)/gi))
    if (!m[2]?.trim().startsWith("#")) problems.push(`external url(${m[2]})`);
  for (const tag of svg.matchAll(/<\s*([^\s/>!?]+)((?:[^>"']|"[^"]*"|'[^']*')*)>/g)) {
    const name = (tag[1] ?? "").toLowerCase();
    const local = name.includes(":") ? name.slice(name.indexOf(":") + 1) : name;
    if (ACTIVE_ELEMENTS.has(local)) problems.push(`<${name}> element`);
    for (const a of (tag[2] ?? "").matchAll(/([^\s=/>]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
      const attr = (a[1] ?? "").toLowerCase();
      const value = (a[2] ?? a[3] ?? "").trim();
      if (attr.startsWith("on")) problems.push(`event handler ${attr}`);
      if ((attr === "href" || attr.endsWith(":href")) && !value.startsWith("#"))
        problems.push(`external ${attr}=${value}`);
      if (["src", "xml:base", "action", "formaction", "srcdoc"].includes(attr))
        problems.push(`${attr} attribute`);
    }
  }
  return problems;
}

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await makeApp();
  key = await t.key("internal");
});
afterAll(() => t.close());

describe("stored SVG safety", () => {
  test("the scanner catches each hazard it looks for", () => {
    const bad = [
      "<svg><script>alert(1)</script></svg>",
      '<svg><SCRIPT xlink:href="x.js"/></svg>',
      "<svg><foreignObject><div/></foreignObject></svg>",
      '<svg><path onload="alert(1)"/></svg>',
      "<svg><g ONCLICK='x()'/></svg>",
      '<svg><use href="https://evil.example/a.svg#x"/></svg>',
      '<svg><use xlink:href="other.svg#x"/></svg>',
      '<svg><rect fill="url(https://evil.example/p)"/></svg>',
      "<svg><style>rect{fill:url('/x')}</style></svg>",
      '<svg><a href="javascript:alert(1)"/></svg>',
      '<svg><image href="#x"/></svg>',
      '<svg><set attributeName="href" to="x"/></svg>',
      "<svg><style>@import 'x.css';</style></svg>",
      '<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg>&x;</svg>',
      '<svg xml:base="https://evil.example/"/>',
      '<svg><rect fill="url(data:image/png;base64,AAAA)"/></svg>',
    ];
    for (const svg of bad) expect(svgHazards(svg).length).toBeGreaterThan(0);
    expect(
      svgHazards(
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 2 2"><defs><linearGradient id="g"/></defs><use xlink:href="#p"/><path id="p" fill="url(#g)" d="M0 0h2v2z"/></svg>',
      ),
    ).toEqual([]);
  });

  test("the placeholder is clean", () => {
    expect(svgHazards(PLACEHOLDER_SVG)).toEqual([]);
  });

  test("every stored SVG of the built catalog, as served, is clean and carries the CSP", async () => {
    const problems: string[] = [];
    let served = 0;
    const all = t.deps.catalog.all();
    for (const brand of all) {
      for (const variant of VARIANTS) {
        const stored = brand.variants[variant];
        if (!stored) continue;
        const res = await t.get(`/v1/svg/${brand.slug}?variant=${variant}`, key);
        const body = await res.text();
        served++;
        if (res.status !== 200 || body !== stored.svg)
          problems.push(`${brand.slug}/${variant}: not served as stored (${res.status})`);
        if (
          res.headers.get("content-security-policy") !==
          "default-src 'none'; style-src 'unsafe-inline'; sandbox"
        )
          problems.push(`${brand.slug}/${variant}: CSP missing`);
        if (res.headers.get("x-content-type-options") !== "nosniff")
          problems.push(`${brand.slug}/${variant}: nosniff missing`);
        for (const p of svgHazards(body)) problems.push(`${brand.slug}/${variant}: ${p}`);
      }
    }
    expect(problems.slice(0, 20)).toEqual([]);
    // the whole catalog was scanned (thousands of documents), not a sample
    expect(served).toBe(all.reduce((n, b) => n + Object.keys(b.variants).length, 0));
    expect(served).toBeGreaterThan(1000);
  }, 120_000);

  test("every stored SVG of the built catalog renders to a 16 x 16 PNG", async () => {
    // every render queued at once: no queue bound here (the route's bound has its own test)
    const renderer = createRenderer({ maxQueued: Infinity, maxWaitMs: Infinity });
    // each distinct document rendered once (a third of the variants repeat another's SVG, and
    // a render depends on the document alone); a failure names every variant that stores it
    const users = new Map<string, string[]>();
    const all = t.deps.catalog.all();
    for (const brand of all)
      for (const [variant, stored] of Object.entries(brand.variants)) {
        const list = users.get(stored.svg);
        if (list) list.push(`${brand.slug}/${variant}`);
        else users.set(stored.svg, [`${brand.slug}/${variant}`]);
      }
    const failures: string[] = [];
    const jobs: Promise<void>[] = [];
    for (const [svg, names] of users)
      jobs.push(
        renderer.render(svg, 16, "png").then(
          (png) => {
            const { width, height } = pngSize(png);
            if (width !== 16 || height !== 16)
              for (const name of names) failures.push(`${name}: ${width}x${height}`);
          },
          (err) => {
            for (const name of names) failures.push(`${name}: ${(err as Error).message}`);
          },
        ),
      );
    await Promise.all(jobs);
    await renderer.close();
    expect(failures.slice(0, 20)).toEqual([]);
    expect(jobs.length).toBeGreaterThan(1000);
    // every stored variant was covered by one of the renders
    expect([...users.values()].reduce((n, names) => n + names.length, 0)).toBe(
      all.reduce((n, b) => n + Object.keys(b.variants).length, 0),
    );
  }, 120_000);
});
