/**
 * The constants of a generated JS module read as data with the TypeScript parser, never run:
 * the build reads artwork packages' modules (`export const svg = \`<svg ...>\``,
 * `const tokens = [{ id: '1inch', ... }]`) this way.
 */
import ts from "typescript";

/** Not a literal: a declaration whose value is code is left out. */
const CODE = Symbol("code");

/** The value of a literal expression (strings, numbers, booleans, null, arrays, objects), or CODE. */
function literal(node: ts.Expression): unknown {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isNumericLiteral(node)) return Number(node.text);
  if (node.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (node.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (node.kind === ts.SyntaxKind.NullKeyword) return null;
  if (ts.isParenthesizedExpression(node)) return literal(node.expression);
  if (
    ts.isPrefixUnaryExpression(node) &&
    node.operator === ts.SyntaxKind.MinusToken &&
    ts.isNumericLiteral(node.operand)
  )
    return -Number(node.operand.text);
  if (ts.isArrayLiteralExpression(node)) {
    const items = node.elements.map((e) => (ts.isSpreadElement(e) ? CODE : literal(e)));
    return items.includes(CODE) ? CODE : items;
  }
  if (ts.isObjectLiteralExpression(node)) {
    const out: Record<string, unknown> = {};
    for (const p of node.properties) {
      if (!ts.isPropertyAssignment(p)) return CODE;
      const name = p.name;
      if (!ts.isIdentifier(name) && !ts.isStringLiteral(name) && !ts.isNumericLiteral(name))
        return CODE;
      const value = literal(p.initializer);
      if (value === CODE) return CODE;
      out[name.text] = value;
    }
    return out;
  }
  return CODE;
}

/**
 * The module's top-level `const`/`let`/`var` declarations (exported or not) whose value is a
 * literal, by name. Declarations whose value is code are left out.
 */
export function moduleConstants(text: string): Map<string, unknown> {
  const file = ts.createSourceFile(
    "module.js",
    text,
    ts.ScriptTarget.Latest,
    false,
    ts.ScriptKind.JS,
  );
  const out = new Map<string, unknown>();
  for (const statement of file.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const d of statement.declarationList.declarations) {
      if (!ts.isIdentifier(d.name) || !d.initializer) continue;
      const value = literal(d.initializer);
      if (value !== CODE) out.set(d.name.text, value);
    }
  }
  return out;
}
