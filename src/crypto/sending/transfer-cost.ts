// What an outgoing transfer costs on chain, from the chain's own prices
// (docs/tron.md §1.5). Payouts, refunds and withdrawals quote their `network_fee`
// with it; sweeping sizes its TRX top-up with it; the executor checks the hot
// wallet's TRX against it before signing. Estimates err on the dear side: a
// quote below the real cost would be paid out of the gateway's network_fees.
// A USDT transfer's energy is the chain's own figure (chain/transfer-energy.ts).
import { systemClock, type Clock } from '../../clock.ts';
import { parseMinor } from '../../money/decimal.ts';
import type { TronAddress } from '../tron/address.ts';
import type { TronNodeClient } from '../tron/node-client.ts';
import { encodeSignedTransaction, encodeTriggerSmartContractRaw } from '../tron/transaction.ts';
import { transferCalldata, USDT_CONTRACT_MAINNET } from '../tron/trc20-usdt.ts';
import { encodeStakeTransactionRaw } from '../tron/stake-contracts.ts';
import type { UsdtTransferEnergy } from '../chain/transfer-energy.ts';

/** What a node adds to a transaction's size for its stored result when charging bandwidth. */
const RESULT_BYTES = 64n;

/**
 * Bandwidth (bytes) of one signed USDT transfer: its protobuf with one signature
 * and the result bytes, measured on an encoding with the widest field values we write.
 */
export const USDT_TRANSFER_BANDWIDTH = signedUsdtTransferSize();
/** Bandwidth of one signed TRX transfer (TransferContract). */
export const TRX_TRANSFER_BANDWIDTH = 285n;
/**
 * Bandwidth of one signed DelegateResource / UnDelegateResource (the wider of the
 * two, with the widest field values we write): what an energy delegation burns
 * when the hot wallet's free and staked bandwidth are spent.
 */
export const STAKE_TRANSACTION_BANDWIDTH = signedDelegationSize();

export interface UsdtTransferCost {
  /** Energy the contract call uses, as the chain answers for the recipient's class (USDT or none) at the contract's energy factor now. */
  readonly energy: bigint;
  /** Bandwidth bytes of the signed transaction. */
  readonly bandwidth: bigint;
  /**
   * Sun for creating the recipient account: 0 for USDT (a TRC20 receipt does not
   * activate an address, and the sender pays nothing for it; docs/tron.md §1.5). Kept
   * so a caller can subtract it without knowing that.
   */
  readonly activationSun: bigint;
  /** The energy's part of `totalSun`: all of it burned at the chain's price. */
  readonly energySun: bigint;
  /** Everything the sender burns if it has no staked energy or free bandwidth: energy, bandwidth and activation. */
  readonly totalSun: bigint;
  readonly recipientHoldsUsdt: boolean;
}

/**
 * The cost of sending `amount` micro-USDT from `from` to `to`, burned in TRX at the
 * chain's current prices. Free bandwidth is not counted (the hot wallet spends its
 * daily 600 bytes on its first transfer of the day).
 */
export async function estimateUsdtTransferCost(
  chain: {
    readonly node: Pick<TronNodeClient, 'getChainPrices' | 'getUsdtBalance'>;
    readonly transferEnergy: UsdtTransferEnergy;
  },
  transfer: { readonly from: TronAddress; readonly to: TronAddress; readonly amount: bigint },
  clock: Clock = systemClock,
): Promise<UsdtTransferCost> {
  const { node } = chain;
  const [prices, recipientBalance] = await Promise.all([node.getChainPrices(), node.getUsdtBalance(transfer.to)]);
  const recipientHoldsUsdt = recipientBalance > 0n;
  const energy = await chain.transferEnergy.energyOf(clock, {
    from: transfer.from,
    to: transfer.to,
    recipientHoldsUsdt,
  });
  const bandwidth = USDT_TRANSFER_BANDWIDTH;
  const activationSun = 0n;
  const energySun = energy * prices.energyPriceSun;
  const totalSun = energySun + bandwidth * prices.bandwidthPriceSun + activationSun;
  return { energy, bandwidth, activationSun, energySun, totalSun, recipientHoldsUsdt };
}

export interface TrxTransferCost {
  readonly bandwidth: bigint;
  /** Creating a recipient that does not exist yet: the system contract's fee plus the account-creation bandwidth fee. */
  readonly activationSun: bigint;
  readonly totalSun: bigint;
  readonly recipientActivated: boolean;
}

/** The cost of a TRX transfer (a gas top-up) to `to`, burned by the sender. */
export async function estimateTrxTransferCost(
  node: Pick<TronNodeClient, 'getChainPrices' | 'getAccount'>,
  to: TronAddress,
): Promise<TrxTransferCost> {
  const [prices, account] = await Promise.all([node.getChainPrices(), node.getAccount(to)]);
  const bandwidth = TRX_TRANSFER_BANDWIDTH;
  const activationSun = account.activated ? 0n : prices.createNewAccountFeeSun + prices.createAccountFeeSun;
  return {
    bandwidth,
    activationSun,
    totalSun: bandwidth * prices.bandwidthPriceSun + activationSun,
    recipientActivated: account.activated,
  };
}

/** Sun per TRX. */
const SUN_PER_TRX = 1_000_000n;

/**
 * Sun converted to micro-USDT at `rate` — micro-USDT per TRX (config
 * `trxUsdtRateMicro`) or USDT per TRX as a decimal string ("0.30") — rounded up:
 * a cost is never booked or quoted below what it was.
 */
export function sunToMicroUsdt(sun: bigint, rate: bigint | string): bigint {
  if (sun < 0n) throw new RangeError(`sunToMicroUsdt: sun must be ≥ 0, got ${sun}`);
  const rateMicro = typeof rate === 'bigint' ? rate : parseRate(rate);
  if (rateMicro <= 0n) throw new RangeError('sunToMicroUsdt: the rate must be above 0');
  const numerator = sun * rateMicro;
  return (numerator + SUN_PER_TRX - 1n) / SUN_PER_TRX;
}

function parseRate(text: string): bigint {
  const parsed = parseMinor(text, 'USDT', 'decimal-string');
  if (!parsed.ok) throw new RangeError(`sunToMicroUsdt: the rate ${parsed.problem}, got "${text}"`);
  return parsed.minor;
}

function signedUsdtTransferSize(): bigint {
  const raw = encodeTriggerSmartContractRaw({
    refBlockBytes: new Uint8Array(2).fill(0xff),
    refBlockHash: new Uint8Array(8).fill(0xff),
    // Wide varints: a far expiration and timestamp, a 1,000 TRX fee limit.
    expirationMs: 99_999_999_999_999,
    timestampMs: 99_999_999_999_999,
    feeLimitSun: 1_000_000_000n,
    ownerAddress: USDT_CONTRACT_MAINNET,
    contractAddress: USDT_CONTRACT_MAINNET,
    data: transferCalldata(USDT_CONTRACT_MAINNET, 2n ** 62n),
  });
  return signedSize(raw);
}

function signedDelegationSize(): bigint {
  const raw = encodeStakeTransactionRaw({
    refBlockBytes: new Uint8Array(2).fill(0xff),
    refBlockHash: new Uint8Array(8).fill(0xff),
    expirationMs: 99_999_999_999_999,
    timestampMs: 99_999_999_999_999,
    contract: {
      type: 'DelegateResourceContract',
      ownerAddress: USDT_CONTRACT_MAINNET,
      resource: 'ENERGY',
      balanceSun: 2n ** 62n,
      receiverAddress: USDT_CONTRACT_MAINNET,
      lock: true,
      lockPeriodBlocks: 2n ** 40n,
    },
  });
  return signedSize(raw);
}

/** Bytes a node charges for a raw transaction once signed once: the envelope with one 65-byte signature, plus its stored result. */
function signedSize(raw: Uint8Array): bigint {
  return BigInt(encodeSignedTransaction(raw, [new Uint8Array(65)]).length) + RESULT_BYTES;
}
