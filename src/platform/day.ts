/** UTC days as the service names them: `YYYY-MM-DD`, the quota day and the usage log's day. */

export const DAY_MS = 86_400_000;

/** The UTC day of a time (a Date or ms since the epoch). */
export const utcDay = (t: Date | number): string => new Date(t).toISOString().slice(0, 10);

/** The start of a UTC day, in ms since the epoch. */
export const dayStart = (day: string): number => Date.parse(`${day}T00:00:00Z`);

/** The UTC day `n` days after `day` (before it when `n` is negative). */
export const addDays = (day: string, n: number): string => utcDay(dayStart(day) + n * DAY_MS);
