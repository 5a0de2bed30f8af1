/**
 * stripe-mock (Stripe's own API test server) for the billing tests: the one `npm test` started
 * for the run (scripts/test.ts, TEST_STRIPE_MOCK_URL), else one started on first use in this
 * process and stopped by tests/setup.ts. Null when stripe-mock is not installed.
 */
import { type StripeMock, startStripeMock } from "../../scripts/stripe-mock";

let started: Promise<StripeMock | null> | null = null;

export function stripeMock(): Promise<{ url: string } | null> {
  const url = process.env.TEST_STRIPE_MOCK_URL;
  if (url) return Promise.resolve({ url });
  started ??= startStripeMock();
  return started;
}

/** Stops the stripe-mock this process started, if any (tests/setup.ts, after the last file). */
export async function stopStripeMock(): Promise<void> {
  const s = await started;
  started = null;
  s?.stop();
}
