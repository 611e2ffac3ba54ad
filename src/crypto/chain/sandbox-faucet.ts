// The sandbox's hot wallet never runs dry: before a pass signs, the simulated
// chain's faucet tops it up with what the queued hot-wallet transfers need,
// and a margin (docs/payouts.md). The sandbox chain's access carries it
// (crypto-chain.ts), so only the sandbox executor has one; the executor just
// calls the hook it is given.
import type { Logger } from 'pino';
import type { TronAddress } from '../tron/address.ts';

export interface FaucetAmounts {
  readonly trxSun: bigint;
  readonly usdt: bigint;
}

/** A transfer queued from the hot wallet: TRX in sun, USDT in micro-USDT. */
interface QueuedTransfer {
  readonly asset: 'USDT' | 'TRX' | 'ENERGY';
  readonly amount: bigint;
}

/** What the hot wallet holds on chain. */
interface HeldBalances {
  readonly usdt: bigint;
  readonly trxSun: bigint;
}

/** The simulated chain's faucet: credits `address` on chain. */
export type Faucet = (address: TronAddress, amounts: FaucetAmounts) => Promise<void>;

/** Tops the hot wallet up for the transfers queued from it; returns what it added to `held`. */
export type HotWalletTopUp = (
  queuedFromHotWallet: readonly QueuedTransfer[],
  held: HeldBalances,
) => Promise<FaucetAmounts>;

/** TRX each transfer is assumed to burn, and the margins a top-up adds on top of the shortfall. */
const TRX_PER_TRANSFER_SUN = 20_000_000n;
const USDT_MARGIN = 1_000_000_000n;
const TRX_MARGIN_SUN = 10_000_000_000n;

/** What the faucet adds so `held` covers `queued`: nothing when it does, the shortfall and a margin of each short asset otherwise. */
export function faucetTopUp(queued: readonly QueuedTransfer[], held: HeldBalances): FaucetAmounts {
  const usdt = queued
    .filter((transfer) => transfer.asset === 'USDT')
    .reduce((sum, transfer) => sum + transfer.amount, 0n);
  const trx = queued.reduce(
    (sum, transfer) => sum + (transfer.asset === 'TRX' ? transfer.amount : 0n) + TRX_PER_TRANSFER_SUN,
    0n,
  );
  if (held.usdt >= usdt && held.trxSun >= trx) return { usdt: 0n, trxSun: 0n };
  return {
    usdt: held.usdt < usdt ? usdt - held.usdt + USDT_MARGIN : 0n,
    trxSun: held.trxSun < trx ? trx - held.trxSun + TRX_MARGIN_SUN : 0n,
  };
}

export function sandboxHotWalletTopUp(options: {
  readonly faucet: Faucet;
  readonly hotWallet: TronAddress;
  readonly chain: string;
  readonly logger: Logger;
}): HotWalletTopUp {
  return async (queued, held) => {
    const amounts = faucetTopUp(queued, held);
    if (amounts.usdt === 0n && amounts.trxSun === 0n) return amounts;
    await options.faucet(options.hotWallet, amounts);
    options.logger.info(
      {
        chain: options.chain,
        address: options.hotWallet,
        usdt: amounts.usdt.toString(),
        trx_sun: amounts.trxSun.toString(),
      },
      'sandbox hot wallet topped up from the simulated chain faucet',
    );
    return amounts;
  };
}
