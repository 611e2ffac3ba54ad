// Faults a real TRON node shows, switched on by tests (TRON.md §3 "mempool
// realism", §1.8): slow answers past the client's timeout, HTTP 503,
// SERVER_BUSY, a broadcast answered SUCCESS that never lands, a head that
// stops moving or trails the chain, a node with its transaction history
// switched off, a node that hides transactions, `{}` from a node syncing from
// scratch, and Transfer logs attributed to another contract. A count applies
// the fault to that many matching requests; `true` until cleared.
import type { TronAddress } from '../tron/address.ts';

export interface NodeFaultSettings {
  /** Answer this late (after doing the work: a timed-out broadcast may still land). */
  readonly delayMs?: number;
  /** Paths the delay applies to; all when left out. */
  readonly delayPaths?: readonly string[];
  readonly http503?: boolean | number;
  /** `/wallet/broadcasthex` answers SERVER_BUSY without looking at the transaction. */
  readonly serverBusy?: boolean | number;
  /** Broadcasts are checked and answered SUCCESS, then lost: never included. */
  readonly neverInclude?: boolean | number;
  /** The node answers as if its head were this block (a lagging or stuck node). */
  readonly stuckHeadAt?: number;
  /** The node is this many blocks behind the chain (head and solidified block alike): a lagging node. */
  readonly lagBlocks?: number;
  /**
   * Paths the lag applies to; all when left out. A load-balanced provider may answer
   * getnowblock from an up-to-date backend and block queries from a lagging one.
   */
  readonly lagPaths?: readonly string[];
  /**
   * `storage.transHistory.switch = off`: java-tron's TransactionHistoryStore and TransactionRetStore
   * drop every put, so gettransactioninfobyid answers `{}` and gettransactioninfobyblocknum `[]`
   * (Wallet.getTransactionInfoByBlockNum finds no result for the block's transactions).
   */
  readonly historyOff?: boolean;
  /** A lying node: blocks shown without their transactions, their results `[]`, any transaction by id `{}`. */
  readonly hideTransactions?: boolean;
  /** getnowblock answers `{}` (a node with no block yet). */
  readonly emptyNowBlock?: boolean;
  /** Logs are reported as emitted by this contract instead of the real one (a lying node). */
  readonly foreignLogContract?: TronAddress;
}

type CountedFault = 'http503' | 'serverBusy' | 'neverInclude';

export class NodeFaults {
  #settings: { -readonly [K in keyof NodeFaultSettings]: NodeFaultSettings[K] } = {};

  /** Adds to (or changes) the active faults; `undefined` values clear one. */
  set(settings: NodeFaultSettings): void {
    this.#settings = { ...this.#settings, ...settings };
  }

  clear(): void {
    this.#settings = {};
  }

  get settings(): NodeFaultSettings {
    return this.#settings;
  }

  /** Whether a counted fault applies to this request (using one count up). */
  take(fault: CountedFault): boolean {
    const value = this.#settings[fault];
    if (value === true) return true;
    if (typeof value === 'number' && value > 0) {
      this.#settings = { ...this.#settings, [fault]: value - 1 };
      return true;
    }
    return false;
  }

  /** How many blocks behind the chain this node answers `path`. */
  lagFor(path: string): number {
    const { lagBlocks, lagPaths } = this.#settings;
    if (!lagBlocks || lagBlocks <= 0) return 0;
    return lagPaths === undefined || lagPaths.includes(path) ? lagBlocks : 0;
  }

  delayFor(path: string): number {
    const { delayMs, delayPaths } = this.#settings;
    if (!delayMs || delayMs <= 0) return 0;
    return delayPaths === undefined || delayPaths.includes(path) ? delayMs : 0;
  }
}
