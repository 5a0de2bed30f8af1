/** Generated JS modules read as data with the TypeScript parser (scripts/catalog/js-module.ts). */
import { describe, expect, test } from "bun:test";
import { moduleConstants } from "../../../scripts/catalog/js-module";

describe("moduleConstants", () => {
  test("literal constants, exported or not, with the values JS gives them", () => {
    const text = [
      'export const slug = "a\\u0062";',
      "export const svg = `<svg>\r\n</svg>`;",
      "const list = [ { id: 'x', 'quoted-key': -1.5, on: true, off: false, none: null, }, ];",
      "var n = (42);",
      "export { list };",
    ].join("\n");
    expect(Object.fromEntries(moduleConstants(text))).toEqual({
      slug: "ab",
      // a template literal's CRLF line ends are LF, as JS reads them
      svg: "<svg>\n</svg>",
      list: [{ id: "x", "quoted-key": -1.5, on: true, off: false, none: null }],
      n: 42,
    });
  });

  test("values that are code are left out, never run", () => {
    const text = [
      "const a = f();",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the module's source text
      "const b = `x${y}`;",
      "const c = [...d];",
      "const e = { g() {} };",
      "const h = { [k]: 1 };",
      "let i;",
      'const ok = "kept";',
    ].join("\n");
    expect([...moduleConstants(text)]).toEqual([["ok", "kept"]]);
  });
});
