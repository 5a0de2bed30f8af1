import { uuidv7 } from "uuidv7";

/** Unique, time-sortable id (UUIDv7). */
export const newId = (): string => uuidv7();
