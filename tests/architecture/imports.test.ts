import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  arrows,
  backward,
  type FeatureTable,
  featureOf,
  LAYERS,
  readFeatureTable,
  undeclared,
} from "./features";
import { cycles, type Graph, importGraph, readImports, sourceFiles, specifiers } from "./graph";

/**
 * The floors of docs/architecture.md ("Layers"), top to bottom. A file is on the floor of the
 * first pattern it matches; it may import files of its own floor and the floors below.
 */
const FLOORS: { floor: number; name: string; files: RegExp[] }[] = [
  {
    floor: 7,
    name: "entry points and tools",
    files: [
      /^scripts\//,
      /^src\/(main|deno|server)\.ts$/,
      /^src\/cli\.ts$/,
      /\/cli\.ts$/,
      /^src\/web\/(?!index\.ts$)/,
    ],
  },
  {
    floor: 6,
    name: "wiring and adapters",
    files: [
      /^src\/(app|deps)\.ts$/,
      /^src\/store\/(?!embedded\/db\.ts$|mongo\/(errors|indexes)\.ts$)/,
    ],
  },
  {
    floor: 5,
    name: "controllers",
    files: [
      /^src\/(accounts|assets|billing|catalog|gallery|images|reports|usage|visitor-counter|web)\/(.+\/)?index\.ts$/,
      /^src\/(usage\/analytics|reports)\/admin\.ts$/,
      // a controller's route groups, one file each
      /^src\/[^/]+\/(.+\/)?routes\//,
      /^src\/(admin|health|mcp|metrics)\//,
    ],
  },
  { floor: 4, name: "guard", files: [/^src\/guard\//] },
  {
    floor: 3,
    name: "features",
    files: [
      /^src\/(accounts|assets|billing|catalog|gallery|images|reports|usage|visitor-counter)\//,
    ],
  },
  { floor: 2, name: "quota", files: [/^src\/quota\//] },
  { floor: 1, name: "http", files: [/^src\/http\//] },
  {
    floor: 0,
    name: "base",
    files: [
      /^src\/platform\//,
      /^src\/config\.ts$/,
      // the database handles every adapter builds on (a feature's adapters live in its folder)
      /^src\/store\/embedded\/db\.ts$/,
      /^src\/store\/mongo\/(errors|indexes)\.ts$/,
    ],
  },
];

/**
 * Imports that run up a floor, each with its reason (docs/architecture.md lists the same).
 * At most three.
 */
const ALLOWED_UP: { from: string; to: string; why: string }[] = [];

/**
 * Circles that another change in progress removes, each with what removes it. The test fails
 * once one is gone too, so the entry is taken off with it.
 */
const PENDING_CIRCLES: { circle: string; why: string }[] = [];

const root = join(import.meta.dir, "../..");

function floorOf(file: string): number {
  const f = FLOORS.find((f) => f.files.some((re) => re.test(file)));
  if (!f) throw new Error(`${file} is on no floor: add it to FLOORS and docs/architecture.md`);
  return f.floor;
}

/** The imports of `graph` that go from a lower floor to a higher one, as "from -> to". */
function upward(graph: Graph): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph)
    for (const to of targets) if (floorOf(to) > floorOf(from)) out.push(`${from} -> ${to}`);
  return out;
}

const { graph, unresolved } = readImports(root, sourceFiles(root, ["src", "scripts"]));

/** docs/architecture.md's feature table: which feature may import which. */
const table = readFeatureTable(readFileSync(join(root, "docs/architecture.md"), "utf8"));

describe("imports of src/ and scripts/", () => {
  test("each name a file (an import the graph cannot follow is no edge it checks)", () => {
    expect(unresolved).toEqual([]);
  });

  test("are read: the graph has the edges every build has", () => {
    // a change of specifier style the reader misses would empty the graph and pass every rule
    // below; these edges are the app's spine, and the count is well under today's
    const edges = [...graph.values()].reduce((n, targets) => n + targets.length, 0);
    expect(edges).toBeGreaterThan(600);
    expect(graph.size).toBeGreaterThan(250);
    for (const [from, to] of [
      ["src/app.ts", "src/deps.ts"],
      ["src/main.ts", "src/server.ts"],
      ["src/server.ts", "src/app.ts"],
      ["src/deps.ts", "src/config.ts"],
      ["src/deps.ts", "src/store/embedded/db.ts"],
      ["scripts/test.ts", "scripts/mongo-local.ts"],
    ] as const)
      expect({ from, imports: graph.get(from)?.includes(to) }).toEqual({ from, imports: true });
  });

  test("form no circle (type-only and dynamic imports count)", () => {
    const found = cycles(graph).map((c) => c.join(" -> "));
    const pending = PENDING_CIRCLES.map((p) => p.circle);
    const wrong = found.filter((c) => !pending.includes(c));
    if (wrong.length > 0) console.error(`import circles:\n  ${wrong.join("\n  ")}`);
    expect(wrong).toEqual([]);
    expect(pending.filter((c) => !found.includes(c))).toEqual([]);
  });

  test("go down the floors, but for the documented exceptions", () => {
    expect(ALLOWED_UP.length).toBeLessThanOrEqual(3);
    const allowed = new Set(ALLOWED_UP.map((a) => `${a.from} -> ${a.to}`));
    const found = upward(graph);
    const wrong = found.filter((e) => !allowed.has(e));
    if (wrong.length > 0) console.error(`imports up a floor:\n  ${wrong.join("\n  ")}`);
    expect(wrong).toEqual([]);
    // an exception nobody needs any more is taken off the list
    expect([...allowed].filter((a) => !found.includes(a))).toEqual([]);
  });

  test("http/ imports nothing above platform/ and config.ts", () => {
    const http = [...graph].filter(([f]) => f.startsWith("src/http/"));
    expect(http.length).toBeGreaterThan(5);
    for (const [from, targets] of http)
      for (const to of targets) expect(`${from} -> ${floorOf(to)}`).toMatch(/ -> [01]$/);
  });
});

describe("imports between features (docs/architecture.md, Features)", () => {
  test("every feature folder of src/ has its row, and every row a folder", () => {
    const folders = readdirSync(join(root, "src"), { withFileTypes: true })
      .filter((e) => e.isDirectory() && !LAYERS.has(e.name))
      .map((e) => e.name)
      .sort();
    expect(table.map((r) => r.feature).sort()).toEqual(folders);
  });

  test("follow the table", () => {
    const wrong = undeclared(graph, table);
    if (wrong.length > 0)
      console.error(`imports between features the table does not allow:\n  ${wrong.join("\n  ")}`);
    expect(wrong).toEqual([]);
  });

  test("the table declares no arrow that no import uses", () => {
    const used = arrows(graph);
    const declared = table.flatMap((r) => r.imports.map((i) => `${r.feature} -> ${i}`));
    expect(declared.filter((a) => !used.has(a))).toEqual([]);
  });

  test("no arrow runs back up: a row names only features of the rows above it", () => {
    expect(backward(table)).toEqual([]);
  });
});

describe("the checks themselves", () => {
  test("every kind of import is read", () => {
    const text = [
      'import a from "./a";',
      'import type { B } from "./b";',
      'export { c } from "./c";',
      'export * from "./d";',
      'const e = await import("./e");',
      'type F = typeof import("./f");',
      'import g = require("./g");',
      "const h = import(name);",
    ].join("\n");
    expect(specifiers(text)).toEqual(["./a", "./b", "./c", "./d", "./e", "./f", "./g"]);
  });

  test("a circle and an upward import are found", () => {
    const bad: Graph = new Map([
      ["src/http/errors.ts", ["src/guard/meter.ts"]],
      ["src/guard/meter.ts", ["src/usage/port.ts"]],
      ["src/usage/port.ts", ["src/guard/meter.ts"]],
    ]);
    expect(cycles(bad)).toEqual([
      ["src/guard/meter.ts", "src/usage/port.ts", "src/guard/meter.ts"],
    ]);
    expect(upward(bad)).toEqual([
      "src/http/errors.ts -> src/guard/meter.ts",
      "src/usage/port.ts -> src/guard/meter.ts",
    ]);
  });

  test("an import that names no file fails the graph", () => {
    const files: Record<string, string> = {
      "src/a.ts": 'import { b } from "./b";\nimport { c } from "./c/index";',
      "src/b.ts": 'import pkg from "../package.json";\nimport x from "elysia";',
      "src/c/index.ts": 'export * from "./gone";',
    };
    const read = readImports(root, Object.keys(files), (f) => files[f] as string);
    expect(() => importGraph(root, Object.keys(files), (f) => files[f] as string)).toThrow(
      "src/c/index.ts -> ./gone",
    );
    expect(read.graph).toEqual(
      new Map([
        ["src/a.ts", ["src/b.ts", "src/c/index.ts"]],
        ["src/b.ts", []],
        ["src/c/index.ts", []],
      ]),
    );
    expect(read.unresolved).toEqual(["src/c/index.ts -> ./gone"]);
  });

  test("every file is on a floor", () => {
    for (const f of graph.keys()) expect(floorOf(f)).toBeGreaterThanOrEqual(0);
  });

  test("a planted import between features that the table does not declare fails the check", () => {
    const from = "src/catalog/service.ts";
    const planted: Graph = new Map(graph);
    planted.set(from, [...(graph.get(from) ?? []), "src/billing/service.ts"]);
    expect(undeclared(graph, table)).toEqual([]);
    expect(undeclared(planted, table)).toEqual([`${from} -> src/billing/service.ts`]);
    // a feature's own files, the layers and the root files are no arrow between features
    expect(
      undeclared(
        new Map([
          ["src/catalog/service.ts", ["src/catalog/model.ts", "src/http/errors.ts"]],
          ["src/deps.ts", ["src/billing/service.ts"]],
          ["src/guard/index.ts", ["src/accounts/service.ts"]],
        ]),
        table,
      ),
    ).toEqual([]);
    expect([featureOf("src/catalog/discovery/cli.ts"), featureOf("src/cli.ts")]).toEqual([
      "catalog",
      null,
    ]);
  });

  test("a planted arrow back up the table, or a circle, fails the check", () => {
    const up: FeatureTable = table.map((r) =>
      r.feature === "quota" ? { ...r, imports: ["accounts"] } : r,
    );
    expect(backward(up)).toEqual(["quota -> accounts"]);
    expect(backward([{ feature: "a", imports: ["a"] }])).toEqual(["a -> a"]);
  });

  test("the table is read from the document; a document without one fails", () => {
    const doc = [
      "# x",
      "## Features",
      "| Feature | May import | What for |",
      "|---|---|---|",
      "| `quota` | – | |",
      "| `accounts` | `quota` | tiers |",
      "| `reports` | `accounts`, `quota` | who |",
      "## Next",
      "| `other` | `quota` | |",
    ].join("\n");
    expect(readFeatureTable(doc)).toEqual([
      { feature: "quota", imports: [] },
      { feature: "accounts", imports: ["quota"] },
      { feature: "reports", imports: ["accounts", "quota"] },
    ]);
    expect(() => readFeatureTable("# x\n## Layers\n")).toThrow("no");
    expect(() => readFeatureTable("# x\n## Features\ntext\n")).toThrow("no feature table");
  });
});
