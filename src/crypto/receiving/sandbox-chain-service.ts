// Test helpers of sandbox shops (`/v1/test_helpers/crypto/…`): a payer of the
// simulated chain sends a real signed USDT transfer, blocks are mined, the
// chain reorganises. Live shops get 404: there is no chain to drive.
import { InvalidRequestError, NotFoundError } from '../../errors.ts';
import { parseTronAddress } from '../tron/address.ts';
import type { SimulatedChainServer } from '../simchain/chain-server.ts';
import type { CryptoDeps } from './crypto-deps.ts';
import { parseUsdtAmount, type CryptoShop } from './invoice-service.ts';

export const MINE_BLOCKS_MAX = 1_000;

async function sandboxChainOf(deps: CryptoDeps, shop: CryptoShop): Promise<SimulatedChainServer> {
  if (shop.mode !== 'sandbox') throw new NotFoundError('Test helpers exist for sandbox shops only.');
  return deps.chain.sandboxChain();
}

/** A payer account (the first unless `from` names another) sends `amount` USDT to `address`; it lands in the next block. */
export async function simulateDeposit(
  deps: CryptoDeps,
  shop: CryptoShop,
  request: { readonly address: string; readonly amount: string; readonly from?: string | undefined },
): Promise<{ tx_id: string }> {
  const server = await sandboxChainOf(deps, shop);
  const to = parseTronAddress(typeof request.address === 'string' ? request.address : '');
  if (!to.ok) throw new InvalidRequestError(`address ${to.problem}.`);
  const amount = parseUsdtAmount(request.amount, 'amount');
  const payers = server.chain.payers;
  const payer = request.from === undefined ? payers[0] : payers.find((candidate) => candidate.address === request.from);
  if (!payer) throw new InvalidRequestError(`from must be one of the simulated chain's payer accounts: ${payers.map((entry) => entry.address).join(', ')}.`);
  const sent = server.chain.sendUsdt({ from: payer, to: to.address, amount });
  if (!sent.result) throw new InvalidRequestError(`The simulated chain refused the transfer: ${sent.code} ${sent.message}.`);
  return { tx_id: sent.txId };
}

/** Produces `count` blocks at once (the chain's clock jumps ahead). Solidified = head − 18. */
export async function mineBlocks(deps: CryptoDeps, shop: CryptoShop, count: number): Promise<{ head_block: number; solidified_block: number }> {
  const server = await sandboxChainOf(deps, shop);
  if (!Number.isInteger(count) || count < 1 || count > MINE_BLOCKS_MAX) throw new InvalidRequestError(`count must be a whole number from 1 to ${MINE_BLOCKS_MAX}.`);
  server.chain.mine(count);
  return { head_block: server.chain.head.number, solidified_block: server.chain.solidNumber };
}

/** Replaces the newest `depth` blocks (never a solidified one) by a new branch; their transactions go back to the pool. */
export async function reorgChain(deps: CryptoDeps, shop: CryptoShop, depth: number): Promise<{ head_block: number }> {
  const server = await sandboxChainOf(deps, shop);
  const limit = Math.min(server.chain.parameters.solidityDepth, server.chain.head.number);
  if (!Number.isInteger(depth) || depth < 1 || depth > limit) {
    throw new InvalidRequestError(`depth must be a whole number from 1 to ${limit} (blocks above the solidified one).`);
  }
  server.chain.reorg(depth);
  return { head_block: server.chain.head.number };
}
