/** Whether the recorder keeps what it is given (readiness, GET /readyz). */
export interface RecorderCondition {
  /** degraded: events pile up in memory, neither written nor spilled (a full disk) */
  state: "ok" | "degraded";
  /** when the degraded spell began (ISO), null when ok */
  since: string | null;
  /** events in memory, not written yet */
  held: number;
  /** spilled events waiting for their replay (the instance is ready meanwhile) */
  backlog?: {
    /** spill files not replayed yet */
    spillFiles: number;
    /** their bytes (bounded by USAGE_SPILL_MAX_MB) */
    spillBytes: number;
    /** a replay runs */
    replaying: boolean;
    /** batches in the log not counted into the projections yet (MongoDB; 0 on the embedded store) */
    pendingBatches: number;
  };
}
