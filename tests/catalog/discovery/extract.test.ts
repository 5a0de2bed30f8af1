import { describe, expect, test } from "bun:test";
import { applyManifest, cleanTitle, extractPage } from "../../../src/catalog/discovery/extract";

const page = (
  head: string,
  body = "<p>Welcome to our company website, products and services.</p>",
) => `<!doctype html><html><head>${head}</head><body>${body}</body></html>`;

describe("page extraction", () => {
  test("candidates are ranked vector first, then large rasters, favicon.ico last", () => {
    const f = extractPage(
      page(`<link rel="icon" href="/fav-32.png" sizes="32x32">
        <link rel="apple-touch-icon" href="/touch.png">
        <link rel="icon" type="image/svg+xml" href="/icon.svg">
        <link rel="mask-icon" href="/mask.svg" color="#000">
        <meta property="og:image" content="https://cdn.acme.test/og.png">`),
      "https://acme.test/",
      "acme.test",
    );
    expect(f.candidates.map((c) => c.origin)).toEqual([
      "link-icon-svg",
      "mask-icon",
      "apple-touch-icon",
      "apple-touch-icon-root",
      "apple-touch-icon-root",
      "link-icon",
      "favicon.ico",
      "og:image",
    ]);
    expect(f.candidates[0]?.url).toBe("https://acme.test/icon.svg");
    expect(f.candidates.find((c) => c.origin === "favicon.ico")?.url).toBe(
      "https://acme.test/favicon.ico",
    );
  });

  test("inline header logo SVG, WordPress custom-logo and JSON-LD logo are found; generic CMS icons are not", () => {
    const f = extractPage(
      page(
        `<link rel="icon" href="https://acme.test/wp-includes/images/w-logo-blue-white-bg.png">
         <script type="application/ld+json">{"@context":"https://schema.org","@graph":[{"@type":"WebSite","name":"x"},{"@type":"Organization","name":"Acme Widgets","logo":{"@type":"ImageObject","url":"https://acme.test/ld-logo.png"}}]}</script>`,
        `<header><a href="/" class="site-logo"><svg viewBox="0 0 10 10"><path d="M0 0h10v10z"/></svg></a></header>
         <a href="https://acme.test/" class="custom-logo-link"><img class="custom-logo" src="/wp-content/uploads/logo.png" width="300" height="80"></a>`,
      ),
      "https://acme.test/",
      "acme.test",
    );
    const origins = f.candidates.map((c) => c.origin);
    expect(origins).toContain("inline-svg");
    expect(origins).toContain("img-logo");
    expect(origins).toContain("json-ld");
    expect(f.candidates.some((c) => c.url?.includes("wp-includes"))).toBe(false);
    expect(f.candidates.find((c) => c.origin === "inline-svg")?.svg).toContain("<path");
    expect(f.name).toBe("Acme Widgets");
    expect(f.nameSource).toBe("json-ld");
  });

  test("names: og:site_name, then a cleaned title; theme-color unless grey", () => {
    expect(cleanTitle("Tidewater Bank | Personal Banking", "tidewaterbank.com")).toBe(
      "Tidewater Bank",
    );
    expect(cleanTitle("Home - Acme", "acme.test")).toBe("Acme");
    expect(cleanTitle("Welcome to Globex", "globex.test")).toBe("Globex");
    const f = extractPage(
      page(`<title>Shop online | Initech</title><meta name="theme-color" content="#1A73E8">`),
      "https://initech.test/",
      "initech.test",
    );
    expect(f.name).toBe("Initech");
    expect(f.themeColor).toBe("1a73e8");
    const g = extractPage(
      page(
        `<title>x</title><meta property="og:site_name" content="Globex"><meta name="theme-color" content="#ffffff">`,
      ),
      "https://globex.test/",
      "globex.test",
    );
    expect(g.name).toBe("Globex");
    expect(g.themeColor).toBeNull();
  });

  test("parked, server default and empty pages name no brand", () => {
    const parked = extractPage(
      page(
        "<title>acme.test</title>",
        "<h1>This domain is for sale!</h1><p>Buy this domain today.</p>",
      ),
      "http://acme.test/",
      "acme.test",
    );
    expect(parked.noBrand).toMatch(/parked/);
    expect(
      extractPage(page("<title>Welcome to nginx!</title>"), "http://a.test/", "a.test").noBrand,
    ).toMatch(/default/);
    expect(extractPage("<html><body></body></html>", "http://a.test/", "a.test").noBrand).toBe(
      "empty page",
    );
  });

  test("manifest icons, name and theme colour", () => {
    const f = extractPage(page("<title>Home</title>"), "https://acme.test/", "acme.test");
    const m = applyManifest(
      f,
      {
        name: "Acme App",
        theme_color: "#cc0000",
        icons: [
          { src: "/i/192.png", sizes: "192x192", type: "image/png" },
          { src: "/i/512.png", sizes: "512x512", type: "image/png" },
          { src: "/i/mono.png", sizes: "512x512", purpose: "monochrome" },
        ],
      },
      "https://acme.test/site.webmanifest",
    );
    expect(m.name).toBe("Acme App");
    expect(m.themeColor).toBe("cc0000");
    const icons = m.candidates.filter((c) => c.origin === "manifest").map((c) => c.url);
    expect(icons).toEqual(["https://acme.test/i/512.png", "https://acme.test/i/192.png"]);
  });

  test("<base href> resolves links, images and JSON-LD; root icons stay on the page's origin", () => {
    const f = extractPage(
      page(
        `<base href="https://cdn.acme.test/v2/"><link rel="icon" href="icons/32.png" sizes="32x32">
         <script type="application/ld+json">{"@type":"Organization","name":"Acme","logo":"brand/logo.png"}</script>`,
      ),
      "https://www.acme.test/en/",
      "acme.test",
    );
    const url = (origin: string) => f.candidates.find((c) => c.origin === origin)?.url;
    expect(url("link-icon")).toBe("https://cdn.acme.test/v2/icons/32.png");
    expect(url("json-ld")).toBe("https://cdn.acme.test/v2/brand/logo.png");
    expect(url("favicon.ico")).toBe("https://www.acme.test/favicon.ico");
    expect(url("apple-touch-icon-root")).toBe("https://www.acme.test/apple-touch-icon.png");
  });

  test("one URL is one candidate, with its best score", () => {
    const f = extractPage(
      page(
        `<link rel="icon" href="/i.png" sizes="16x16"><link rel="icon" href="/i.png" sizes="32x32">
         <link rel="apple-touch-icon" href="/i.png"><link rel="shortcut icon" href="/i.png">
         <link rel="apple-touch-icon" href="/apple-touch-icon.png">`,
      ),
      "https://acme.test/",
      "acme.test",
    );
    const urls = f.candidates.map((c) => c.url);
    expect(urls.filter((u) => u === "https://acme.test/i.png")).toHaveLength(1);
    expect(urls.filter((u) => u === "https://acme.test/apple-touch-icon.png")).toHaveLength(1);
    expect(f.candidates[0]).toMatchObject({ origin: "apple-touch-icon" });
  });

  test("an <img> is a logo by its own alt/class/id or its place, not by its file name alone", () => {
    const origins = (body: string) =>
      extractPage(page("<title>Acme</title>", body), "https://acme.test/", "acme.test")
        .candidates.filter((c) => c.origin.startsWith("img-logo"))
        .map((c) => new URL(c.url as string).pathname);
    // a product hero picture named "logo_hero_light": not a logo
    expect(
      origins(`<section><img src="/img/logo_hero_light@2x.png" alt="X100"></section>`),
    ).toEqual([]);
    expect(origins(`<img class="logo" src="/img/site-banner.png">`)).toEqual([]);
    expect(origins(`<img src="/og-logo.png" alt="logo">`)).toEqual([]);
    expect(origins(`<main><img src="/partners/acme-logo.png"></main>`)).toEqual([]);
    // a declared wide strip is no icon either
    expect(origins(`<img class="logo" src="/strip.png" width="1800" height="90">`)).toEqual([]);
    expect(origins(`<img class="site-logo" src="/a.png">`)).toEqual(["/a.png"]);
    expect(origins(`<img alt="Acme logo" src="/b.png">`)).toEqual(["/b.png"]);
    expect(origins(`<header><img src="/c-logo.png"></header>`)).toEqual(["/c-logo.png"]);
    expect(origins(`<nav><a href="/"><img src="/d.svg" class="brand"></a></nav>`)).toEqual([
      "/d.svg",
    ]);
  });
});
