/** The messages between the usage write thread (usage-worker.ts) and its caller (usage-thread.ts). */
export type UsageWriteRequest = { id: number } & (
  | { op: "open"; path: string; durable: boolean }
  | { op: "part"; lines: string }
  | { op: "append"; lines: string; fresh: boolean }
  | { op: "prune"; beforeDay: string }
  | { op: "rebuild" }
  | { op: "close" }
);

export type UsageWriteReply =
  | { id: number; ok: unknown }
  | { id: number; progress: { day: string; events: number } }
  | { id: number; error: string; code: string | null };
