// The ids of blocks whose bodies the simulated chain has pruned: TaPoS must
// still check a reference to any of the last 65,536 blocks, so their ids stay,
// as 32 bytes each in one ring buffer (2 MB for the 65,536-block window)
// instead of a header object per block. It grows as blocks are pruned, and
// once full the oldest id is overwritten.
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';

const ID_BYTES = 32;

/** Slots allocated at first; the ring doubles up to its capacity as ids arrive. */
const INITIAL_SLOTS = 1_024;

export class PrunedBlockIds {
  readonly #capacity: number;
  #bytes: Uint8Array;
  #slots: number;
  /** Block number of the oldest id held. */
  #first = 0;
  #count = 0;

  constructor(capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a whole number ≥ 1');
    this.#capacity = capacity;
    this.#slots = Math.min(capacity, INITIAL_SLOTS);
    this.#bytes = new Uint8Array(this.#slots * ID_BYTES);
  }

  #grow(): void {
    const slots = Math.min(this.#capacity, this.#slots * 2);
    const bytes = new Uint8Array(slots * ID_BYTES);
    for (let number = this.#first; number < this.#first + this.#count; number += 1) {
      const from = (number % this.#slots) * ID_BYTES;
      bytes.set(this.#bytes.subarray(from, from + ID_BYTES), (number % slots) * ID_BYTES);
    }
    this.#bytes = bytes;
    this.#slots = slots;
  }

  /** The next pruned block: numbers arrive in order, one after another. */
  push(number: number, id: string): void {
    if (this.#count === 0) this.#first = number;
    else if (number !== this.#first + this.#count)
      throw new Error(`pruned block ${number} out of order (expected ${this.#first + this.#count})`);
    if (this.#count === this.#slots && this.#slots < this.#capacity) this.#grow();
    if (this.#count === this.#capacity) {
      this.#first += 1;
      this.#count -= 1;
    }
    this.#bytes.set(hexToBytes(id), ((this.#first + this.#count) % this.#slots) * ID_BYTES);
    this.#count += 1;
  }

  get(number: number): string | undefined {
    if (number < this.#first || number >= this.#first + this.#count) return undefined;
    const offset = (number % this.#slots) * ID_BYTES;
    return bytesToHex(this.#bytes.subarray(offset, offset + ID_BYTES));
  }

  get size(): number {
    return this.#count;
  }

  /** Oldest first, for saving. */
  entries(): { readonly first: number; readonly ids: string[] } {
    const ids: string[] = [];
    for (let number = this.#first; number < this.#first + this.#count; number += 1) ids.push(this.get(number)!);
    return { first: this.#first, ids };
  }
}
