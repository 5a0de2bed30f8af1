/**
 * The account page's billing buttons in headless Chromium against a server whose billing talks
 * to stripe-mock (Stripe's own API test server): "Upgrade to pro" sends the browser to the
 * Checkout URL the API got from Stripe, and "Manage billing" explains that no subscription
 * exists yet. Skips with a reason when Chromium or stripe-mock is absent.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { buildWeb, isStale } from "../../scripts/build-web";
import { rememberClientAddress } from "../../src/http/client-ip";
import { makeApp, type TestApp } from "../support/app";
import { CHROMIUM, launchChromium } from "../support/chromium";
import { describeIf, NO_CHROMIUM, NO_STRIPE_MOCK } from "../support/skip";
import { stripeMock } from "../support/stripe-mock";

const have = existsSync(CHROMIUM);
const mock = have ? await stripeMock() : null;
if (!have) console.log(`skipping the console billing browser test: no Chromium at ${CHROMIUM}`);
else if (!mock)
  console.log(
    "skipping the console billing browser test: stripe-mock is not installed (bash .ci/stripe-mock.sh)",
  );

const withBrowserAndMock = describeIf(have && !!mock, have ? NO_STRIPE_MOCK : NO_CHROMIUM);

withBrowserAndMock("console billing buttons against stripe-mock", () => {
  let t: TestApp;
  let server: ReturnType<typeof Bun.serve>;
  let base: string;
  let browser: Browser;
  let page: Page;
  const offOrigin: string[] = [];

  beforeAll(async () => {
    if (isStale()) await buildWeb();
    t = await makeApp({
      STRIPE_SECRET_KEY: "sk_test_123",
      STRIPE_PRICE_PRO: "price_pro_test",
      STRIPE_WEBHOOK_SECRET: "whsec_test_console",
      STRIPE_API_BASE: (mock as { url: string }).url,
    });
    server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (req, srv) => {
        rememberClientAddress(req, srv.requestIP(req)?.address);
        return t.app.handle(req);
      },
    });
    base = `http://127.0.0.1:${server.port}`;
    browser = await launchChromium();
    const context = await browser.newContext();
    // stand in for Stripe's hosted pages: record where the browser was sent, answer locally
    await context.route(
      (url) => !url.href.startsWith(base),
      (route) => {
        offOrigin.push(route.request().url());
        return route.fulfill({
          status: 200,
          contentType: "text/html",
          body: "<title>Stripe</title>",
        });
      },
    );
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop(true);
    await t?.close();
  });

  test("Manage billing before any checkout: the 409 is explained; Upgrade to pro goes to Stripe Checkout", async () => {
    const email = `billing-${Date.now()}@example.com`;
    const password = "console password 1";
    const reg = await t.req("/auth/register", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password }),
    });
    expect(reg.status).toBe(201);
    await page.goto(`${base}/login`);
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(`${base}/dashboard`);
    await page.getByRole("link", { name: "Account" }).click();
    await page.getByText("Plan").waitFor();

    await page.getByRole("button", { name: "Manage billing" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toBe(
      "You have no subscription to manage yet: upgrade to pro first.",
    );
    expect(offOrigin).toEqual([]);

    await page.getByRole("button", { name: "Upgrade to pro" }).click();
    await page.waitForURL((u) => !u.href.startsWith(base));
    expect(offOrigin.length).toBe(1);
    const target = new URL(offOrigin[0] as string);
    expect(target.protocol).toBe("https:");
    expect(target.hostname).toEndWith("stripe.com");
  }, 90_000);
});
