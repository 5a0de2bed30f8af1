/** Issue 19's build pieces: icon-name parsing of the added sets, lobehub loading, dark/light
 * recolouring, the render check and the attribution list. */
import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { attributionMarkdown, baseSource } from "../../../scripts/catalog/attribution";
import { recolor } from "../../../scripts/catalog/modes";
import { renderFlags } from "../../../scripts/catalog/render-check";
import { loadLobehub, parseIconName, SOURCE_LICENCES } from "../../../scripts/catalog/sources";
import type { Brand } from "../../../src/catalog/built-catalog";

const ROOT = resolve(import.meta.dir, "../../..");

describe("icon names of the added sets", () => {
  test.each([
    ["fa6-brands", "square-github", "github", ["square"]],
    ["fa6-brands", "github-alt", "github", ["alt"]],
    ["streamline-logos", "dropbox-logo-1-solid", "dropbox", ["solid", "1", "logo"]],
    ["streamline-logos", "adobe-logo-block", "adobe", ["block", "logo"]],
    ["lobehub", "claude-color", "claude", ["color"]],
    ["lobehub", "ai21-brand-color", "ai21", ["color", "brand"]],
    ["cib", "amazon-aws", "amazon-aws", []],
  ] as const)("%s %s -> %s", (set, name, base, mods) => {
    const parsed = parseIconName(set, name);
    expect(parsed.base).toBe(base);
    expect([...parsed.mods].sort()).toEqual([...mods].sort());
  });

  test("lobehub files load as an iconify set with their titles and root paint kept", () => {
    const { set, titles } = loadLobehub(ROOT);
    expect(titles.get("openai")).toBe("OpenAI");
    const openai = set.icons.openai;
    expect(openai?.width).toBe(24);
    expect(openai?.body.startsWith('<g fill="currentColor"')).toBe(true);
    expect(openai?.body).not.toContain("<title>");
  });
});

describe("dark and light variants", () => {
  const mono =
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M0 0h24v24z"/>' +
    '<path fill="currentColor" d="M1 1h2v2z"/><path fill="none" stroke="#000" d="M2 2h4"/>' +
    '<rect style="fill:#333;opacity:.5" width="2" height="2"/></svg>';
  test("recolor paints the root and every painted element, never none", () => {
    const out = recolor(mono, "ffffff");
    expect(
      out.startsWith('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="#ffffff">'),
    ).toBe(true);
    expect(out).toContain('fill="#ffffff" d="M1 1h2v2z"');
    expect(out).toContain('fill="none" stroke="#ffffff"');
    expect(out).toContain("fill:#ffffff;opacity:.5");
    expect(out).not.toContain("currentColor");
    expect(out).not.toContain("#333");
  });
  test("gradient references stay", () => {
    const svg = '<svg viewBox="0 0 1 1"><path fill="url(#a)" d="M0 0"/></svg>';
    expect(recolor(svg, "ffffff")).toContain('fill="url(#a)"');
  });
});

describe("render check", () => {
  const svg = (body: string) =>
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">${body}</svg>`;
  test("a mark on an opaque full-canvas square is flagged", () => {
    const flagged = svg(
      '<rect width="32" height="32" fill="#000"/><circle cx="16" cy="16" r="8" fill="#e50914"/>',
    );
    expect(renderFlags(flagged, "e50914")).toEqual(["opaque-background"]);
    expect(renderFlags(svg('<circle cx="16" cy="16" r="12" fill="#e50914"/>'), "e50914")).toEqual(
      [],
    );
  });
  test("a mark that lost its colour is flagged when the brand colour is chromatic", () => {
    const black = svg('<circle cx="16" cy="16" r="12" fill="#0a0a08"/>');
    expect(renderFlags(black, "e4405f")).toEqual(["no-colour"]);
    expect(renderFlags(black, "181717")).toEqual([]);
    const gradient = svg(
      '<defs><linearGradient id="g"><stop offset="0" stop-color="#f58529"/><stop offset="1" stop-color="#dd2a7b"/></linearGradient></defs><circle cx="16" cy="16" r="12" fill="url(#g)"/>',
    );
    expect(renderFlags(gradient, "e4405f")).toEqual([]);
  });
});

describe("attribution list", () => {
  test("credits every source in use with package, licence and counts; unknown sources fail", () => {
    const b = (slug: string, source: string): Brand =>
      ({ slug, variants: { mono: { svg: "", sha256: "", source } } }) as unknown as Brand;
    const md = attributionMarkdown(ROOT, [
      b("a", "iconify:fa6-brands"),
      b("b", "recolored:flattened:iconify:logos"),
    ]);
    expect(md).toContain("@iconify-json/fa6-brands");
    expect(md).toMatch(/\| `iconify:fa6-brands` \|.*CC-BY-4.0.*\| 1 \| 1 \|/);
    expect(md).toContain("Icons from **@iconify-json/streamline-logos**");
    expect(baseSource("recolored:flattened:iconify:logos")).toBe("iconify:logos");
    expect(() => attributionMarkdown(ROOT, [b("c", "somewhere")])).toThrow(/no licence/);
    // thesvg licenses each icon on its own (Brand.artwork and the per-icon section)
    for (const l of Object.values(SOURCE_LICENCES))
      expect(l.licence).toMatch(/^(CC0-1.0|MIT|CC-BY-4.0|per icon)$/);
  });
});
