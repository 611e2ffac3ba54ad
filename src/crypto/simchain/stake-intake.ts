// A Stake 2.0 transaction at the node's door and in a block (java-tron
// Manager.processTransaction): its bandwidth is charged first (staked, free
// allowance, else TRX burned per byte; BANDWITH_ERROR when neither pays), then the
// actuator validates it (CONTRACT_VALIDATE_ERROR, "Contract validate error : "
// and the actuator's words, as Wallet.broadcastTransaction answers) and runs it.
// In a block a transaction the state no longer allows is dropped, as a
// producer drops one that fails validation.
import type { SignedStakeTransaction } from '../tron/stake-contracts.ts';
import type { ChainParameters } from './chain-parameters.ts';
import type { ChainState, JournalEntry } from './chain-state.ts';
import { executeStake, stakeRefusal } from './stake-execution.ts';
import type { IncomingTransaction, IntakeRefusal, IntakeView } from './transaction-intake.ts';
import { bandwidthCharge, payBandwidth, type Receipt } from './usdt-execution.ts';

/** Wallet.CONTRACT_VALIDATE_ERROR: the prefix of a refused contract's message. */
const CONTRACT_VALIDATE_ERROR_PREFIX = 'Contract validate error : ';

export function checkStakeTransaction(
  view: IntakeView,
  incoming: IncomingTransaction,
  transaction: SignedStakeTransaction,
): IntakeRefusal | null {
  const { contract } = transaction.raw;
  const bandwidth = bandwidthCharge(
    view.state,
    view.parameters,
    contract.ownerAddress,
    incoming.sizeBytes,
    view.headTimestampMs + view.parameters.blockIntervalMs,
  );
  if (!bandwidth.ok) return { code: 'BANDWITH_ERROR', message: bandwidth.reason };
  const refusal = stakeRefusal(view.state, view.parameters, contract, view.headTimestampMs);
  return refusal === null
    ? null
    : { code: 'CONTRACT_VALIDATE_ERROR', message: `${CONTRACT_VALIDATE_ERROR_PREFIX}${refusal}` };
}

/** When a block runs a transaction: its own time (bandwidth recovery) and java-tron's "now" (the parent block's time). */
export interface BlockContext {
  readonly blockTimeMs: number;
  readonly nowMs: number;
}

/** Runs one Stake 2.0 transaction in a block; null when it can no longer be included (dropped). */
export function executeStakeInBlock(
  state: ChainState,
  parameters: ChainParameters,
  transaction: SignedStakeTransaction,
  sizeBytes: number,
  context: BlockContext,
  journal: JournalEntry[],
): Receipt | null {
  const { contract } = transaction.raw;
  const owner = contract.ownerAddress;
  const bandwidth = bandwidthCharge(state, parameters, owner, sizeBytes, context.blockTimeMs);
  if (!bandwidth.ok) return null;
  // The bytes are paid before the contract runs, so a freeze of the whole balance sees the balance after them.
  const mark = journal.length;
  payBandwidth(state, parameters, owner, bandwidth, context.blockTimeMs, journal);
  if (stakeRefusal(state, parameters, contract, context.nowMs) !== null) {
    state.undo(journal.splice(mark));
    return null;
  }
  const outcome = executeStake(state, parameters, contract, context.nowMs, journal);
  return {
    result: 'SUCCESS',
    energyUsageTotal: 0,
    energyFeeSun: 0n,
    netUsage: bandwidth.stakedBytes + bandwidth.freeBytes,
    netFeeSun: bandwidth.burnSun,
    feeSun: bandwidth.burnSun,
    logs: [],
    contractResult: '',
    ...(outcome.withdrawExpireAmountSun > 0n ? { withdrawExpireAmountSun: outcome.withdrawExpireAmountSun } : {}),
  };
}
