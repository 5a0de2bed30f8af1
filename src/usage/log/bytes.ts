/**
 * Unsigned LEB128 varints and length-prefixed UTF-8 strings: the byte form of the log's batches
 * (spill files, the embedded store's rows) and of the projections' period rows.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * `buf` when `n` more bytes fit after `pos`, else a larger copy (doubled until they fit) of its
 * first `pos` bytes.
 */
export function roomFor<B extends Uint8Array>(
  buf: B,
  pos: number,
  n: number,
): B | Uint8Array<ArrayBuffer> {
  if (pos + n <= buf.length) return buf;
  let size = buf.length * 2;
  while (size < pos + n) size *= 2;
  const next = new Uint8Array(size);
  next.set(buf.subarray(0, pos));
  return next;
}

/** A growable byte buffer written front to back. */
export class ByteWriter {
  buf: Uint8Array;
  pos = 0;

  constructor(size = 256) {
    this.buf = new Uint8Array(size);
  }

  private room(n: number) {
    this.buf = roomFor(this.buf, this.pos, n);
  }

  /** An unsigned integer up to 2^53 - 1. */
  uint(v: number): void {
    if (this.pos + 8 > this.buf.length) this.room(8);
    const buf = this.buf;
    if (v < 0x80) {
      buf[this.pos++] = v;
      return;
    }
    if (v < 0x4000) {
      buf[this.pos++] = (v & 0x7f) | 0x80;
      buf[this.pos++] = v >>> 7;
      return;
    }
    while (v >= 0x80) {
      buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    buf[this.pos++] = v;
  }

  byte(v: number): void {
    this.room(1);
    this.buf[this.pos++] = v;
  }

  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** A float64, little-endian. */
  f64(v: number): void {
    this.room(8);
    new DataView(this.buf.buffer, this.buf.byteOffset).setFloat64(this.pos, v, true);
    this.pos += 8;
  }

  str(s: string): void {
    // ASCII, the usual case, without the encoder
    let ascii = true;
    for (let i = 0; i < s.length; i++)
      if (s.charCodeAt(i) > 0x7f) {
        ascii = false;
        break;
      }
    if (ascii) {
      this.uint(s.length);
      this.room(s.length);
      for (let i = 0; i < s.length; i++) this.buf[this.pos++] = s.charCodeAt(i);
      return;
    }
    const b = encoder.encode(s);
    this.uint(b.length);
    this.bytes(b);
  }

  /** The bytes written (a view of the buffer). */
  done(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

/** Reads what a ByteWriter wrote; a read past the end throws RangeError. */
export class ByteReader {
  pos = 0;
  constructor(public buf: Uint8Array) {}

  get end(): boolean {
    return this.pos >= this.buf.length;
  }

  uint(): number {
    const buf = this.buf;
    if (this.pos < buf.length) {
      const b0 = buf[this.pos] as number;
      if (b0 < 0x80) {
        this.pos++;
        return b0;
      }
    }
    let v = 0;
    let mul = 1;
    for (;;) {
      if (this.pos >= this.buf.length) throw new RangeError("truncated varint");
      const b = this.buf[this.pos++] as number;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 0x80;
      if (mul > 2 ** 56) throw new RangeError("varint too long");
    }
  }

  byte(): number {
    if (this.pos >= this.buf.length) throw new RangeError("truncated");
    return this.buf[this.pos++] as number;
  }

  bytes(n: number): Uint8Array {
    if (this.pos + n > this.buf.length) throw new RangeError("truncated");
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  f64(): number {
    if (this.pos + 8 > this.buf.length) throw new RangeError("truncated");
    const v = new DataView(this.buf.buffer, this.buf.byteOffset).getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  str(): string {
    const n = this.uint();
    if (this.pos + n > this.buf.length) throw new RangeError("truncated string");
    let ascii = true;
    for (let i = this.pos; i < this.pos + n; i++)
      if ((this.buf[i] as number) > 0x7f) {
        ascii = false;
        break;
      }
    let s: string;
    if (ascii && n < 64) {
      s = "";
      for (let i = this.pos; i < this.pos + n; i++) s += String.fromCharCode(this.buf[i] as number);
    } else s = decoder.decode(this.buf.subarray(this.pos, this.pos + n));
    this.pos += n;
    return s;
  }
}
