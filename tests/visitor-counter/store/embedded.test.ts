/**
 * The embedded visitor counter store where its contract does not reach: two connections on one
 * DATA_DIR (the service and the admin CLI are two processes), and what a restart finds.
 */
import { afterEach, expect, test } from "bun:test";
import type { Database } from "../../../src/store/embedded/db";
import { EmbeddedVisitorStore } from "../../../src/visitor-counter/store/embedded";
import { tempDir } from "../../support/app";
import { closeConnections, connections } from "../../support/db";

afterEach(closeConnections);

test("two connections: each visitor is counted once, one secret for both", async () => {
  const [a, b] = connections(2) as [Database, Database];
  const [va, vb] = [new EmbeddedVisitorStore(a), new EmbeddedVisitorStore(b)];
  await Promise.all([va.increment(), vb.increment(), va.increment()]);
  expect(await vb.total()).toBe(3);
  expect(await va.secret()).toBe(await vb.secret());
});

test("after a restart: the total and the secret are kept", async () => {
  const dir = tempDir();
  const [first] = connections(1, dir) as [Database];
  const v1 = new EmbeddedVisitorStore(first);
  await v1.increment();
  const secret = await v1.secret();
  first.close();
  const [second] = connections(1, dir) as [Database];
  const v2 = new EmbeddedVisitorStore(second);
  expect(await v2.total()).toBe(1);
  expect(await v2.secret()).toBe(secret);
});
