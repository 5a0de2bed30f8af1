/** MongoDB's duplicate-key error code (E11000), which FerretDB answers as well. */
export const DUPLICATE_KEY = 11000;

export const isDuplicate = (err: unknown) =>
  (err as { code?: number } | null)?.code === DUPLICATE_KEY;

/**
 * Run an upsert again when it lost an insert race: two instances upserting the same new
 * document at once both try to insert it, and the loser gets a duplicate-key error (MongoDB
 * retries such upserts itself only in some cases, FerretDB never does). The retry finds the
 * document and updates it.
 */
export async function retryInsertRace<T>(run: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (!isDuplicate(err) || attempt >= attempts) throw err;
    }
  }
}
