/**
 * Storage port for the visitor counter's durable part: the running total (shared by every
 * instance and kept across restarts) and the secret that salts visitor hashes. Adapters:
 * ./embedded.ts, ./mongo.ts. Which visitors were counted today
 * lives in the counter store (quota/store/port.ts), not here.
 */
export interface VisitorCountStore {
  total(): Promise<number>;
  /** add one visitor; the total afterwards */
  increment(): Promise<number>;
  /** a random secret made on first use and kept (the same on every instance) */
  secret(): Promise<string>;
}
