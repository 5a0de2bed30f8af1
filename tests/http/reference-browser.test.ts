/**
 * The API reference page (/swagger) in headless Chromium: public routes only by default, the
 * operator, MCP and webhook routes with ?all, a link back to the console, dark with the system.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";
import { makeApp, type TestApp } from "../support/app";
import { CHROMIUM, launchChromium, serveForBrowser } from "../support/chromium";
import { describeIf, NO_CHROMIUM } from "../support/skip";

const have = existsSync(CHROMIUM);
if (!have) console.log(`skipping the API reference browser test: no Chromium at ${CHROMIUM}`);

let t: TestApp;
let server: ReturnType<typeof Bun.serve>;
let base: string;
let browser: Browser;

describeIf(have, NO_CHROMIUM)("API reference page in headless Chromium", () => {
  beforeAll(async () => {
    t = await makeApp();
    ({ server, base } = serveForBrowser(t.app));
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop(true);
    await t?.close();
  });

  const sections = (page: import("playwright-core").Page) =>
    page.evaluate(() =>
      [...document.querySelectorAll(".opblock-tag-section h3 .nostyle span, .opblock-tag")]
        .map((e) => e.getAttribute("data-tag") ?? e.textContent?.trim() ?? "")
        .filter(Boolean),
    );

  test("public routes first by task; operator, MCP and webhook routes only with ?all; a link back", async () => {
    const context = await browser.newContext({ colorScheme: "light" });
    const page = await context.newPage();
    await page.goto(`${base}/swagger`);
    await page.locator(".opblock-tag").first().waitFor({ timeout: 20_000 });
    const tags = await sections(page);
    expect(tags[0]).toBe("catalog");
    expect(tags).toContain("gallery");
    expect(tags).not.toContain("admin");
    expect(tags).not.toContain("mcp");
    const paths = await page.locator(".opblock-summary-path").allTextContents();
    expect(paths.join(" ")).not.toContain("/v1/billing/webhook");
    expect(paths.some((p) => p.includes("/v1/catalog/"))).toBe(true);
    await page.getByRole("link", { name: "Show operator, MCP and webhook routes" }).click();
    await page.waitForURL(`${base}/swagger?all`);
    await page.locator(".opblock-tag").first().waitFor();
    const all = await sections(page);
    expect(all).toContain("admin");
    expect(all).toContain("mcp");
    expect(all.at(-1)).toBe("admin");
    await page.getByRole("link", { name: "← Back to the console" }).click();
    await page.waitForURL(`${base}/`);
    await context.close();
  }, 60_000);

  test("dark mode follows the system", async () => {
    const context = await browser.newContext({ colorScheme: "dark" });
    const page = await context.newPage();
    await page.goto(`${base}/swagger`);
    await page.locator(".opblock-tag").first().waitFor({ timeout: 20_000 });
    const bg = await page.evaluate(
      () => getComputedStyle(document.documentElement).backgroundColor,
    );
    expect(bg).toBe("rgb(20, 22, 26)");
    await context.close();
  }, 60_000);
});
