// The knobs of the simulated TRON chain, with the mainnet values of docs/tron.md
// §1.5–1.6 as defaults. Every number a test may want to move is here, so the
// chain code holds no magic numbers.
import { tronAddress, type TronAddress } from '../tron/address.ts';
import { TRON_NETWORK_PRESETS, type TronNetwork } from '../tron/tron-networks.ts';
import { USDT_CONTRACT_MAINNET, USDT_DECIMALS } from '../tron/trc20-usdt.ts';

export interface ChainParameters {
  /** Block interval (java-tron BLOCK_PRODUCED_INTERVAL). */
  readonly blockIntervalMs: number;
  /** Timestamp of block 0; block n's slot is genesis + n × interval. */
  readonly genesisTimestampMs: number;
  /** Solidified = head − this (≈ 19 of 27 SRs past a block, docs/tron.md §1.6). */
  readonly solidityDepth: number;
  /** TaPoS can reference only this many recent blocks (2-byte key, jt Manager.validateTapos). */
  readonly taposWindowBlocks: number;
  /** A transaction may expire at most this long after the head block (jt Constant MAXIMUM_TIME_UNTIL_EXPIRATION). */
  readonly maxExpirationMs: number;
  /** Pending pool size; a full pool answers SERVER_BUSY. */
  readonly maxPendingTransactions: number;
  readonly maxTransactionsPerBlock: number;
  /** Sun burned per energy unit (getEnergyFee). */
  readonly energyPriceSun: bigint;
  /** Sun burned per byte of bandwidth (getTransactionFee). */
  readonly bandwidthPriceSun: bigint;
  /** Free bandwidth per activated account per day (getFreeNetLimit). */
  readonly freeBandwidthPerDay: number;
  /** Bytes java-tron adds to a contract transaction's size for its result (MAX_RESULT_SIZE_IN_TX). */
  readonly resultBytesPerTransaction: number;
  /**
   * Energy of a USDT transfer to an address that already holds USDT, before the
   * contract's dynamic energy factor (the figure at factor 0).
   */
  readonly transferEnergyExistingHolder: number;
  /** The same to an address whose USDT balance is zero (a new storage slot), before the factor. */
  readonly transferEnergyNewHolder: number;
  /** Energy a reverted transfer burns before the REVERT, before the factor (not sourced: a rough figure; only its being charged matters). */
  readonly revertEnergy: number;
  /**
   * The USDT contract's dynamic energy factor at genesis, in 1/10,000
   * (ContractState.energy_factor; docs/tron.md §1.5). 0 by default, so the transfer
   * energies above are what a transfer burns until a test raises it.
   */
  readonly usdtEnergyFactor: number;
  /** Sun burned for the bandwidth of a transaction that creates an account (getCreateAccountFee, 0.1 TRX). */
  readonly createAccountFeeSun: bigint;
  /** Sun a TRX transfer to a new address costs on top (getCreateNewAccountFeeInSystemContract, 1 TRX). */
  readonly createNewAccountFeeSun: bigint;
  /** fee_limit ceiling (15,000 TRX, resource.md "How to Set fee_limit"). */
  readonly maxFeeLimitSun: bigint;
  readonly usdtContract: TronAddress;
  /**
   * What the token contract's decimals() answers (a TRC20 token's uint8, TIP-20):
   * 6 for USDT. Another value stands for a gateway pointed at another token
   * (USDD answers 18), whose amounts it must not read as micro-USDT.
   */
  readonly usdtDecimals: number;
  /** Payer accounts derived from the seed and funded at genesis. */
  readonly payerCount: number;
  readonly payerTrxSun: bigint;
  readonly payerUsdt: bigint;
  /**
   * Blocks below the solidified one that keep their transactions (a node with
   * pruned history, like a java-tron lite full node): older blocks keep only
   * their header, and their transactions are no longer found. Bounds memory.
   */
  readonly retainedBlockBodies: number;
  /** Blocks whose headers are kept, at least the TaPoS window and the retained bodies; older ones are forgotten. */
  readonly retainedBlockHeaders: number;
  /** Energy the whole network regains per day (getTotalEnergyLimit / TotalEnergyCurrentLimit; adaptive energy is off on mainnet). */
  readonly totalEnergyLimit: bigint;
  /** TotalEnergyWeight at genesis: whole TRX the rest of the network has staked for energy (mainnet's order of magnitude). */
  readonly genesisTotalEnergyWeightTrx: bigint;
  /** Bandwidth the whole network regains per day (getTotalNetLimit). */
  readonly totalBandwidthLimit: bigint;
  /** TotalNetWeight at genesis: whole TRX the rest of the network has staked for bandwidth. */
  readonly genesisTotalBandwidthWeightTrx: bigint;
  /** Days an unfreezing waits before it can be withdrawn (getUnfreezeDelayDays). */
  readonly unfreezeDelayDays: number;
  /**
   * The longest delegation lock, in blocks (getMaxDelegateLockPeriod): the
   * committee's parameter #78 MAX_DELEGATE_LOCK_PERIOD, not a constant. Unset,
   * java-tron answers DELEGATE_PERIOD / BLOCK_PRODUCED_INTERVAL = 86,400 (3 days;
   * DynamicPropertiesStore.getMaxDelegateLockPeriod), and a proposal may only raise
   * it, to at most ONE_YEAR_BLOCK_NUMBERS = 10,512,000 (ProposalUtil). A chosen
   * `lock_period` is honoured only above 86,400 with unfreezeDelayDays > 0
   * (supportMaxDelegateLockPeriod); otherwise every lock is 86,400 blocks.
   */
  readonly maxDelegateLockPeriodBlocks: bigint;
}

const DEFAULT_CHAIN_PARAMETERS: ChainParameters = {
  blockIntervalMs: 3_000,
  genesisTimestampMs: 1_700_000_000_000,
  solidityDepth: 18,
  taposWindowBlocks: 65_536,
  maxExpirationMs: 24 * 60 * 60 * 1_000,
  maxPendingTransactions: 5_000,
  maxTransactionsPerBlock: 5_000,
  energyPriceSun: 100n,
  bandwidthPriceSun: 1_000n,
  freeBandwidthPerDay: 600,
  resultBytesPerTransaction: 64,
  transferEnergyExistingHolder: 64_285,
  transferEnergyNewHolder: 130_285,
  revertEnergy: 1_000,
  usdtEnergyFactor: 0,
  createAccountFeeSun: 100_000n,
  createNewAccountFeeSun: 1_000_000n,
  maxFeeLimitSun: 15_000_000_000n,
  usdtContract: USDT_CONTRACT_MAINNET,
  usdtDecimals: USDT_DECIMALS,
  payerCount: 3,
  payerTrxSun: 1_000_000_000_000n,
  payerUsdt: 1_000_000_000_000n,
  // Three days of blocks at 3 s; far beyond any executor's expiry check or watcher catch-up we expect.
  retainedBlockBodies: 86_400,
  retainedBlockHeaders: 65_536,
  totalEnergyLimit: 180_000_000_000n,
  genesisTotalEnergyWeightTrx: 19_000_000_000n,
  totalBandwidthLimit: 43_200_000_000n,
  genesisTotalBandwidthWeightTrx: 26_000_000_000n,
  unfreezeDelayDays: 14,
  // 30 days of blocks: the value java-tron's own tests enable the feature with
  // (DelegateResourceActuatorTest, TransactionUtilTest: saveMaxDelegateLockPeriod(864000L)),
  // taken as mainnet's committee value.
  maxDelegateLockPeriodBlocks: 864_000n,
};

export const DAY_MS = 24 * 60 * 60 * 1_000;
/** DELEGATE_PERIOD / BLOCK_PRODUCED_INTERVAL (Parameter.ChainConstant): the fixed lock, 3 days of blocks. */
export const DEFAULT_DELEGATE_LOCK_PERIOD_BLOCKS = 86_400n;
/** Parameter.ChainConstant.ONE_YEAR_BLOCK_NUMBERS: the most MAX_DELEGATE_LOCK_PERIOD may be proposed to. */
const ONE_YEAR_BLOCK_NUMBERS = 10_512_000n;

export function chainParameters(overrides: Partial<ChainParameters> = {}): ChainParameters {
  const parameters = { ...DEFAULT_CHAIN_PARAMETERS, ...overrides };
  if (parameters.solidityDepth < 1 || parameters.solidityDepth > 1_000)
    throw new RangeError('solidityDepth is 1..1000');
  if (parameters.blockIntervalMs < 1) throw new RangeError('blockIntervalMs must be positive');
  if (!Number.isSafeInteger(parameters.retainedBlockBodies) || parameters.retainedBlockBodies < 1)
    throw new RangeError('retainedBlockBodies must be a whole number ≥ 1');
  if (!Number.isSafeInteger(parameters.retainedBlockHeaders) || parameters.retainedBlockHeaders < 1)
    throw new RangeError('retainedBlockHeaders must be a whole number ≥ 1');
  // Headers always cover the TaPoS window and every block that still has its body.
  const retainedBlockHeaders = Math.max(
    parameters.retainedBlockHeaders,
    parameters.taposWindowBlocks,
    parameters.retainedBlockBodies + parameters.solidityDepth + 1,
  );
  checkEnergyFactor(parameters.usdtEnergyFactor);
  if (parameters.energyPriceSun <= 0n || parameters.bandwidthPriceSun <= 0n)
    throw new RangeError('prices must be positive');
  if (parameters.totalEnergyLimit <= 0n || parameters.genesisTotalEnergyWeightTrx <= 0n)
    throw new RangeError('the network energy limit and weight must be positive');
  if (parameters.totalBandwidthLimit <= 0n || parameters.genesisTotalBandwidthWeightTrx <= 0n)
    throw new RangeError('the network bandwidth limit and weight must be positive');
  if (!Number.isSafeInteger(parameters.unfreezeDelayDays) || parameters.unfreezeDelayDays < 0)
    throw new RangeError('unfreezeDelayDays must be a whole number ≥ 0');
  if (
    parameters.maxDelegateLockPeriodBlocks < DEFAULT_DELEGATE_LOCK_PERIOD_BLOCKS ||
    parameters.maxDelegateLockPeriodBlocks > ONE_YEAR_BLOCK_NUMBERS
  )
    throw new RangeError(
      `maxDelegateLockPeriodBlocks is ${DEFAULT_DELEGATE_LOCK_PERIOD_BLOCKS}..${ONE_YEAR_BLOCK_NUMBERS} (java-tron's default to its proposal bound)`,
    );
  if (!Number.isInteger(parameters.usdtDecimals) || parameters.usdtDecimals < 0 || parameters.usdtDecimals > 255)
    throw new RangeError('usdtDecimals is a uint8 (0..255)');
  return { ...parameters, retainedBlockHeaders };
}

/** The most java-tron lets the committee set as the max factor (Constant.DYNAMIC_ENERGY_MAX_FACTOR_RANGE, 10×). */
export const ENERGY_FACTOR_MAX = 100_000;

export function checkEnergyFactor(factor: number): void {
  if (!Number.isSafeInteger(factor) || factor < 0 || factor > ENERGY_FACTOR_MAX)
    throw new RangeError(`an energy factor is a whole number from 0 to ${ENERGY_FACTOR_MAX}`);
}

/**
 * What Nile's chain differs in from the defaults, from the official API docs'
 * captures on Nile (docs/tron.md §1.10): its TetherToken contract; energy at 100
 * sun (eth_gasPrice 0x64), bandwidth at 1,000 sun/byte, account creation
 * 0.1 TRX and 1 TRX in a system contract (getchainparameters); TetherToken's
 * dynamic energy factor 0 (getcontractinfo omits energy_factor). A block every
 * 3 s, as java-tron produces on every network. The transfer energies stay the
 * defaults: no Nile capture of a TetherToken transfer's energy was found.
 */
export const NILE_CHAIN_PARAMETERS: Partial<ChainParameters> = {
  usdtContract: tronAddress(TRON_NETWORK_PRESETS.nile.usdtContract),
  energyPriceSun: 100n,
  bandwidthPriceSun: 1_000n,
  createAccountFeeSun: 100_000n,
  createNewAccountFeeSun: 1_000_000n,
  usdtEnergyFactor: 0,
};

/** The parameters of the public network a simulated chain stands for (`paygate chain simulate --network`). */
export function networkChainParameters(network: TronNetwork): Partial<ChainParameters> {
  return network === 'nile' ? NILE_CHAIN_PARAMETERS : {};
}
