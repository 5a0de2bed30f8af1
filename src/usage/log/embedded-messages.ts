/** The messages between the usage write thread (embedded-worker.ts) and the store (embedded-thread.ts). */
export type WriteRequest = { id: number } & (
  | { op: "open"; path: string; durable: boolean; hourlyDays: number; busyTimeoutMs?: number }
  /** batches as frames (encodeFrames); `now` is the caller's clock (hourly cells' age) */
  | { op: "append"; frames: ArrayBuffer; now: number }
  | { op: "prune"; beforeDay: string; beforeHour?: number }
  | { op: "rebuild"; now: number }
  | { op: "close" }
);

export type WriteReply =
  | { id: number; ok: unknown }
  | { id: number; progress: { day: string; events: number } }
  | { id: number; error: string; code: string | null };
