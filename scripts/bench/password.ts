/**
 * argon2id cost per operation (the floor of every login, register and reset):
 * Bun.password (native) and hash-wasm (portable, used on Deno), with the service's parameters.
 * Prints figures only. Usage: bun scripts/bench/password.ts [rounds=10]
 */
import {
  ARGON2,
  bunHasher,
  type PasswordHasher,
  portableHasher,
} from "../../src/platform/password";

const rounds = Number(process.argv[2] ?? 10);

async function time(label: string, f: () => Promise<unknown>): Promise<void> {
  await f(); // warm up (wasm compile, first allocation)
  const ms: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    await f();
    ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  const p50 = ms[Math.floor(ms.length / 2)] as number;
  console.log(
    `${label.padEnd(28)} p50 ${p50.toFixed(1)} ms   max ${(ms.at(-1) as number).toFixed(1)} ms`,
  );
}

console.log(
  `argon2id m=${ARGON2.memoryKiB} KiB t=${ARGON2.iterations} p=${ARGON2.parallelism}, ${rounds} rounds`,
);
const hashers: [string, PasswordHasher | null][] = [
  ["Bun.password", bunHasher],
  ["hash-wasm", portableHasher],
];
for (const [name, h] of hashers) {
  if (!h) continue;
  const phc = await h.hash("correct horse battery");
  await time(`${name} hash`, () => h.hash("correct horse battery"));
  await time(`${name} verify`, () => h.verify("correct horse battery", phc));
}
