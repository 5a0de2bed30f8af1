import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import ts from "typescript";

/** The import graph of the project's own files: repository-relative path → paths it imports. */
export type Graph = Map<string, string[]>;

/** Every .ts/.tsx file under `dirs` (repository-relative, forward slashes). */
export function sourceFiles(root: string, dirs: string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(path);
      else if (/\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts")) out.push(path);
    }
  };
  for (const d of dirs) walk(d);
  return out.sort();
}

/**
 * The module specifiers a file imports: static `import` (type-only too), `export ... from`,
 * `import x = require(...)`, and `import("...")` with a literal, as a call or in a type.
 */
export function specifiers(text: string, fileName = "x.ts"): string[] {
  const kind = fileName.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, kind);
  const out: string[] = [];
  const literal = (n: ts.Node | undefined) => {
    if (n && ts.isStringLiteralLike(n)) out.push(n.text);
  };
  const visit = (n: ts.Node) => {
    if (ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) literal(n.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference))
      literal(n.moduleReference.expression);
    else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword)
      literal(n.arguments[0]);
    else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument))
      literal(n.argument.literal);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/**
 * The graph of `files`: relative specifiers resolved to files of the set, packages left out. A
 * relative specifier that names no file of the set nor any other file on disk (a `.json` read
 * with `import`) is an unresolved import: `importGraph` throws on it, so a file the graph cannot
 * follow fails the checks instead of dropping an edge.
 */
export function importGraph(root: string, files: string[], read?: (file: string) => string): Graph {
  const { graph, unresolved } = readImports(root, files, read);
  if (unresolved.length > 0) throw new Error(`unresolved imports:\n  ${unresolved.join("\n  ")}`);
  return graph;
}

const isFile = (path: string) => existsSync(path) && statSync(path).isFile();

/** The graph of `files` and its relative imports that resolve to no file ("from -> specifier"). */
export function readImports(
  root: string,
  files: string[],
  read = (f: string) => readFileSync(join(root, f), "utf8"),
): { graph: Graph; unresolved: string[] } {
  const known = new Set(files);
  const unresolved: string[] = [];
  const resolve = (from: string, spec: string): string | undefined => {
    const base = relative(root, join(root, dirname(from), spec)).replaceAll("\\", "/");
    const tries = [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`, `${base}/index.tsx`];
    const found = tries.find((p) => known.has(p));
    // a file outside the set (tests/support, packages/client, a .json) is no edge, but is there
    if (!found && !tries.some((p) => isFile(join(root, p)))) unresolved.push(`${from} -> ${spec}`);
    return found;
  };
  const graph: Graph = new Map();
  for (const f of files) {
    const targets = specifiers(read(f), f)
      .filter((s) => s.startsWith("."))
      .map((s) => resolve(f, s))
      .filter((t): t is string => t !== undefined);
    graph.set(f, [...new Set(targets)]);
  }
  return { graph, unresolved };
}

/** Every import circle (strongly connected component of more than one file, or a self-import), each as a path that closes on its first file. */
export function cycles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const c: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      c.push(w);
    } while (w !== v);
    if (c.length > 1 || graph.get(v)?.includes(v)) components.push(c);
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  return components.map((c) => circleThrough(graph, new Set(c)));
}

/** One circle inside a strongly connected component, found by a breadth-first search back to its first file. */
function circleThrough(graph: Graph, members: Set<string>): string[] {
  const start = [...members].sort()[0]!;
  const from = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u = v; u !== start; u = from.get(u)!) path.splice(1, 0, u);
        return [...path, start];
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}
