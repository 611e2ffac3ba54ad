// The hot-wallet ceiling (docs/payouts.md "Bounding the flow"): the live hot
// wallet keeps at most PAYGATE_TRON_HOT_WALLET_CEILING_USDT of free USDT (what it holds beyond the USDT its queued and in-flight transfers will
// still send). Above it the surplus is reported — a warning in the log, the
// paygate_hot_wallet_surplus_usdt gauge, `paygate crypto hot-wallet` — and, when
// PAYGATE_TRON_COLD_ADDRESS is set, moved there through the sign-once executor
// (a `cold_storage` outgoing transfer), one move per book at a time, once it is
// worth a transfer's fee (at least PAYGATE_SWEEP_THRESHOLD_USDT). The USDT moved
// stays in custody: the ledger's hot_wallet account stands for every address we
// control, the cold one included, so no ledger transfer is written and no
// merchant balance changes; the executor books the TRX the transfer burnt
// (network_fees → network_costs) like every other.
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { inTransaction, isUniqueViolation, type Db } from '../../db/transaction.ts';
import { newId } from '../../ids.ts';
import { formatMinor } from '../../money/decimal.ts';
import type { ChainAccess, CryptoChain } from '../chain/crypto-chain.ts';
import {
  enqueueOutgoingTransfer,
  failureColumns,
  openHotWalletUsdt,
  type OutgoingOutcomeHandler,
} from '../sending/outgoing-transfers.ts';
import { tronAddress } from '../tron/address.ts';
import * as repository from './cold-storage-repository.ts';
import type { ColdMoveRow } from './cold-storage-repository.ts';

export interface ColdStorageDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly config: Pick<Config, 'tronHotWalletCeilingMicro' | 'tronColdAddress' | 'sweepThresholdMicro'>;
  readonly logger: Logger;
  readonly chain: CryptoChain;
  readonly metrics?: Registry;
}

/** One book's hot wallet against its ceiling, amounts in micro-USDT. */
export interface HotWalletPosition {
  readonly book: ChainAccess['keyId'];
  readonly chain: ChainAccess['chain'];
  readonly hotWallet: string;
  readonly usdtOnChain: bigint;
  /** What its queued and in-flight transfers will still send. */
  readonly usdtCommitted: bigint;
  readonly ceiling: bigint;
  /** Free USDT above the ceiling (0 when below). */
  readonly surplus: bigint;
  readonly coldAddress: string | undefined;
  readonly moveInFlight: ColdMoveRow | undefined;
}

const MODES: readonly ChainAccess['keyId'][] = ['sandbox', 'live'];
const SURPLUS_METRIC = 'paygate_hot_wallet_surplus_usdt';

/** The position of one book's hot wallet; undefined when no ceiling is configured. */
async function hotWalletPosition(deps: ColdStorageDeps, access: ChainAccess): Promise<HotWalletPosition | undefined> {
  const ceiling = deps.config.tronHotWalletCeilingMicro;
  if (ceiling === undefined) return undefined;
  const hotWallet = access.addressKey.hotWalletAddress;
  const [usdtOnChain, usdtCommitted, moveInFlight] = await Promise.all([
    access.node.getUsdtBalance(hotWallet),
    openHotWalletUsdt(deps.db, access.chain),
    repository.moveInFlight(deps.db, access.chain),
  ]);
  const free = usdtOnChain - usdtCommitted;
  return {
    book: access.keyId,
    chain: access.chain,
    hotWallet,
    usdtOnChain,
    usdtCommitted,
    ceiling,
    surplus: free > ceiling ? free - ceiling : 0n,
    coldAddress: deps.config.tronColdAddress,
    moveInFlight,
  };
}

/** The positions of `books` (default: the sandbox, and live when configured). */
export async function hotWalletPositions(
  deps: ColdStorageDeps,
  books: readonly ChainAccess['keyId'][] = MODES,
): Promise<HotWalletPosition[]> {
  const positions: HotWalletPosition[] = [];
  for (const mode of books) {
    if (mode === 'live' && !deps.chain.liveConfigured) continue;
    const position = await hotWalletPosition(deps, await deps.chain.forMode(mode));
    if (position) positions.push(position);
  }
  return positions;
}

/**
 * One pass over `books`: reports each one's surplus, and queues its move to the cold address when
 * one is configured and none is under way. The worker watches the live book only: the sandbox hot
 * wallet is filled by the simulated chain's faucet, and reading it would start the sandbox chain
 * in a gateway that never uses it.
 */
export async function runColdStoragePass(
  deps: ColdStorageDeps,
  books: readonly ChainAccess['keyId'][] = ['live'],
): Promise<{ readonly moved: number }> {
  if (deps.config.tronHotWalletCeilingMicro === undefined) return { moved: 0 };
  const gauge = deps.metrics && surplusGauge(deps.metrics);
  let moved = 0;
  for (const position of await hotWalletPositions(deps, books)) {
    gauge?.set({ book: position.book }, Number(position.surplus) / 1e6);
    if (position.surplus === 0n) continue;
    deps.logger.warn(
      {
        book: position.book,
        hot_wallet: position.hotWallet,
        surplus: formatMinor(position.surplus, 'USDT'),
        ceiling: formatMinor(position.ceiling, 'USDT'),
        cold_address: position.coldAddress ?? null,
      },
      position.coldAddress === undefined
        ? 'the hot wallet holds more than its ceiling: move the surplus to a cold wallet (PAYGATE_TRON_COLD_ADDRESS moves it automatically)'
        : 'the hot wallet holds more than its ceiling',
    );
    if (
      position.coldAddress === undefined ||
      position.moveInFlight !== undefined ||
      position.surplus < deps.config.sweepThresholdMicro
    )
      continue;
    if (await queueMove(deps, position, position.coldAddress)) moved += 1;
  }
  return { moved };
}

async function queueMove(deps: ColdStorageDeps, position: HotWalletPosition, coldAddress: string): Promise<boolean> {
  const id = newId('coldMove');
  const now = deps.clock.now();
  try {
    await inTransaction(deps.db, async (tx) => {
      const transfer = await enqueueOutgoingTransfer(tx, deps.clock, {
        chain: position.chain,
        purpose: 'cold_storage',
        ownerId: id,
        asset: 'USDT',
        from: { kind: 'hot_wallet' },
        to: tronAddress(coldAddress),
        amount: position.surplus,
      });
      await repository.insertMove(tx, {
        id,
        chain: position.chain,
        to_address: coldAddress,
        amount_micro: position.surplus,
        hot_wallet_micro: position.usdtOnChain,
        ceiling_micro: position.ceiling,
        status: 'sending',
        transfer_id: transfer.id,
        created_at: now,
        updated_at: now,
      });
    });
  } catch (error) {
    // Another worker queued this book's move first.
    if (isUniqueViolation(error, repository.ONE_IN_FLIGHT_INDEX)) return false;
    throw error;
  }
  deps.logger.info(
    { book: position.book, move: id, amount: formatMinor(position.surplus, 'USDT'), cold_address: coldAddress },
    'hot wallet surplus queued for the cold address',
  );
  return true;
}

/** The executor's outcomes of cold-storage moves: the txID once broadcast; completed or failed when final. */
export const coldStorageOutcomes: OutgoingOutcomeHandler = {
  async onSubmitted(tx, clock, transfer) {
    const move = await repository.lockMove(tx, transfer.ownerId);
    if (move?.status !== 'sending' || transfer.txId === null) return;
    await repository.updateMove(tx, move.id, 'sending', { tx_hash: transfer.txId, updated_at: clock.now() });
  },
  async onFinal(tx, clock, transfer) {
    const move = await repository.lockMove(tx, transfer.ownerId);
    if (move?.status !== 'sending' || move.transfer_id !== transfer.id) return;
    const now = clock.now();
    const onChain = { tx_hash: transfer.txId, fee_sun: transfer.feeSun, updated_at: now, final_at: now };
    if (transfer.status === 'confirmed')
      await repository.updateMove(tx, move.id, 'sending', { ...onChain, status: 'completed' });
    else
      await repository.updateMove(tx, move.id, 'sending', {
        ...onChain,
        status: 'failed',
        ...failureColumns(transfer),
      });
  },
};

export async function recentColdMoves(db: Db, chain: ChainAccess['chain'], limit: number): Promise<ColdMoveRow[]> {
  return repository.recentMoves(db, chain, limit);
}

function surplusGauge(registry: Registry): Gauge {
  return (
    (registry.getSingleMetric(SURPLUS_METRIC) as Gauge | undefined) ??
    new Gauge({
      name: SURPLUS_METRIC,
      help: 'Free USDT in the hot wallet above PAYGATE_TRON_HOT_WALLET_CEILING_USDT, by book: for the cold wallet.',
      labelNames: ['book'],
      registers: [registry],
    })
  );
}
