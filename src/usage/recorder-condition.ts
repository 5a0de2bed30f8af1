/** Whether the recorder keeps what it is given (readiness, GET /readyz). */
export interface RecorderCondition {
  /** degraded: events pile up in memory, neither written nor spilled (see BatchingRecorder in writer.ts) */
  state: "ok" | "degraded";
  /** when the degraded spell began (ISO), null when ok */
  since: string | null;
  /** events in memory, not written yet */
  held: number;
}
