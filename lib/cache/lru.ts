/**
 * A map holding at most `capacity` units (bytes with a `weigh` function, entries without one),
 * dropping the least recently used entries first. A Map iterates in insertion order, so moving an
 * entry to the end when it is read keeps the oldest one first. An entry in the newer half of that
 * order is not moved: at least half the entries go before it whatever happens, and a cached page's
 * reads (its key, licences, version, body, query) no longer each delete and re-insert an entry.
 */
export class Lru<K, V> {
  private readonly entries = new Map<K, { value: V; weight: number; placed: number }>();
  private total = 0;
  /** How many times an entry has been put at the end; an entry's `placed` is this count when it was. */
  private placements = 0;

  constructor(
    readonly capacity: number,
    private readonly weigh: (value: V) => number = () => 1,
  ) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    // At most this many entries were put after it: fewer than half, and it is in the newer half.
    if (this.placements - entry.placed >= this.entries.size / 2) {
      this.entries.delete(key);
      entry.placed = ++this.placements;
      this.entries.set(key, entry);
    }
    return entry.value;
  }

  /** Stores `value`; one heavier than the whole capacity is not kept at all. */
  set(key: K, value: V): void {
    const weight = this.weigh(value);
    this.delete(key);
    if (weight > this.capacity) return;
    this.entries.set(key, { value, weight, placed: ++this.placements });
    this.total += weight;
    for (const [oldest, entry] of this.entries) {
      if (this.total <= this.capacity) break;
      this.entries.delete(oldest);
      this.total -= entry.weight;
    }
  }

  delete(key: K): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.total -= entry.weight;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The units held: bytes, or entries. */
  get weight(): number {
    return this.total;
  }
}
