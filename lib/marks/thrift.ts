/**
 * Thrift's compact protocol, read into a tree that keeps every field's wire type and written back
 * byte for byte (a standard writer's choices: field-id deltas up to 15, short list headers below
 * 15 elements). A parquet footer or page header read here and written again unchanged is the same
 * bytes, fields this code has never heard of included; only the fields a copy changes are touched.
 * hyparquet's reader turns i16 and i32 alike into numbers and booleans in lists into 0/1, which a
 * writer cannot tell apart again, so the copy does not go through it.
 */
import { ParquetFormatError } from "./format-error";

export const T = {
  STOP: 0,
  TRUE: 1,
  FALSE: 2,
  BYTE: 3,
  I16: 4,
  I32: 5,
  I64: 6,
  DOUBLE: 7,
  BINARY: 8,
  LIST: 9,
  SET: 10,
  MAP: 11,
  STRUCT: 12,
} as const;

export type TList = { kind: "list"; elementType: number; items: TValue[] };
export type TField = { id: number; type: number; value: TValue };
export type TStruct = { kind: "struct"; fields: TField[] };
/** A boolean field is `true`/`false`; a boolean in a list is its byte (1 true, 2 false, as written). */
export type TValue = boolean | number | bigint | Uint8Array | TList | TStruct;

export class ThriftError extends ParquetFormatError {}

export type Reader = { bytes: Uint8Array; offset: number };

/** Reads one struct at `reader.offset` and leaves the offset after it. */
export function readStruct(reader: Reader, depth = 0): TStruct {
  if (depth > 32) throw new ThriftError("thrift structures nested more than 32 deep");
  const fields: TField[] = [];
  let id = 0;
  for (;;) {
    const header = byteAt(reader);
    const type = header & 0x0f;
    if (type === T.STOP) return { kind: "struct", fields };
    const delta = header >> 4;
    id = delta ? id + delta : zigzag(varint(reader));
    if (type === T.TRUE || type === T.FALSE) fields.push({ id, type, value: type === T.TRUE });
    else fields.push({ id, type, value: readValue(reader, type, depth) });
  }
}

function readValue(reader: Reader, type: number, depth: number): TValue {
  switch (type) {
    case T.BYTE:
      return byteAt(reader);
    case T.I16:
    case T.I32:
      return zigzag(varint(reader));
    case T.I64:
      return zigzagBig(varintBig(reader));
    case T.DOUBLE: {
      if (reader.offset + 8 > reader.bytes.length) throw new ThriftError("thrift double runs past the end");
      const view = new DataView(reader.bytes.buffer, reader.bytes.byteOffset + reader.offset, 8);
      reader.offset += 8;
      return view.getFloat64(0, true);
    }
    case T.BINARY: {
      const length = varint(reader);
      if (reader.offset + length > reader.bytes.length)
        throw new ThriftError(`thrift binary of ${length} bytes runs past the end`);
      const value = reader.bytes.subarray(reader.offset, reader.offset + length);
      reader.offset += length;
      return value;
    }
    case T.LIST:
    case T.SET: {
      const header = byteAt(reader);
      const elementType = header & 0x0f;
      let size = header >> 4;
      if (size === 15) size = varint(reader);
      if (size > reader.bytes.length - reader.offset)
        throw new ThriftError(`thrift list of ${size} elements is longer than what is left`);
      const items: TValue[] = [];
      for (let i = 0; i < size; i++)
        items.push(
          elementType === T.TRUE || elementType === T.FALSE ? byteAt(reader) : readValue(reader, elementType, depth),
        );
      return { kind: "list", elementType, items };
    }
    case T.STRUCT:
      return readStruct(reader, depth + 1);
    default:
      throw new ThriftError(`thrift type ${type} is not one parquet uses`);
  }
}

function byteAt(reader: Reader): number {
  if (reader.offset >= reader.bytes.length) throw new ThriftError("thrift data ends early");
  return reader.bytes[reader.offset++]!;
}

function varint(reader: Reader): number {
  let result = 0;
  let shift = 0;
  for (;;) {
    const byte = byteAt(reader);
    result += (byte & 0x7f) * 2 ** shift;
    if (!(byte & 0x80)) return result;
    shift += 7;
    if (shift > 35) throw new ThriftError("thrift varint longer than 32 bits");
  }
}

function varintBig(reader: Reader): bigint {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    const byte = byteAt(reader);
    result |= BigInt(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return result;
    shift += 7n;
    if (shift > 70n) throw new ThriftError("thrift varint longer than 64 bits");
  }
}

const zigzag = (n: number) => (n % 2 === 1 ? -(n + 1) / 2 : n / 2);
const zigzagBig = (n: bigint) => (n >> 1n) ^ -(n & 1n);

/** A growable byte buffer. */
export class Bytes {
  private buffer = new Uint8Array(256);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + n) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.buffer.subarray(0, this.length));
    this.buffer = grown;
  }

  byte(b: number): void {
    this.room(1);
    this.buffer[this.length++] = b;
  }

  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buffer.set(b, this.length);
    this.length += b.length;
  }

  varint(n: number): void {
    while (n >= 0x80) {
      this.byte((n % 0x80) | 0x80);
      n = Math.floor(n / 0x80);
    }
    this.byte(n);
  }

  varintBig(n: bigint): void {
    while (n >= 0x80n) {
      this.byte(Number(n & 0x7fn) | 0x80);
      n >>= 7n;
    }
    this.byte(Number(n));
  }

  result(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }
}

export function writeStruct(out: Bytes, struct: TStruct): void {
  let last = 0;
  for (const field of struct.fields) {
    const delta = field.id - last;
    const type = field.type === T.TRUE || field.type === T.FALSE ? (field.value ? T.TRUE : T.FALSE) : field.type;
    if (delta > 0 && delta <= 15) out.byte((delta << 4) | type);
    else {
      out.byte(type);
      out.varint(field.id >= 0 ? field.id * 2 : -field.id * 2 - 1);
    }
    last = field.id;
    if (type !== T.TRUE && type !== T.FALSE) writeValue(out, type, field.value);
  }
  out.byte(T.STOP);
}

function writeValue(out: Bytes, type: number, value: TValue): void {
  switch (type) {
    case T.BYTE:
      out.byte((value as number) & 0xff);
      return;
    case T.I16:
    case T.I32: {
      const n = value as number;
      out.varint(n >= 0 ? n * 2 : -n * 2 - 1);
      return;
    }
    case T.I64: {
      const n = value as bigint;
      out.varintBig(n >= 0n ? n << 1n : (-n << 1n) - 1n);
      return;
    }
    case T.DOUBLE: {
      const b = new Uint8Array(8);
      new DataView(b.buffer).setFloat64(0, value as number, true);
      out.bytes(b);
      return;
    }
    case T.BINARY:
      out.varint((value as Uint8Array).length);
      out.bytes(value as Uint8Array);
      return;
    case T.LIST:
    case T.SET: {
      const list = value as TList;
      const n = list.items.length;
      if (n < 15) out.byte((n << 4) | list.elementType);
      else {
        out.byte(0xf0 | list.elementType);
        out.varint(n);
      }
      const bools = list.elementType === T.TRUE || list.elementType === T.FALSE;
      for (const item of list.items) {
        if (bools) out.byte(item as number);
        else writeValue(out, list.elementType, item);
      }
      return;
    }
    case T.STRUCT:
      writeStruct(out, value as TStruct);
      return;
    default:
      throw new ThriftError(`thrift type ${type} cannot be written`);
  }
}

/** The encoded bytes of a struct. */
export function encodeStruct(struct: TStruct): Uint8Array {
  const out = new Bytes();
  writeStruct(out, struct);
  return out.result();
}

// Reading and changing fields by id.

export function field(struct: TStruct, id: number): TValue | undefined {
  for (const f of struct.fields) if (f.id === id) return f.value;
  return undefined;
}

export function structField(struct: TStruct, id: number): TStruct | undefined {
  const value = field(struct, id);
  return value && typeof value === "object" && "kind" in value && value.kind === "struct" ? value : undefined;
}

export function listField(struct: TStruct, id: number): TValue[] {
  const value = field(struct, id);
  return value && typeof value === "object" && "kind" in value && value.kind === "list" ? value.items : [];
}

export function intField(struct: TStruct, id: number): number | undefined {
  const value = field(struct, id);
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  return undefined;
}

export function binaryField(struct: TStruct, id: number): Uint8Array | undefined {
  const value = field(struct, id);
  return value instanceof Uint8Array ? value : undefined;
}

/** Sets a field (kept in id order), or removes it with `undefined`. */
export function setField(struct: TStruct, id: number, type: number, value: TValue | undefined): void {
  const at = struct.fields.findIndex((f) => f.id === id);
  if (value === undefined) {
    if (at >= 0) struct.fields.splice(at, 1);
    return;
  }
  const entry = { id, type, value };
  if (at >= 0) struct.fields[at] = entry;
  else {
    const before = struct.fields.findIndex((f) => f.id > id);
    struct.fields.splice(before < 0 ? struct.fields.length : before, 0, entry);
  }
}

/** An i64 field, written as such whatever the number. */
export const setI64 = (struct: TStruct, id: number, value: number | undefined) =>
  setField(struct, id, T.I64, value === undefined ? undefined : BigInt(value));

/** A deep copy whose binary values are copied too (never the buffer they were read from, which may be the whole file). */
export function cloneStruct(struct: TStruct): TStruct {
  return { kind: "struct", fields: struct.fields.map((f) => ({ ...f, value: cloneValue(f.value) })) };
}

function cloneValue(value: TValue): TValue {
  if (value instanceof Uint8Array) return value.slice();
  if (typeof value !== "object") return value;
  if (value.kind === "struct") return cloneStruct(value);
  return { kind: "list", elementType: value.elementType, items: value.items.map(cloneValue) };
}
