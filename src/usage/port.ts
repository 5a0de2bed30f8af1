import type { Bucket, Tier } from "../quota/limits";

/** One metered request, as appended to the usage event log. */
export interface UsageEvent {
  id: string;
  ts: string;
  day: string;
  accountId: string;
  keyId: string;
  tier: Tier;
  bucket: Bucket;
  route: string;
  slug: string | null;
  variant: string | null;
  status: number;
  latencyMs: number;
}

/** Receives usage events off the request path (buffers and flushes on its own). */
export interface UsageRecorder {
  record(event: Omit<UsageEvent, "id" | "day">): void;
  /** flush whatever is buffered; called on shutdown */
  close(): Promise<void>;
}

export const noopRecorder: UsageRecorder = {
  record() {},
  async close() {},
};
