// Static wallets through the simulated chain: idempotent creation by client_id
// and network, deposits credited after finality, held (not credited) while the
// wallet is blocked, block/unblock state rules, and their webhooks.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidRequestError, InvalidStateError, NotFoundError } from '../../../src/errors.ts';
import { mineBlocks, reorgChain, simulateDeposit } from '../../../src/crypto/receiving/sandbox-chain-service.ts';
import {
  blockWallet,
  createWallet,
  getWallet,
  listWallets,
  unblockWallet,
} from '../../../src/crypto/receiving/wallet-service.ts';
import { parseTronAddress } from '../../../src/crypto/tron/address.ts';
import { backends } from '../../support/databases.ts';
import {
  eventTypes,
  expectLedgerSound,
  openReceivingSetup,
  usdtMainBalance,
  type ReceivingSetup,
} from './receiving-service-support.ts';

describe.each(backends)('static wallets on %s', (backend) => {
  let setup: ReceivingSetup;
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
  });
  afterEach(async () => {
    await expectLedgerSound(setup);
    await setup.close();
  });

  async function depositAndFinalize(address: string, amount: string): Promise<void> {
    const watcher = setup.defaultWatcher;
    await simulateDeposit(setup.deps, setup.shop, { address, amount });
    await mineBlocks(setup.deps, setup.shop, 1);
    await watcher.runPass();
    await mineBlocks(setup.deps, setup.shop, setup.sandbox.chain.parameters.solidityDepth);
    await watcher.runPass();
  }

  it('the same client_id and network is the same wallet; another client gets another address', async () => {
    const first = await createWallet(setup.deps, setup.shop, { client_id: 'client-1', network: 'TRC20' });
    const again = await createWallet(setup.deps, setup.shop, { client_id: 'client-1', network: 'TRC20' });
    const other = await createWallet(setup.deps, setup.shop, { client_id: 'client-2', network: 'TRC20' });
    expect(first.created).toBe(true);
    expect(again).toEqual({ created: false, wallet: first.wallet });
    expect(first.wallet).toMatchObject({
      client_id: 'client-1',
      status: 'active',
      received_amount: '0',
      held_amount: '0',
      network: 'TRC20',
      asset: 'USDT',
    });
    expect(parseTronAddress(first.wallet.address).ok).toBe(true);
    expect(other.wallet.address).not.toBe(first.wallet.address);
    const list = await listWallets(setup.deps, setup.shop.shopId, { limit: 1 });
    expect(list.data).toHaveLength(1);
    const rest = await listWallets(setup.deps, setup.shop.shopId, { limit: 1, cursor: list.next_cursor! });
    expect(rest.next_cursor).toBeNull();
    expect([list.data[0]!.wallet_id, rest.data[0]!.wallet_id].sort()).toEqual(
      [first.wallet.wallet_id, other.wallet.wallet_id].sort(),
    );
    expect(
      (await listWallets(setup.deps, setup.shop.shopId, { limit: 10, client_id: 'client-2' })).data.map(
        (wallet) => wallet.wallet_id,
      ),
    ).toEqual([other.wallet.wallet_id]);
  });

  it('refuses a bad client_id or network', async () => {
    await expect(createWallet(setup.deps, setup.shop, { client_id: '', network: 'TRC20' })).rejects.toThrow(
      /^client_id /,
    );
    await expect(
      createWallet(setup.deps, setup.shop, { client_id: 'c'.repeat(101), network: 'TRC20' }),
    ).rejects.toThrow(/^client_id /);
    await expect(createWallet(setup.deps, setup.shop, { client_id: 'c', network: 'BEP20' })).rejects.toBeInstanceOf(
      InvalidRequestError,
    );
    await expect(
      createWallet(setup.deps, setup.shop, { client_id: 'c'.repeat(100), network: 'TRC20' }),
    ).resolves.toMatchObject({ created: true });
  });

  it('deposits to an active wallet are credited when final, seen and final webhooks sent', async () => {
    const { wallet } = await createWallet(setup.deps, setup.shop, { client_id: 'client-1', network: 'TRC20' });
    await depositAndFinalize(wallet.address, '15.25');
    await depositAndFinalize(wallet.address, '4.75');
    const read = await getWallet(setup.deps, setup.shop.shopId, wallet.wallet_id);
    expect(read).toMatchObject({ received_amount: '20', held_amount: '0' });
    expect(read.deposits!.map((deposit) => [deposit.amount, deposit.status])).toEqual([
      ['4.75', 'credited'],
      ['15.25', 'credited'],
    ]);
    expect(await usdtMainBalance(setup)).toBe(20_000_000n);
    expect(await eventTypes(setup)).toEqual([
      'crypto.wallet.deposit',
      'crypto.balance.funded',
      'crypto.wallet.deposit',
      'crypto.wallet.deposit',
      'crypto.balance.funded',
      'crypto.wallet.deposit',
    ]);
  });

  it('deposits that become final while the wallet is blocked are held, not credited', async () => {
    const { wallet } = await createWallet(setup.deps, setup.shop, { client_id: 'client-1', network: 'TRC20' });
    const blocked = await blockWallet(setup.deps, setup.shop.shopId, wallet.wallet_id);
    expect(blocked.status).toBe('blocked');
    await expect(blockWallet(setup.deps, setup.shop.shopId, wallet.wallet_id)).rejects.toBeInstanceOf(
      InvalidStateError,
    );
    await depositAndFinalize(wallet.address, '8');
    expect(await getWallet(setup.deps, setup.shop.shopId, wallet.wallet_id)).toMatchObject({
      received_amount: '0',
      held_amount: '8',
    });
    expect(await usdtMainBalance(setup)).toBe(0n);
    await unblockWallet(setup.deps, setup.shop.shopId, wallet.wallet_id);
    await expect(unblockWallet(setup.deps, setup.shop.shopId, wallet.wallet_id)).rejects.toBeInstanceOf(
      InvalidStateError,
    );
    await depositAndFinalize(wallet.address, '2');
    expect(await getWallet(setup.deps, setup.shop.shopId, wallet.wallet_id)).toMatchObject({
      received_amount: '2',
      held_amount: '8',
    });
    expect(await usdtMainBalance(setup)).toBe(2_000_000n);
  });

  it("another shop's wallet is not found; the sandbox helpers refuse bad input and live shops", async () => {
    const { wallet } = await createWallet(setup.deps, setup.shop, { client_id: 'client-1', network: 'TRC20' });
    await expect(getWallet(setup.deps, 'shop_other', wallet.wallet_id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(blockWallet(setup.deps, 'shop_other', wallet.wallet_id)).rejects.toBeInstanceOf(NotFoundError);
    const live = { shopId: setup.shop.shopId, mode: 'live' as const };
    await expect(simulateDeposit(setup.deps, live, { address: wallet.address, amount: '1' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await expect(mineBlocks(setup.deps, live, 1)).rejects.toBeInstanceOf(NotFoundError);
    await expect(reorgChain(setup.deps, live, 1)).rejects.toBeInstanceOf(NotFoundError);
    await expect(simulateDeposit(setup.deps, setup.shop, { address: 'T123', amount: '1' })).rejects.toThrow(
      /^address /,
    );
    await expect(
      simulateDeposit(setup.deps, setup.shop, { address: wallet.address, amount: '1', from: wallet.address }),
    ).rejects.toThrow(/^from /);
    await expect(mineBlocks(setup.deps, setup.shop, 1001)).rejects.toThrow(/^count /);
    await mineBlocks(setup.deps, setup.shop, 20);
    await expect(reorgChain(setup.deps, setup.shop, 19)).rejects.toThrow(/^depth /);
    await expect(reorgChain(setup.deps, setup.shop, 18)).resolves.toEqual({ head_block: 20 });
  });
});
