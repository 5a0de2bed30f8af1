import { afterAll, beforeAll, expect, test } from "bun:test";
import { splitUrl } from "../../src/images/options";
import { makeApp, type TestApp } from "../support/app";

let t: TestApp;
let pk: string;
beforeAll(async () => {
  t = await makeApp();
  const { accountId } = await t.deps.accounts.createAccountWithKey({ tier: "pro" });
  pk = (await t.deps.accounts.createPublishableKey(accountId, ["app.example.com"], null))
    .publishableKey;
});
afterAll(() => t.close());

test("odd names and queries on /i/ are 4xx in the error shape, never 5xx", async () => {
  const origin = { origin: "https://app.example.com" };
  const cases: [string, number][] = [
    [`/i/github.com.png?key=${pk}&size=16`, 200],
    [`/i/GitHub.SVG?key=${pk}`, 200],
    [`/i/%ZZ.png?key=${pk}`, 422],
    [`/i/.png?key=${pk}`, 422],
    [`/i/-x.png?key=${pk}`, 422],
    [`/i/${"a".repeat(300)}.png?key=${pk}`, 422],
    [`/i/192.168.0.1.png?key=${pk}`, 422],
    [`/i/nosuchbrand.example.png?key=${pk}`, 404],
    [`/i/no-such-brand-zz.svg?key=${pk}`, 404],
    [`/i/github.png?key=${pk}&bg=%23`, 422],
    [`/i/github.png?key=${pk}&size=%E0%A4%A`, 422],
    [`/i/github.png?key=${pk}&size=99999999999999999999`, 422],
    [`/i/github.gif?key=${pk}`, 422],
    [`/i/github.png?key=${pk}&key=${pk}`, 422],
    ["/i/github.png?sig=x&kid=y&exp=z", 403],
    ["/i/github.png?key=", 401],
    ["/i/github.png?key=pk_nope", 401],
  ];
  for (const [path, status] of cases) {
    const r = await t.req(path, { headers: origin });
    expect([path, r.status]).toEqual([path, status]);
    if (status >= 400) {
      const body = (await r.json()) as { error: string; message: string };
      expect(typeof body.error).toBe("string");
      expect(typeof body.message).toBe("string");
    }
  }
});

test("splitUrl reads the path as sent and the query like URLSearchParams", () => {
  const { path, query } = splitUrl("http://api/i/github.png?size=64&bg=%230d1117&a+b=c+d&flag");
  expect(path).toBe("/i/github.png");
  expect([...query]).toEqual([
    ["size", "64"],
    ["bg", "#0d1117"],
    ["a b", "c d"],
    ["flag", ""],
  ]);
  expect(splitUrl("http://api?x=1").path).toBe("/");
  expect(splitUrl("http://api").path).toBe("/");
  expect(() => splitUrl("http://api/i/x.png?a=1&a=2")).toThrow("more than once");
});
