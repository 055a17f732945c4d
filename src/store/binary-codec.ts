/**
 * A compact binary encoding of a batch of JSON values (journal record format version 2).
 *
 * Layout: varint stringTableBytes, UTF-8 JSON array of the batch's distinct strings; varint
 * shapeTableBytes, UTF-8 JSON array of object shapes (each an array of keys); varint count; then
 * `count` values. A value is a tag byte and its data:
 *   0 null · 1 false · 2 true · 3 int32 (4 bytes LE) · 4 float64 (8 bytes LE)
 *   5 string (varint index into the string table) · 6 object (varint shape index, then one value
 *   per key) · 7 array (varint length, then the values)
 *
 * Invariants:
 * - decode(encode(x)) deep-equals JSON.parse(JSON.stringify(x)) for every JSON-serialisable x:
 *   -0 becomes 0, non-finite numbers null, undefined/function/symbol properties are omitted and
 *   become null in arrays, `toJSON` is honoured (the value is encoded as its toJSON result).
 * - Strings are interned per batch, so repeated instrument names, sides and types cost one
 *   varint each; keys are stored once per distinct object shape.
 * - Objects are rebuilt by a constructor compiled per shape (cached), which is what makes
 *   decoding several times faster than JSON.parse for command-like objects.
 */

const TAG_NULL = 0;
const TAG_FALSE = 1;
const TAG_TRUE = 2;
const TAG_INT32 = 3;
const TAG_FLOAT64 = 4;
const TAG_STRING = 5;
const TAG_OBJECT = 6;
const TAG_ARRAY = 7;

/**
 * A growing byte buffer. It starts small: a batch is often one command, and a large buffer made
 * per group commit counts as external memory, which V8 answers with full mark-compacts.
 */
class Writer {
  buf = Buffer.allocUnsafe(1024);
  pos = 0;
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }
  varint(n: number): void {
    this.ensure(10);
    this.pos = writeVarint(this.buf, this.pos, n);
  }
  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
}

/** Writes `n` as a varint at `pos`; returns the position after it. */
function writeVarint(buf: Buffer, pos: number, n: number): number {
  while (n >= 0x80) {
    buf[pos++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  buf[pos++] = n;
  return pos;
}

function varintLength(n: number): number {
  let length = 1;
  for (; n >= 0x80; length++) n = Math.floor(n / 128);
  return length;
}

/**
 * Shapes are found by walking a trie of keys: one Map lookup per key, no string building. The trie
 * is shared by all batches, since the same few command shapes recur in every one: a batch then
 * allocates no trie nodes for them. It starts over past SHAPE_TRIE_MAX_NODES, so objects with
 * data-dependent keys cannot grow it without bound; a batch keeps the nodes it met, so a restart
 * mid-batch only repeats a shape in its table.
 */
interface ShapeNode {
  next: Map<string, ShapeNode> | null;
  /** The batch that numbered this shape last, and its number there: skips the map lookup. */
  batch: number;
  id: number;
  /** The shape's key list as JSON (the path to this node), made when a batch first numbers it. */
  keysJson: string | null;
}

const SHAPE_TRIE_MAX_NODES = 65_536;
const newShapeNode = (): ShapeNode => ({ next: null, batch: 0, id: 0, keysJson: null });
let shapeRoot = newShapeNode();
let shapeNodes = 0;
let batchSerial = 0;

function shapeChild(node: ShapeNode, key: string): ShapeNode {
  if (node.next === null) node.next = new Map();
  let child = node.next.get(key);
  if (child === undefined) {
    child = newShapeNode();
    node.next.set(key, child);
    shapeNodes++;
  }
  return child;
}

interface Tables {
  readonly serial: number;
  readonly strings: Map<string, number>;
  /** This batch's number for each shape it holds (authoritative when batches interleave). */
  readonly shapeIds: Map<ShapeNode, number>;
  /** Each numbered shape's key list as JSON, by number. */
  readonly shapeKeys: string[];
}

function intern(map: Map<string, number>, s: string): number {
  let i = map.get(s);
  if (i === undefined) {
    i = map.size;
    map.set(s, i);
  }
  return i;
}

function isOmitted(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

function encodeValue(w: Writer, t: Tables, value: unknown, key: string): void {
  if (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  ) {
    value = (value as { toJSON(k: string): unknown }).toJSON(key);
  }
  switch (typeof value) {
    case 'number':
      if (!Number.isFinite(value)) w.byte(TAG_NULL);
      else if (Number.isInteger(value) && value >= -0x80000000 && value <= 0x7fffffff) {
        w.ensure(5);
        w.buf[w.pos++] = TAG_INT32;
        w.buf.writeInt32LE(value | 0, w.pos); // | 0 turns -0 into 0
        w.pos += 4;
      } else {
        w.ensure(9);
        w.buf[w.pos++] = TAG_FLOAT64;
        w.buf.writeDoubleLE(value, w.pos);
        w.pos += 8;
      }
      return;
    case 'string':
      w.byte(TAG_STRING);
      w.varint(intern(t.strings, value));
      return;
    case 'boolean':
      w.byte(value ? TAG_TRUE : TAG_FALSE);
      return;
    case 'bigint':
      throw new TypeError('a BigInt is not JSON-serialisable');
    case 'object': {
      if (value === null) {
        w.byte(TAG_NULL);
        return;
      }
      if (Array.isArray(value)) {
        w.byte(TAG_ARRAY);
        w.varint(value.length);
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          if (isOmitted(item)) w.byte(TAG_NULL);
          else encodeValue(w, t, item, String(i));
        }
        return;
      }
      const record = value as Record<string, unknown>;
      // Keys are walked with for-in (no keys array per object): for own keys it has Object.keys'
      // order; a prototype other than Object.prototype might lend enumerable keys, skipped.
      const plain = Object.getPrototypeOf(record) === Object.prototype;
      if (shapeNodes >= SHAPE_TRIE_MAX_NODES) {
        shapeRoot = newShapeNode();
        shapeNodes = 0;
      }
      let node = shapeRoot;
      for (const k in record) {
        if ((plain || Object.hasOwn(record, k)) && !isOmitted(record[k])) node = shapeChild(node, k);
      }
      w.byte(TAG_OBJECT);
      w.varint(shapeIdOf(t, node, record));
      for (const k in record) {
        const field = record[k];
        if ((plain || Object.hasOwn(record, k)) && !isOmitted(field)) encodeValue(w, t, field, k);
      }
      return;
    }
    default:
      // undefined, function, symbol at the top level: JSON.stringify gives undefined.
      throw new TypeError('value is not JSON-serialisable');
  }
}

/** This batch's id for the shape ending at `node`, numbering it (with its key list) on first use. */
function shapeIdOf(t: Tables, node: ShapeNode, record: Record<string, unknown>): number {
  if (node.batch !== t.serial) {
    let id = t.shapeIds.get(node);
    if (id === undefined) {
      id = t.shapeKeys.length;
      t.shapeIds.set(node, id);
      node.keysJson ??= JSON.stringify(Object.keys(record).filter((k) => !isOmitted(record[k])));
      t.shapeKeys.push(node.keysJson);
    }
    node.batch = t.serial;
    node.id = id;
  }
  return node.id;
}

/**
 * Encodes values one by one (e.g. as journal appends arrive), then `finish` lays out the batch.
 * A value that cannot be encoded throws and leaves the batch as it was before the call.
 */
export class BatchEncoder {
  private readonly tables: Tables = {
    serial: ++batchSerial,
    strings: new Map(),
    shapeIds: new Map(),
    shapeKeys: [],
  };
  private readonly body = new Writer();
  private values = 0;

  /** Adds the values in order, all or none. */
  add(...values: unknown[]): void {
    const start = this.body.pos;
    try {
      for (const value of values) encodeValue(this.body, this.tables, value, '');
    } catch (error) {
      this.body.pos = start;
      throw error;
    }
    this.values += values.length;
  }

  get count(): number {
    return this.values;
  }

  finish(): Buffer {
    const strings = Buffer.from(JSON.stringify([...this.tables.strings.keys()]), 'utf8');
    const shapes = Buffer.from(`[${this.tables.shapeKeys.join(',')}]`, 'utf8');
    const size =
      varintLength(strings.length) +
      strings.length +
      varintLength(shapes.length) +
      shapes.length +
      varintLength(this.values) +
      this.body.pos;
    // Its own exact-size ArrayBuffer: the frame is posted to other threads, and structured clone
    // copies a view's whole backing store (a pooled slice would drag 8 KiB along).
    const frame = Buffer.allocUnsafeSlow(size);
    let pos = writeVarint(frame, 0, strings.length);
    pos += strings.copy(frame, pos);
    pos = writeVarint(frame, pos, shapes.length);
    pos += shapes.copy(frame, pos);
    pos = writeVarint(frame, pos, this.values);
    this.body.buf.copy(frame, pos, 0, this.body.pos);
    return frame;
  }
}

/** Encodes JSON values into one buffer (see the layout above). */
export function encodeBatch(values: readonly unknown[]): Buffer {
  const encoder = new BatchEncoder();
  for (const v of values) encoder.add(v);
  return encoder.finish();
}

/** Reads one object: decodes its values in key order straight into a literal. */
type Builder = (decode: typeof decodeValue, r: Reader, t: DecodeTables) => Record<string, unknown>;
const builderCache = new Map<string, Builder>();
const BUILDER_CACHE_LIMIT = 10_000;

function genericBuilder(keys: readonly string[]): Builder {
  return (decode, r, t) => {
    const o: Record<string, unknown> = {};
    for (const key of keys) {
      // defineProperty: a `__proto__` key must become an own property, as JSON.parse makes it.
      Object.defineProperty(o, key, {
        value: decode(r, t),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return o;
  };
}

function builderFor(keys: readonly string[]): Builder {
  const signature = JSON.stringify(keys);
  let builder = builderCache.get(signature);
  if (builder !== undefined) return builder;
  if (keys.includes('__proto__') || new Set(keys).size !== keys.length) {
    builder = genericBuilder(keys);
  } else {
    // Keys are embedded as JSON string literals, never as code; values are read left to right.
    const fields = keys.map((k) => `${JSON.stringify(k)}: d(r, t)`).join(', ');
    builder = new Function('d', 'r', 't', `return { ${fields} };`) as Builder;
  }
  if (builderCache.size >= BUILDER_CACHE_LIMIT) builderCache.clear();
  builderCache.set(signature, builder);
  return builder;
}

class Reader {
  pos = 0;
  constructor(readonly buf: Buffer) {}
  varint(): number {
    let result = 0;
    let scale = 1;
    for (;;) {
      if (this.pos >= this.buf.length) throw new RangeError('truncated varint');
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result;
      scale *= 128;
    }
  }
}

interface DecodeTables {
  readonly strings: readonly string[];
  readonly shapes: readonly (readonly string[])[];
  readonly builders: Builder[];
}

function decodeValue(r: Reader, t: DecodeTables): unknown {
  const buf = r.buf;
  if (r.pos >= buf.length) throw new RangeError('truncated value');
  const tag = buf[r.pos++];
  switch (tag) {
    case TAG_NULL:
      return null;
    case TAG_FALSE:
      return false;
    case TAG_TRUE:
      return true;
    case TAG_INT32: {
      const v = buf.readInt32LE(r.pos);
      r.pos += 4;
      return v;
    }
    case TAG_FLOAT64: {
      const v = buf.readDoubleLE(r.pos);
      r.pos += 8;
      return v;
    }
    case TAG_STRING: {
      const s = t.strings[r.varint()];
      if (s === undefined) throw new RangeError('string index out of range');
      return s;
    }
    case TAG_OBJECT: {
      const shape = r.varint();
      const keys = t.shapes[shape];
      if (keys === undefined) throw new RangeError('shape index out of range');
      let builder = t.builders[shape];
      if (builder === undefined) {
        builder = builderFor(keys);
        t.builders[shape] = builder;
      }
      return builder(decodeValue, r, t);
    }
    case TAG_ARRAY: {
      const n = r.varint();
      if (n > buf.length - r.pos) throw new RangeError('array length out of range');
      const out = new Array<unknown>(n);
      for (let i = 0; i < n; i++) out[i] = decodeValue(r, t);
      return out;
    }
    default:
      throw new RangeError(`unknown value tag ${tag}`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function readJson(r: Reader): unknown {
  const n = r.varint();
  if (r.pos + n > r.buf.length) throw new RangeError('truncated table');
  const value: unknown = JSON.parse(utf8.decode(r.buf.subarray(r.pos, r.pos + n)));
  r.pos += n;
  return value;
}

/** Decodes a buffer made by encodeBatch; throws on any malformation. */
export function decodeBatch(buf: Buffer): unknown[] {
  const r = new Reader(buf);
  const strings = readJson(r);
  const shapes = readJson(r);
  if (!Array.isArray(strings) || !Array.isArray(shapes)) throw new RangeError('bad tables');
  const t: DecodeTables = { strings: strings as string[], shapes: shapes as string[][], builders: [] };
  const count = r.varint();
  if (count > buf.length) throw new RangeError('count out of range');
  const out = new Array<unknown>(count);
  for (let i = 0; i < count; i++) out[i] = decodeValue(r, t);
  if (r.pos !== buf.length) throw new RangeError('trailing bytes');
  return out;
}
