// Test helpers of sandbox shops (`/v1/test_helpers/crypto/…`): a payer of the
// simulated chain sends a real signed USDT transfer, blocks are mined, the
// chain reorganises, the next transfer to an address fails as it can on
// mainnet, the hot wallet's TRX is drained, the faucet funds an account, the
// USDT issuer blacklists an address (one made for the shop). They
// drive the chain through its control surface, so they work in any role: the
// chain may run in this process or in the worker's. Live shops get 404: there
// is no chain to drive.
// Every sandbox shop shares the one chain, so each helper is confined to the
// calling shop (docs/crypto.md "Sandboxes kept apart"): its transfers and armed
// outcomes carry the shop as their owner, a reorg replaces only blocks that hold
// none of another shop's transfers, and mined blocks never run ahead of the wall clock.
import { InvalidRequestError, InvalidStateError, NotFoundError, ServiceUnavailableError } from '../../errors.ts';
import { parseMinor } from '../../money/decimal.ts';
import type { NextTransferOutcome } from '../simchain/chain-state.ts';
import {
  SimulatorRefusal,
  SimulatorUnreachable,
  type NewestTransaction,
  type SimulatorControl,
} from '../simchain/control-client.ts';
import { parseTronAddress, type TronAddress } from '../tron/address.ts';
import type { CryptoDeps } from '../chain/chain-module.ts';
import { parseUsdtAmount, type CryptoShop } from './invoice-service.ts';
// TRX has 6 decimals like USDT (1 TRX = 10^6 sun): the same text form serves both.
import { usdtText } from './receiving-views.ts';
import { findOurAddresses } from './receiving-repository.ts';

const MINE_BLOCKS_MAX = 1_000;
/** Faucet bounds per call: plenty for any sandbox payout test, far from overflowing anything. */
const FAUCET_USDT_MAX = 1_000_000_000_000n; // 1,000,000 USDT
const FAUCET_TRX_SUN_MAX = 1_000_000_000_000n; // 1,000,000 TRX
const RETRY_AFTER_SECONDS = 5;

async function controlOf(deps: CryptoDeps, shop: CryptoShop): Promise<SimulatorControl> {
  if (shop.mode !== 'sandbox') throw new NotFoundError('Test helpers exist for sandbox shops only.');
  return deps.chain.sandboxControl();
}

/** A control call, its failures in the API's terms. */
async function drive<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof SimulatorRefusal) throw new InvalidRequestError(`${error.message}.`);
    if (error instanceof SimulatorUnreachable)
      throw new ServiceUnavailableError(`The sandbox chain is not reachable: ${error.message}.`, RETRY_AFTER_SECONDS);
    throw error;
  }
}

function addressOf(value: unknown, field: string): TronAddress {
  const parsed = parseTronAddress(typeof value === 'string' ? value : '');
  if (!parsed.ok) throw new InvalidRequestError(`${field} ${parsed.problem}.`);
  return parsed.address;
}

/** A payer account (the first unless `from` names another) sends `amount` USDT to `address`; it lands in the next block. */
export async function simulateDeposit(
  deps: CryptoDeps,
  shop: CryptoShop,
  request: { readonly address: string; readonly amount: string; readonly from?: string | undefined },
): Promise<{ tx_id: string }> {
  const control = await controlOf(deps, shop);
  const to = addressOf(request.address, 'address');
  const amount = parseUsdtAmount(request.amount, 'amount');
  const payers = (await drive(() => control.info())).payers;
  const from = request.from === undefined ? undefined : payers.find((candidate) => candidate === request.from);
  if (request.from !== undefined && !from)
    throw new InvalidRequestError(`from must be one of the simulated chain's payer accounts: ${payers.join(', ')}.`);
  const sent = await drive(() => control.sendUsdt({ to, amount, from, owner: shop.shopId }));
  if (!sent.result)
    throw new InvalidRequestError(`The simulated chain refused the transfer: ${sent.code} ${sent.message}.`);
  return { tx_id: sent.txId };
}

/** Produces `count` blocks at once, squeezed in before the wall clock (never ahead of it). Solidified = head − 18. */
export async function mineBlocks(
  deps: CryptoDeps,
  shop: CryptoShop,
  count: number,
): Promise<{ head_block: number; solidified_block: number }> {
  const control = await controlOf(deps, shop);
  if (!Number.isInteger(count) || count < 1 || count > MINE_BLOCKS_MAX)
    throw new InvalidRequestError(`count must be a whole number from 1 to ${MINE_BLOCKS_MAX}.`);
  const mined = await drive(() => control.mine(count, deps.clock.now().getTime()));
  return { head_block: mined.headBlock, solidified_block: mined.solidifiedBlock };
}

/**
 * Replaces the newest `depth` blocks (never a solidified one) by a new branch; their transactions
 * go back to the pool. Refused while those blocks hold another shop's transfer: the reorg would
 * orphan its deposits or payouts. The head is checked again as the chain reorganises, so a block
 * produced meanwhile is never replaced unchecked.
 */
export async function reorgChain(deps: CryptoDeps, shop: CryptoShop, depth: number): Promise<{ head_block: number }> {
  const control = await controlOf(deps, shop);
  // The control surface checks depth against the chain's own height and solidity depth.
  const newest = await drive(() => control.newestTransactions(depth));
  const foreign = await foreignTransactions(deps, shop, newest.transactions);
  if (foreign > 0) {
    throw new InvalidStateError(
      `The newest ${depth} block(s) hold ${foreign} transfer(s) of other sandbox shops; a reorg would change their outcome. Mine blocks of your own and reorg those.`,
    );
  }
  try {
    const reorganized = await drive(() =>
      control.reorg(depth, { headId: newest.headId, notAfterMs: deps.clock.now().getTime() }),
    );
    return { head_block: reorganized.headBlock };
  } catch (error) {
    if (error instanceof InvalidRequestError && /head_id/.test(error.message))
      throw new InvalidStateError('A block was produced meanwhile; call again.');
    throw error;
  }
}

/**
 * How many of `transactions` are another shop's: declared so, or undeclared and touching another
 * shop's deposit address, or the shared hot wallet without one of this shop's addresses (a sweep,
 * a payout broadcast before owners were declared, a cold-storage move).
 */
async function foreignTransactions(
  deps: CryptoDeps,
  shop: CryptoShop,
  transactions: readonly NewestTransaction[],
): Promise<number> {
  const undeclared = transactions.filter((transaction) => transaction.owner === null);
  const parties = undeclared.flatMap((transaction) => [transaction.from, transaction.to ?? transaction.from]);
  const shopOf = new Map(
    (await findOurAddresses(deps.db, 'sandbox', [...new Set(parties)])).map((row) => [row.address, row.shop_id]),
  );
  const { hotWalletAddress } = (await deps.chain.forMode('sandbox')).addressKey;
  const isForeign = (transaction: NewestTransaction): boolean => {
    if (transaction.owner !== null) return transaction.owner !== shop.shopId;
    const ends = [transaction.from, transaction.to ?? transaction.from];
    const shops = ends.map((end) => shopOf.get(end));
    if (shops.some((owner) => owner !== undefined && owner !== shop.shopId)) return true;
    return ends.includes(hotWalletAddress) && !shops.includes(shop.shopId);
  };
  return transactions.filter(isForeign).length;
}

/** The next USDT transfer of this shop to `address` (a payout's recipient, the hot wallet for a sweep) ends so, once; other shops' transfers never see it. */
export async function armNextTransferOutcome(
  deps: CryptoDeps,
  shop: CryptoShop,
  request: { readonly address: string; readonly outcome: NextTransferOutcome },
): Promise<{ address: string; outcome: NextTransferOutcome }> {
  const control = await controlOf(deps, shop);
  const address = addressOf(request.address, 'address');
  // Sweeps into it belong to no shop: an outcome armed there by one shop would never fire, or fire for everyone.
  if (address === (await deps.chain.forMode('sandbox')).addressKey.hotWalletAddress)
    throw new InvalidRequestError(
      'address is the sandbox hot wallet, shared by every sandbox shop: arm a recipient of your own transfers.',
    );
  await drive(() => control.armNextTransfer(address, request.outcome, shop.shopId));
  return { address, outcome: request.outcome };
}

/** The sandbox hot wallet (the one payouts are sent from) loses all its TRX: the next send cannot pay its energy. */
export async function drainHotWalletTrx(
  deps: CryptoDeps,
  shop: CryptoShop,
): Promise<{ address: string; drained_trx: string; trx: string }> {
  const control = await controlOf(deps, shop);
  const { addressKey } = await deps.chain.forMode('sandbox');
  const address = addressKey.hotWalletAddress;
  const drained = await drive(() => control.drainTrx(address));
  const after = await drive(() => control.balances(address));
  return { address, drained_trx: usdtText(drained), trx: usdtText(after.trxSun) };
}

/**
 * Tether's issuer puts `address` on the USDT blacklist (or takes it off): transfers from or to it
 * revert, and isBlackListed answers so. Only an address the chain made for this shop — a fresh one
 * when `address` is absent — so a listing never reaches an address another shop pays or owns.
 */
export async function setUsdtBlacklisted(
  deps: CryptoDeps,
  shop: CryptoShop,
  request: { readonly address?: string | undefined; readonly listed: boolean },
): Promise<{ address: string; listed: boolean }> {
  const control = await controlOf(deps, shop);
  const address =
    request.address === undefined
      ? await drive(() => control.makeOwnedAddress(shop.shopId))
      : addressOf(request.address, 'address');
  await asOwnAddress(address, () => drive(() => control.setBlacklisted(address, request.listed, shop.shopId)));
  return { address, listed: request.listed };
}

/**
 * Credits TRX (activating the account) and mints USDT outside any block (setup, not a deposit: the
 * watcher sees nothing), to the shared hot wallet by default, to one of the shop's deposit
 * addresses, or to an address the chain made for it: never to another shop's address.
 */
export async function faucet(
  deps: CryptoDeps,
  shop: CryptoShop,
  request: {
    readonly address?: string | undefined;
    readonly usdt?: string | undefined;
    readonly trx?: string | undefined;
  },
): Promise<{ address: string; usdt: string; trx: string }> {
  const control = await controlOf(deps, shop);
  const { hotWalletAddress } = (await deps.chain.forMode('sandbox')).addressKey;
  const address = request.address === undefined ? hotWalletAddress : addressOf(request.address, 'address');
  if (request.usdt === undefined && request.trx === undefined)
    throw new InvalidRequestError('usdt or trx is required.');
  const usdt = request.usdt === undefined ? 0n : sixPlacesAmount(request.usdt, 'usdt', FAUCET_USDT_MAX);
  const trxSun = request.trx === undefined ? 0n : sixPlacesAmount(request.trx, 'trx', FAUCET_TRX_SUN_MAX);
  // The hot wallet is everyone's but the sandbox executor keeps it funded anyway: more there changes no outcome.
  const depositShop =
    address === hotWalletAddress ? shop.shopId : (await findOurAddresses(deps.db, 'sandbox', [address]))[0]?.shop_id;
  if (depositShop !== undefined && depositShop !== shop.shopId) throw new InvalidRequestError(notOwnAddress(address));
  // Not one of the shop's deposit addresses: the chain checks it was made for the shop.
  const owner = depositShop === undefined ? shop.shopId : undefined;
  const after = await asOwnAddress(address, () => drive(() => control.faucet(address, { usdt, trxSun }, owner)));
  return { address, usdt: usdtText(after.usdt), trx: usdtText(after.trxSun) };
}

function notOwnAddress(address: TronAddress): string {
  return `address ${address} is not one of this sandbox shop's own: every sandbox shop shares one chain, so the helper takes only an address the blacklist helper made for the shop (call it without address), or for the faucet one of the shop's deposit addresses or the hot wallet.`;
}

/** The chain's refusal of an address made for someone else, in the API's terms. */
async function asOwnAddress<T>(address: TronAddress, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof InvalidRequestError && /is not one made for/.test(error.message))
      throw new InvalidRequestError(notOwnAddress(address));
    throw error;
  }
}

/** USDT and TRX both have 6 decimals: a decimal string of at most 6 places, above zero, up to `max` units. */
function sixPlacesAmount(value: unknown, field: string, max: bigint): bigint {
  const parsed = typeof value === 'string' ? parseMinor(value, 'USDT', 'decimal-string') : undefined;
  if (!parsed?.ok || parsed.minor <= 0n || parsed.minor > max) {
    throw new InvalidRequestError(
      `${field} must be a decimal string above 0 with at most 6 places, at most ${usdtText(max)}.`,
    );
  }
  return parsed.minor;
}
