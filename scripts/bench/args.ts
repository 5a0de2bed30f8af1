/** The command line every load benchmark shares (--duration, --connections, --rounds). */
import { type ParseArgsOptionsConfig, parseArgs } from "node:util";

/** A script's defaults for the shared options (absent: the option is not used by it). */
export interface LoadDefaults {
  /** seconds of load per run */
  duration?: number;
  /** concurrent connections; a script may accept a list (`--connections 16,50`) */
  connections?: number | number[];
  /** interleaved rounds */
  rounds?: number;
}

/**
 * The command line of a load benchmark: `--duration` (seconds), `--connections` (one number or
 * a comma-separated list) and `--rounds`, with the script's `defaults`, plus its own `options`
 * (node:util parseArgs syntax; their values come back in `values`). A value that is not a
 * positive number ends the script with exit code 2 and says which; one neither given nor
 * defaulted is NaN.
 */
export function loadArgs<O extends ParseArgsOptionsConfig>(
  defaults: LoadDefaults,
  options: O = {} as O,
) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      duration: { type: "string" },
      connections: { type: "string" },
      rounds: { type: "string" },
      ...options,
    },
  });
  const v = values as Record<string, string | boolean | undefined>;
  const numbers = (name: string, fallback: number | number[] | undefined): number[] => {
    const raw = v[name];
    if (raw === undefined) return fallback === undefined ? [] : [fallback].flat();
    const list = String(raw).split(",").map(Number);
    if (list.some((n) => !(n > 0) || !Number.isFinite(n))) {
      console.error(
        `--${name} must be a positive number${name === "connections" ? " (or a comma-separated list)" : ""}, not ${raw}`,
      );
      process.exit(2);
    }
    return list;
  };
  const connectionSets = numbers("connections", defaults.connections);
  return {
    duration: numbers("duration", defaults.duration)[0] ?? Number.NaN,
    connections: connectionSets[0] ?? Number.NaN,
    connectionSets,
    rounds: numbers("rounds", defaults.rounds)[0] ?? Number.NaN,
    /** the script's own options, as parseArgs returns them */
    values: v,
    positionals,
  };
}
