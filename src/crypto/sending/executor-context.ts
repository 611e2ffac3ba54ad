// What every step of the sign-once executor's pass shares: its options, the
// pass's counters, the leader token and the test hook that stops a pass.
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/transaction.ts';
import type { LedgerBook } from '../../ledger/ledger-service.ts';
import type { TransferOwnersDeclaration } from '../chain/crypto-chain.ts';
import type { HotWalletTopUp } from '../chain/sandbox-faucet.ts';
import type { UsdtTransferEnergy } from '../chain/transfer-energy.ts';
import type { EnergyManager } from '../energy/energy-manager.ts';
import type { DepositSigningKey } from '../keys/hd-keys.ts';
import type { TronAddress } from '../tron/address.ts';
import type { TronNodeClient } from '../tron/node-client.ts';
import type { OutflowCap } from './outflow-cap.ts';
import { nextTimestampMs } from './planner.ts';
import type { OutgoingOutcomeHandler, OutgoingPurpose } from './outgoing-transfers.ts';
import type { SigningPool } from './signing-pool.ts';
import type { ChainName } from './sending-tables.ts';

/** Where a test may stop a pass, as a crash would. */
export type ExecutorStep = 'after-sign' | 'after-broadcast' | 'before-finish' | 'inside-finish';

export interface ExecutorOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly chain: ChainName;
  readonly node: TronNodeClient;
  /** The energy of a USDT transfer on this chain: the chain access's cache, which quotes share (chain/transfer-energy.ts). */
  readonly transferEnergy: UsdtTransferEnergy;
  readonly signingKey: () => Promise<DepositSigningKey>;
  readonly hotWallet: TronAddress;
  /** The TRC20 USDT contract transfers call. */
  readonly usdtContract: TronAddress;
  readonly handlers: Partial<Record<OutgoingPurpose, OutgoingOutcomeHandler>>;
  /** micro-USDT per TRX: chain costs are booked at this rate. */
  readonly trxUsdtRateMicro: bigint;
  readonly maxInFlight: number;
  readonly maxAttempts: number;
  /** How long a transfer may wait for the sending address's funds before it fails. */
  readonly fundsWaitSeconds: number;
  /** Sandbox only: tops the hot wallet up when it is short (chain/sandbox-faucet.ts; docs/payouts.md). */
  readonly topUpHotWallet?: HotWalletTopUp;
  /** Sandbox only: tells the simulated chain the shop of each transfer before its broadcast (chain/crypto-chain.ts). */
  readonly declareTransferOwners?: TransferOwnersDeclaration;
  readonly leaderToken?: string;
  /** How long a leader's lease lasts without renewal; LEASE_MS by default. */
  readonly leaseMs?: number;
  /**
   * Run a USDT transfer as a constant call before signing it: a blacklisted party
   * then fails `address_blacklisted` without spending a fee, and the fee limit follows
   * the energy the call used. Default (undefined): only for a recipient no confirmed
   * transfer of this chain was ever sent to (one indexed look-up per pass; no node
   * request for known recipients). true: every USDT transfer; false: none (a
   * blacklisted recipient then costs one reverted transaction, classified after the fact).
   */
  readonly dryRunBeforeSigning?: boolean;
  /** The most energy one USDT transfer may take (PAYGATE_TRON_TRANSFER_ENERGY_MAX): above it the transfer waits, as for funds. */
  readonly transferEnergyMax?: bigint;
  /** The most TRX (sun) one transfer may burn (PAYGATE_TRON_MAX_BURN_TRX): above it the transfer waits, unsigned, and the operator is told. Absent: no cap. */
  readonly maxBurnSun?: bigint;
  /** Where a USDT transfer's energy comes from (crypto/energy/): absent, its own energy and then TRX burned. */
  readonly energyManager?: EnergyManager;
  /** The book's hourly outflow cap (outflow-cap.ts): transfers past it stay queued until the window allows them. Absent: no cap. */
  readonly outflowCap?: OutflowCap;
  /** Where transactions are signed: a worker-thread pool (signing-pool.ts; the caller closes it), or this thread (default). */
  readonly signing?: SigningPool;
  /** Whether this chain's signing is paused (custody reconciliation found a shortfall): queued transfers then wait, unsigned. */
  readonly signingPaused?: () => Promise<boolean>;
  /** TEST-ONLY: called (and awaited) at each step; throwing there stops the pass as a crash would, waiting there pauses it. */
  readonly onStep?: (step: ExecutorStep) => void | Promise<void>;
}

export interface ExecutorPassResult {
  readonly leader: boolean;
  signed: number;
  broadcast: number;
  rebroadcast: number;
  confirmed: number;
  failed: number;
  expiredAttempts: number;
  /** Transfers left queued because the sending address is short. */
  waitingForFunds: number;
  /** Transfers left queued because they would burn more TRX than the cap. */
  waitingForBurnCap: number;
  /** Transfers found unsignable this pass (the key does not derive their sending address): held, unsigned. */
  unsignable: number;
  blocksScanned: number;
  /** Milliseconds per step of the pass (for the benchmark). */
  readonly timings: Record<string, number>;
}

export function newPassResult(leader: boolean): ExecutorPassResult {
  return {
    leader,
    signed: 0,
    broadcast: 0,
    rebroadcast: 0,
    confirmed: 0,
    failed: 0,
    expiredAttempts: 0,
    waitingForFunds: 0,
    waitingForBurnCap: 0,
    unsignable: 0,
    blocksScanned: 0,
    timings: {},
  };
}

/** One executor's options with what its steps derive from them once. */
export interface ExecutorContext extends ExecutorOptions {
  readonly token: string;
  readonly book: LedgerBook;
  step(name: ExecutorStep): Promise<void>;
  /** The build time of the next transaction this executor signs (planner.ts nextTimestampMs). */
  nextTimestampMs(): number;
}

export function executorContext(options: ExecutorOptions, token: string): ExecutorContext {
  let lastTimestampMs = 0;
  return {
    ...options,
    token,
    book: options.chain === 'tron-sandbox' ? 'sandbox' : 'live',
    step: async (name) => {
      await options.onStep?.(name);
    },
    nextTimestampMs: () => (lastTimestampMs = nextTimestampMs(lastTimestampMs, options.clock.now().getTime())),
  };
}

/** TEST-ONLY: what a test's onStep throws to stop a pass as a crash would (never swallowed by the per-transfer fallback). */
export class ExecutorStepCrash extends Error {
  override readonly name = 'ExecutorStepCrash';
}

export function isStepCrash(error: unknown): boolean {
  return error instanceof ExecutorStepCrash;
}

/** Runs `work` over `items`, at most `limit` at a time. */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next]!;
      next += 1;
      await work(item);
    }
  });
  await Promise.all(runners);
}

/** Node requests (broadcasts, dry runs, look-ups) in flight at once. */
export const NODE_CONCURRENCY = 24;
