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
import type { ResourceCode } from '../tron/stake-contracts.ts';
import { DAY_MS } from './chain-parameters.ts';
import type { ResourceUsage } from './resource-usage.ts';

export interface AccountState {
  readonly createTimeMs: number;
  balanceSun: bigint;
  /** Free bandwidth used, as of `freeBandwidthTimeMs`; it recovers linearly over 24 h. */
  freeBandwidthUsed: number;
  freeBandwidthTimeMs: number;
  /** Stake 2.0 fields (absent: nothing staked, delegated or used; and in files saved before staking existed). Replaced, never mutated. */
  stake?: StakeState;
}

/** An account's Stake 2.0 fields (Account.frozenV2, unfrozenV2, the delegated balances, account_resource's energy use). */
export interface StakeState {
  /** frozenV2 amounts: staked by the account and not delegated away. */
  readonly frozenSun: Readonly<Record<ResourceCode, bigint>>;
  /** delegated_frozenV2_balance_for_*: staked by the account, delegated to others. */
  readonly delegatedSun: Readonly<Record<ResourceCode, bigint>>;
  /** acquired_delegated_frozenV2_balance_for_*: staked by others, delegated to this account. */
  readonly acquiredSun: Readonly<Record<ResourceCode, bigint>>;
  /** Unfreezings waiting out (or past) their delay, oldest first (unfrozenV2). */
  readonly unfrozen: readonly UnfreezingBalance[];
  /** Energy use and its recovery window (resource-usage.ts). */
  readonly energy: ResourceUsage;
  /** Staked bandwidth use (net_usage, latest_consume_time), over java-tron's fixed day window. */
  readonly bandwidth: ResourceUsage;
}

interface UnfreezingBalance {
  readonly resource: ResourceCode;
  readonly amountSun: bigint;
  /** Block time (ms) from which withdrawexpireunfreeze may take it back. */
  readonly expireTimeMs: number;
}

/**
 * A DelegatedResource record of java-tron's DelegatedResourceStore (createDbKeyV2):
 * one per owner → receiver for unlocked delegations, one for locked ones.
 */
export interface DelegationRecord {
  readonly from: TronAddress;
  readonly to: TronAddress;
  readonly lock: boolean;
  readonly balanceSun: Readonly<Record<ResourceCode, bigint>>;
  /** Lock expiry (ms) per resource; 0 when not locked. */
  readonly expireTimeMs: Readonly<Record<ResourceCode, number>>;
}

/** The key of a delegation record (java-tron's createDbKeyV2 keeps the lock in the key). */
export function delegationKey(from: TronAddress, to: TronAddress, lock: boolean): string {
  return `${from}\u0000${to}\u0000${lock ? 'lock' : 'unlock'}`;
}

/** The key of a delegation index entry (DelegatedResourceAccountIndexStore V2: from → to, with the time). */
export function delegationIndexKey(from: TronAddress, to: TronAddress): string {
  return `${from}\u0000${to}`;
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
  | { readonly kind: 'account'; readonly address: TronAddress }
  | { readonly kind: 'stake'; readonly address: TronAddress; readonly before: StakeState | undefined }
  | { readonly kind: 'delegation'; readonly key: string; readonly before: DelegationRecord | undefined }
  | { readonly kind: 'delegationIndex'; readonly key: string; readonly before: DelegationIndexEntry | undefined }
  | { readonly kind: 'weights'; readonly energyTrx: bigint; readonly bandwidthTrx: bigint };

export interface DelegationIndexEntry {
  readonly from: TronAddress;
  readonly to: TronAddress;
  /** When the last delegation between the two was made (ms). */
  readonly timestampMs: number;
}

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
  /** TotalEnergyWeight / TotalNetWeight: whole TRX staked for each on the whole network (the genesis figure stands for everyone else). */
  totalEnergyWeightTrx = 0n;
  totalBandwidthWeightTrx = 0n;
  /** Delegation records by delegationKey. */
  readonly delegations = new Map<string, DelegationRecord>();
  /** Who delegated to whom, by delegationIndexKey. */
  readonly delegationIndex = new Map<string, DelegationIndexEntry>();
  /** Who a transaction belongs to (declared by whoever broadcast it), by txID; bounded by declareOwner. */
  readonly transactionOwners = new Map<string, string>();

  /** Records that `txId` is `owner`'s; the oldest declarations go past TRANSACTION_OWNERS_MAX. */
  declareOwner(txId: string, owner: string): void {
    this.transactionOwners.delete(txId);
    this.transactionOwners.set(txId, owner);
    if (this.transactionOwners.size > TRANSACTION_OWNERS_MAX)
      this.transactionOwners.delete(this.transactionOwners.keys().next().value!);
  }

  /**
   * A copy to undo blocks on without touching this state (an older block's
   * state, as the solidity node reads it). The transaction owners are left out:
   * no block changes them.
   */
  copy(): ChainState {
    const copy = new ChainState();
    for (const [address, account] of this.accounts) copy.accounts.set(address, { ...account });
    for (const [address, balance] of this.usdtBalances) copy.usdtBalances.set(address, balance);
    for (const address of this.usdtBlacklist) copy.usdtBlacklist.add(address);
    for (const [address, outcome] of this.nextTransferOutcomes) copy.nextTransferOutcomes.set(address, outcome);
    for (const [key, outcome] of this.ownedTransferOutcomes) copy.ownedTransferOutcomes.set(key, outcome);
    for (const [key, record] of this.delegations) copy.delegations.set(key, record);
    for (const [key, entry] of this.delegationIndex) copy.delegationIndex.set(key, entry);
    copy.usdtPaused = this.usdtPaused;
    copy.usdtEnergyFactor = this.usdtEnergyFactor;
    copy.totalEnergyWeightTrx = this.totalEnergyWeightTrx;
    copy.totalBandwidthWeightTrx = this.totalBandwidthWeightTrx;
    return copy;
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

  /** Replaces an account's Stake 2.0 fields, journaled. */
  setStake(address: TronAddress, stake: StakeState, journal: JournalEntry[]): void {
    const account = this.accounts.get(address);
    if (!account) throw new Error(`account ${address} does not exist`);
    journal.push({ kind: 'stake', address, before: account.stake });
    account.stake = stake;
  }

  setDelegation(key: string, record: DelegationRecord | undefined, journal: JournalEntry[]): void {
    journal.push({ kind: 'delegation', key, before: this.delegations.get(key) });
    if (record) this.delegations.set(key, record);
    else this.delegations.delete(key);
  }

  setDelegationIndex(key: string, entry: DelegationIndexEntry | undefined, journal: JournalEntry[]): void {
    journal.push({ kind: 'delegationIndex', key, before: this.delegationIndex.get(key) });
    if (entry) this.delegationIndex.set(key, entry);
    else this.delegationIndex.delete(key);
  }

  addWeights(energyTrx: bigint, bandwidthTrx: bigint, journal: JournalEntry[]): void {
    if (energyTrx === 0n && bandwidthTrx === 0n) return;
    this.totalEnergyWeightTrx += energyTrx;
    this.totalBandwidthWeightTrx += bandwidthTrx;
    journal.push({ kind: 'weights', energyTrx, bandwidthTrx });
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
      } else if (entry.kind === 'stake') {
        const account = this.accounts.get(entry.address);
        if (account) account.stake = entry.before;
      } else if (entry.kind === 'delegation') {
        if (entry.before) this.delegations.set(entry.key, entry.before);
        else this.delegations.delete(entry.key);
      } else if (entry.kind === 'delegationIndex') {
        if (entry.before) this.delegationIndex.set(entry.key, entry.before);
        else this.delegationIndex.delete(entry.key);
      } else if (entry.kind === 'weights') {
        this.totalEnergyWeightTrx -= entry.energyTrx;
        this.totalBandwidthWeightTrx -= entry.bandwidthTrx;
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
