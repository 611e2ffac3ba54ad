// Sweeping (docs/sweeping.md, docs/tron.md §4, model A): the USDT that deposits left
// on our addresses moves to the hot wallet once an address's final, unswept USDT
// reaches PAYGATE_SWEEP_THRESHOLD_USDT. An attempt:
//   1. reads the address on chain and the chain's own estimate of its USDT
//      transfer (transfer-cost.ts), and tops the address up with exactly the TRX
//      that transfer burns, minus the TRX already there (a `gas_topup` from the
//      hot wallet; when the address does not exist yet, that transfer creates it
//      and the hot wallet pays the creation fee);
//   2. once the top-up is final, sends the address's final, unswept USDT (never
//      more than the balance the chain reports then) to the hot wallet (a `sweep`
//      signed with the deposit key). USDT of deposits not final yet stays.
// With `delegate` among the energy sources and enough stake on the hot wallet,
// the top-up carries only what bandwidth (and the address's creation) needs, the
// hot wallet delegates the energy before the sweep and takes it back after it
// (sweep-delegation.ts). All of these go through the sign-once executor (crypto/sending/). A sweep moves no
// merchant money and no ledger money: the USDT was the hot wallet's ledger
// account's on both addresses; only the TRX burnt is booked (network_costs), by
// the executor. The merchant's credit never waits for any of this.
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { inTransaction, isUniqueViolation, type Db, type Tx } from '../../db/transaction.ts';
import { NotFoundError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { formatMinor } from '../../money/decimal.ts';
import type { CryptoChain, ChainAccess } from '../chain/crypto-chain.ts';
import { addressDerivations, isDepositAddress, recordSweptUsdt } from '../receiving/receiving-service.ts';
import {
  enqueueOutgoingTransfer,
  failureColumns,
  type OutgoingOutcomeHandler,
  type OutgoingTransfer,
} from '../sending/outgoing-transfers.ts';
import { estimateUsdtTransferCost } from '../sending/transfer-cost.ts';
import { tronAddress } from '../tron/address.ts';
import { SWEEP_MAX_CONSECUTIVE_FAILURES } from './sweep-custody.ts';
import { delegationBudget, enqueueDelegation, takeBackDelegation, type DelegationBudget } from './sweep-delegation.ts';
import * as repository from './sweeping-repository.ts';
import type { SweepRow } from './sweeping-repository.ts';
import type { SweepStatus, UndelegationStatus } from './sweeping-tables.ts';

/** Ten minutes after the first failure, then twenty. */
export const SWEEP_FIRST_RETRY_DELAY_SECONDS = 600;
/** Attempts started, and ready attempts built, per pass. */
const SWEEP_BATCH = 50;
/** Attempts whose energy was not taken back, logged per scan. */
const UNDELEGATION_FAILURES_LOGGED = 20;

export interface SweepingDeps {
  readonly db: Db;
  readonly clock: Clock;
  /**
   * Without `tronEnergySources` (or without `delegate` in it) every sweep burns TRX for its energy. With
   * `delegate`, a sweep the stake cannot cover burns only when `burn` is a source and its burn is within
   * `tronMaxBurnSun`; otherwise it waits for the stake.
   */
  readonly config: Pick<Config, 'sweepThresholdMicro'> & Partial<Pick<Config, 'tronEnergySources' | 'tronMaxBurnSun'>>;
  readonly logger: Logger;
  readonly chain: CryptoChain;
}

export interface SweepPassResult {
  /** Attempts begun (a top-up queued, or the USDT transfer when no top-up was needed). */
  readonly started: number;
  /** USDT transfers queued for attempts whose top-up became final. */
  readonly built: number;
  /** Addresses over the threshold left for a later pass: the stake cannot cover them now and burning is not allowed. */
  readonly waitingForStake: number;
}

const MODES: readonly ChainAccess['keyId'][] = ['sandbox', 'live'];

/** Attempts whose top-up is final, oldest first, with the key that derived their address (receiving's). */
async function readySweeps(db: Db, limit: number): Promise<repository.ReadySweep[]> {
  const sweeps = await repository.findReadySweeps(db, limit);
  const derivations = await addressDerivations(
    db,
    sweeps.map((sweep) => sweep.address),
  );
  return sweeps.flatMap((sweep) => {
    const derivation = derivations.get(sweep.address);
    return derivation ? [{ ...sweep, ...derivation }] : [];
  });
}

/** One pass of the sweeper: build the USDT transfers of attempts whose top-up is final, then begin attempts on addresses over the threshold. */
export async function runSweepPass(
  deps: SweepingDeps,
  options: { readonly scanCandidates?: boolean } = {},
): Promise<SweepPassResult> {
  let built = 0;
  for (const ready of await readySweeps(deps.db, SWEEP_BATCH)) {
    try {
      const access = await deps.chain.forMode(ready.key_id);
      if (!(await access.usdtDecimals.confirmed(deps.clock, deps.logger))) continue;
      if (await buildSweepTransfer(deps, access, ready)) built += 1;
    } catch (error) {
      deps.logger.error(
        { err: error, sweep: ready.id, address: ready.address },
        'sweep: building the USDT transfer failed; the next pass tries again',
      );
    }
  }
  let started = 0;
  let waitingForStake = 0;
  if (options.scanCandidates === false) return { started, built, waitingForStake };
  await logFailedUndelegations(deps);
  const budget = delegationBudget(deps.db, deps.clock);
  for (const mode of MODES) {
    if (mode === 'live' && !deps.chain.liveConfigured) continue;
    const candidates = await repository.findSweepCandidates(deps.db, {
      keyId: mode,
      thresholdMicro: deps.config.sweepThresholdMicro,
      now: deps.clock.now(),
      limit: SWEEP_BATCH,
      retry: {
        maxConsecutiveFailures: SWEEP_MAX_CONSECUTIVE_FAILURES,
        firstRetryDelaySeconds: SWEEP_FIRST_RETRY_DELAY_SECONDS,
      },
    });
    if (candidates.length === 0) continue;
    const access = await deps.chain.forMode(mode);
    // Balances are read as micro-USDT only once the contract has said it has 6 decimals.
    if (!(await access.usdtDecimals.confirmed(deps.clock, deps.logger))) continue;
    for (const candidate of candidates) {
      try {
        const outcome = await startSweep(deps, access, candidate, budget);
        if (outcome === 'started') started += 1;
        else if (outcome === 'waiting_for_stake') waitingForStake += 1;
      } catch (error) {
        // One address's trouble (its node answer, a race) must not stop the others.
        deps.logger.error(
          { err: error, address: candidate.address },
          'sweep: starting an attempt failed; the next pass tries again',
        );
      }
    }
  }
  if (waitingForStake > 0)
    deps.logger.info(
      { waitingForStake },
      'sweep: addresses wait for the hot wallet’s staked energy (burning their energy is off or over PAYGATE_TRON_MAX_BURN_TRX)',
    );
  return { started, built, waitingForStake };
}

/**
 * Whether a sweep the stake cannot cover may burn instead: `burn` among the sources and what it
 * burns (its energy and bytes) within the cap, as the executor's cap judges it. Otherwise starting it
 * would top the address up for a burn the executor then holds unsigned, even after the stake recovers.
 */
function mayBurn(config: SweepingDeps['config'], burnSun: bigint): boolean {
  if (!config.tronEnergySources?.has('burn')) return false;
  return config.tronMaxBurnSun === undefined || burnSun <= config.tronMaxBurnSun;
}

/** Energy the hot wallet delegated and could not take back: an operator's to look at, said at every scan until retried. */
async function logFailedUndelegations(deps: SweepingDeps): Promise<void> {
  for (const sweep of await repository.failedUndelegations(deps.db, UNDELEGATION_FAILURES_LOGGED)) {
    deps.logger.error(
      {
        sweep: sweep.id,
        address: sweep.address,
        delegated_sun: sweep.delegated_sun?.toString(),
        undelegation_transfer: sweep.undelegation_transfer_id,
      },
      'sweep: the energy delegated to this address was not taken back; `paygate crypto sweeps retry --address` sends the undelegation again',
    );
  }
}

/**
 * Begins an attempt on one address: reads it on chain, and queues the top-up of
 * exactly the TRX its USDT transfer needs (or, when it already holds that much,
 * the USDT transfer itself). `skipped` when there is nothing to do or another
 * sweeper began one first (the one-in-flight index); `waiting_for_stake` when on
 * delegated energy the stake cannot cover it now and it may not burn.
 */
async function startSweep(
  deps: SweepingDeps,
  access: ChainAccess,
  candidate: repository.SweepCandidate,
  budget: DelegationBudget,
): Promise<'started' | 'skipped' | 'waiting_for_stake'> {
  const address = tronAddress(candidate.address);
  const hotWallet = access.addressKey.hotWalletAddress;
  const [usdtOnChain, account] = await Promise.all([
    access.node.getUsdtBalance(address),
    access.node.getAccount(address),
  ]);
  if (usdtOnChain <= 0n) {
    // Our records say final USDT is here, the chain says none: recorded as a failed attempt, so the
    // back-off applies, the address cannot crowd the others out, and three in a row show it stuck.
    deps.logger.warn(
      { address, unsweptFinal: candidate.unswept_final_micro.toString() },
      'sweep: final USDT is unswept here by our records, the chain says 0',
    );
    const now = deps.clock.now();
    await inTransaction(deps.db, (tx) =>
      repository.insertSweep(tx, {
        id: newId('sweep'),
        chain: access.chain,
        address: candidate.address,
        status: 'failed',
        unswept_final_micro: candidate.unswept_final_micro,
        energy: 0n,
        bandwidth: 0n,
        estimated_fee_sun: 0n,
        trx_before_sun: account.balanceSun,
        activated_before: account.activated,
        topup_sun: 0n,
        error_code: 'nothing_to_sweep',
        error_message: 'the chain reports no USDT on the address',
        created_at: now,
        updated_at: now,
        final_at: now,
      }),
    );
    return 'skipped';
  }
  const amount = sweepAmount(candidate.unswept_final_micro, usdtOnChain);
  const cost = await estimateUsdtTransferCost(access, { from: address, to: hotWallet, amount }, deps.clock);
  const delegation = deps.config.tronEnergySources?.has('delegate')
    ? await budget.take(access, address, cost.energy)
    : 0n;
  if (delegation === null && !mayBurn(deps.config, cost.totalSun - cost.activationSun)) return 'waiting_for_stake';
  const delegatedSun = delegation === null || delegation === 0n ? null : delegation;
  // What the deposit address itself burns: energy and bandwidth, or bandwidth only on delegated energy. An
  // activation fee in the estimate is the recipient's (the hot wallet exists, so it is 0); the address's own
  // creation is paid by the top-up's sender.
  const energySun = delegatedSun === null ? 0n : cost.energySun;
  const burnSun = cost.totalSun - cost.activationSun - energySun;
  let topupSun = burnSun > account.balanceSun ? burnSun - account.balanceSun : 0n;
  // DelegateResource needs its receiver to exist (java-tron DelegateResourceActuator: "Account[…] not exists").
  if (delegatedSun !== null && !account.activated && topupSun === 0n) topupSun = 1n;
  const now = deps.clock.now();
  const id = newId('sweep');
  try {
    return await inTransaction(deps.db, async (tx): Promise<'started'> => {
      const base = {
        id,
        chain: access.chain,
        address: candidate.address,
        unswept_final_micro: candidate.unswept_final_micro,
        energy: cost.energy,
        bandwidth: cost.bandwidth,
        estimated_fee_sun: burnSun,
        trx_before_sun: account.balanceSun,
        activated_before: account.activated,
        topup_sun: topupSun,
        delegated_sun: delegatedSun,
        created_at: now,
        updated_at: now,
      };
      if (topupSun === 0n && delegatedSun !== null) {
        const delegation = await enqueueDelegation(tx, deps.clock, base);
        await repository.insertSweep(tx, { ...base, status: 'delegating', delegation_transfer_id: delegation.id });
        return 'started';
      }
      if (topupSun === 0n) {
        const transfer = await enqueueSweepTransfer(
          tx,
          deps.clock,
          access,
          id,
          candidate.address,
          Number(candidate.derivation_index),
          amount,
        );
        await repository.insertSweep(tx, {
          ...base,
          status: 'sweeping',
          amount_micro: amount,
          sweep_transfer_id: transfer.id,
        });
        return 'started';
      }
      const topup = await enqueueOutgoingTransfer(tx, deps.clock, {
        chain: access.chain,
        purpose: 'gas_topup',
        ownerId: id,
        asset: 'TRX',
        from: { kind: 'hot_wallet' },
        to: address,
        amount: topupSun,
      });
      await repository.insertSweep(tx, { ...base, status: 'topping_up', topup_transfer_id: topup.id });
      return 'started';
    });
  } catch (error) {
    if (isUniqueViolation(error, repository.ONE_IN_FLIGHT_INDEX)) return 'skipped';
    throw error;
  }
}

/**
 * Final, unswept USDT, never more than the chain's balance: USDT of a deposit
 * that is not final (it could still be rolled back) is not ours to move yet,
 * and the chain's balance bounds what a transfer can move at all.
 */
function sweepAmount(unsweptFinalMicro: bigint, usdtOnChain: bigint): bigint {
  return unsweptFinalMicro < usdtOnChain ? unsweptFinalMicro : usdtOnChain;
}

/**
 * The USDT transfer of an attempt whose top-up is final: the final, unswept USDT
 * as the records say now, capped by the chain's balance (deposits not final yet,
 * or arriving later, wait for the next attempt).
 */
async function buildSweepTransfer(
  deps: SweepingDeps,
  access: ChainAccess,
  ready: repository.ReadySweep,
): Promise<boolean> {
  const usdtOnChain = await access.node.getUsdtBalance(tronAddress(ready.address));
  return inTransaction(deps.db, async (tx) => {
    const sweep = await repository.lockSweep(tx, ready.id);
    if (sweep?.status !== 'ready') return false;
    const now = deps.clock.now();
    const amount = sweepAmount(await repository.unsweptFinalMicro(tx, sweep.address), usdtOnChain);
    if (amount <= 0n) {
      const failed = await repository.updateSweep(tx, sweep.id, 'ready', {
        status: 'failed',
        error_code: 'nothing_to_sweep',
        error_message:
          usdtOnChain <= 0n ? 'the chain reports no USDT on the address' : 'no final, unswept USDT on the address',
        updated_at: now,
        final_at: now,
      });
      if (failed) await takeBackDelegation(tx, deps.clock, failed);
      return false;
    }
    const transfer = await enqueueSweepTransfer(
      tx,
      deps.clock,
      access,
      sweep.id,
      sweep.address,
      Number(ready.derivation_index),
      amount,
    );
    await repository.updateSweep(tx, sweep.id, 'ready', {
      status: 'sweeping',
      amount_micro: amount,
      sweep_transfer_id: transfer.id,
      updated_at: now,
    });
    return true;
  });
}

function enqueueSweepTransfer(
  tx: Tx,
  clock: Clock,
  access: ChainAccess,
  sweepId: string,
  address: string,
  derivationIndex: number,
  amount: bigint,
): Promise<OutgoingTransfer> {
  return enqueueOutgoingTransfer(tx, clock, {
    chain: access.chain,
    purpose: 'sweep',
    ownerId: sweepId,
    asset: 'USDT',
    from: { kind: 'deposit_address', address: tronAddress(address), derivationIndex },
    to: access.addressKey.hotWalletAddress,
    amount,
  });
}

function failurePatch(transfer: OutgoingTransfer, now: Date) {
  return {
    status: 'failed' as const,
    ...failureColumns(transfer),
    updated_at: now,
    final_at: now,
  };
}

/**
 * The executor's outcomes of top-ups: final and successful → ready (the sweeper builds the USDT transfer), or on
 * delegated energy → delegating (its DelegateResource queued in this transaction); failed → the attempt failed.
 */
export const gasTopupOutcomes: OutgoingOutcomeHandler = {
  async onFinal(tx, clock, transfer) {
    const sweep = await repository.lockSweep(tx, transfer.ownerId);
    if (sweep?.status !== 'topping_up' || sweep.topup_transfer_id !== transfer.id) return;
    const now = clock.now();
    const fee = { topup_fee_sun: transfer.feeSun };
    if (transfer.status === 'confirmed' && sweep.delegated_sun !== null) {
      const delegation = await enqueueDelegation(tx, clock, sweep);
      await repository.updateSweep(tx, sweep.id, 'topping_up', {
        ...fee,
        status: 'delegating',
        delegation_transfer_id: delegation.id,
        updated_at: now,
      });
    } else if (transfer.status === 'confirmed')
      await repository.updateSweep(tx, sweep.id, 'topping_up', { ...fee, status: 'ready', updated_at: now });
    else await repository.updateSweep(tx, sweep.id, 'topping_up', { ...fee, ...failurePatch(transfer, now) });
  },
};

/** The executor's outcomes of the USDT transfers: the txID once broadcast; completed or failed when final, and then any delegated energy taken back. */
export const sweepOutcomes: OutgoingOutcomeHandler = {
  async onSubmitted(tx, clock, transfer) {
    if (transfer.txId === null) return;
    await repository.updateSweepTxHash(tx, transfer.ownerId, transfer.txId, clock.now());
  },
  async onFinal(tx, clock, transfer) {
    const sweep = await repository.lockSweep(tx, transfer.ownerId);
    if (sweep?.status !== 'sweeping' || sweep.sweep_transfer_id !== transfer.id) return;
    const now = clock.now();
    const onChain = { sweep_fee_sun: transfer.feeSun, tx_hash: transfer.txId };
    const final =
      transfer.status === 'confirmed'
        ? await repository.updateSweep(tx, sweep.id, 'sweeping', {
            ...onChain,
            status: 'completed',
            amount_micro: transfer.amount,
            updated_at: now,
            final_at: now,
          })
        : await repository.updateSweep(tx, sweep.id, 'sweeping', { ...onChain, ...failurePatch(transfer, now) });
    if (final?.status === 'completed') await recordSweptUsdt(tx, final.address, transfer.amount);
    if (final) await takeBackDelegation(tx, clock, final);
  },
};

/** An address's attempts, newest first. */
export async function sweepsOfAddress(db: Db, address: string): Promise<SweepRow[]> {
  return repository.sweepsOfAddress(db, address);
}

/**
 * An operator's retry of a stuck (or retrying) address: its failures stop
 * counting, so the next pass begins an attempt at once if it is over the
 * threshold, and energy whose undelegation failed is sent back again.
 * Returns how many failures were cleared. Not ours: NotFoundError.
 */
export async function retrySweepsOfAddress(deps: Pick<SweepingDeps, 'db' | 'clock'>, address: string): Promise<number> {
  if (!(await isDepositAddress(deps.db, address)))
    throw new NotFoundError(`${address} is not one of our deposit addresses.`);
  return inTransaction(deps.db, async (tx) => {
    for (const sweep of await repository.lockFailedUndelegationsOf(tx, address))
      await takeBackDelegation(tx, deps.clock, sweep);
    return repository.clearFailures(tx, address, deps.clock.now());
  });
}

/** An attempt as operators read it (`paygate crypto sweeps list`): amounts as decimal strings, TRX in TRX. */
export interface SweepView {
  readonly sweep_id: string;
  readonly address: string;
  readonly status: SweepStatus;
  readonly usdt_unswept_final: string;
  readonly usdt_moved: string | null;
  readonly activated_before: boolean;
  readonly trx_before: string;
  readonly trx_estimated_fee: string;
  readonly trx_topup: string;
  readonly trx_topup_fee: string | null;
  readonly trx_sweep_fee: string | null;
  /** Staked TRX whose energy the hot wallet delegated for the sweep; null when it burned. */
  readonly trx_delegated: string | null;
  /** The energy taken back after it: pending, undelegated, failed (an operator's look); null without a delegation on chain. */
  readonly undelegation: UndelegationStatus | null;
  readonly tx_hash: string | null;
  readonly error: { readonly code: string; readonly message: string | null } | null;
  readonly cleared: boolean;
  readonly created_at: string;
  readonly final_at: string | null;
}

/** 1 TRX = 10^6 sun, the scale USDT has too. */
const decimal6 = (value: bigint) => formatMinor(value, 'USDT').replace(/\.?0+$/, '');

export function sweepView(row: SweepRow): SweepView {
  return {
    sweep_id: row.id,
    address: row.address,
    status: row.status,
    usdt_unswept_final: decimal6(row.unswept_final_micro),
    usdt_moved: row.status === 'completed' && row.amount_micro !== null ? decimal6(row.amount_micro) : null,
    activated_before: row.activated_before,
    trx_before: decimal6(row.trx_before_sun),
    trx_estimated_fee: decimal6(row.estimated_fee_sun),
    trx_topup: decimal6(row.topup_sun),
    trx_topup_fee: row.topup_fee_sun === null ? null : decimal6(row.topup_fee_sun),
    trx_sweep_fee: row.sweep_fee_sun === null ? null : decimal6(row.sweep_fee_sun),
    trx_delegated: row.delegated_sun === null ? null : decimal6(row.delegated_sun),
    undelegation: row.undelegation_status,
    tx_hash: row.tx_hash,
    error: row.error_code === null ? null : { code: row.error_code, message: row.error_message },
    cleared: row.cleared,
    created_at: row.created_at.toISOString(),
    final_at: row.final_at?.toISOString() ?? null,
  };
}
