// A node's answers are untrusted input. Each reader here checks one endpoint's
// JSON (docs/tron.md §1.8: shapes, hex spellings, fields left out when zero) and
// returns domain objects; an answer that breaks a rule throws invalidAnswer, so
// the transport does not believe that node and asks the next one. Deposits are
// read from Transfer logs, and a log counts only when everything about it is
// right: a successful transaction (in the block and in its result), emitted by
// the configured USDT contract, the Transfer topic with exactly three topics,
// 32 bytes of data, and a value above zero. Anything else yields no deposit.
import { LRUCache } from 'lru-cache';
import { Type, type Static, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { parseTronAddress, tronAddressToHex, type TronAddress } from './address.ts';
import { invalidAnswer } from './node-errors.ts';
import { readSignedCall } from './signed-calls.ts';
import { addressFromWord, TRANSFER_EVENT_TOPIC } from './trc20-usdt.ts';
/** The largest amount an int8 column holds; no real USDT transfer comes near it. */
const MAX_TRANSFER_AMOUNT = 2n ** 63n - 1n;

export interface BlockHeader {
  readonly number: number;
  /** 64 hex digits, lower case; the first 16 are the block number. */
  readonly id: string;
  readonly parentId: string;
  /** Milliseconds since the epoch, as the block producer wrote it. */
  readonly timestamp: number;
}

/** A USDT Transfer log of a successful transaction, as gettransactioninfobyid shows it (no block id there). */
interface UsdtTransferLog {
  readonly txId: string;
  /** The log's position among its transaction's logs: (txId, logIndex) identifies a deposit. */
  readonly logIndex: number;
  readonly blockNumber: number;
  readonly from: TronAddress;
  readonly to: TronAddress;
  /** micro-USDT, > 0. */
  readonly amount: bigint;
}

/**
 * What states a deposit: `signed_call`, the transaction's own signed calldata
 * (a USDT transfer/transferFrom by its owner) agrees with the log; `log_only`,
 * only the node's log does (a transfer made inside another contract).
 */
type TransferEvidence = 'signed_call' | 'log_only';

export interface UsdtTransfer extends UsdtTransferLog {
  readonly blockId: string;
  readonly evidence: TransferEvidence;
}

export interface ScannedBlock {
  readonly header: BlockHeader;
  readonly transfers: readonly UsdtTransfer[];
}

export interface TransactionOutcome {
  readonly txId: string;
  readonly blockNumber: number;
  readonly blockTimestamp: number;
  /** The contract run's result (`SUCCESS`, `REVERT`, `OUT_OF_ENERGY`, …); null for a transaction that ran no contract. */
  readonly contractResult: string | null;
  /** Whether the transaction did what it asked: no `FAILED`, and the contract (if any) ended in SUCCESS. */
  readonly succeeded: boolean;
  /** Everything the transaction cost its sender, in sun (energy and bandwidth burned, account creation). */
  readonly feeSun: bigint;
  /** All the energy the contract run took (receipt.energy_usage_total): the sender's own, the contract owner's and the burned. */
  readonly energyUsed: number;
  /** The part the sender's own energy covered (receipt.energy_usage): staked by it, delegated or rented to it. */
  readonly energyOwnUsed: number;
  /** TRX (sun) burned for the energy its own did not cover (receipt.energy_fee). */
  readonly energyFeeSun: bigint;
  readonly bandwidthUsed: number;
  readonly bandwidthFeeSun: bigint;
  /** The node's explanation of a failure (resMessage, decoded from hex), or null. */
  readonly failureMessage: string | null;
  /** The USDT transfers it made; empty unless it succeeded. */
  readonly transfers: readonly UsdtTransferLog[];
}

export interface TrxAccount {
  readonly address: TronAddress;
  /** An address exists on chain only once it received TRX (docs/tron.md §1.5): before that it cannot send anything. */
  readonly activated: boolean;
  readonly balanceSun: bigint;
}

export interface AccountResources {
  readonly freeBandwidthLimit: number;
  readonly freeBandwidthUsed: number;
  /** Bandwidth from staked TRX. */
  readonly stakedBandwidthLimit: number;
  readonly stakedBandwidthUsed: number;
  readonly energyLimit: number;
  readonly energyUsed: number;
  /** Free plus staked bandwidth not yet used today. */
  readonly bandwidthAvailable: number;
  readonly energyAvailable: number;
  /** The network's totals, for working out how much TRX to stake or delegate for an amount of energy. */
  readonly totalEnergyLimit: number;
  readonly totalEnergyWeight: number;
  readonly totalBandwidthLimit: number;
  readonly totalBandwidthWeight: number;
}

export interface ChainPrices {
  /** Sun burned per unit of energy not covered by staked energy (getEnergyFee). */
  readonly energyPriceSun: bigint;
  /** Sun burned per byte of bandwidth not covered by free or staked bandwidth (getTransactionFee). */
  readonly bandwidthPriceSun: bigint;
  /** Sun charged for the bandwidth of a transaction that creates an account (getCreateAccountFee). */
  readonly createAccountFeeSun: bigint;
  /** Sun a TRX transfer to a new address costs the sender on top (getCreateNewAccountFeeInSystemContract). */
  readonly createNewAccountFeeSun: bigint;
}

const Hex64 = Type.String({ pattern: '^[0-9a-fA-F]{64}$' });
const EvenHex = Type.String({ pattern: '^(?:[0-9a-fA-F]{2})*$' });
const Count = Type.Integer({ minimum: 0 });
/** int64 amounts: numbers, or bigint when beyond 2^53 (see parseNodeJson). */
const Sun = Type.Union([Type.Integer({ minimum: 0 }), Type.BigInt()]);

const BlockSchema = Type.Object({
  blockID: Hex64,
  block_header: Type.Object({
    raw_data: Type.Object({
      // The genesis block leaves its zero number and timestamp out.
      number: Type.Optional(Count),
      timestamp: Type.Optional(Count),
      parentHash: Hex64,
    }),
  }),
  transactions: Type.Optional(
    Type.Array(
      Type.Object({
        txID: Hex64,
        ret: Type.Optional(Type.Array(Type.Object({ contractRet: Type.Optional(Type.String({ maxLength: 64 })) }))),
        raw_data_hex: Type.Optional(EvenHex),
        signature: Type.Optional(Type.Array(EvenHex, { maxItems: 32 })),
      }),
    ),
  ),
});

const LogSchema = Type.Object({
  address: Type.String({ maxLength: 64 }),
  topics: Type.Optional(Type.Array(Hex64)),
  data: Type.Optional(EvenHex),
});

const TransactionInfoSchema = Type.Object({
  id: Hex64,
  blockNumber: Count,
  blockTimeStamp: Type.Optional(Count),
  fee: Type.Optional(Sun),
  result: Type.Optional(Type.String({ maxLength: 64 })),
  resMessage: Type.Optional(Type.String()),
  receipt: Type.Optional(
    Type.Object({
      result: Type.Optional(Type.String({ maxLength: 64 })),
      energy_usage: Type.Optional(Count),
      origin_energy_usage: Type.Optional(Count),
      energy_usage_total: Type.Optional(Count),
      energy_fee: Type.Optional(Sun),
      net_usage: Type.Optional(Count),
      net_fee: Type.Optional(Sun),
    }),
  ),
  log: Type.Optional(Type.Array(LogSchema)),
});

const TransactionInfoListSchema = Type.Array(TransactionInfoSchema);

const AccountSchema = Type.Object({ address: Type.String({ maxLength: 64 }), balance: Type.Optional(Sun) });

const ConstantCallSchema = Type.Object({
  result: Type.Object({
    result: Type.Optional(Type.Boolean()),
    code: Type.Optional(Type.String()),
    message: Type.Optional(Type.String()),
  }),
  constant_result: Type.Optional(Type.Array(EvenHex)),
  transaction: Type.Optional(
    Type.Object({ ret: Type.Optional(Type.Array(Type.Object({ ret: Type.Optional(Type.String()) }))) }),
  ),
});

const DryRunSchema = Type.Object({
  result: Type.Object({
    result: Type.Optional(Type.Boolean()),
    code: Type.Optional(Type.String()),
    message: Type.Optional(Type.String()),
  }),
  energy_used: Type.Optional(Count),
  transaction: Type.Optional(
    Type.Object({ ret: Type.Optional(Type.Array(Type.Object({ ret: Type.Optional(Type.String()) }))) }),
  ),
});

const ResourcesSchema = Type.Object({
  freeNetUsed: Type.Optional(Count),
  freeNetLimit: Type.Optional(Count),
  NetUsed: Type.Optional(Count),
  NetLimit: Type.Optional(Count),
  EnergyUsed: Type.Optional(Count),
  EnergyLimit: Type.Optional(Count),
  TotalNetLimit: Type.Optional(Count),
  TotalNetWeight: Type.Optional(Count),
  TotalEnergyLimit: Type.Optional(Count),
  TotalEnergyWeight: Type.Optional(Count),
});

const ChainParametersSchema = Type.Object({
  chainParameter: Type.Array(
    Type.Object({
      key: Type.String({ maxLength: 200 }),
      value: Type.Optional(Type.Union([Type.Integer(), Type.BigInt()])),
    }),
  ),
});

/** Compiled once per schema; every schema is a module constant, so this holds a handful. */
const checkers = new Map<TSchema, ReturnType<typeof Compile>>();

/** The answer, checked against its schema, or invalidAnswer naming the first problem. */
export function expectShape<S extends TSchema>(schema: S, value: unknown, what: string): Static<S> {
  let checker = checkers.get(schema);
  if (!checker) checkers.set(schema, (checker = Compile(schema)));
  if (checker.Check(value)) return value as Static<S>;
  const first = [...checker.Errors(value)][0];
  throw invalidAnswer(`${what}: ${first ? `${first.instancePath || '/'} ${first.message}` : 'unexpected shape'}`);
}

/** `{}`: the node's way of saying "no such thing". */
export function isEmptyObject(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0;
}

/** A block's header from getnowblock / getblockbynum; null for `{}` (no such block). */
export function readBlockHeader(answer: unknown, expectedNumber?: number): BlockHeader | null {
  if (isEmptyObject(answer)) return null;
  const block = expectShape(BlockSchema, answer, 'block');
  const raw = block.block_header.raw_data;
  const header: BlockHeader = {
    number: raw.number ?? 0,
    id: block.blockID.toLowerCase(),
    parentId: raw.parentHash.toLowerCase(),
    timestamp: raw.timestamp ?? 0,
  };
  if (expectedNumber !== undefined && header.number !== expectedNumber) {
    throw invalidAnswer(`asked for block ${expectedNumber}, got block ${header.number}`);
  }
  // A TRON block id starts with its number (8 bytes, big-endian); its parent's with the number before.
  if (header.id.slice(0, 16) !== numberPrefix(header.number)) {
    throw invalidAnswer(`block ${header.number} has id ${header.id}, which does not start with its number`);
  }
  if (header.number > 0 && header.parentId.slice(0, 16) !== numberPrefix(header.number - 1)) {
    throw invalidAnswer(
      `block ${header.number} names parent ${header.parentId}, which is not block ${header.number - 1}`,
    );
  }
  return header;
}

function numberPrefix(number: number): string {
  return number.toString(16).padStart(16, '0');
}

/**
 * The USDT transfers of one block: its transactions (getblockbynum, with their
 * `ret`) and their results (gettransactioninfobyblocknum: `[]` or `{}` when
 * there are none), which must belong to that block.
 */
export function readBlockTransfers(
  blockAnswer: unknown,
  header: BlockHeader,
  infosAnswer: unknown,
  usdtHex: string,
): ScannedBlock {
  const block = expectShape(BlockSchema, blockAnswer, 'block');
  const contractRets = new Map<string, string | undefined>();
  const printed = new Map<string, BlockTransaction>();
  for (const transaction of block.transactions ?? []) {
    contractRets.set(transaction.txID.toLowerCase(), transaction.ret?.[0]?.contractRet);
    printed.set(transaction.txID.toLowerCase(), transaction);
  }
  const infos = isEmptyObject(infosAnswer)
    ? []
    : expectShape(TransactionInfoListSchema, infosAnswer, `results of block ${header.number}`);
  const seen = new Set<string>();
  const transfers: UsdtTransfer[] = [];
  for (const info of infos) {
    const txId = info.id.toLowerCase();
    if (info.blockNumber !== header.number)
      throw invalidAnswer(
        `the results of block ${header.number} hold transaction ${txId} of block ${info.blockNumber}`,
      );
    if (!contractRets.has(txId))
      throw invalidAnswer(`the results of block ${header.number} hold transaction ${txId}, which is not in the block`);
    if (seen.has(txId)) throw invalidAnswer(`the results of block ${header.number} hold transaction ${txId} twice`);
    seen.add(txId);
    // Both the block and the result must say the contract run succeeded.
    const succeeded =
      contractRets.get(txId) === 'SUCCESS' && transactionSucceeded(info) && info.receipt?.result === 'SUCCESS';
    const logs = transferLogs(info, txId, succeeded, usdtHex);
    const evidence = succeeded ? checkAgainstSignedCall(printed.get(txId)!, info, logs, usdtHex) : 'log_only';
    for (const log of logs) transfers.push({ ...log, blockId: header.id, evidence });
  }
  // A node that leaves a result out could hide a deposit: every transaction of the block must have one.
  if (seen.size !== contractRets.size) {
    throw invalidAnswer(
      `block ${header.number} has ${contractRets.size} transactions but the node gave results for ${seen.size}`,
    );
  }
  return { header, transfers };
}

type BlockTransaction = NonNullable<Static<typeof BlockSchema>['transactions']>[number];

/**
 * Holds a successful transaction's USDT logs against what its owner signed
 * (signed-calls.ts). A signed USDT transfer must show exactly its one Transfer
 * log, with the signed sender, recipient and amount: a log that says otherwise,
 * or is missing, is the node's invention or omission. Transactions that state
 * no USDT movement themselves give `log_only` deposits, which the watcher
 * credits only after a second confirmation (docs/crypto.md).
 */
function checkAgainstSignedCall(
  transaction: BlockTransaction,
  info: Static<typeof TransactionInfoSchema>,
  logs: readonly UsdtTransferLog[],
  usdtHex: string,
): TransferEvidence {
  const txId = transaction.txID.toLowerCase();
  const reading = readSignedCall(transaction, usdtHex);
  if (reading.kind === 'altered')
    throw invalidAnswer(`transaction ${txId}: its raw_data_hex does not hash to its txID`);
  if (reading.kind === 'missing') {
    // java-tron prints raw_data_hex for every transaction of a block (Util.printTransactionToJSON).
    if (logs.length > 0)
      throw invalidAnswer(`transaction ${txId} carries USDT transfers but no raw_data_hex to check them against`);
    return 'log_only';
  }
  if (reading.kind === 'other') return 'log_only';
  const { move } = reading;
  const usdtLogs = (info.log ?? []).filter((log) => logAddressHex(log.address) === usdtHex);
  const [only] = logs;
  // A zero (or int8-overflowing) amount still logs, but is no deposit: `logs` leaves it out.
  const isDeposit = move.amount > 0n && move.amount <= MAX_TRANSFER_AMOUNT;
  const statesMove =
    usdtLogs.length === 1 &&
    (isDeposit
      ? logs.length === 1 && only!.from === move.from && only!.to === move.to && only!.amount === move.amount
      : logs.length === 0);
  if (!statesMove) {
    const shown =
      logs.map((log) => `${log.amount} from ${log.from} to ${log.to}`).join('; ') ||
      `${usdtLogs.length} USDT log(s) and no transfer`;
    throw invalidAnswer(
      `transaction ${txId} signs a transfer of ${move.amount} from ${move.from} to ${move.to}, but the node's logs show ${shown}`,
    );
  }
  return 'signed_call';
}

/** A transaction's result (gettransactioninfobyid); null for `{}` (not on chain, or not yet solidified on /walletsolidity). */
export function readTransactionOutcome(answer: unknown, txId: string, usdtHex: string): TransactionOutcome | null {
  if (isEmptyObject(answer)) return null;
  const info = expectShape(TransactionInfoSchema, answer, 'transaction result');
  if (info.id.toLowerCase() !== txId) throw invalidAnswer(`asked for transaction ${txId}, got ${info.id}`);
  const contractResult = info.receipt?.result ?? null;
  const succeeded = transactionSucceeded(info) && (contractResult === null || contractResult === 'SUCCESS');
  return {
    txId,
    blockNumber: info.blockNumber,
    blockTimestamp: info.blockTimeStamp ?? 0,
    contractResult,
    succeeded,
    feeSun: sun(info.fee),
    energyUsed: info.receipt?.energy_usage_total ?? 0,
    energyOwnUsed: info.receipt?.energy_usage ?? 0,
    energyFeeSun: sun(info.receipt?.energy_fee),
    bandwidthUsed: info.receipt?.net_usage ?? 0,
    bandwidthFeeSun: sun(info.receipt?.net_fee),
    failureMessage: info.resMessage ? decodeNodeText(info.resMessage) : null,
    transfers: transferLogs(info, txId, succeeded && contractResult === 'SUCCESS', usdtHex),
  };
}

/**
 * The results of every transaction of a solidified block, proven complete: the
 * block itself (getblockbynum, with its transactions) and its results
 * (gettransactioninfobyblocknum), which must hold exactly one result per
 * transaction of the block, each agreeing with the block on whether its
 * contract run succeeded. `[]` is java-tron's answer for an empty block, but
 * also for one it does not have or whose results it does not keep (history
 * switched off): only the block's own transaction list tells them apart.
 */
export function readBlockResults(
  blockAnswer: unknown,
  header: BlockHeader,
  infosAnswer: unknown,
  usdtHex: string,
): TransactionOutcome[] {
  const block = expectShape(BlockSchema, blockAnswer, 'block');
  const contractRets = new Map<string, string | undefined>();
  for (const transaction of block.transactions ?? [])
    contractRets.set(transaction.txID.toLowerCase(), transaction.ret?.[0]?.contractRet);
  if (contractRets.size === 0) return [];
  if (!Array.isArray(infosAnswer)) throw invalidAnswer(`the results of block ${header.number} are not a list`);
  const outcomes = new Map<string, TransactionOutcome>();
  for (const info of infosAnswer as unknown[]) {
    const id = (info as { id?: unknown } | null)?.id;
    if (typeof id !== 'string' || !/^[0-9a-fA-F]{64}$/.test(id))
      throw invalidAnswer(`a result of block ${header.number} has no id`);
    const outcome = readTransactionOutcome(info, id.toLowerCase(), usdtHex)!;
    if (outcome.blockNumber !== header.number)
      throw invalidAnswer(
        `the results of block ${header.number} hold transaction ${outcome.txId} of block ${outcome.blockNumber}`,
      );
    if (!contractRets.has(outcome.txId))
      throw invalidAnswer(
        `the results of block ${header.number} hold transaction ${outcome.txId}, which is not in the block`,
      );
    if (outcomes.has(outcome.txId))
      throw invalidAnswer(`the results of block ${header.number} hold transaction ${outcome.txId} twice`);
    const blockSaysSuccess = (contractRets.get(outcome.txId) ?? 'SUCCESS') === 'SUCCESS';
    if (blockSaysSuccess !== outcome.succeeded)
      throw invalidAnswer(
        `block ${header.number} and its results disagree on whether transaction ${outcome.txId} succeeded`,
      );
    outcomes.set(outcome.txId, outcome);
  }
  if (outcomes.size !== contractRets.size) {
    throw invalidAnswer(
      `block ${header.number} has ${contractRets.size} transactions but the node gave results for ${outcomes.size}: it does not keep them (history off), or hides them`,
    );
  }
  return [...outcomes.values()];
}

/** A constant call of a state-changing function (a dry run): whether it would run, and the energy it used. */
export function readDryRun(
  answer: unknown,
  call: string,
): { readonly ok: true; readonly energy: number } | { readonly ok: false; readonly message: string } {
  const answered = expectShape(DryRunSchema, answer, `${call} call`);
  if (answered.result.result !== true || answered.transaction?.ret?.[0]?.ret === 'FAILED') {
    return {
      ok: false,
      message: answered.result.message ? decodeNodeText(answered.result.message) : (answered.result.code ?? 'REVERT'),
    };
  }
  return { ok: true, energy: answered.energy_used ?? 0 };
}

/** `result` is FAILED for a failed transaction and left out otherwise (its zero value is spelled SUCESS in the protocol). */
function transactionSucceeded(info: Static<typeof TransactionInfoSchema>): boolean {
  return info.result === undefined || info.result === 'SUCESS';
}

/**
 * The deposits among a transaction's logs. Logs are checked for shape whatever
 * they are (a malformed one means a broken node); the deposit rules then pick
 * the USDT Transfers, and none at all from a transaction that did not succeed.
 */
function transferLogs(
  info: Static<typeof TransactionInfoSchema>,
  txId: string,
  succeeded: boolean,
  usdtHex: string,
): UsdtTransferLog[] {
  const logs = info.log ?? [];
  const transfers: UsdtTransferLog[] = [];
  logs.forEach((log, logIndex) => {
    const emitter = logAddressHex(log.address);
    if (emitter === null)
      throw invalidAnswer(
        `transaction ${txId} log ${logIndex} has address ${JSON.stringify(log.address.slice(0, 64))}`,
      );
    if (!succeeded || emitter !== usdtHex) return;
    const topics = (log.topics ?? []).map((topic) => topic.toLowerCase());
    const data = (log.data ?? '').toLowerCase();
    if (topics.length !== 3 || topics[0] !== TRANSFER_EVENT_TOPIC || data.length !== 64) return;
    const from = topicAddress(topics[1]!);
    const to = topicAddress(topics[2]!);
    const amount = BigInt(`0x${data}`);
    if (from === undefined || to === undefined || amount <= 0n || amount > MAX_TRANSFER_AMOUNT) return;
    transfers.push({ txId, logIndex, blockNumber: info.blockNumber, from, to, amount });
  });
  return transfers;
}

/** Addresses by Transfer topic, at most this many remembered (then forgotten all at once). */
const TOPIC_ADDRESSES_MAX = 50_000;
/** false: the topic holds no address (LRUCache stores no undefined). */
const addressOfTopic = new LRUCache<string, TronAddress | false>({ max: TOPIC_ADDRESSES_MAX });

/**
 * The address of a Transfer topic (lowercase hex). Remembered: the same senders
 * and recipients recur from block to block (exchanges, payers, our own hot
 * wallet), and each Base58Check encoding costs two SHA-256.
 */
function topicAddress(topic: string): TronAddress | undefined {
  const known = addressOfTopic.get(topic);
  if (known !== undefined) return known === false ? undefined : known;
  const address = addressFromWord(Buffer.from(topic, 'hex'));
  addressOfTopic.set(topic, address ?? false);
  return address;
}

/**
 * A log's emitter as 21-byte hex. Nodes write the 20-byte EVM form; `visible`
 * answers write Base58; some write the 21-byte `41…` form (docs/tron.md §1.7, §1.9).
 */
function logAddressHex(address: string): string | null {
  if (/^[0-9a-fA-F]{40}$/.test(address)) return `41${address.toLowerCase()}`;
  if (/^41[0-9a-fA-F]{40}$/.test(address)) return address.toLowerCase();
  const parsed = parseTronAddress(address);
  return parsed.ok ? tronAddressToHex(parsed.address) : null;
}

/** getaccount: `{}` is an address that does not exist on chain yet (balance 0, not activated). */
export function readAccount(answer: unknown, address: TronAddress): TrxAccount {
  if (isEmptyObject(answer)) return { address, activated: false, balanceSun: 0n };
  const account = expectShape(AccountSchema, answer, 'account');
  if (account.address.toLowerCase() !== tronAddressToHex(address) && account.address !== address) {
    throw invalidAnswer(`asked for account ${address}, got ${account.address}`);
  }
  return { address, activated: true, balanceSun: sun(account.balance) };
}

/** triggerconstantcontract of a view function returning one uint256 (balanceOf, decimals): that word. */
export function readConstantCallWord(answer: unknown, call: string): bigint {
  const answered = expectShape(ConstantCallSchema, answer, `${call} call`);
  if (answered.result.result !== true || answered.transaction?.ret?.[0]?.ret === 'FAILED') {
    const message = answered.result.message ? decodeNodeText(answered.result.message) : 'no result';
    throw invalidAnswer(`${call} did not run: ${answered.result.code ?? ''} ${message}`.trim());
  }
  const word = answered.constant_result?.[0];
  if (word === undefined || word.length !== 64)
    throw invalidAnswer(`${call} answered ${JSON.stringify(word?.slice(0, 80))}, not one 32-byte word`);
  return BigInt(`0x${word}`);
}

/** getaccountresource: fields left out are zero, and `{}` (no account) is all zeros. */
export function readAccountResources(answer: unknown): AccountResources {
  const resources = expectShape(ResourcesSchema, answer, 'account resources');
  const freeBandwidthLimit = resources.freeNetLimit ?? 0;
  const freeBandwidthUsed = resources.freeNetUsed ?? 0;
  const stakedBandwidthLimit = resources.NetLimit ?? 0;
  const stakedBandwidthUsed = resources.NetUsed ?? 0;
  const energyLimit = resources.EnergyLimit ?? 0;
  const energyUsed = resources.EnergyUsed ?? 0;
  return {
    freeBandwidthLimit,
    freeBandwidthUsed,
    stakedBandwidthLimit,
    stakedBandwidthUsed,
    energyLimit,
    energyUsed,
    bandwidthAvailable:
      Math.max(0, freeBandwidthLimit - freeBandwidthUsed) + Math.max(0, stakedBandwidthLimit - stakedBandwidthUsed),
    energyAvailable: Math.max(0, energyLimit - energyUsed),
    totalEnergyLimit: resources.TotalEnergyLimit ?? 0,
    totalEnergyWeight: resources.TotalEnergyWeight ?? 0,
    totalBandwidthLimit: resources.TotalNetLimit ?? 0,
    totalBandwidthWeight: resources.TotalNetWeight ?? 0,
  };
}

/** getchainparameters: the prices a fee quote needs; a missing price is refused rather than taken as free. */
export function readChainPrices(answer: unknown): ChainPrices {
  const parameters = expectShape(ChainParametersSchema, answer, 'chain parameters');
  const values = new Map(parameters.chainParameter.map((parameter) => [parameter.key, parameter.value ?? 0]));
  const price = (key: string, mustBePositive: boolean): bigint => {
    if (!values.has(key)) throw invalidAnswer(`chain parameters lack ${key}`);
    const value = BigInt(values.get(key)!);
    if (value < 0n || (mustBePositive && value === 0n)) throw invalidAnswer(`chain parameter ${key} is ${value}`);
    return value;
  };
  return {
    energyPriceSun: price('getEnergyFee', true),
    bandwidthPriceSun: price('getTransactionFee', true),
    createAccountFeeSun: price('getCreateAccountFee', false),
    createNewAccountFeeSun: price('getCreateNewAccountFeeInSystemContract', false),
  };
}

function sun(value: number | bigint | undefined): bigint {
  const amount = BigInt(value ?? 0);
  if (amount < 0n) throw invalidAnswer(`a negative amount of sun: ${amount}`);
  return amount;
}

const NODE_TEXT_CAP = 500;

/** Messages come hex-encoded unless `visible` (docs/tron.md §1.8, tronweb #538); plain text is kept as it is. */
export function decodeNodeText(text: string): string {
  const decoded = /^(?:[0-9a-fA-F]{2})+$/.test(text) ? Buffer.from(text, 'hex').toString('utf8') : text;
  // Control characters other than whitespace would only garble a log line.
  return decoded.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '').slice(0, NODE_TEXT_CAP);
}

const ContractInfoSchema = Type.Object({
  contract_state: Type.Optional(
    Type.Object({ energy_factor: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })) }),
  ),
});

/**
 * getcontractinfo: the contract's dynamic energy factor (ContractState.energy_factor,
 * 1/10,000), 0 when left out (proto3 zero). `{}` is an address with no contract:
 * a wrong USDT contract setting, refused rather than read as factor 0.
 */
export function readContractEnergyFactor(answer: unknown): number {
  if (isEmptyObject(answer)) throw invalidAnswer('getcontractinfo: the node knows no contract at the USDT address');
  return expectShape(ContractInfoSchema, answer, 'contract info').contract_state?.energy_factor ?? 0;
}
