/**
 * `JSON.stringify` written straight into bytes, for WebSocket messages.
 *
 * Why: V8 builds a JSON string in growing parts and joins them, about 3× the text's size in
 * garbage (some 1.8 KB of an order answer), and a socket then encodes the string once more. Here
 * the bytes go into one scratch buffer, reused, and leave in an exact-size slice of Node's buffer
 * pool.
 *
 * Invariants:
 * - The bytes are exactly `Buffer.from(JSON.stringify(value))` (property-tested): same key order,
 *   omissions (undefined, functions, symbols; `null` in arrays), `toJSON`, number formatting and
 *   string escaping. Strings with anything but printable ASCII, and objects that are not plain
 *   objects or arrays, are handed to `JSON.stringify` itself.
 * - What `JSON.stringify` throws on, this throws on too (a BigInt; a cycle overflows the stack).
 */

let out = Buffer.allocUnsafeSlow(16 * 1024);
let pos = 0;
let busy = false;

function ensure(bytes: number): void {
  if (pos + bytes <= out.length) return;
  const bigger = Buffer.allocUnsafeSlow(Math.max(out.length * 2, pos + bytes));
  out.copy(bigger, 0, 0, pos);
  out = bigger;
}

/** Text that is already JSON, written as UTF-8. */
function writeJsonText(text: string): void {
  ensure(Buffer.byteLength(text));
  pos += out.write(text, pos);
}

function writeAscii(text: string): void {
  ensure(text.length);
  for (let i = 0; i < text.length; i++) out[pos++] = text.charCodeAt(i);
}

function writeString(text: string): void {
  const length = text.length;
  ensure(length + 2);
  const buffer = out;
  let at = pos;
  buffer[at++] = 34;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code > 0x7e || code === 34 || code === 92) {
      writeJsonText(JSON.stringify(text));
      return;
    }
    buffer[at++] = code;
  }
  buffer[at++] = 34;
  pos = at;
}

function writeNumber(value: number): void {
  if (!Number.isFinite(value)) {
    writeAscii('null');
  } else if (!Number.isSafeInteger(value)) {
    writeAscii(String(value));
  } else if (value === 0) {
    ensure(1);
    out[pos++] = 48; // also -0, which JSON.stringify prints as 0
  } else {
    ensure(17); // a sign and at most 16 digits
    let magnitude = value;
    if (value < 0) {
      out[pos++] = 45;
      magnitude = -value;
    }
    if (magnitude < 1e8) {
      pos = writeDigits(magnitude, pos);
    } else {
      // Split so both parts are small integers (the high one below 2^27 under 2^53): integer
      // division by 10 where a millisecond timestamp took 26 floating-point divisions.
      const high = Math.floor(magnitude / 1e8);
      pos = writeDigits(high, pos);
      pos = writeEightDigits(magnitude - high * 1e8, pos);
    }
  }
}

/** The digits of 0 < n < 2^31 at `at`; returns the position after them (room is ensured). */
function writeDigits(n: number, at: number): number {
  let digits = 1;
  for (let rest = n; rest >= 10; rest = (rest / 10) | 0) digits++;
  const end = at + digits;
  for (let i = end - 1; i >= at; i--) {
    const next = (n / 10) | 0;
    out[i] = 48 + n - next * 10;
    n = next;
  }
  return end;
}

/** 0 <= n < 10^8 as exactly eight digits, zero-padded, at `at` (room is ensured). */
function writeEightDigits(n: number, at: number): number {
  for (let i = at + 7; i >= at; i--) {
    const next = (n / 10) | 0;
    out[i] = 48 + n - next * 10;
    n = next;
  }
  return at + 8;
}

/** Writes `value` as `JSON.stringify` would under `key`; false (nothing written) when it omits it. */
function writeValue(value: unknown, key: string | number): boolean {
  if (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  ) {
    value = (value as { toJSON(key: string): unknown }).toJSON(String(key));
  }
  switch (typeof value) {
    case 'string':
      writeString(value);
      return true;
    case 'number':
      writeNumber(value);
      return true;
    case 'boolean':
      writeAscii(value ? 'true' : 'false');
      return true;
    case 'bigint':
      throw new TypeError('Do not know how to serialize a BigInt');
    case 'object':
      if (value === null) writeAscii('null');
      else if (Array.isArray(value)) writeArray(value);
      else if (Object.getPrototypeOf(value) === Object.prototype)
        writeObject(value as Record<string, unknown>);
      else writeJsonText(JSON.stringify(value));
      return true;
    default:
      return false;
  }
}

function writeArray(items: readonly unknown[]): void {
  ensure(1);
  out[pos++] = 91;
  for (let i = 0; i < items.length; i++) {
    if (i > 0) {
      ensure(1);
      out[pos++] = 44;
    }
    if (!writeValue(items[i], i)) writeAscii('null');
  }
  ensure(1);
  out[pos++] = 93;
}

function writeObject(record: Record<string, unknown>): void {
  ensure(1);
  out[pos++] = 123;
  let first = true;
  // for-in over a plain object: its own enumerable string keys, in Object.keys order.
  for (const key in record) {
    const mark = pos;
    if (!first) {
      ensure(1);
      out[pos++] = 44;
    }
    writeString(key);
    ensure(1);
    out[pos++] = 58;
    if (writeValue(record[key], key)) first = false;
    else pos = mark;
  }
  ensure(1);
  out[pos++] = 125;
}

/** The UTF-8 bytes of `JSON.stringify(value)`; throws when that would not be a string. */
export function jsonBytes(value: unknown): Buffer {
  // A toJSON that serialises on its own would otherwise write into the buffer being filled.
  if (busy) return Buffer.from(jsonText(value));
  writeWhole(value);
  const bytes = Buffer.allocUnsafe(pos);
  out.copy(bytes, 0, 0, pos);
  return bytes;
}

/** Writes `value` from the start of the scratch buffer. */
function writeWhole(value: unknown): void {
  busy = true;
  pos = 0;
  try {
    if (!writeValue(value, '')) throw new TypeError('the value has no JSON form');
  } finally {
    busy = false;
  }
}

function jsonText(value: unknown): string {
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined) throw new TypeError('the value has no JSON form');
  return text;
}
