// Static wallets: a permanent deposit address per (client_id, network) of a
// shop, idempotent by that pair; blocking stops crediting (deposits are held).
import {
  createUnderKey,
  priorOutcome,
  priorResource,
  type IdempotencyRule,
  type KeyedCreation,
  type Prior,
  keyedRequest,
} from '../../idempotency/idempotency-service.ts';
import { recordAudit, type AuditActor } from '../../audit/audit-service.ts';
import { inTransaction, type Executor, type Tx } from '../../db/transaction.ts';
import { InvalidStateError, NotFoundError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { recordDepositAddress, reserveDepositAddress } from './address-allocation.ts';
import type { AddressPoolDeps } from './address-pool.ts';
import type { CryptoDeps } from '../chain/chain-module.ts';
import { parseNetwork, parseTextId, type CryptoShop } from './invoice-service.ts';
import { createdAtOrder, parseStatusFilter, readListPage, type ListPage, type ListQuery } from '../../db/list-page.ts';
import * as repository from './receiving-repository.ts';
import { WALLET_STATUSES, type WalletStatus } from './receiving-tables.ts';
import { walletView, type WalletView } from './receiving-views.ts';

export type { WalletView } from './receiving-views.ts';

/** A wallet's GET shows its newest deposits, at most this many. */
const WALLET_DEPOSITS_SHOWN_MAX = 100;

const WALLET_IDEMPOTENCY_RULE: IdempotencyRule = {
  operation: 'crypto.wallet.create',
  windowMs: null,
  replay: 'current-resource',
  // The key is client_id:network and the fingerprint the same pair: a repeat is never a conflict.
  conflictMessage: 'A wallet for this client_id and network already exists.',
};

export async function createWallet(
  deps: CryptoDeps & AddressPoolDeps,
  shop: CryptoShop,
  request: { readonly client_id: string; readonly network: string },
): Promise<{ created: boolean; wallet: WalletView }> {
  const clientId = parseTextId(request.client_id, 'client_id');
  const network = parseNetwork(request.network);
  const keyed = keyedRequest(shop.shopId, `${clientId}:${network}`, { client_id: clientId, network });
  const creation: KeyedCreation<{ created: boolean; wallet: WalletView }> = {
    rule: WALLET_IDEMPOTENCY_RULE,
    request: keyed,
    showPrior: async (tx, prior) => ({ created: false, wallet: await priorWallet(tx, shop.shopId, prior) }),
  };
  const existing = await priorOutcome(deps.db, deps.clock, creation);
  if (existing) return existing;
  const access = await deps.chain.forMode(shop.mode);
  const reserved = await reserveDepositAddress(deps.db, deps.clock, access, deps.addressPool);
  return createUnderKey(deps.db, deps.clock, creation, async (tx, record) => {
    const id = newId('wallet');
    await record({ resourceId: id });
    const address = await recordDepositAddress(tx, deps.clock, access, reserved, shop.shopId, 'wallet');
    const now = deps.clock.now();
    const row = await repository.insertWallet(tx, {
      id,
      shop_id: shop.shopId,
      client_id: clientId,
      network,
      network_mode: access.networkMode,
      address,
      status: 'active',
      created_at: now,
      updated_at: now,
    });
    return { created: true, wallet: walletView(row, { receivedMicro: 0n, heldMicro: 0n }) };
  });
}

async function priorWallet(tx: Tx, shopId: string, prior: Prior): Promise<WalletView> {
  return walletWithTotals(
    tx,
    await priorResource(prior, 'wallet', (id) => repository.findWalletOfShop(tx, shopId, id)),
  );
}

/** A wallet as a create, a list or a status change shows it: with its totals. */
async function walletWithTotals(db: Executor, row: repository.WalletRow): Promise<WalletView> {
  const totals = await repository.walletTotals(db, [row.id]);
  return walletView(row, totals.get(row.id)!);
}

function isWalletId(walletId: string): boolean {
  return walletId.startsWith('wal_') && walletId.length <= 100;
}

/** A wallet of the shop with its totals and newest deposits; another shop's, or an unknown id, is 404. */
export async function getWallet(deps: CryptoDeps, shopId: string, walletId: string): Promise<WalletView> {
  const row = isWalletId(walletId) ? await repository.findWalletOfShop(deps.db, shopId, walletId) : undefined;
  if (!row) throw new NotFoundError('No such wallet.');
  const [totals, deposits] = await Promise.all([
    repository.walletTotals(deps.db, [row.id]),
    repository.depositsOfWallet(deps.db, row.id, WALLET_DEPOSITS_SHOWN_MAX),
  ]);
  return walletView(row, totals.get(row.id)!, deposits);
}

const WALLET_LIST_ORDER = createdAtOrder(isWalletId);

export interface ListWalletsInput extends ListQuery {
  readonly client_id?: string | undefined;
  readonly status?: string | undefined;
}

export async function listWallets(
  deps: CryptoDeps,
  shopId: string,
  input: ListWalletsInput,
): Promise<ListPage<WalletView>> {
  const status = parseStatusFilter(input.status, WALLET_STATUSES);
  return readListPage(
    input,
    WALLET_LIST_ORDER,
    (window) => repository.listWallets(deps.db, { shopId, status, clientId: input.client_id, ...window }),
    async (rows) => {
      const totals = await repository.walletTotals(
        deps.db,
        rows.map((row) => row.id),
      );
      return rows.map((row) => walletView(row, totals.get(row.id)!));
    },
  );
}

/** Who blocked or unblocked a wallet, for the audit log (`wallet.blocked` / `wallet.unblocked`). */
export interface WalletChangeAudit {
  readonly actor: AuditActor;
  readonly merchantId: string;
}

async function changeStatus(
  deps: CryptoDeps,
  shopId: string,
  walletId: string,
  from: WalletStatus,
  to: WalletStatus,
  audit: WalletChangeAudit | undefined,
): Promise<WalletView> {
  if (!isWalletId(walletId)) throw new NotFoundError('No such wallet.');
  const row = await inTransaction(deps.db, async (tx) => {
    const changed = await repository.transitionWallet(tx, shopId, walletId, from, to, deps.clock.now());
    if (!changed) {
      const current = await repository.findWalletOfShop(tx, shopId, walletId);
      if (!current) throw new NotFoundError('No such wallet.');
      throw new InvalidStateError(`The wallet is already ${current.status}.`);
    }
    if (audit)
      await recordAudit(tx, deps.clock, {
        actor: audit.actor,
        action: to === 'blocked' ? 'wallet.blocked' : 'wallet.unblocked',
        merchantId: audit.merchantId,
        shopId,
        target: walletId,
        details: { client_id: changed.client_id, address: changed.address },
      });
    return changed;
  });
  return walletWithTotals(deps.db, row);
}

/** active → blocked: later deposits are recorded as held, not credited. 409 invalid_state when already blocked. */
export function blockWallet(
  deps: CryptoDeps,
  shopId: string,
  walletId: string,
  audit?: WalletChangeAudit,
): Promise<WalletView> {
  return changeStatus(deps, shopId, walletId, 'active', 'blocked', audit);
}

/** blocked → active: deposits final from now on are credited again (held ones stay held). */
export function unblockWallet(
  deps: CryptoDeps,
  shopId: string,
  walletId: string,
  audit?: WalletChangeAudit,
): Promise<WalletView> {
  return changeStatus(deps, shopId, walletId, 'blocked', 'active', audit);
}
