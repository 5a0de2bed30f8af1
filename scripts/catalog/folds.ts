/**
 * Icon names that draw a brand the set also draws under its plain name: a variant of its mark,
 * not a brand of its own. Such an icon is folded into the brand it depicts (an alternative
 * mark, used only where the brand has no plain mark of that kind; a card badge never), instead
 * of becoming a brand named "Cc Stripe" or "Stripe S" that search and lookups would land on.
 *
 * Three rules, each on the name alone and the names the same set has:
 * - card badge: `cc-<brand>` in cib and fa6-brands is the brand's mark on a payment card
 *   (`cc-visa`, `cc-stripe`, `cc-amex`);
 * - monogram: `<brand>-<letters>` in cib, fa6-brands and bxl, where the one or two letters are
 *   letters of the brand's name in order and the set also draws `<brand>` (`stripe-s`,
 *   `facebook-f`, `linkedin-in`, `pied-piper-pp`);
 * - style variant: `<brand>-<style>`, a style word or an alternate number, where the set also
 *   draws `<brand>` (`gg-circle`, `steam-symbol`, `slack-old`, `edge-legacy`, `bem-2`).
 *
 * Names the reviewed spelling table (names.ts SYNONYMS) already places are left to it
 * (`css-3` is CSS). A folded icon never creates a brand: when its base names none, it is left
 * out and listed.
 */
import type { SetId } from "./sources";

export type FoldKind = "card badge" | "monogram" | "style variant";

export interface Fold {
  /** the base name of the brand the icon draws */
  base: string;
  /** the modifier the candidate carries (variant-choice.ts ranks or skips it) */
  mod: string;
  kind: FoldKind;
}

/** The modifier of a card badge: never chosen as a variant (a card outline around the mark). */
export const CARD_BADGE = "cc";
/** The modifier of a monogram (the brand's letter mark). */
export const MONOGRAM = "monogram";

const CARD_SETS = new Set<SetId>(["cib", "fa6-brands"]);
const MONOGRAM_SETS = new Set<SetId>(["cib", "fa6-brands", "bxl"]);

/** Trailing words that name a drawing style or an older version of the same mark. */
export const STYLE_WORDS = new Set([
  "alt",
  "alternate",
  "circle",
  "square",
  "round",
  "stroke",
  "symbol",
  "simple",
  "reverse",
  "old",
  "legacy",
]);

/** The letters of `short` appear in `long` in order ("in" in "linkedin", "pp" in "piedpiper"). */
function inOrder(short: string, long: string): boolean {
  let i = 0;
  for (const ch of long) if (ch === short[i]) i++;
  return i === short.length;
}

/**
 * The fold of an icon's base name (modifiers already parsed off, sources.ts parseIconName), or
 * null when the name is a brand of its own. `bases`: the base names of the set's icons.
 */
export function foldIconName(set: SetId, base: string, bases: ReadonlySet<string>): Fold | null {
  const parts = base.split("-");
  if (parts.length < 2) return null;
  if (CARD_SETS.has(set) && parts[0] === CARD_BADGE) {
    return { base: parts.slice(1).join("-"), mod: CARD_BADGE, kind: "card badge" };
  }
  const last = parts[parts.length - 1] as string;
  const rest = parts.slice(0, -1).join("-");
  if (!bases.has(rest)) return null;
  if (MONOGRAM_SETS.has(set) && /^[a-z]{1,2}$/.test(last) && inOrder(last, rest.replace(/-/g, "")))
    return { base: rest, mod: MONOGRAM, kind: "monogram" };
  if (STYLE_WORDS.has(last) || /^\d+$/.test(last))
    return { base: rest, mod: last, kind: "style variant" };
  return null;
}
