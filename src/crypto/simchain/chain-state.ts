// The simulated chain's world state: TRX accounts (with their free bandwidth)
// and the USDT contract's storage (balances, blacklist, pause). Every change
// made by a block is written to that block's journal as a delta, so a reorg
// can undo the block exactly, while changes made between blocks (the faucet)
// stay: undoing a delta never overwrites them. One-shot outcomes armed for the
// next transfer to an address (test helpers) are state too: a block that uses
// one journals it, so a reorg re-arms it and the re-included transfer fails again.
// An outcome may belong to an owner (a sandbox shop): it then fires only for a
// transaction declared as that owner's, so one shop's fault never hits another's
// transfer to the same address (docs/crypto.md "Sandboxes kept apart").
import type { TronAddress } from '../tron/address.ts';
import { DAY_MS } from './chain-parameters.ts';

export interface AccountState {
  readonly createTimeMs: number;
  balanceSun: bigint;
  /** Free bandwidth used, as of `freeBandwidthTimeMs`; it recovers linearly over 24 h. */
  freeBandwidthUsed: number;
  freeBandwidthTimeMs: number;
}

export type JournalEntry =
  | { readonly kind: 'trx'; readonly address: TronAddress; readonly delta: bigint }
  | { readonly kind: 'usdt'; readonly address: TronAddress; readonly delta: bigint }
  | { readonly kind: 'bandwidth'; readonly address: TronAddress; readonly used: number; readonly timeMs: number }
  | {
      readonly kind: 'outcome';
      readonly address: TronAddress;
      readonly outcome: NextTransferOutcome;
      readonly owner?: string;
    }
  | { readonly kind: 'account'; readonly address: TronAddress };

/**
 * What the next USDT transfer to an address does, once: `revert` and
 * `out_of_energy` land on chain failed with the fee charged (as a blacklisted
 * recipient or a short fee_limit would), `never_included` is answered SUCCESS
 * at broadcast and then lost by the node (docs/tron.md §1.4 point 3).
 */
export type NextTransferOutcome = 'revert' | 'out_of_energy' | 'never_included';
export const NEXT_TRANSFER_OUTCOMES: readonly NextTransferOutcome[] = ['revert', 'out_of_energy', 'never_included'];

/** Declarations of transaction owners kept: far more than the pool and the unsolidified blocks hold. */
const TRANSACTION_OWNERS_MAX = 100_000;

/** The key of an outcome armed for one owner's transfers to `address`. */
export function ownedOutcomeKey(owner: string, address: TronAddress): string {
  return `${owner}\u0000${address}`;
}

export class ChainState {
  readonly accounts = new Map<TronAddress, AccountState>();
  readonly usdtBalances = new Map<TronAddress, bigint>();
  readonly usdtBlacklist = new Set<TronAddress>();
  usdtPaused = false;
  /**
   * The USDT contract's dynamic energy factor (ContractState.energy_factor, in
   * 1/10,000: 3,400 = +34 %). Set between blocks (a test or the control surface
   * moves it, as maintenance cycles do on mainnet); never journaled.
   */
  usdtEnergyFactor = 0;
  /** Armed one-shot outcomes for any transfer, by recipient. */
  readonly nextTransferOutcomes = new Map<TronAddress, NextTransferOutcome>();
  /** Armed one-shot outcomes for one owner's transfers only, by ownedOutcomeKey(owner, recipient). */
  readonly ownedTransferOutcomes = new Map<string, NextTransferOutcome>();
  /** Who a transaction belongs to (declared by whoever broadcast it), by txID; bounded by declareOwner. */
  readonly transactionOwners = new Map<string, string>();

  /** Records that `txId` is `owner`'s; the oldest declarations go past TRANSACTION_OWNERS_MAX. */
  declareOwner(txId: string, owner: string): void {
    this.transactionOwners.delete(txId);
    this.transactionOwners.set(txId, owner);
    if (this.transactionOwners.size > TRANSACTION_OWNERS_MAX)
      this.transactionOwners.delete(this.transactionOwners.keys().next().value!);
  }

  account(address: TronAddress): AccountState | undefined {
    return this.accounts.get(address);
  }

  /** Creates the account if needed (receiving TRX activates an address); in a block, journaled so a reorg removes it again. */
  activate(address: TronAddress, atMs: number, journal?: JournalEntry[]): AccountState {
    let account = this.accounts.get(address);
    if (!account) {
      account = { createTimeMs: atMs, balanceSun: 0n, freeBandwidthUsed: 0, freeBandwidthTimeMs: atMs };
      this.accounts.set(address, account);
      journal?.push({ kind: 'account', address });
    }
    return account;
  }

  usdtBalance(address: TronAddress): bigint {
    return this.usdtBalances.get(address) ?? 0n;
  }

  addTrx(address: TronAddress, delta: bigint, journal?: JournalEntry[]): void {
    const account = this.accounts.get(address);
    if (!account) throw new Error(`account ${address} does not exist`);
    if (account.balanceSun + delta < 0n) throw new Error(`account ${address} would go below zero TRX`);
    account.balanceSun += delta;
    journal?.push({ kind: 'trx', address, delta });
  }

  addUsdt(address: TronAddress, delta: bigint, journal?: JournalEntry[]): void {
    const balance = this.usdtBalance(address) + delta;
    if (balance < 0n) throw new Error(`USDT balance of ${address} would go below zero`);
    if (balance === 0n) this.usdtBalances.delete(address);
    else this.usdtBalances.set(address, balance);
    journal?.push({ kind: 'usdt', address, delta });
  }

  /** Free bandwidth used as of `atMs`, after linear recovery over 24 h (resource.md "Bandwidth"). */
  freeBandwidthUsed(account: AccountState, atMs: number): number {
    const elapsed = Math.max(0, atMs - account.freeBandwidthTimeMs);
    if (elapsed >= DAY_MS) return 0;
    return Math.ceil((account.freeBandwidthUsed * (DAY_MS - elapsed)) / DAY_MS);
  }

  useFreeBandwidth(address: TronAddress, bytes: number, atMs: number, journal: JournalEntry[]): void {
    const account = this.accounts.get(address);
    if (!account) throw new Error(`account ${address} does not exist`);
    journal.push({ kind: 'bandwidth', address, used: account.freeBandwidthUsed, timeMs: account.freeBandwidthTimeMs });
    account.freeBandwidthUsed = this.freeBandwidthUsed(account, atMs) + bytes;
    account.freeBandwidthTimeMs = atMs;
  }

  /**
   * Uses up the outcome armed for the next transfer to `address`, if it is one of `kinds`:
   * first one armed by the owner of `txId` (when it has one), then one armed for anyone.
   */
  takeNextTransferOutcome<K extends NextTransferOutcome>(
    address: TronAddress,
    kinds: readonly K[],
    journal?: JournalEntry[],
    txId?: string,
  ): K | undefined {
    const owner = txId === undefined ? undefined : this.transactionOwners.get(txId);
    const wanted = kinds as readonly NextTransferOutcome[];
    if (owner !== undefined) {
      const key = ownedOutcomeKey(owner, address);
      const owned = this.ownedTransferOutcomes.get(key);
      if (owned !== undefined && wanted.includes(owned)) {
        this.ownedTransferOutcomes.delete(key);
        journal?.push({ kind: 'outcome', address, outcome: owned, owner });
        return owned as K;
      }
    }
    const outcome = this.nextTransferOutcomes.get(address);
    if (outcome === undefined || !wanted.includes(outcome)) return undefined;
    this.nextTransferOutcomes.delete(address);
    journal?.push({ kind: 'outcome', address, outcome });
    return outcome as K;
  }

  /** Undoes one block's journal, newest change first. */
  undo(journal: readonly JournalEntry[]): void {
    for (let index = journal.length - 1; index >= 0; index -= 1) {
      const entry = journal[index]!;
      if (entry.kind === 'trx') this.addTrx(entry.address, -entry.delta);
      else if (entry.kind === 'usdt') this.addUsdt(entry.address, -entry.delta);
      else if (entry.kind === 'outcome') {
        if (entry.owner === undefined) this.nextTransferOutcomes.set(entry.address, entry.outcome);
        else this.ownedTransferOutcomes.set(ownedOutcomeKey(entry.owner, entry.address), entry.outcome);
      }
      // Its TRX deltas were undone first (newest first); faucet TRX given since keeps it alive.
      else if (entry.kind === 'account') {
        if (this.accounts.get(entry.address)?.balanceSun === 0n) this.accounts.delete(entry.address);
      } else {
        const account = this.accounts.get(entry.address);
        if (account) {
          account.freeBandwidthUsed = entry.used;
          account.freeBandwidthTimeMs = entry.timeMs;
        }
      }
    }
  }
}
