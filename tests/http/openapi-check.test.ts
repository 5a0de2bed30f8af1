import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeApp, type TestApp } from "../support/app";
import { OpenApiChecker } from "../support/openapi-check";

/** The checker makeApp wires into every test's app.handle, fed answers that break the document. */
let t: TestApp;
let checker: OpenApiChecker;
beforeAll(async () => {
  t = await makeApp();
  checker = new OpenApiChecker(await (await t.req("/swagger/json")).json());
});
afterAll(() => t.close());

const get = (path: string) => new Request(`http://localhost${path}`);
const json = (body: unknown, status = 200, type = "application/json") =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": type } });

describe("the response checker", () => {
  test("accepts the real answers", async () => {
    const key = await t.key("free");
    const res = await t.get("/v1/catalog/github", key);
    expect(await checker.problems(get("/v1/catalog/github"), res)).toEqual([]);
  });

  test("an undocumented status fails", async () => {
    const problems = await checker.problems(get("/v1/catalog/github"), json({}, 418));
    expect(problems).toEqual([expect.stringContaining("418: status not documented")]);
  });

  test("a body that does not match the status's schema fails, naming the field", async () => {
    const entry = JSON.parse(t.deps.catalog.viewJson("github") as string);
    delete entry.name;
    const problems = await checker.problems(get("/v1/catalog/github"), json(entry));
    expect(problems.join("\n")).toContain("must have required property 'name'");
    const wrongType = await checker.problems(
      get("/v1/catalog?limit=1"),
      json({ items: [], total: "1", limit: 1, offset: 0 }),
    );
    expect(wrongType.join("\n")).toContain("/total must be integer");
    const noError = await checker.problems(get("/v1/catalog/x"), json({ message: "x" }, 404));
    expect(noError.join("\n")).toContain("must have required property 'error'");
  });

  test("a content type the document does not list fails", async () => {
    const problems = await checker.problems(
      get("/v1/svg/github"),
      new Response("<svg/>", { headers: { "content-type": "text/html" } }),
    );
    expect(problems).toEqual([expect.stringContaining("content-type text/html not in")]);
  });

  test("a path no operation matches must be a 404 {error, message}", async () => {
    expect(
      await checker.problems(get("/v9/x"), json({ error: "not_found", message: "m" }, 404)),
    ).toEqual([]);
    expect(await checker.problems(get("/v9/x"), json({ ok: true }))).toEqual([
      expect.stringContaining("undocumented route"),
    ]);
  });
});
