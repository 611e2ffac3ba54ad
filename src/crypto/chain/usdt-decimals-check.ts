// Before a worker receives or sends on a chain, the chain's token contract must
// answer decimals() = 6. Every amount is read and written as micro-USDT: a wrong
// PAYGATE_TRON_USDT_CONTRACT naming another token (USDD has 18 decimals) would
// scale them all, 1 USDD read as 10^12 USDT. The contract is asked once per chain
// access (crypto-chain.ts makes one check per access, which the chain's watcher,
// executor and sweeper share); until it has answered 6, they skip
// their passes (the API keeps answering). When the node does not answer, or
// answers another figure, the contract is asked again after a back-off (1 s,
// doubling, at most 60 s): the process neither crashes nor hammers the node, and
// it starts working as soon as a node answers 6.
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { TronNodeClient } from '../tron/node-client.ts';
import { USDT_DECIMALS } from '../tron/trc20-usdt.ts';
import type { ChainAccess } from './crypto-chain.ts';

export const DECIMALS_RETRY_FIRST_MS = 1_000;
export const DECIMALS_RETRY_MAX_MS = 60_000;

/** What the check needs of a chain handle. */
export type DecimalsCheckedChain = Pick<ChainAccess, 'chain' | 'usdtContract'> & {
  readonly node: Pick<TronNodeClient, 'getUsdtDecimals'>;
};

interface CheckState {
  confirmed: boolean;
  nextAttemptAtMs: number;
  retryDelayMs: number;
  /** The question in flight: the watcher and the executor of one chain share it. */
  asking: Promise<boolean> | undefined;
}

export interface UsdtDecimalsCheck {
  /**
   * Whether the chain's token contract has answered decimals() = 6. False while it
   * has not (asked now, unless the back-off of the last failure is still running).
   */
  confirmed(clock: Clock, logger: Logger): Promise<boolean>;
}

/** The check of one chain access: its state is kept here, shared by every caller of that chain. */
export function createUsdtDecimalsCheck(access: DecimalsCheckedChain): UsdtDecimalsCheck {
  const state: CheckState = {
    confirmed: false,
    nextAttemptAtMs: Number.NEGATIVE_INFINITY,
    retryDelayMs: DECIMALS_RETRY_FIRST_MS,
    asking: undefined,
  };
  return {
    async confirmed(clock, logger) {
      if (state.confirmed) return true;
      if (state.asking) return state.asking;
      if (clock.now().getTime() < state.nextAttemptAtMs) return false;
      state.asking = askDecimals(access, state, clock, logger).finally(() => {
        state.asking = undefined;
      });
      return state.asking;
    },
  };
}

async function askDecimals(
  access: DecimalsCheckedChain,
  state: CheckState,
  clock: Clock,
  logger: Logger,
): Promise<boolean> {
  const context = { chain: access.chain, contract: access.usdtContract, retryInMs: state.retryDelayMs };
  try {
    const decimals = await access.node.getUsdtDecimals();
    if (decimals === USDT_DECIMALS) {
      state.confirmed = true;
      logger.info(
        { chain: access.chain, contract: access.usdtContract },
        'the USDT contract answers decimals() = 6: receiving and sending start',
      );
      return true;
    }
    logger.error(
      { ...context, decimals },
      `the token contract ${access.usdtContract} answers decimals() = ${decimals}, not ${USDT_DECIMALS}: receiving and sending on ${access.chain} stay off ` +
        '(PAYGATE_TRON_USDT_CONTRACT must name the USDT contract, TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t on mainnet; another token would scale every amount)',
    );
  } catch (error) {
    logger.warn(
      { ...context, err: error },
      'the USDT contract could not be asked its decimals(): receiving and sending wait and ask again',
    );
  }
  state.nextAttemptAtMs = clock.now().getTime() + state.retryDelayMs;
  state.retryDelayMs = Math.min(state.retryDelayMs * 2, DECIMALS_RETRY_MAX_MS);
  return false;
}
