/**
 * The console's layout and design system in headless Chromium, from 360 to 1440 px, light and
 * dark: no sideways scroll, one-row navigation, the key button aligned with its input, a focus
 * ring in the focus colour, code blocks with a corner copy icon, a tapped result brought into
 * view on a phone, axe clean. With WRITE_DOCS_SCREENSHOTS=1, screenshots go to
 * build/test-output/web and docs/images/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { buildWeb, isStale } from "../../scripts/build-web";
import { makeApp, type TestApp } from "../support/app";
import { CHROMIUM, launchChromium, serveForBrowser } from "../support/chromium";
import { describeIf, NO_CHROMIUM } from "../support/skip";

const ROOT = resolve(import.meta.dir, "../..");
const OUT = join(ROOT, "build", "test-output", "web");
const DOCS_IMAGES = join(ROOT, "docs", "images");
const AXE = readFileSync(join(ROOT, "node_modules", "axe-core", "axe.min.js"), "utf8");
const have = existsSync(CHROMIUM);
if (!have) console.log(`skipping the console layout tests: no Chromium at ${CHROMIUM}`);

let t: TestApp;
let server: ReturnType<typeof Bun.serve>;
let base: string;
let browser: Browser;
let key = "";
let tokens: { accessToken: string; refreshToken: string };

const viewport = (width: number) => ({ width, height: width < 700 ? 844 : 900 });

async function open(
  width: number,
  scheme: "light" | "dark",
  store: Record<string, string> = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ colorScheme: scheme, viewport: viewport(width) });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  await context.addInitScript((s: Record<string, string>) => {
    for (const [k, v] of Object.entries(s)) sessionStorage.setItem(k, v);
  }, store);
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  return { context, page };
}

/** The page at another width, for the next navigation (one context serves every width). */
const resize = (page: Page, width: number) => page.setViewportSize(viewport(width));

/** The page at another width, once the layout, resize observers and the next frames have run. */
async function resizeAndSettle(page: Page, width: number): Promise<void> {
  await resize(page, width);
  await page.evaluate(
    () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))),
  );
}

/** Nothing wider than the viewport, and the navigation on one row. */
async function checkLayout(page: Page, label: string): Promise<void> {
  const m = await page.evaluate(() => {
    const tops = [...document.querySelectorAll("nav li")].map((li) =>
      Math.round(li.getBoundingClientRect().top),
    );
    return {
      scroll: document.documentElement.scrollWidth,
      width: document.documentElement.clientWidth,
      navRows: new Set(tops).size,
      header: Math.round((document.querySelector("header") as HTMLElement).offsetHeight),
    };
  });
  expect({ label, sideways: m.scroll > m.width, navRows: m.navRows }).toEqual({
    label,
    sideways: false,
    navRows: 1,
  });
  expect(m.header).toBeLessThan(80);
}

async function axe(page: Page, label: string): Promise<void> {
  await page.evaluate(AXE);
  const bad = (await page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is a global injected just above
    const r = await (window as any).axe.run(document, { resultTypes: ["violations"] });
    return r.violations
      .filter((v: { impact: string }) => v.impact === "serious" || v.impact === "critical")
      .map((v: { id: string }) => v.id);
  })) as string[];
  expect({ label, bad }).toEqual({ label, bad: [] });
}

/**
 * A full-page screenshot to build/test-output/web and docs/images/, with
 * WRITE_DOCS_SCREENSHOTS=1 only: nothing asserts on these images (tests/web/browser.test.ts
 * checks its screenshots), and encoding 19 full pages took a third of this file's time.
 */
async function shot(page: Page, name: string): Promise<void> {
  if (process.env.WRITE_DOCS_SCREENSHOTS !== "1") return;
  mkdirSync(OUT, { recursive: true });
  const file = join(OUT, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  mkdirSync(DOCS_IMAGES, { recursive: true });
  copyFileSync(file, join(DOCS_IMAGES, `${name}.png`));
}

async function openStripe(page: Page): Promise<void> {
  await page.getByLabel("Search brands").fill("stripe");
  await page.getByRole("button", { name: /^Stripe stripe$/ }).click();
  await page.getByRole("heading", { name: "Stripe", exact: true }).waitFor();
  await page.waitForFunction(() =>
    [...document.querySelectorAll("figure.variant img")].some(
      (i) => (i as HTMLImageElement).naturalWidth > 0,
    ),
  );
}

describeIf(have, NO_CHROMIUM)("console layout in headless Chromium", () => {
  beforeAll(async () => {
    if (isStale()) await buildWeb();
    t = await makeApp();
    ({ server, base } = serveForBrowser(t.app));
    browser = await launchChromium();
    key = await t.key("pro");
    const email = `layout-${Date.now()}@example.com`;
    const body = JSON.stringify({ email, password: "layout password 1" });
    const headers = { "content-type": "application/json" };
    expect((await t.req("/auth/register", { method: "POST", headers, body })).status).toBe(201);
    const login = await t.req("/auth/login", { method: "POST", headers, body });
    tokens = (await login.json()) as typeof tokens;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop(true);
    await t?.close();
  });

  // each page is loaded once and resized: its media queries and the chart follow the width
  test("no sideways scroll and a one-row navigation from 360 to 1440 px, on every page", async () => {
    const widths = [360, 390, 768, 1280, 1440];
    const anon = await open(360, "light");
    for (const path of ["/", "/signup", "/login"]) {
      await resize(anon.page, 360);
      await anon.page.goto(`${base}${path}`);
      await anon.page.locator("main h1").waitFor();
      for (const width of widths) {
        await resizeAndSettle(anon.page, width);
        await checkLayout(anon.page, `${path} at ${width}`);
      }
    }
    await anon.context.close();
    const user = await open(360, "light", { apiKey: key, ...tokens });
    await user.page.goto(`${base}/`);
    await openStripe(user.page);
    for (const width of widths) {
      await resizeAndSettle(user.page, width);
      await checkLayout(user.page, `explorer with a brand at ${width}`);
    }
    for (const path of ["/dashboard", "/account"]) {
      await resize(user.page, 360);
      await user.page.goto(`${base}${path}`);
      await user.page.getByText(path === "/dashboard" ? /^Updated / : "(not verified)").waitFor();
      // this key has made no metered call: the dashboard says what to try first
      if (path === "/dashboard")
        await user.page.getByText("No requests yet: try GET /v1/svg/github").waitFor();
      for (const width of widths) {
        await resizeAndSettle(user.page, width);
        await checkLayout(user.page, `${path} at ${width}`);
      }
    }
    await user.context.close();
  }, 180_000);

  test("the key button sits on its input's row; links are not underlined; the focus ring is the focus colour", async () => {
    const { context, page } = await open(1280, "light");
    await page.goto(`${base}/`);
    // both boxes read in one frame: the landing's gallery above the form may still be loading
    // and moving it down between two separate reads
    await page.getByRole("button", { name: "Use this key" }).waitFor();
    const [input, button] = await page.evaluate(() =>
      [
        document.querySelector("input#api-key, input[name=apiKey]") ??
          [...document.querySelectorAll("label")].find((l) =>
            l.textContent?.trim().startsWith("API key"),
          )?.control,
        [...document.querySelectorAll("button")].find(
          (b) => b.textContent?.trim() === "Use this key",
        ),
      ].map((e) => {
        const r = (e as Element | null | undefined)?.getBoundingClientRect();
        return r ? { y: r.y, height: r.height } : null;
      }),
    );
    if (!input || !button) throw new Error("no key form");
    expect(Math.abs(input.y - button.y)).toBeLessThanOrEqual(1);
    expect(Math.abs(input.y + input.height - (button.y + button.height))).toBeLessThanOrEqual(1);
    const nav = await page
      .getByRole("navigation")
      .getByRole("link", { name: "Sign up" })
      .evaluate((a) => getComputedStyle(a).textDecorationLine);
    expect(nav).toBe("none");
    await page.getByLabel("API key").focus();
    const ring = await page.evaluate(() => {
      const st = getComputedStyle(document.activeElement as Element);
      const root = getComputedStyle(document.documentElement);
      return {
        outline: st.outlineStyle,
        color: st.outlineColor,
        focus: root.getPropertyValue("--focus").trim(),
        danger: root.getPropertyValue("--danger").trim(),
      };
    });
    expect(ring.outline).toBe("solid");
    const hex = (c: string) =>
      `#${(c.match(/\d+/g) as string[])
        .slice(0, 3)
        .map((n) => Number(n).toString(16).padStart(2, "0"))
        .join("")}`;
    expect(hex(ring.color)).toBe(ring.focus);
    expect(ring.focus).not.toBe(ring.danger);
    await context.close();
  }, 60_000);

  test("code blocks carry a copy icon in their top-right corner that copies the block", async () => {
    const { context, page } = await open(1280, "light", { apiKey: key });
    await page.goto(`${base}/`);
    await openStripe(page);
    const fig = page.getByRole("figure", { name: "curl snippet" });
    const pre = await fig.locator("pre").boundingBox();
    const icon = await fig.getByRole("button", { name: "Copy curl snippet" }).boundingBox();
    if (!pre || !icon) throw new Error("no code block");
    expect(icon.width).toBeLessThanOrEqual(40);
    expect(icon.x + icon.width).toBeGreaterThan(pre.x + pre.width - 20);
    expect(icon.y).toBeLessThan(pre.y + 20);
    await fig.getByRole("button", { name: "Copy curl snippet" }).click();
    await fig.getByText("Copied.").waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
      (await fig.locator("pre").textContent()) as string,
    );
    await context.close();
  }, 60_000);

  test("on a phone, tapping a search result brings the brand into view", async () => {
    const { context, page } = await open(390, "light", { apiKey: key });
    await page.goto(`${base}/`);
    await page.getByLabel("Search brands").fill("stripe");
    await page.getByRole("button", { name: /^Stripe stripe$/ }).click();
    const heading = page.getByRole("heading", { name: "Stripe", exact: true });
    await heading.waitFor();
    await page.waitForFunction(() => {
      const h = document.getElementById("brand-h");
      const r = h?.getBoundingClientRect();
      return r ? r.top >= 0 && r.bottom <= innerHeight : false;
    });
    const top = await heading.evaluate((h) => h.getBoundingClientRect().top);
    expect(top).toBeLessThan(200);
    await context.close();
  }, 60_000);

  test("explorer: a pasted key is checked first; thumbnails from the gallery; background toggle with a contrast flag", async () => {
    const { context, page } = await open(1280, "light");
    const paths: string[] = [];
    page.on("request", (r) => paths.push(new URL(r.url()).pathname));
    await page.goto(`${base}/`);
    await page.getByLabel("API key").fill("not-a-real-key");
    await page.getByRole("button", { name: "Use this key" }).click();
    await page.getByText("This key was not accepted").waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem("apiKey"))).toBeNull();
    await page.getByLabel("API key").fill(key);
    await page.getByRole("button", { name: "Use this key" }).click();
    await page.getByText("Key accepted: pro plan.").waitFor();
    // results show real logo thumbnails from the public gallery, not the key's svg quota
    await page.getByLabel("Search brands").fill("github");
    await page.getByRole("button", { name: /^GitHub github$/ }).waitFor();
    await page.waitForFunction(() => {
      const i = document.querySelector(".results img.thumb") as HTMLImageElement | null;
      return (i?.naturalWidth ?? 0) > 0;
    });
    expect(await page.locator(".results img.thumb").first().getAttribute("src")).toStartWith(
      "/v1/gallery/",
    );
    expect(paths.filter((p) => /^\/v1\/(svg|png|webp)\//.test(p))).toEqual([]);
    // the mono mark (black) on its light tile passes; toggled onto dark it is flagged
    await page.getByRole("button", { name: /^GitHub github$/ }).click();
    const mono = page.locator("figure.variant").first(); // mono comes first
    await mono.getByAltText("GitHub mono logo on a light background").waitFor();
    await page.waitForFunction(() => document.querySelectorAll("figure.variant img").length >= 6);
    expect(await mono.locator(".flag").count()).toBe(0);
    await mono.getByRole("button", { name: "Show mono on dark" }).click();
    await mono.getByAltText("GitHub mono logo on a dark background").waitFor();
    await mono.locator(".flag").waitFor();
    expect(await mono.locator(".flag").textContent()).toMatch(/^Low contrast 1\.\d:1$/);
    expect(
      await mono.getByRole("button", { name: "Show mono on dark" }).getAttribute("aria-pressed"),
    ).toBe("true");
    await context.close();
  }, 60_000);

  test("explorer: a near-miss slug offers 'did you mean'; no match suggests what to try", async () => {
    const { context, page } = await open(1280, "light", { apiKey: key });
    await page.goto(`${base}/?brand=git-hub`);
    await page.getByText('No catalog entry with slug "git-hub".').waitFor();
    await page.getByRole("button", { name: "github", exact: true }).click();
    await page.getByRole("heading", { name: "GitHub", exact: true }).waitFor();
    expect(new URL(page.url()).search).toBe("?brand=github");
    await page.getByLabel("Search brands").fill("qqxzvvkq");
    await page.getByText('No brand matches "qqxzvvkq". Try').waitFor();
    await context.close();
  }, 60_000);

  test("landing: search the catalog and see real logos without a key; img example; plans from the tier table; sign-up", async () => {
    const { context, page } = await open(390, "light");
    await page.goto(`${base}/`);
    const gallery = page.getByRole("list", { name: "Catalog previews" });
    await page.getByLabel("Brand name or domain").fill("github");
    await gallery.getByAltText("GitHub logo", { exact: true }).waitFor();
    await page.waitForFunction(() => {
      const i = document.querySelector('img[alt="GitHub logo"]') as HTMLImageElement | null;
      return (i?.naturalWidth ?? 0) > 0;
    });
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    const example = await page.getByRole("figure", { name: "img example" }).textContent();
    expect(example).toContain(
      `<img src="${base}/v1/gallery/stripe/thumbnail?variant=color&size=64"`,
    );
    // the example works as written: a plain GET with no key
    const r = await fetch(`${base}/v1/gallery/stripe/thumbnail?variant=color&size=64`);
    expect(r.status).toBe(200);
    const plans = page.getByRole("table", { name: /Requests per UTC day/ });
    expect(await plans.getByRole("row", { name: /^svg/ }).textContent()).toBe("svg502,000");
    await checkLayout(page, "landing at 390");
    await axe(page, "landing");
    await shot(page, "console-landing-390-light");
    await page.getByRole("link", { name: "Get a free key" }).click();
    await page.waitForURL(`${base}/signup`);
    await context.close();
  }, 60_000);

  test("screenshots at 390, 768 and 1280 px, light and dark, with no serious axe violation", async () => {
    const widths = [390, 768, 1280];
    for (const scheme of ["light", "dark"] as const) {
      const user = await open(390, scheme, { apiKey: key, ...tokens });
      const { page } = user;
      await page.goto(`${base}/`);
      await openStripe(page);
      for (const width of widths) {
        await resizeAndSettle(page, width);
        await page.evaluate(() => scrollTo(0, 0));
        await axe(page, `explorer ${width} ${scheme}`);
        await shot(page, `console-explorer-${width}-${scheme}`);
      }
      await page.goto(`${base}/dashboard`);
      await page.getByText(/^Updated /).waitFor();
      for (const width of widths) {
        await resizeAndSettle(page, width);
        await axe(page, `dashboard ${width} ${scheme}`);
        await shot(page, `console-dashboard-${width}-${scheme}`);
      }
      await user.context.close();
      const visitor = await open(390, scheme);
      await visitor.page.goto(`${base}/`);
      await visitor.page.getByRole("img", { name: "Stripe logo" }).first().waitFor();
      for (const width of widths) {
        await resizeAndSettle(visitor.page, width);
        await axe(visitor.page, `landing ${width} ${scheme}`);
        await shot(visitor.page, `console-landing-${width}-${scheme}`);
      }
      await visitor.context.close();
    }
  }, 180_000);
});
