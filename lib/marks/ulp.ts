/**
 * One unit in the last place of float32 and float64, and which values may carry a mark.
 *
 * A value carries no mark when it is zero, a whole number, subnormal, the largest finite value,
 * infinite or NaN: zeros and whole numbers are what code compares exactly (a gripper's 0.0 and
 * 1.0, a reward of 1), and a step from a subnormal or the largest value would leave the normal range.
 */

const MIN_NORMAL_32 = 2 ** -126;
const MAX_32 = (2 - 2 ** -23) * 2 ** 127;
const MIN_NORMAL_64 = 2 ** -1022;

export function markable32(x: number): boolean {
  const a = Math.abs(x);
  return a > MIN_NORMAL_32 && a < MAX_32 && !Number.isInteger(x);
}

export function markable64(x: number): boolean {
  const a = Math.abs(x);
  return a > MIN_NORMAL_64 && a < Number.MAX_VALUE && !Number.isInteger(x);
}

/** Moves `values[i]` (float32) one step up or down, through its bits (`bits` views the same buffer). */
export function step32(values: Float32Array, bits: Int32Array, i: number, up: boolean): void {
  // The bit pattern of a positive float grows with it, of a negative one with its magnitude.
  bits[i]! += values[i]! > 0 === up ? 1 : -1;
}

/** The same for float64, through the two 32-bit halves of each value (`halves` views the same buffer). */
export function step64(values: Float64Array, halves: Uint32Array, i: number, up: boolean): void {
  const lo = 2 * i;
  if (values[i]! > 0 === up) {
    halves[lo] = (halves[lo]! + 1) >>> 0;
    if (halves[lo] === 0) halves[lo + 1] = (halves[lo + 1]! + 1) >>> 0;
  } else {
    if (halves[lo] === 0) halves[lo + 1] = (halves[lo + 1]! - 1) >>> 0;
    halves[lo] = (halves[lo]! - 1) >>> 0;
  }
}

const f32 = new Float32Array(1);
const i32 = new Int32Array(f32.buffer);

/**
 * How far `seen` lies from `original` (a float32), in float32 steps, as a signed whole number, or
 * null when it lies more than `limit` steps away (changed by more than a mark could have). `seen`
 * is what a reader of the leaked file holds: a float32, a float64 cast from one, or a decimal that
 * a CSV writer printed and a parser rounded.
 */
export function steps32(original: number, seen: number, limit: number): number | null {
  if (!Number.isFinite(seen)) return null;
  // A float64 of a float32 value is exact; a decimal, or a float64 moved by less than half a
  // float32 step, rounds to the float32 it stands for.
  f32[0] = seen;
  const a = ordered(i32[0]!);
  f32[0] = original;
  const d = a - ordered(i32[0]!);
  return Math.abs(d) <= limit ? d : null;
}

/** Float bit patterns as integers in the order of the values they stand for. */
const ordered = (bits: number) => (bits >= 0 ? bits : -(bits & 0x7fffffff));

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);

/** The same for float64 values. */
export function steps64(original: number, seen: number, limit: number): number | null {
  if (!Number.isFinite(seen)) return null;
  if (seen === original) return 0;
  // Same sign (a mark never crosses zero): the difference of the magnitudes' bit patterns, by halves so it stays exact.
  if (seen > 0 !== original > 0) return null;
  f64[0] = seen;
  const hi = u32[1]! & 0x7fffffff;
  const lo = u32[0]!;
  f64[0] = original;
  const d = ((hi - (u32[1]! & 0x7fffffff)) * 4294967296 + (lo - u32[0]!)) * (original < 0 ? -1 : 1);
  return Math.abs(d) <= limit ? d : null;
}
