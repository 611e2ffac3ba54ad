// Sweeps on delegated energy (docs/sweeping.md "Delegated energy", `delegate` in
// PAYGATE_TRON_ENERGY_SOURCES): the hot wallet delegates staked energy to the
// deposit address right before its sweep (DelegateResource, lock false) and
// takes the same amount back once the sweep is final, whichever way it ended
// (UnDelegateResource). Both are outgoing transfers of the sign-once executor
// (asset ENERGY), queued in the same transaction as the sweep's state change
// they follow, so a crash anywhere neither delegates twice nor forgets to take
// the energy back.
import type { Clock } from '../../clock.ts';
import type { Db, Tx } from '../../db/transaction.ts';
import type { ChainAccess } from '../chain/crypto-chain.ts';
import { reservedEnergy } from '../energy/energy-reservations.ts';
import {
  enqueueOutgoingTransfer,
  failureColumns,
  type OutgoingOutcomeHandler,
  type OutgoingTransfer,
} from '../sending/outgoing-transfers.ts';
import { tronAddress, type TronAddress } from '../tron/address.ts';
import type { AccountResources } from '../tron/node-answers.ts';
import * as repository from './sweeping-repository.ts';
import type { SweepRow } from './sweeping-repository.ts';

const SUN_PER_TRX = 1_000_000n;
/**
 * Extra energy delegated on top of what the transfer needs, in percent: the
 * network's total energy weight moves as others stake and unstake between the
 * delegation and the sweep, and a delegation's energy moves with it.
 */
const DELEGATION_MARGIN_PERCENT = 10n;
/** UnDelegateResource sends per attempt before the attempt shows `undelegation_failed` to the operator. */
const UNDELEGATION_TRIES_MAX = 3;

/**
 * Staked sun whose energy covers `energy` more on the receiver. java-tron
 * (EnergyProcessor.calculateGlobalEnergyLimit) gives an account
 * floor(frozen TRX) × totalEnergyLimit / totalEnergyWeight, the frozen TRX
 * counting what was delegated to it; so whole TRX, rounded up, plus the margin.
 */
export function delegationSunFor(
  energy: bigint,
  network: Pick<AccountResources, 'totalEnergyLimit' | 'totalEnergyWeight'>,
): bigint {
  if (energy <= 0n) return 0n;
  const limit = BigInt(network.totalEnergyLimit);
  const weight = BigInt(network.totalEnergyWeight);
  if (limit <= 0n || weight <= 0n) throw new RangeError('the network reports no energy limit or weight');
  const withMargin = (energy * (100n + DELEGATION_MARGIN_PERCENT) + 99n) / 100n;
  const trx = (withMargin * weight + limit - 1n) / limit;
  return trx * SUN_PER_TRX;
}

/**
 * What one sweep pass may still delegate per chain: the hot wallet's delegable
 * stake less the delegations not yet on chain and less the energy reserved for
 * quoted payouts (a sweep must not take the energy a merchant's quote counted on).
 */
export interface DelegationBudget {
  /**
   * Staked sun to delegate to `address` for `energy` more, taken from the budget; 0n when the address has
   * that energy already; null when the stake cannot cover it now (the sweep burns, or waits for the stake).
   */
  take(access: ChainAccess, address: TronAddress, energy: bigint): Promise<bigint | null>;
}

export function delegationBudget(db: Db, clock: Clock): DelegationBudget {
  const left = new Map<string, bigint>();
  return {
    async take(access, address, energy) {
      const hotWallet = access.addressKey.hotWalletAddress;
      const [receiver, network] = await Promise.all([
        access.node.getAccountResources(address),
        access.node.getAccountResources(hotWallet),
      ]);
      // Energy the address already has (its own stake, a delegation by hand) is used first, as the chain does.
      const missing = energy - BigInt(Math.max(0, receiver.energyAvailable));
      if (missing <= 0n) return 0n;
      const sun = delegationSunFor(missing, network);
      let budget = left.get(access.chain);
      if (budget === undefined) {
        // getcandelegatedmaxsize: the stake not delegated yet and not covering the hot wallet's own use.
        const delegable = await access.node.getCanDelegatedMaxSize(hotWallet, 'ENERGY');
        const [pending, reserved] = await Promise.all([
          repository.pendingDelegationSun(db, access.chain),
          reservedEnergy(db, access.chain, clock.now()),
        ]);
        budget = delegable - pending - delegationSunFor(reserved, network);
      }
      if (sun > budget) {
        left.set(access.chain, budget);
        return null;
      }
      left.set(access.chain, budget - sun);
      return sun;
    },
  };
}

/** Queues the attempt's DelegateResource from the hot wallet (the caller records its id in the same transaction). */
export function enqueueDelegation(
  tx: Tx,
  clock: Clock,
  sweep: Pick<SweepRow, 'id' | 'chain' | 'address' | 'delegated_sun'>,
): Promise<OutgoingTransfer> {
  return enqueueEnergyTransfer(tx, clock, sweep, 'energy_delegation');
}

/**
 * Queues the UnDelegateResource of what the attempt delegated, once its sweep is
 * final or the attempt ended without one (in the transaction that records that).
 * Nothing when nothing was delegated: a delegation that failed moved no energy.
 */
export async function takeBackDelegation(tx: Tx, clock: Clock, sweep: SweepRow): Promise<void> {
  if (sweep.delegation_transfer_id === null || sweep.delegation_fee_sun === null) return;
  if (sweep.undelegation_status === 'pending' || sweep.undelegation_status === 'undelegated') return;
  const transfer = await enqueueEnergyTransfer(tx, clock, sweep, 'energy_undelegation');
  await repository.setUndelegation(tx, sweep.id, {
    undelegation_transfer_id: transfer.id,
    undelegation_status: 'pending',
    undelegation_attempts: sweep.undelegation_attempts + 1,
    updated_at: clock.now(),
  });
}

function enqueueEnergyTransfer(
  tx: Tx,
  clock: Clock,
  sweep: Pick<SweepRow, 'id' | 'chain' | 'address' | 'delegated_sun'>,
  purpose: 'energy_delegation' | 'energy_undelegation',
): Promise<OutgoingTransfer> {
  if (sweep.delegated_sun === null) throw new Error(`sweep ${sweep.id}: no delegated amount`);
  return enqueueOutgoingTransfer(tx, clock, {
    chain: sweep.chain,
    purpose,
    ownerId: sweep.id,
    asset: 'ENERGY',
    from: { kind: 'hot_wallet' },
    to: tronAddress(sweep.address),
    amount: sweep.delegated_sun,
  });
}

/** The executor's outcomes of delegations: on chain and final → ready (the sweeper builds the USDT transfer); failed → the attempt failed, with nothing to take back. */
export const energyDelegationOutcomes: OutgoingOutcomeHandler = {
  async onFinal(tx, clock, transfer) {
    const sweep = await repository.lockSweep(tx, transfer.ownerId);
    if (sweep?.status !== 'delegating' || sweep.delegation_transfer_id !== transfer.id) return;
    const now = clock.now();
    if (transfer.status === 'confirmed') {
      await repository.updateSweep(tx, sweep.id, 'delegating', {
        status: 'ready',
        delegation_fee_sun: transfer.feeSun ?? 0n,
        updated_at: now,
      });
      return;
    }
    await repository.updateSweep(tx, sweep.id, 'delegating', {
      status: 'failed',
      ...failureColumns(transfer),
      error_code: `delegation_${transfer.errorCode ?? 'failed'}`,
      updated_at: now,
      final_at: now,
    });
  },
};

/** The executor's outcomes of undelegations: taken back; or sent again, up to UNDELEGATION_TRIES_MAX, then `failed` for the operator. */
export const energyUndelegationOutcomes: OutgoingOutcomeHandler = {
  async onFinal(tx, clock, transfer) {
    const sweep = await repository.lockSweep(tx, transfer.ownerId);
    if (sweep?.undelegation_transfer_id !== transfer.id || sweep.undelegation_status !== 'pending') return;
    const fee = (sweep.undelegation_fee_sun ?? 0n) + (transfer.feeSun ?? 0n);
    const now = clock.now();
    if (transfer.status === 'confirmed') {
      await repository.setUndelegation(tx, sweep.id, {
        undelegation_status: 'undelegated',
        undelegation_fee_sun: fee,
        updated_at: now,
      });
      return;
    }
    const failed = { ...sweep, undelegation_status: 'failed' as const, undelegation_fee_sun: fee };
    await repository.setUndelegation(tx, sweep.id, {
      undelegation_status: 'failed',
      undelegation_fee_sun: fee,
      updated_at: now,
    });
    if (sweep.undelegation_attempts < UNDELEGATION_TRIES_MAX) await takeBackDelegation(tx, clock, failed);
  },
};
