import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { makeApp, type TestApp } from "../support/app";

// spawns processes or builds several apps: slow on a loaded machine (bun's default is 5 s)
setDefaultTimeout(60_000);

/**
 * docs/api-examples.md: each example is a ```sh block with one curl command, a line
 * "<status> <content type>", then a ```json block with the body. Every example is run against
 * the real app (real catalog) and must answer exactly that.
 */
const DOC = readFileSync(join(import.meta.dir, "../../docs/api-examples.md"), "utf8");
const EXAMPLE = /```sh\n(curl [^\n]+)\n```\n\n(\d{3}) ([^\n]+)\n\n```json\n([\s\S]*?)\n```/g;

const UPDATE = process.env.UPDATE_EXAMPLES === "1";
const answers: unknown[] = [];

interface Example {
  curl: string;
  status: number;
  type: string;
  body: unknown;
}

const examples: Example[] = [...DOC.matchAll(EXAMPLE)].map((m) => ({
  curl: m[1]!,
  status: Number(m[2]),
  type: m[3]!,
  body: JSON.parse(m[4]!),
}));

/** The parts of a one-line curl command the examples use: -X, -H, -d and the URL. */
function parseCurl(curl: string, apiKey: string) {
  const words = [...curl.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) =>
    (m[1] ?? m[2] ?? m[3])!.replaceAll("$API_KEY", apiKey),
  );
  let method = "GET";
  let body: string | undefined;
  let url = "";
  const headers: Record<string, string> = {};
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    if (w === "-s") continue;
    else if (w === "-X") method = words[++i]!;
    else if (w === "-H") {
      const [name, ...value] = words[++i]!.split(":");
      headers[name!.trim()] = value.join(":").trim();
    } else if (w === "-d") body = words[++i];
    else if (w.startsWith("http")) url = w;
    else throw new Error(`unexpected curl word ${w} in ${curl}`);
  }
  const u = new URL(url);
  return { path: `${u.pathname}${u.search}`, init: { method, headers, body } };
}

let t: TestApp;
let apiKey: string;
beforeAll(async () => {
  t = await makeApp();
  apiKey = await t.key("free");
});
afterAll(() => t.close());

describe("docs/api-examples.md", () => {
  test("has the examples (the pattern still finds them)", () => {
    expect(examples.length).toBe((DOC.match(/^```sh\ncurl /gm) ?? []).length);
    expect(examples.length).toBeGreaterThanOrEqual(6);
  });

  for (const [i, ex] of examples.entries())
    test(`example ${i + 1}: ${ex.curl.replace(/-H "X-API-Key: \$API_KEY" /, "")}`, async () => {
      const { path, init } = parseCurl(ex.curl, apiKey);
      const res = await t.req(path, init);
      const body = await res.json();
      if (UPDATE) answers[i] = body;
      expect(res.status).toBe(ex.status);
      expect(res.headers.get("content-type")?.split(";")[0]).toBe(ex.type);
      if (!UPDATE) expect(body).toEqual(ex.body);
    });

  // UPDATE_EXAMPLES=1 bun test tests/http/api-examples.test.ts rewrites the documented bodies
  // from the app's answers (after a catalog change); review the diff before committing it
  afterAll(() => {
    if (!UPDATE) return;
    let i = 0;
    const doc = DOC.replace(EXAMPLE, (whole, _curl, _status, _type, json: string) => {
      const answer = answers[i++];
      return answer === undefined ? whole : whole.replace(json, JSON.stringify(answer, null, 2));
    });
    writeFileSync(join(import.meta.dir, "../../docs/api-examples.md"), doc);
  });
});

describe("links in README.md and docs/", () => {
  test("every relative link points to a file in the repository (a clone has nothing else)", () => {
    const root = join(import.meta.dir, "../..");
    const files = [
      "README.md",
      ...readdirSync(join(root, "docs"))
        .filter((f) => f.endsWith(".md"))
        .map((f) => `docs/${f}`),
    ];
    const broken: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(root, file), "utf8");
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^(https?:|mailto:|#)/.test(target)) continue;
        const path = resolve(dirname(join(root, file)), target.split("#")[0]!);
        if (!path.startsWith(`${root}/`) || !existsSync(path)) broken.push(`${file}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe("ids in the docs' samples", () => {
  test('every "id": N, "slug": "s" pair in README.md and docs/ is the real catalog\'s', async () => {
    const root = join(import.meta.dir, "../..");
    const files = [
      "README.md",
      ...readdirSync(join(root, "docs"))
        .filter((f) => f.endsWith(".md") && f !== "spec.md")
        .map((f) => `docs/${f}`),
    ];
    const wrong: string[] = [];
    let checked = 0;
    for (const file of files)
      for (const m of readFileSync(join(root, file), "utf8").matchAll(
        /"id":\s*(\d+),\s*"slug":\s*"([a-z0-9-]+)"/g,
      )) {
        checked++;
        const entry = JSON.parse(t.deps.catalog.viewJson(m[2]!) ?? "null") as { id: number } | null;
        if (entry?.id !== Number(m[1])) wrong.push(`${file}: ${m[2]} is ${entry?.id}, not ${m[1]}`);
      }
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(5);
  });
});
