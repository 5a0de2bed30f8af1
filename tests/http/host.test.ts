import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { request } from "node:http";
import { makeApp, type TestApp } from "../support/app";

/**
 * A GET sent over a real socket with a chosen Host header (node:http sends it as given). The
 * server builds the request URL from Host, so a short Host gives a short URL.
 */
function get(port: number, path: string, host: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, method: "GET", headers: { host, ...headers } },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          body += chunk;
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            type: String(res.headers["content-type"]),
            body,
          }),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

// Elysia finds the path by default by skipping the first 11 characters of the URL, which holds
// for "http://localhost/" but not for "http://api/..." (a short internal hostname behind a
// proxy): every route answered 404 for such hosts. The app sets standardHostname: false.
describe("routes do not depend on the length of the Host header", () => {
  let t: TestApp;
  let server: ReturnType<typeof Bun.serve>;
  let key: string;

  beforeAll(async () => {
    t = await makeApp();
    key = await t.key("pro");
    server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: t.app.fetch });
  });
  afterAll(async () => {
    await server.stop(true);
    await t.close();
  });

  for (const host of ["a", "api", "svc", "x.io", "localhost", "brands.example.com", "api:8080"]) {
    test(`Host: ${host}`, async () => {
      const port = server.port as number;
      expect((await get(port, "/healthz", host)).status).toBe(200);
      const svg = await get(port, "/v1/svg/github?variant=mono", host, { "x-api-key": key });
      expect(svg.status).toBe(200);
      expect(svg.type).toBe("image/svg+xml");
      const list = await get(port, "/v1/catalog?limit=2&offset=1", host, { "x-api-key": key });
      expect(list.status).toBe(200);
      expect(JSON.parse(list.body)).toMatchObject({ limit: 2, offset: 1 });
      const missing = await get(port, "/v1/nope", host, { "x-api-key": key });
      expect(missing.status).toBe(404);
      expect(JSON.parse(missing.body).error).toBe("not_found");
    });
  }
});
