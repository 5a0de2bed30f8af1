import { describe, expect, test } from "bun:test";
import { sanitizeAndOptimizeSvg, sanitizeCss, sanitizeSvg } from "../../../src/catalog/sanitize";
import { svgHazards } from "./svg-scan";

const NS = 'xmlns="http://www.w3.org/2000/svg"';
const XLINK = 'xmlns:xlink="http://www.w3.org/1999/xlink"';
const wrap = (body: string, attrs = "") =>
  `<svg ${NS} ${XLINK} viewBox="0 0 24 24"${attrs}>${body}</svg>`;
const SQUARE = '<path d="M0 0h24v24H0z"/>';

const HOSTILE: Record<string, string> = {
  "script element": wrap(`<script>alert(1)</script>${SQUARE}`),
  "CDATA script": wrap(`<script><![CDATA[alert(1)]]></script>${SQUARE}`),
  "namespaced script": wrap(
    `<x:script xmlns:x="http://www.w3.org/1999/xhtml">alert(1)</x:script>${SQUARE}`,
  ),
  "onload on root": wrap(SQUARE, ' onload="alert(1)"'),
  "onclick and ONMOUSEOVER": wrap(
    '<path onclick="alert(1)" ONMOUSEOVER="alert(2)" d="M0 0h1v1z"/>',
  ),
  foreignObject: wrap(
    `<foreignObject width="10" height="10"><div xmlns="http://www.w3.org/1999/xhtml"><img src="x" onerror="alert(1)"/></div></foreignObject>${SQUARE}`,
  ),
  "external use href": wrap('<use href="https://evil.example/sprite.svg#icon"/>'),
  "external xlink:href": wrap('<use xlink:href="//evil.example/sprite.svg#icon"/>'),
  "javascript link": wrap(`<a href="javascript:alert(1)">${SQUARE}</a>`),
  "entity-encoded javascript link": wrap(`<a xlink:href="&#106;avascript:alert(1)">${SQUARE}</a>`),
  "javascript with whitespace": wrap(`<a href=" java\tscript:alert(1)">${SQUARE}</a>`),
  "data: image": wrap(
    '<image href="data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=" width="1" height="1"/>',
  ),
  "external image": wrap('<image xlink:href="http://evil.example/x.png" width="1" height="1"/>'),
  "style with url(http)": wrap(`<style>.a{fill:url(http://evil.example/x.svg#g)}</style>${SQUARE}`),
  "style with @import": wrap(
    `<style>@import url("https://evil.example/x.css");.a{fill:red}</style>${SQUARE}`,
  ),
  "style with escaped url": wrap(
    `<style>.a{background:u\\72l(http://evil.example)}</style>${SQUARE}`,
  ),
  "style attribute with url": wrap(
    '<path style="fill:url(\'https://evil.example/#g\')" d="M0 0h1v1z"/>',
  ),
  "fill with external url": wrap('<path fill="url(https://evil.example/x.svg#g)" d="M0 0h1v1z"/>'),
  "animate to javascript": wrap(
    `<a><animate attributeName="href" to="javascript:alert(1)"/>${SQUARE}</a>`,
  ),
  "set onload": wrap(`<set attributeName="onload" to="alert(1)"/>${SQUARE}`),
  iframe: wrap(`<iframe src="https://evil.example"/>${SQUARE}`),
  "xml-stylesheet instruction": `<?xml-stylesheet href="https://evil.example/x.css"?>${wrap(SQUARE)}`,
  "xml:base": wrap(SQUARE, ' xml:base="https://evil.example/"'),
  "feImage external": wrap('<filter id="f"><feImage href="https://evil.example/x.png"/></filter>'),
};

describe("sanitizeSvg against hostile input", () => {
  for (const [name, svg] of Object.entries(HOSTILE)) {
    // each is a well-formed SVG: the sanitizer must return it cleaned, not refuse it
    test(name, () => {
      const out = sanitizeSvg(svg);
      expect(svgHazards(out)).toEqual([]);
      expect(out).toContain('viewBox="0 0 24 24"');
    });
  }

  test("doctype with entities never yields active content", () => {
    const svg = `<!DOCTYPE svg [<!ENTITY x "<script>alert(1)</script>">]>${wrap(`<text>&x;</text>`)}`;
    const out = sanitizeSvg(svg);
    expect(out).not.toMatch(/<script/i);
    expect(out).not.toMatch(/DOCTYPE|ENTITY/);
    expect(out).toContain('viewBox="0 0 24 24"');
  });

  test("rejects input that is not an SVG document", () => {
    expect(() => sanitizeSvg("<html><script>alert(1)</script></html>")).toThrow();
    expect(() => sanitizeSvg("not xml at all <")).toThrow();
  });
});

describe("sanitizeSvg keeps legitimate artwork", () => {
  const logo = wrap(
    '<defs><linearGradient id="g"><stop offset="0" stop-color="#f00"/><stop offset="1" stop-color="#00f"/></linearGradient>' +
      '<clipPath id="c"><rect width="24" height="24"/></clipPath></defs>' +
      '<g clip-path="url(#c)"><path fill="url(#g)" d="M0 0h24v24H0z"/><use href="#p" xlink:href="#p"/></g>' +
      "<style>.s{fill:url(#g)}</style><title>Logo</title>",
  );
  test("local references, gradients, clip paths, styles and title survive", () => {
    const out = sanitizeSvg(logo);
    expect(out).toContain('fill="url(#g)"');
    expect(out).toContain('clip-path="url(#c)"');
    expect(out).toContain('href="#p"');
    expect(out).toContain("stop-color");
    expect(out).toContain(".s{fill:url(#g)}");
    expect(out).toContain("<title>Logo</title>");
  });

  test("optimized output keeps the viewBox and prefixes ids consistently", () => {
    const out = sanitizeAndOptimizeSvg(logo, "color-slack");
    expect(out).toContain('viewBox="0 0 24 24"');
    const ids = [...out.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1] ?? "");
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) expect(id.startsWith("color-slack-")).toBe(true);
    for (const m of out.matchAll(/url\(#([^)]+)\)/g)) expect(ids).toContain(m[1] ?? "");
    expect(svgHazards(out)).toEqual([]);
  });

  test("a simple-icons mark passes unchanged in meaning (no fill added)", () => {
    const si = `<svg role="img" viewBox="0 0 24 24" ${NS}><title>GitHub</title><path d="M12 0L24 24H0z"/></svg>`;
    const out = sanitizeAndOptimizeSvg(si, "mono-github");
    expect(out).toContain('viewBox="0 0 24 24"');
    expect(out).not.toContain("fill=");
    expect(out).toContain("<title>GitHub</title>");
  });
});

describe("sanitizeCss", () => {
  test("keeps local url() and drops the rest", () => {
    expect(sanitizeCss(".a{fill:url(#g)}")).toBe(".a{fill:url(#g)}");
    expect(sanitizeCss(".a{fill:url( '#g' )}")).not.toBeNull();
    expect(sanitizeCss(".a{fill:url(http://x)}")).toBeNull();
    expect(sanitizeCss("@import 'x.css';")).toBeNull();
    expect(sanitizeCss(".a{width:expression(alert(1))}")).toBeNull();
    expect(sanitizeCss(".a{background:image-set('x.png' 1x)}")).toBeNull();
    expect(sanitizeCss("/* c */.a{fill:red}")).toBe(".a{fill:red}");
  });
});
