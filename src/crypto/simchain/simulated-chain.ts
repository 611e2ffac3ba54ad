// A deterministic in-memory TRON chain (docs/tron.md §3): its own clock (tests move
// it; nothing sleeps), a block every 3 s of that clock, block ids = 8-byte
// number ‖ 24 bytes of hash linked to the parent, a pending pool fed through
// the same checks as a java-tron node, USDT transfers run with bandwidth and
// energy (usdt-execution.ts), solidification at head − 18 and reorgs of
// unsolidified blocks. Everything derives from the seed: the same seed and
// the same calls give the same chain, byte for byte. Memory stays bounded:
// blocks far below the solidified one lose their bodies (pruned history, as a
// java-tron lite full node), keeping only their ids for TaPoS.
import { UNUSED_RESOURCE, type ResourceUsage } from './resource-usage.ts';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, concatBytes, hexToBytes, randomBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { tronAddressFromEvm, type TronAddress } from '../tron/address.ts';
import { recoverSignerAddress, signTriggerSmartContract } from '../tron/signing.ts';
import { encodeSignedTransaction, referenceBlockFields, type SignedTransaction } from '../tron/transaction.ts';
import { decodeTransferCalldata, transferCalldata } from '../tron/trc20-usdt.ts';
import { signStakeTransaction, type SignedStakeTransaction, type StakeContract } from '../tron/stake-contracts.ts';
import { chainParameters, checkEnergyFactor, type ChainParameters } from './chain-parameters.ts';
import {
  ChainState,
  ownedOutcomeKey,
  type AccountState,
  type DelegationIndexEntry,
  type DelegationRecord,
  type JournalEntry,
  type NextTransferOutcome,
  type StakeState,
} from './chain-state.ts';
import { payerKeys, type PayerKey } from './payer-keys.ts';
import { PrunedBlockIds } from './pruned-history.ts';
import {
  checkIntake,
  decodeIncoming,
  incomingOf,
  type IncomingTransaction,
  type IntakeRefusal,
  type IntakeView,
} from './transaction-intake.ts';
import { executeInBlock, executeTrxTransferInBlock, type Receipt } from './usdt-execution.ts';
import { executeStakeInBlock } from './stake-intake.ts';
import {
  decodeChainTransaction,
  isContractCall,
  isStakeTransaction,
  isTrxTransfer,
  ownerOf,
  type ChainTransaction,
} from './chain-transaction.ts';

export interface IncludedTransaction extends IncomingTransaction {
  readonly receipt: Receipt;
}

export interface SimulatedBlock {
  readonly number: number;
  /** 64 hex digits: the number (8 bytes, big-endian) ‖ 24 bytes of hash. */
  readonly id: string;
  readonly parentId: string;
  readonly timestampMs: number;
  readonly transactions: readonly IncludedTransaction[];
  /** What the block changed, for undoing it in a reorg. */
  readonly journal: readonly JournalEntry[];
}

export type BroadcastOutcome =
  | { readonly result: true; readonly txId: string }
  | ({ readonly result: false; readonly txId?: string } & IntakeRefusal);

export interface SimulatedChainOptions {
  /** Everything random (block hashes, payer keys) derives from it. */
  readonly seed: string;
  readonly parameters?: Partial<ChainParameters>;
  /** Continue a saved chain (persistence.ts) instead of starting at genesis. */
  readonly restore?: ChainSnapshot;
}

/** Addresses made for owners that are remembered (each helper call makes at most one). */
const OWNED_ADDRESSES_MAX = 100_000;

/** Everything the chain is, as plain data (bigints stay bigints; persistence.ts writes them as strings). */
export interface ChainSnapshot {
  readonly version: 1;
  readonly seed: string;
  readonly nowMs: number;
  readonly forks: number;
  readonly accounts: readonly (readonly [TronAddress, SavedAccount])[];
  readonly usdtBalances: readonly (readonly [TronAddress, bigint])[];
  readonly usdtBlacklist: readonly TronAddress[];
  readonly usdtPaused: boolean;
  /** Absent in files saved before the dynamic energy factor existed (then the parameters' factor). */
  readonly usdtEnergyFactor?: number;
  /** Absent in files saved before one-shot outcomes existed. */
  readonly nextTransferOutcomes?: readonly (readonly [TronAddress, NextTransferOutcome])[];
  /** Outcomes armed for one owner (ownedOutcomeKey → outcome); absent in files saved before owners existed. */
  readonly ownedTransferOutcomes?: readonly (readonly [string, NextTransferOutcome])[];
  /** Addresses made for one owner (makeOwnedAddress); absent in files saved before they existed. */
  readonly addressOwners?: readonly (readonly [TronAddress, string])[];
  readonly blocks: readonly {
    readonly number: number;
    readonly id: string;
    readonly parentId: string;
    readonly timestampMs: number;
    readonly transactions: readonly { readonly hex: string; readonly receipt: Receipt }[];
    /** Kept only for blocks a reorg may still undo. */
    readonly journal: readonly JournalEntry[];
  }[];
  readonly pool: readonly string[];
  /** Ids of the pruned blocks just below `blocks` (absent before pruning existed). */
  readonly prunedBlockIds?: { readonly first: number; readonly ids: readonly string[] };
  readonly recent: readonly (readonly [string, number])[];
  /** Stake 2.0 network state (absent in files saved before staking existed: the genesis weights, no delegations). */
  readonly staking?: {
    readonly totalEnergyWeightTrx: bigint;
    readonly totalBandwidthWeightTrx: bigint;
    readonly delegations: readonly (readonly [string, DelegationRecord])[];
    readonly delegationIndex: readonly (readonly [string, DelegationIndexEntry])[];
  };
}

/** An account as saved: files written before staked bandwidth was tracked have stakes without its use. */
type SavedAccount = Omit<AccountState, 'stake'> & {
  readonly stake?: Omit<StakeState, 'bandwidth'> & { readonly bandwidth?: ResourceUsage };
};

export interface SendUsdtOptions {
  /** A payer (default the first) or any funded account whose key is given. */
  readonly from?: TronAddress | PayerKey;
  readonly to: TronAddress;
  /** micro-USDT. */
  readonly amount: bigint;
  /** Default 100 TRX (enough for a 130,285-energy transfer at 100 sun). */
  readonly feeLimitSun?: bigint;
  /** Default: the head block's time + 60 s, as java-tron's builder sets it. */
  readonly expirationMs?: number;
  /** TaPoS reference: the latest solidified block (default, as java-tron's builder) or the head. */
  readonly referenceBlock?: 'solid' | 'head';
  /** Whose transfer it is (a sandbox shop): outcomes armed for that owner apply to it. */
  readonly owner?: string;
}

/** Who a transaction moves money between (`to`: the USDT recipient, or the TRX one), and whose it is when declared. */
export interface TransactionParties {
  readonly txId: string;
  readonly from: TronAddress;
  readonly to?: TronAddress;
  readonly owner?: string;
}

export interface ReorgOptions {
  /** Put the orphaned blocks' transactions back in the pool (re-checked), or forget them. Default true. */
  readonly reinclude?: boolean;
  /** Blocks of the new branch; default the depth (the head keeps its number, its id changes). */
  readonly newBlocks?: number;
  /** The new branch's blocks are squeezed in before this time (a sandbox's wall clock; see mine). */
  readonly notAfterMs?: number;
}

const DEFAULT_FEE_LIMIT_SUN = 100_000_000n;
const DEFAULT_EXPIRATION_MS = 60_000;
/** Bodies are pruned this many blocks at a time, so the array of blocks is not shifted on every block. */
const PRUNE_BATCH_BLOCKS = 256;

export class SimulatedChain {
  readonly seed: string;
  readonly parameters: ChainParameters;
  readonly state = new ChainState();
  readonly payers: readonly PayerKey[];
  /** The blocks that still have their bodies, oldest first: `#blocks[0]` is the first unpruned block, not block 0. */
  readonly #blocks: SimulatedBlock[] = [];
  readonly #prunedIds: PrunedBlockIds;
  #pool: IncomingTransaction[] = [];
  /** txId → block number, for transactions on the canonical chain. */
  readonly #onChain = new Map<string, number>();
  /** txId → expiration: accepted broadcasts, java-tron's recent-transaction cache (also the lost ones). */
  readonly #recent = new Map<string, number>();
  /** Signatures recovered off the main thread for the request being handled (withRecoveredSignatures). */
  #recovered = new Map<string, TronAddress | undefined>();
  /** Addresses made for an owner (makeOwnedAddress), oldest first, at most OWNED_ADDRESSES_MAX. */
  readonly #addressOwners = new Map<TronAddress, string>();
  #nowMs: number;
  #forks = 0;

  constructor(options: SimulatedChainOptions) {
    this.seed = options.seed;
    this.parameters = chainParameters(options.parameters);
    this.#nowMs = this.parameters.genesisTimestampMs;
    this.payers = payerKeys(this.seed, this.parameters.payerCount);
    this.#prunedIds = new PrunedBlockIds(this.parameters.retainedBlockHeaders);
    this.state.usdtEnergyFactor = this.parameters.usdtEnergyFactor;
    this.state.totalEnergyWeightTrx = this.parameters.genesisTotalEnergyWeightTrx;
    this.state.totalBandwidthWeightTrx = this.parameters.genesisTotalBandwidthWeightTrx;
    if (options.restore) {
      this.#restore(options.restore);
      return;
    }
    const genesisParent = bytesToHex(sha256(utf8ToBytes(`genesis parent\0${this.seed}`)));
    this.#blocks.push(this.#sealBlock(0, genesisParent, this.parameters.genesisTimestampMs, [], []));
    for (const payer of this.payers)
      this.faucet(payer.address, { trxSun: this.parameters.payerTrxSun, usdt: this.parameters.payerUsdt });
  }

  // ---- clock and blocks ----

  get nowMs(): number {
    return this.#nowMs;
  }

  get head(): SimulatedBlock {
    return this.#blocks[this.#blocks.length - 1]!;
  }

  get solidNumber(): number {
    return Math.max(0, this.head.number - this.parameters.solidityDepth);
  }

  get solidBlock(): SimulatedBlock {
    return this.block(this.solidNumber)!;
  }

  /**
   * The state as of the solidified block, which java-tron's solidity node reads:
   * a copy of the head's with the blocks above it undone (their journals are
   * kept for reorgs). Faucet grants, made outside blocks, count as solidified at once.
   */
  solidState(): ChainState {
    const state = this.state.copy();
    for (let number = this.head.number; number > this.solidNumber; number -= 1)
      state.undo(this.block(number)?.journal ?? []);
    return state;
  }

  /** The canonical block at `number`, or undefined when it is not produced yet or its body was pruned. */
  block(number: number): SimulatedBlock | undefined {
    return Number.isSafeInteger(number) && number >= 0 ? this.#blocks[number - this.#blocks[0]!.number] : undefined;
  }

  /** Whether `number` was produced but its body pruned: the node no longer answers for it. */
  isPruned(number: number): boolean {
    return Number.isSafeInteger(number) && number >= 0 && number < this.#blocks[0]!.number;
  }

  /** What the chain holds in memory (tests check it stays bounded). */
  get retained(): {
    readonly blocksWithBodies: number;
    readonly prunedIds: number;
    readonly transactionsIndexed: number;
    readonly recent: number;
  } {
    return {
      blocksWithBodies: this.#blocks.length,
      prunedIds: this.#prunedIds.size,
      transactionsIndexed: this.#onChain.size,
      recent: this.#recent.size,
    };
  }

  blockById(id: string): SimulatedBlock | undefined {
    const block = this.block(Number.parseInt(id.slice(0, 16), 16));
    return block?.id === id.toLowerCase() ? block : undefined;
  }

  /** Moves the clock; a block is produced for every slot it passes. */
  advance(ms: number): SimulatedBlock[] {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advance: ${ms} ms`);
    this.#nowMs += ms;
    const produced: SimulatedBlock[] = [];
    while (this.head.timestampMs + this.parameters.blockIntervalMs <= this.#nowMs) produced.push(this.#produceBlock());
    return produced;
  }

  /** Produces `count` blocks, moving the clock to the last one's slot. */
  produceBlocks(count: number): SimulatedBlock[] {
    if (!Number.isSafeInteger(count) || count < 0 || count > 1_000_000) throw new RangeError(`produceBlocks: ${count}`);
    const produced: SimulatedBlock[] = [];
    for (let index = 0; index < count; index += 1) {
      this.#nowMs = Math.max(this.#nowMs, this.head.timestampMs + this.parameters.blockIntervalMs);
      produced.push(this.#produceBlock());
    }
    return produced;
  }

  /**
   * The witnesses miss `slots` slots, then the next block comes (java-tron: a slot
   * without a block). The clock moves on by all of them: what counts time in slots
   * (a resource's recovery, EnergyProcessor's head slot) sees the time pass; what
   * counts blocks (solidification) sees one block. A day of idle blocks costs a
   * watcher a day of scanning; a gap costs it one block.
   */
  missSlots(slots: number): SimulatedBlock {
    if (!Number.isSafeInteger(slots) || slots < 0 || slots > 1_000_000) throw new RangeError(`missSlots: ${slots}`);
    const timestampMs = this.head.timestampMs + (slots + 1) * this.parameters.blockIntervalMs;
    this.#nowMs = Math.max(this.#nowMs, timestampMs);
    return this.#produceBlock(timestampMs);
  }

  /**
   * Test-helper name for produceBlocks. With `notAfterMs` (the wall clock of a
   * sandbox) the blocks are squeezed in before it (squeezedTimestamps), so mining
   * never moves the chain's clock ahead of the wall clock and the wall clock's
   * next block still comes on time.
   */
  mine(count = 1, options: { readonly notAfterMs?: number } = {}): SimulatedBlock[] {
    if (options.notAfterMs === undefined) return this.produceBlocks(count);
    if (!Number.isSafeInteger(count) || count < 0 || count > 1_000_000) throw new RangeError(`mine: ${count}`);
    return this.squeezedTimestamps(count, options.notAfterMs).map((timestampMs) => {
      this.#nowMs = Math.max(this.#nowMs, timestampMs);
      return this.#produceBlock(timestampMs);
    });
  }

  /**
   * Timestamps for `count` blocks after the head, none after `notAfterMs`: a slot (3 s)
   * apart when there is room, else an equal share of the time left each. A sandbox
   * compromise: blocks mined faster than real time may share a millisecond (and, with
   * no time left, the head's), which java-tron never produces and nothing here relies on.
   */
  squeezedTimestamps(count: number, notAfterMs: number): number[] {
    const headMs = this.head.timestampMs;
    const roomMs = Math.max(0, notAfterMs - headMs);
    return Array.from(
      { length: count },
      (_, index) =>
        headMs + Math.min(this.parameters.blockIntervalMs * (index + 1), Math.floor((roomMs * (index + 1)) / count)),
    );
  }

  #produceBlock(timestampMs = this.head.timestampMs + this.parameters.blockIntervalMs): SimulatedBlock {
    const parent = this.head;
    const journal: JournalEntry[] = [];
    const included: IncludedTransaction[] = [];
    const waiting: IncomingTransaction[] = [];
    for (const pending of this.#pool) {
      // java-tron drops a pooled transaction that expires before the slot (TransactionCapsule.checkExpiration).
      if (pending.transaction.raw.expirationMs < timestampMs) continue;
      if (included.length >= this.parameters.maxTransactionsPerBlock) {
        waiting.push(pending);
        continue;
      }
      const { transaction } = pending;
      // Contracts see the parent's time as "now" (Manager.processBlock updates it after the block's transactions).
      const context = { blockTimeMs: timestampMs, nowMs: parent.timestampMs };
      const receipt = isTrxTransfer(transaction)
        ? executeTrxTransferInBlock(this.state, this.parameters, transaction, pending.sizeBytes, timestampMs, journal)
        : isStakeTransaction(transaction)
          ? executeStakeInBlock(this.state, this.parameters, transaction, pending.sizeBytes, context, journal)
          : executeInBlock(this.state, this.parameters, transaction, pending.sizeBytes, context, journal);
      if (receipt) included.push({ ...pending, receipt });
    }
    this.#pool = waiting;
    const block = this.#sealBlock(parent.number + 1, parent.id, timestampMs, included, journal);
    this.#blocks.push(block);
    for (const transaction of included) this.#onChain.set(transaction.transaction.txId, block.number);
    for (const [txId, expirationMs] of this.#recent) if (expirationMs < timestampMs) this.#recent.delete(txId);
    // A solidified block is never undone: its journal is no longer needed.
    const solidified = this.block(this.solidNumber) as { journal: readonly JournalEntry[] } | undefined;
    if (solidified && solidified.journal.length > 0) solidified.journal = [];
    this.#prune();
    return block;
  }

  /** Bodies of blocks more than `retainedBlockBodies` below the solidified one go; their ids stay for TaPoS. */
  #prune(): void {
    const keepFrom = this.solidNumber - this.parameters.retainedBlockBodies;
    const excess = keepFrom - this.#blocks[0]!.number;
    if (excess < Math.min(PRUNE_BATCH_BLOCKS, this.parameters.retainedBlockBodies)) return;
    for (const block of this.#blocks.splice(0, excess)) {
      this.#prunedIds.push(block.number, block.id);
      for (const included of block.transactions) this.#onChain.delete(included.transaction.txId);
    }
  }

  #sealBlock(
    number: number,
    parentId: string,
    timestampMs: number,
    transactions: IncludedTransaction[],
    journal: JournalEntry[],
  ): SimulatedBlock {
    const numberBytes = new Uint8Array(8);
    new DataView(numberBytes.buffer).setBigUint64(0, BigInt(number));
    const hash = sha256(
      concatBytes(
        utf8ToBytes(`block\0${this.seed}\0${this.#forks}\0${timestampMs}\0`),
        numberBytes,
        hexToBytes(parentId),
        ...transactions.map((transaction) => hexToBytes(transaction.transaction.txId)),
      ),
    );
    return {
      number,
      id: bytesToHex(numberBytes) + bytesToHex(hash.subarray(8)),
      parentId,
      timestampMs,
      transactions,
      journal,
    };
  }

  // ---- transactions ----

  /** `/wallet/broadcasthex`: the signed Transaction's protobuf in hex. */
  broadcastHex(hex: string, options: { readonly neverInclude?: boolean } = {}): BroadcastOutcome {
    const decoded = decodeIncoming(this.parameters, hex);
    if (!decoded.ok) return { result: false, ...decoded.refusal };
    return this.broadcast(decoded.incoming, options);
  }

  broadcast(incoming: IncomingTransaction, options: { readonly neverInclude?: boolean } = {}): BroadcastOutcome {
    const txId = incoming.transaction.txId;
    // Wallet.broadcastTransaction: the recent cache and the pool size come first.
    if (this.#recent.has(txId) || this.#onChain.has(txId))
      return { result: false, txId, code: 'DUP_TRANSACTION_ERROR', message: 'Dup trans' };
    if (this.#pool.length >= this.parameters.maxPendingTransactions)
      return { result: false, txId, code: 'SERVER_BUSY', message: 'Server busy.' };
    const refusal = checkIntake(this.#intakeView(), incoming);
    if (refusal) return { result: false, txId, ...refusal };
    this.#recent.set(txId, incoming.transaction.raw.expirationMs);
    // One-shot outcomes are armed for USDT transfers (a TRX top-up is never affected).
    const call = isContractCall(incoming.transaction)
      ? decodeTransferCalldata(incoming.transaction.raw.data)
      : undefined;
    const armedLoss =
      call?.ok === true &&
      this.state.takeNextTransferOutcome(call.to, ['never_included'], undefined, txId) !== undefined;
    // A node that said SUCCESS and then lost it (docs/tron.md §1.4 point 3): it stays in the recent cache only.
    if (!options.neverInclude && !armedLoss) this.#pool.push(incoming);
    return { result: true, txId };
  }

  #intakeView(): IntakeView {
    return {
      parameters: this.parameters,
      state: this.state,
      headNumber: this.head.number,
      headTimestampMs: this.head.timestampMs,
      blockId: (number) => this.block(number)?.id ?? this.#prunedIds.get(number),
      // Every pooled transaction is in the recent cache too.
      knows: (txId) => this.#recent.has(txId) || this.#onChain.has(txId),
      recoverSigner: (txId, signature) => {
        const key = recoveryKey(txId, signature);
        return this.#recovered.has(key) ? this.#recovered.get(key) : recoverSignerAddress(txId, signature);
      },
    };
  }

  /**
   * Runs `work` (a broadcast) with signatures the server's worker pool already
   * recovered: intake takes those results instead of recovering on this thread.
   * Keyed by txID and signature bytes, so each is the recovery of exactly the
   * bytes being checked; every signature is still recovered and compared.
   */
  withRecoveredSignatures<T>(recovered: readonly RecoveredSignature[], work: () => T): T {
    const previous = this.#recovered;
    this.#recovered = new Map(recovered.map((item) => [recoveryKey(item.txId, item.signature), item.signer]));
    try {
      return work();
    } finally {
      this.#recovered = previous;
    }
  }

  get pendingTransactions(): readonly IncomingTransaction[] {
    return this.#pool;
  }

  /** The transaction and its block, when it is on the canonical chain. */
  findTransaction(txId: string): { block: SimulatedBlock; transaction: IncludedTransaction } | undefined {
    const number = this.#onChain.get(txId.toLowerCase());
    const block = number === undefined ? undefined : this.block(number);
    const transaction = block?.transactions.find((included) => included.transaction.txId === txId.toLowerCase());
    return block && transaction ? { block, transaction } : undefined;
  }

  /** Builds, signs (with the payer's key) and broadcasts a real USDT transfer through the node's intake. */
  sendUsdt(
    options: SendUsdtOptions,
  ): BroadcastOutcome & { readonly transaction: SignedTransaction & { readonly bytes: Uint8Array } } {
    const payer = this.#payer(options.from);
    const owner = options.owner;
    const reference = options.referenceBlock === 'head' ? this.head : this.solidBlock;
    const signed = signTriggerSmartContract(
      {
        ...referenceBlockFields(reference.number, reference.id),
        expirationMs: options.expirationMs ?? this.head.timestampMs + DEFAULT_EXPIRATION_MS,
        timestampMs: this.#nowMs,
        feeLimitSun: options.feeLimitSun ?? DEFAULT_FEE_LIMIT_SUN,
        ownerAddress: payer.address,
        contractAddress: this.parameters.usdtContract,
        data: transferCalldata(options.to, options.amount),
      },
      payer.privateKey,
    );
    if (owner !== undefined) this.declareOwner(signed.txId, owner);
    return { ...this.broadcastHex(bytesToHex(signed.bytes)), transaction: signed };
  }

  /**
   * Builds, signs (with `key`, the contract owner's) and broadcasts a Stake 2.0
   * transaction through the node's intake, referencing the solidified block as java-tron's builder does.
   */
  sendStake(
    contract: StakeContract,
    key: Uint8Array,
  ): BroadcastOutcome & { readonly transaction: SignedStakeTransaction & { readonly bytes: Uint8Array } } {
    const reference = this.solidBlock;
    const signed = signStakeTransaction(
      {
        ...referenceBlockFields(reference.number, reference.id),
        expirationMs: this.head.timestampMs + DEFAULT_EXPIRATION_MS,
        timestampMs: this.#nowMs,
        contract,
      },
      key,
    );
    return { ...this.broadcastHex(bytesToHex(signed.bytes)), transaction: signed };
  }

  #payer(from: SendUsdtOptions['from']): PayerKey {
    if (from === undefined) return this.payers[0]!;
    if (typeof from === 'object') return from;
    const payer = this.payers.find((candidate) => candidate.address === from);
    if (!payer) throw new Error(`${from} is not a payer of this chain; pass its key`);
    return payer;
  }

  // ---- setup knobs ----

  /** Credits TRX (activating the account) and/or mints USDT, outside any block: for test setup. */
  faucet(address: TronAddress, amounts: { readonly trxSun?: bigint; readonly usdt?: bigint }): void {
    const trxSun = amounts.trxSun ?? 0n;
    const usdt = amounts.usdt ?? 0n;
    if (trxSun < 0n || usdt < 0n) throw new RangeError('faucet amounts are ≥ 0');
    if (trxSun > 0n) {
      this.state.activate(address, this.#nowMs);
      this.state.addTrx(address, trxSun);
    }
    if (usdt > 0n) this.state.addUsdt(address, usdt);
  }

  /** Tether's issuer blacklist: transfers from or to a listed address revert. */
  setBlacklisted(address: TronAddress, listed: boolean): void {
    if (listed) this.state.usdtBlacklist.add(address);
    else this.state.usdtBlacklist.delete(address);
  }

  /** The USDT contract's dynamic energy factor from now on (1/10,000), as a maintenance cycle moves it on mainnet. */
  setUsdtEnergyFactor(factor: number): void {
    checkEnergyFactor(factor);
    this.state.usdtEnergyFactor = factor;
  }

  setPaused(paused: boolean): void {
    this.state.usdtPaused = paused;
  }

  /**
   * The next USDT transfer to `address` (from anyone) ends so, once:
   * `revert` / `out_of_energy` when a block runs it (fee charged, no log),
   * `never_included` when it is broadcast (answered SUCCESS, never pooled).
   * Energy estimates do not see it: the failure comes as a surprise, as on
   * mainnet when state changes between the estimate and the block. `null` disarms.
   */
  armNextTransfer(address: TronAddress, outcome: NextTransferOutcome | null, owner?: string): void {
    if (owner !== undefined) {
      const key = ownedOutcomeKey(owner, address);
      if (outcome === null) this.state.ownedTransferOutcomes.delete(key);
      else this.state.ownedTransferOutcomes.set(key, outcome);
    } else if (outcome === null) this.state.nextTransferOutcomes.delete(address);
    else this.state.nextTransferOutcomes.set(address, outcome);
  }

  /**
   * A fresh address (20 random bytes, no key anyone holds) that belongs to `owner`: what a
   * sandbox shop may blacklist and fund, so neither reaches an address another shop uses.
   */
  makeOwnedAddress(owner: string): TronAddress {
    const address = tronAddressFromEvm(randomBytes(20));
    this.#addressOwners.set(address, owner);
    // The oldest is forgotten first: it can then be blacklisted or funded by nobody but the operator.
    if (this.#addressOwners.size > OWNED_ADDRESSES_MAX)
      this.#addressOwners.delete(this.#addressOwners.keys().next().value!);
    return address;
  }

  /** The owner an address was made for (makeOwnedAddress), if any. */
  ownerOfAddress(address: TronAddress): string | undefined {
    return this.#addressOwners.get(address);
  }

  /** Declares whose the transaction `txId` is (before its broadcast): outcomes armed for that owner then apply to it. */
  declareOwner(txId: string, owner: string): void {
    this.state.declareOwner(txId.toLowerCase(), owner);
  }

  /**
   * Takes an account's TRX away, outside any block (an account that spent it
   * all); returns how much. What the account's transactions already in the pool
   * may burn (their fee_limit, bandwidth and TRX sent) stays: a transfer broadcast
   * before the drain, perhaps someone else's from a shared wallet, still lands as it would have.
   */
  drainTrx(address: TronAddress): bigint {
    const balance = this.state.account(address)?.balanceSun ?? 0n;
    const reserved = this.#pendingSpendSun(address);
    const drained = balance > reserved ? balance - reserved : 0n;
    if (drained > 0n) this.state.addTrx(address, -drained);
    return drained;
  }

  /** The most TRX the pool's transactions from `address` can take from it. */
  #pendingSpendSun(address: TronAddress): bigint {
    let sun = 0n;
    for (const { transaction, sizeBytes } of this.#pool) {
      if (ownerOf(transaction) !== address) continue;
      sun += BigInt(sizeBytes) * this.parameters.bandwidthPriceSun + this.parameters.createNewAccountFeeSun;
      if (isTrxTransfer(transaction)) sun += transaction.raw.amountSun;
      else if (isContractCall(transaction)) sun += transaction.raw.feeLimitSun;
      else if (transaction.raw.contract.type === 'FreezeBalanceV2Contract')
        sun += transaction.raw.contract.frozenBalanceSun;
    }
    return sun;
  }

  /**
   * The parties of the transactions in the newest `depth` blocks (what a reorg of
   * that depth would orphan), with their declared owners: whoever reorganises a
   * shared chain checks first that nobody else's transfer is among them.
   */
  transactionsInNewest(depth: number): TransactionParties[] {
    const blocks = this.#blocks.slice(Math.max(0, this.#blocks.length - depth));
    return blocks.flatMap((block) => block.transactions.map((included) => this.#partiesOf(included.transaction)));
  }

  #partiesOf(transaction: ChainTransaction): TransactionParties {
    const owner = this.state.transactionOwners.get(transaction.txId);
    let to: TronAddress | undefined;
    if (isTrxTransfer(transaction)) to = transaction.raw.toAddress;
    else if (isContractCall(transaction)) {
      const call = decodeTransferCalldata(transaction.raw.data);
      if (call.ok) to = call.to;
    } else if ('receiverAddress' in transaction.raw.contract) to = transaction.raw.contract.receiverAddress;
    return {
      txId: transaction.txId,
      from: ownerOf(transaction),
      ...(to === undefined ? {} : { to }),
      ...(owner === undefined ? {} : { owner }),
    };
  }

  // ---- forks ----

  /**
   * Orphans the newest `depth` blocks (all above the solidified block, so
   * depth ≤ solidityDepth), undoes what they did, and produces a new branch
   * from their parent. Their transactions go back to the pool (re-checked:
   * one whose TaPoS named an orphaned block, or that expired, is dropped) or
   * are forgotten, so the same bytes may be broadcast again.
   */
  reorg(depth: number, options: ReorgOptions = {}): { orphaned: SimulatedBlock[]; replacement: SimulatedBlock[] } {
    const newBlocks = options.newBlocks ?? depth;
    if (
      !Number.isSafeInteger(depth) ||
      depth < 1 ||
      depth > this.parameters.solidityDepth ||
      depth > this.head.number
    ) {
      throw new RangeError(
        `reorg depth must be 1..${Math.min(this.parameters.solidityDepth, this.head.number)} (never a solidified block), got ${depth}`,
      );
    }
    if (!Number.isSafeInteger(newBlocks) || newBlocks < 0 || newBlocks > 1_000)
      throw new RangeError(`reorg newBlocks: ${newBlocks}`);
    const orphaned = this.#blocks.splice(this.#blocks.length - depth, depth);
    for (const block of [...orphaned].reverse()) this.state.undo(block.journal);
    const orphanedTransactions = orphaned.flatMap((block) => block.transactions);
    for (const included of orphanedTransactions) this.#onChain.delete(included.transaction.txId);
    this.#forks += 1;

    if (options.reinclude ?? true) {
      const view = this.#intakeView();
      const back = orphanedTransactions
        .map(({ transaction, sizeBytes }) => ({ transaction, sizeBytes }))
        .filter((incoming) => checkIntake(view, incoming, { skipDuplicateCheck: true }) === null);
      this.#pool = [...back, ...this.#pool];
    } else {
      for (const included of orphanedTransactions) this.#recent.delete(included.transaction.txId);
    }
    const replacement: SimulatedBlock[] = [];
    const squeezed =
      options.notAfterMs === undefined ? undefined : this.squeezedTimestamps(newBlocks, options.notAfterMs);
    for (let index = 0; index < newBlocks; index += 1) {
      const timestampMs = squeezed?.[index] ?? this.head.timestampMs + this.parameters.blockIntervalMs;
      this.#nowMs = Math.max(this.#nowMs, timestampMs);
      replacement.push(this.#produceBlock(timestampMs));
    }
    return { orphaned, replacement };
  }

  /** For tests that build their own transactions: the node's view of a decoded transaction. */
  incoming(transaction: ChainTransaction): IncomingTransaction {
    return incomingOf(this.parameters, transaction);
  }

  // ---- persistence ----

  snapshot(): ChainSnapshot {
    const solid = this.solidNumber;
    return {
      version: 1,
      seed: this.seed,
      nowMs: this.#nowMs,
      forks: this.#forks,
      accounts: [...this.state.accounts].map(([address, account]) => [address, { ...account }] as const),
      usdtBalances: [...this.state.usdtBalances],
      usdtBlacklist: [...this.state.usdtBlacklist],
      usdtPaused: this.state.usdtPaused,
      usdtEnergyFactor: this.state.usdtEnergyFactor,
      nextTransferOutcomes: [...this.state.nextTransferOutcomes],
      ownedTransferOutcomes: [...this.state.ownedTransferOutcomes],
      addressOwners: [...this.#addressOwners],
      blocks: this.#blocks.map((block) => ({
        number: block.number,
        id: block.id,
        parentId: block.parentId,
        timestampMs: block.timestampMs,
        transactions: block.transactions.map((included) => ({
          hex: signedHex(included.transaction),
          receipt: included.receipt,
        })),
        journal: block.number > solid ? block.journal : [],
      })),
      pool: this.#pool.map((pending) => signedHex(pending.transaction)),
      prunedBlockIds: this.#prunedIds.entries(),
      recent: [...this.#recent],
      staking: {
        totalEnergyWeightTrx: this.state.totalEnergyWeightTrx,
        totalBandwidthWeightTrx: this.state.totalBandwidthWeightTrx,
        delegations: [...this.state.delegations],
        delegationIndex: [...this.state.delegationIndex],
      },
    };
  }

  #restore(snapshot: ChainSnapshot): void {
    if (snapshot.version !== 1 || snapshot.seed !== this.seed)
      throw new Error('the saved chain is of another version or seed');
    this.#nowMs = snapshot.nowMs;
    this.#forks = snapshot.forks;
    for (const [address, account] of snapshot.accounts) {
      // Files saved before staked bandwidth was tracked have stakes without its use.
      const { stake, ...rest } = account;
      this.state.accounts.set(
        address,
        stake ? { ...rest, stake: { ...stake, bandwidth: stake.bandwidth ?? UNUSED_RESOURCE } } : rest,
      );
    }
    for (const [address, balance] of snapshot.usdtBalances) this.state.usdtBalances.set(address, balance);
    for (const address of snapshot.usdtBlacklist) this.state.usdtBlacklist.add(address);
    this.state.usdtPaused = snapshot.usdtPaused;
    if (snapshot.usdtEnergyFactor !== undefined) this.state.usdtEnergyFactor = snapshot.usdtEnergyFactor;
    for (const [address, outcome] of snapshot.nextTransferOutcomes ?? [])
      this.state.nextTransferOutcomes.set(address, outcome);
    for (const [key, outcome] of snapshot.ownedTransferOutcomes ?? [])
      this.state.ownedTransferOutcomes.set(key, outcome);
    for (const [address, owner] of snapshot.addressOwners ?? []) this.#addressOwners.set(address, owner);
    for (const block of snapshot.blocks) {
      const transactions = block.transactions.map(({ hex, receipt }) => ({ ...this.#decodeSaved(hex), receipt }));
      this.#blocks.push({ ...block, transactions });
      for (const included of transactions) this.#onChain.set(included.transaction.txId, block.number);
    }
    this.#pool = snapshot.pool.map((hex) => this.#decodeSaved(hex));
    const pruned = snapshot.prunedBlockIds;
    if (pruned) pruned.ids.forEach((id, index) => this.#prunedIds.push(pruned.first + index, id));
    for (const [txId, expirationMs] of snapshot.recent) this.#recent.set(txId, expirationMs);
    if (snapshot.staking) {
      this.state.totalEnergyWeightTrx = snapshot.staking.totalEnergyWeightTrx;
      this.state.totalBandwidthWeightTrx = snapshot.staking.totalBandwidthWeightTrx;
      for (const [key, record] of snapshot.staking.delegations) this.state.delegations.set(key, record);
      for (const [key, entry] of snapshot.staking.delegationIndex) this.state.delegationIndex.set(key, entry);
    }
  }

  #decodeSaved(hex: string): IncomingTransaction {
    const decoded = decodeChainTransaction(hexToBytes(hex));
    if (!decoded.ok) throw new Error(`the saved chain holds a transaction that does not decode: ${decoded.problem}`);
    return incomingOf(this.parameters, decoded.transaction);
  }
}

function signedHex(transaction: ChainTransaction): string {
  return bytesToHex(encodeSignedTransaction(transaction.rawBytes, transaction.signatures));
}

/** A signature recovered elsewhere (chain-server's worker pool): the signer of `signature` over `txId`, undefined when nothing recovers. */
export interface RecoveredSignature {
  readonly txId: string;
  readonly signature: Uint8Array;
  readonly signer: TronAddress | undefined;
}

function recoveryKey(txId: string, signature: Uint8Array): string {
  return `${txId}:${bytesToHex(signature)}`;
}
