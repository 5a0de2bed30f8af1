import { type Batch, bucketName, eventId, NONE } from "./batch";

const PAD = ["00", "0", ""];

/** An event id's last 12 hex digits, from the batch's q and the position (see eventId). */
function idTail(q: number, pos: number): string {
  const low = (q % 2 ** 14) * 2 ** 34 + (pos % 0x10000) * 2 ** 18;
  return low.toString(16).padStart(12, "0");
}

/**
 * The NDJSON lines of a batch's events after event id `after`, at most `max`, pushed onto `out`
 * as one string; returns how many. Each line is the event's JSON exactly as JSON.stringify
 * writes it (fields in the stored order: the export's format), built from the batch's strings
 * encoded once per batch, a time's text once per second and an id's shared part once per batch.
 */
export function exportLines(b: Batch, after: string | null, max: number, out: string[]): number {
  const s = b.strings;
  const js: string[] = new Array(s.length);
  for (let j = 0; j < s.length; j++) js[j] = JSON.stringify(s[j]);
  const text = (j: number, none: string) => (j === NONE ? none : (js[j] as string));
  const head = `","accountId":${JSON.stringify(b.account)},"keyId":`;
  const ids = b.ids;
  const stem = ids ? "" : eventId(b.t0, b.q, 0).slice(0, 24);
  let second = Number.NaN;
  let stamp = "";
  let day = "";
  let lines = "";
  let n = 0;
  for (let i = 0; i < b.n && n < max; i++) {
    const id = ids ? (ids[i] as string) : stem + idTail(b.q, i);
    if (after !== null && id <= after) continue;
    const at = b.at[i] as number;
    const sec = Math.floor(at / 1000);
    if (sec !== second) {
      second = sec;
      const iso = new Date(sec * 1000).toISOString();
      stamp = iso.slice(0, 20);
      day = iso.slice(0, 10);
    }
    const ms = at - sec * 1000;
    const msText = `${PAD[ms < 10 ? 0 : ms < 100 ? 1 : 2]}${ms}`;
    let line = `{"id":"${id}","ts":"${stamp}${msText}Z","day":"${day}${head}${text(b.key[i] as number, '""')},"tier":${text(b.tier[i] as number, '""')},"bucket":"${bucketName(b.bucket[i] as number)}","route":${text(b.route[i] as number, '""')},"slug":${text(b.slug[i] as number, "null")},"variant":${text(b.variant[i] as number, "null")}`;
    const format = b.format[i] as number;
    if (format !== NONE) line += `,"format":${js[format]}`;
    const miss = b.miss?.[i];
    if (miss) {
      line += ',"miss":[';
      for (let k = 0; k < miss.length; k++) line += (k ? "," : "") + js[miss[k] as number];
      line += "]";
    }
    line += `,"status":${b.status[i]},"latencyMs":${(b.lat[i] as number) / 1000}`;
    const count = b.count?.[i];
    if (count !== undefined && count > 1) line += `,"count":${count}`;
    lines += `${line}}\n`;
    n++;
  }
  if (n > 0) out.push(lines);
  return n;
}
