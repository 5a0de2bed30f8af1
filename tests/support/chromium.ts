/**
 * Debian's Chromium for the browser tests, driven by playwright-core (no browser download):
 * CHROMIUM_PATH or /usr/bin/chromium, started headless with the flags CI uses. Test files
 * skip with a one-line reason when it is absent.
 */
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
    ],
  });
}
