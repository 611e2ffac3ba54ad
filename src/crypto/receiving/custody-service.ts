// The operators' custody view (`paygate crypto addresses`): our deposit
// addresses with their USDT and TRX balances as the chain reports them, beside
// what our records say arrived there: the deposits credited in the ledger
// (read back from the ledger's own transfers) and those held for blocked
// wallets, the transfers below the shop's minimum ignored as dust
// (deposit-dust.ts), and what sweeping moved to the hot wallet (crypto/sweeping/):
// on-chain USDT = credited + held + dust − swept + deposits not final yet (while
// a sweep's transfer is on chain but not yet final, its amount shows here too);
// any other difference needs a look.
import { findTransfer } from '../../ledger/ledger-service.ts';
import { tronAddress } from '../tron/address.ts';
import type { CryptoDeps } from '../chain/chain-module.ts';
import * as repository from './receiving-repository.ts';
import type { Db, Executor } from '../../db/transaction.ts';
import type { AddressKeyId, ChainName } from '../chain/crypto-chain.ts';
import type { AddressPurpose } from './receiving-tables.ts';
import { usdtText } from './receiving-views.ts';

export const CUSTODY_PAGE_MAX = 1_000;

/**
 * USDT credited from deposits in blocks above `blockNumber`: with several nodes, the
 * watcher may have credited from one whose solidified head is ahead of the one a
 * balance was read from (custody reconciliation leaves them out of what it expects).
 */
export function usdtCreditedAboveBlock(db: Executor, chain: ChainName, blockNumber: number): Promise<bigint> {
  return repository.sumCreditedAboveBlock(db, chain, blockNumber);
}

/** What sweeping moved from an address and is moving (crypto/sweeping/sweep-custody.ts `sweepSummaries`). */
interface CustodySweepColumns {
  readonly sweptMicro: bigint;
  readonly pendingMicro: bigint;
  readonly stuckMicro: bigint;
  readonly state: string;
  readonly lastError: string | null;
}

/** The sweep columns of a page of addresses: passed in, since sweeping builds on receiving and not the reverse. */
export type CustodySweepSource = (
  db: Db,
  options: { readonly addresses: readonly string[]; readonly thresholdMicro: bigint; readonly now: Date },
) => Promise<ReadonlyMap<string, CustodySweepColumns>>;

export interface CustodyLine {
  readonly address: string;
  readonly key: AddressKeyId;
  readonly derivation_index: number;
  readonly shop_id: string;
  readonly purpose: AddressPurpose;
  /** USDT balanceOf on chain. */
  readonly usdt_on_chain: string;
  /** TRX balance on chain (the fuel a sweep will need). */
  readonly trx_on_chain: string;
  /** Deposits credited to merchants, as the ledger's transfers say. */
  readonly usdt_credited: string;
  /** Final deposits held for blocked wallets (not in the ledger). */
  readonly usdt_held: string;
  /** Transfers below the shop's minimum deposit: ignored, never credited, never swept. */
  readonly usdt_ignored_dust: string;
  /** USDT the completed sweeps moved from here to the hot wallet. */
  readonly usdt_swept: string;
  /** USDT a sweep in flight is moving (pending). */
  readonly usdt_sweep_pending: string;
  /** Final USDT left here because sweeping is stuck (see sweep_state). */
  readonly usdt_sweep_stuck: string;
  /** idle, in_flight, retrying, stuck_failed or stuck_below_threshold (docs/sweeping.md). */
  readonly sweep_state: string;
  /** The error code of the last failed sweep attempt, while failures are unresolved. */
  readonly sweep_error: string | null;
  /** on chain − credited − held − ignored dust + swept: deposits not final yet, or something to look into. */
  readonly usdt_unaccounted: string;
}

export async function listCustodyAddresses(
  deps: CryptoDeps,
  options: { readonly limit: number; readonly after?: string | undefined; readonly shopId?: string | undefined },
  sweepSummaries: CustodySweepSource,
): Promise<CustodyLine[]> {
  const rows = await repository.listAddresses(deps.db, options);
  const deposits = await repository.finalDepositsOfAddresses(
    deps.db,
    rows.map((row) => row.address),
  );
  const credited = new Map<string, bigint>();
  const held = new Map<string, bigint>();
  for (const deposit of deposits) {
    if (deposit.status === 'held') {
      held.set(deposit.address, (held.get(deposit.address) ?? 0n) + deposit.amount_micro);
      continue;
    }
    const ledgerTransfer = await findTransfer(deps.db, `crypto-deposit:${deposit.id}`);
    credited.set(deposit.address, (credited.get(deposit.address) ?? 0n) + (ledgerTransfer?.amount ?? 0n));
  }
  const dust = await repository.ignoredDustOfAddresses(
    deps.db,
    rows.map((row) => row.address),
  );
  const sweeps = await sweepSummaries(deps.db, {
    addresses: rows.map((row) => row.address),
    thresholdMicro: deps.config.sweepThresholdMicro,
    now: deps.clock.now(),
  });
  const lines: CustodyLine[] = [];
  for (const row of rows) {
    const { node } = await deps.chain.forMode(row.key_id);
    const address = tronAddress(row.address);
    const [usdt, account] = await Promise.all([node.getUsdtBalance(address), node.getAccount(address)]);
    const creditedMicro = credited.get(row.address) ?? 0n;
    const heldMicro = held.get(row.address) ?? 0n;
    const dustMicro = dust.get(row.address) ?? 0n;
    const sweep = sweeps.get(row.address);
    const sweptMicro = sweep?.sweptMicro ?? 0n;
    lines.push({
      address: row.address,
      key: row.key_id,
      derivation_index: Number(row.derivation_index),
      shop_id: row.shop_id,
      purpose: row.purpose,
      usdt_on_chain: usdtText(usdt),
      trx_on_chain: usdtText(account.balanceSun), // TRX has 6 decimals too (1 TRX = 10^6 sun)
      usdt_credited: usdtText(creditedMicro),
      usdt_held: usdtText(heldMicro),
      usdt_ignored_dust: usdtText(dustMicro),
      usdt_swept: usdtText(sweptMicro),
      usdt_sweep_pending: usdtText(sweep?.pendingMicro ?? 0n),
      usdt_sweep_stuck: usdtText(sweep?.stuckMicro ?? 0n),
      sweep_state: sweep?.state ?? 'idle',
      sweep_error: sweep?.lastError ?? null,
      usdt_unaccounted: usdtText(usdt - creditedMicro - heldMicro - dustMicro + sweptMicro),
    });
  }
  return lines;
}
