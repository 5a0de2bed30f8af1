import { uuidv7, V7Generator } from "uuidv7";

const bunUuidv7 = (
  globalThis as { Bun?: { randomUUIDv7?: (encoding?: "hex", timestamp?: number) => string } }
).Bun?.randomUUIDv7;
const generator = new V7Generator();

/**
 * Unique, time-sortable id (UUIDv7), from the current time or from `at` (epoch ms) when given.
 * On Bun, its native generator (monotonic within a millisecond, about 4x faster: one per usage
 * event on the hot path); elsewhere the uuidv7 package (also monotonic).
 */
export const newId: (at?: number) => string = bunUuidv7
  ? (at) => (at === undefined ? bunUuidv7() : bunUuidv7("hex", at))
  : (at) => (at === undefined ? uuidv7() : generator.generateOrResetWithTs(at).toString());
