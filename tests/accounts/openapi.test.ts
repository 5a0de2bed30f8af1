import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { makeApp, type TestApp } from "../support/app";

// argon2id hashing is CPU-bound: leave room on a loaded machine
setDefaultTimeout(30_000);

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
type Json = Record<string, any>;

let t: TestApp;
let doc: Json;
beforeAll(async () => {
  t = await makeApp();
  doc = (await (await t.req("/swagger/json")).json()) as Json;
});
afterAll(() => t.close());

const BEARER: [string, string][] = [
  ["get", "/auth/me"],
  ["delete", "/auth/me"],
  ["post", "/auth/api-key/regenerate"],
  ["post", "/auth/publishable-keys"],
  ["get", "/auth/publishable-keys"],
  ["delete", "/auth/publishable-keys/{keyId}"],
];
const PUBLIC: [string, string][] = [
  ["post", "/auth/register"],
  ["post", "/auth/login"],
  ["post", "/auth/refresh"],
  ["post", "/auth/logout"],
  ["post", "/auth/verify-email"],
  ["post", "/auth/resend-verification"],
  ["post", "/auth/forgot-password"],
  ["post", "/auth/reset-password"],
  ["get", "/.well-known/jwks.json"],
];

test("every /auth route is documented, with bearer security exactly where it is required", () => {
  const documented = Object.entries(doc.paths as Json)
    .filter(([p]) => p.startsWith("/auth"))
    .flatMap(([p, item]) => Object.keys(item as Json).map((m) => `${m} ${p}`))
    .sort();
  expect(documented).toEqual(
    [...BEARER, ...PUBLIC]
      .filter(([, p]) => p.startsWith("/auth"))
      .map(([m, p]) => `${m} ${p}`)
      .sort(),
  );
  for (const [m, p] of BEARER) expect(doc.paths[p][m].security).toEqual([{ bearer: [] }]);
  for (const [m, p] of PUBLIC) expect(doc.paths[p][m].security).toEqual([]);
  expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
});

test("request bodies, success and error responses are described", () => {
  const op = (m: string, p: string) => doc.paths[p][m] as Json;
  const bodyProps = (m: string, p: string) =>
    Object.keys(op(m, p).requestBody.content["application/json"].schema.properties);
  expect(bodyProps("post", "/auth/register").sort()).toEqual(["email", "password"]);
  expect(bodyProps("delete", "/auth/me")).toEqual(["password"]);
  expect(bodyProps("post", "/auth/reset-password").sort()).toEqual(["password", "token"]);
  const reg = op("post", "/auth/register");
  expect(Object.keys(reg.responses).sort()).toEqual([
    "201",
    "409",
    "413",
    "414",
    "422",
    "429",
    "431",
    "500",
    "503",
  ]);
  expect(
    Object.keys(reg.responses["201"].content["application/json"].schema.properties).sort(),
  ).toEqual(["accountId", "apiKey", "email", "emailVerified", "keyId", "tier"]);
  expect(op("post", "/auth/login").responses).toHaveProperty("429");
  expect(op("post", "/auth/verify-email").responses).toHaveProperty("400");
  expect(op("post", "/auth/forgot-password").responses).toHaveProperty("202");
  expect(op("delete", "/auth/me").responses).toHaveProperty("204");
  for (const [m, p] of BEARER) expect(op(m, p).responses).toHaveProperty("401");
});
