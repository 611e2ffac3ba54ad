// The TRON full node as the rest of Paygate sees it: domain objects out of the
// node's HTTP API (docs/tron.md §1.8), every answer validated first (node-answers.ts),
// requests failing over across the configured URLs (node-transport.ts). The
// production client below and the simulated chain speak the same HTTP API, so
// the same client runs against both.
import { tronAddressToHex, type TronAddress } from './address.ts';
import {
  readAccount,
  readAccountResources,
  readBlockHeader,
  readBlockResults,
  readDryRun,
  readBlockTransfers,
  readChainPrices,
  readTransactionOutcome,
  readConstantCallWord,
  readContractEnergyFactor,
  type AccountResources,
  type BlockHeader,
  type ChainPrices,
  type ScannedBlock,
  type TransactionOutcome,
  type TrxAccount,
} from './node-answers.ts';
import { broadcastHex, type BroadcastResult, type SignedTransaction } from './node-broadcast.ts';
import {
  readAccountStake,
  readCanDelegatedMaxSize,
  readDelegatedResources,
  readDelegationIndex,
  type AccountStake,
  type DelegatedResource,
  type DelegationIndex,
} from './stake-answers.ts';
import type { ResourceCode } from './stake-contracts.ts';
import { invalidAnswer, TronNodeAnswerError, TronNodeUnavailableError } from './node-errors.ts';
import { createNodeTransport, type NodeTransportOptions } from './node-transport.ts';
import { addressWord, transferCalldata } from './trc20-usdt.ts';

export type { BlockHeader, ChainPrices, ScannedBlock, TransactionOutcome, UsdtTransfer } from './node-answers.ts';
export type { BroadcastResult } from './node-broadcast.ts';
export { TronNodeAnswerError, TronNodeRequestError, TronNodeUnavailableError } from './node-errors.ts';

/** The most blocks one scanBlocks call fetches. */
const MAX_SCAN_BLOCKS = 100;
const DEFAULT_SCAN_CONCURRENCY = 4;

export interface TronNodeClient {
  /** The newest block the node has (`/wallet/getnowblock`): may still be rolled back. */
  getHeadBlock(): Promise<BlockHeader>;
  /**
   * The newest head block among up to `upTo` different nodes (every one when fewer are
   * configured): what a transaction's expiration is counted from, so that a node behind
   * the others does not make it expire before it can land.
   */
  getNewestHeadBlock(upTo: number): Promise<BlockHeader>;
  /** The newest solidified block (`/walletsolidity/getnowblock`): final. */
  getSolidifiedBlock(): Promise<BlockHeader>;
  /** The block at `number` on the node's current chain, or null when the node has none yet. */
  getBlock(number: number): Promise<BlockHeader | null>;
  /**
   * Blocks from `fromNumber` on, at most `count` (≤ MAX_SCAN_BLOCKS), each with
   * the USDT transfers of its successful transactions; stops before the first
   * block the node does not have. Consecutive blocks are checked to link
   * (parentId = the previous block's id); the caller checks the first one
   * against what it saw before (a mismatch there is a reorganisation).
   */
  scanBlocks(fromNumber: number, count: number): Promise<ScannedBlock[]>;
  /**
   * The solidified result of `txId` (`/walletsolidity/gettransactioninfobyid`) as each of `count`
   * different nodes (`all`: every configured one; `{ upTo }`: that many, or every one when fewer are
   * configured) answers it (null: not final on that node), or null when fewer than `count` nodes are
   * configured. What a second node must confirm before a credit, or before a transaction is absent.
   */
  getSolidifiedOutcomeOnNodes(
    txId: string,
    count: number | 'all' | { readonly upTo: number },
  ): Promise<(TransactionOutcome | null)[] | null>;
  /** A transaction's result on chain (`gettransactioninfobyid`), or null when it is not (or, with `solidified`, not yet final). */
  getTransactionOutcome(txId: string, options?: { readonly solidified?: boolean }): Promise<TransactionOutcome | null>;
  /**
   * The results of every transaction of solidified block `number`, proven complete: the block
   * (`/walletsolidity/getblockbynum`) and one result per transaction in it
   * (`/walletsolidity/gettransactioninfobyblocknum`), from the same node. A node that does not have
   * the block, or keeps no results (history off), or gives results that do not match the block, is
   * not believed and the next node is asked; when none can prove the block, this throws
   * (TronNodeUnavailableError). One request per block finds the outcome of many sent transactions.
   */
  getSolidifiedBlockResults(number: number): Promise<TransactionOutcome[]>;
  /** Runs a USDT transfer as a constant call (nothing is sent): whether it would succeed now, and its energy. */
  dryRunUsdtTransfer(
    from: TronAddress,
    to: TronAddress,
    amount: bigint,
  ): Promise<{ readonly ok: true; readonly energy: number } | { readonly ok: false; readonly message: string }>;
  /** TRX balance and whether the account exists (is activated) on chain; with `solidified`, as of the newest solidified block (`/walletsolidity/getaccount`). */
  getAccount(address: TronAddress, options?: { readonly solidified?: boolean }): Promise<TrxAccount>;
  /** USDT balance in micro-USDT, as the USDT contract's balanceOf answers; with `solidified`, as of the newest solidified block (`/walletsolidity/triggerconstantcontract`). */
  getUsdtBalance(address: TronAddress, options?: { readonly solidified?: boolean }): Promise<bigint>;
  /** Whether the USDT contract's issuer blacklisted the address (Tether's `isBlackListed(address)`): transfers from or to it revert. */
  isUsdtBlacklisted(address: TronAddress): Promise<boolean>;
  /**
   * The USDT contract's dynamic energy factor (`/wallet/getcontractinfo` →
   * contract_state.energy_factor, in 1/10,000): a call's energy is its base
   * energy × (1 + factor / 10,000) (docs/tron.md §1.5).
   */
  getUsdtEnergyFactor(): Promise<number>;
  /** The configured contract's decimals(): 6 for USDT; check it once at start, so a wrong contract setting cannot scale amounts. */
  getUsdtDecimals(): Promise<number>;
  getAccountResources(address: TronAddress): Promise<AccountResources>;
  /** What the account staked, delegated, received and is unfreezing under Stake 2.0 (`/wallet/getaccount`). */
  getAccountStake(address: TronAddress): Promise<AccountStake>;
  /** The delegations from `from` to `to`: one unlocked and one locked record at most (`/wallet/getdelegatedresourcev2`). */
  getDelegatedResources(from: TronAddress, to: TronAddress): Promise<DelegatedResource[]>;
  /** Who delegated to `address` and to whom it delegated (`/wallet/getdelegatedresourceaccountindexv2`). */
  getDelegationIndex(address: TronAddress): Promise<DelegationIndex>;
  /** Sun of staked `resource` the account may delegate now, its use deducted (`/wallet/getcandelegatedmaxsize`). */
  getCanDelegatedMaxSize(address: TronAddress, resource: ResourceCode): Promise<bigint>;
  /** Energy and bandwidth prices and account-creation fees (`/wallet/getchainparameters`). */
  getChainPrices(): Promise<ChainPrices>;
  /** Hands a signed transaction to the network (`/wallet/broadcasthex`); never throws for node trouble (that is `unknown`). */
  broadcast(transaction: SignedTransaction): Promise<BroadcastResult>;
  close(): Promise<void>;
}

export interface TronNodeClientOptions extends NodeTransportOptions {
  /** The TRC20 USDT contract whose Transfer logs count (USDT_CONTRACT_MAINNET of trc20-usdt.ts on mainnet). */
  readonly usdtContract: TronAddress;
  /** Blocks scanBlocks fetches at a time. */
  readonly scanConcurrency?: number | undefined;
}

export function createTronNodeClient(options: TronNodeClientOptions): TronNodeClient {
  const transport = createNodeTransport(options);
  const usdtHex = tronAddressToHex(options.usdtContract);
  const scanConcurrency = Math.max(1, Math.min(16, options.scanConcurrency ?? DEFAULT_SCAN_CONCURRENCY));

  const nowBlock = (path: string) =>
    transport.run(path, async (node) => {
      const header = readBlockHeader(await node.post(path, {}));
      // A node without a head block is still syncing from scratch: ask another.
      if (!header) throw invalidAnswer('the node has no block at all');
      return header;
    });

  // `getblock` with detail false answers the header alone (java-tron's Wallet.getBlock clears the
  // transactions): a header look-up need not move a full block of thousands of transactions.
  const getBlock = async (number: number) => {
    checkBlockNumber(number);
    return transport.run('/wallet/getblock', async (node) =>
      readBlockHeader(await node.post('/wallet/getblock', { id_or_num: String(number), detail: false }), number),
    );
  };

  const constantCall = (
    selector: string,
    ownerHex: string,
    parameter: string,
    path = '/wallet/triggerconstantcontract',
  ) =>
    transport.run(path, async (node) =>
      readConstantCallWord(
        await node.post(path, {
          owner_address: ownerHex,
          contract_address: usdtHex,
          function_selector: selector,
          parameter,
          visible: false,
        }),
        selector,
      ),
    );

  /** One block and its transaction results, from the same node, checked against each other. */
  const scanOne = (number: number) =>
    transport.run('/wallet/getblockbynum+gettransactioninfobyblocknum', async (node) => {
      const block = await node.post('/wallet/getblockbynum', { num: number });
      const header = readBlockHeader(block, number);
      if (!header) return null;
      // An empty block's results are [] anyway: no second request.
      const hasTransactions =
        Array.isArray((block as { transactions?: unknown }).transactions) &&
        (block as { transactions: unknown[] }).transactions.length > 0;
      const infos = hasTransactions ? await node.post('/wallet/gettransactioninfobyblocknum', { num: number }) : [];
      return readBlockTransfers(block, header, infos, usdtHex);
    });

  async function scanBlocks(fromNumber: number, count: number): Promise<ScannedBlock[]> {
    checkBlockNumber(fromNumber);
    if (!Number.isSafeInteger(count) || count < 1 || count > MAX_SCAN_BLOCKS)
      throw new Error(`scanBlocks: count must be 1..${MAX_SCAN_BLOCKS}, got ${count}`);
    const scanned: ScannedBlock[] = [];
    for (let start = fromNumber; start < fromNumber + count; start += scanConcurrency) {
      const numbers = range(start, Math.min(scanConcurrency, fromNumber + count - start));
      const blocks = await Promise.all(numbers.map(scanOne));
      for (const block of blocks) {
        if (!block) return scanned;
        const previous = scanned.at(-1);
        if (previous && block.header.parentId !== previous.header.id) {
          throw new TronNodeAnswerError(
            `block ${block.header.number} (${block.header.id}) does not link to block ${previous.header.number} (${previous.header.id}): its parent is ${block.header.parentId}`,
          );
        }
        scanned.push(block);
      }
    }
    return scanned;
  }

  return {
    getHeadBlock: () => nowBlock('/wallet/getnowblock'),
    getNewestHeadBlock: async (upTo) => {
      const count = Math.max(1, Math.min(upTo, transport.nodeCount));
      if (count === 1) return nowBlock('/wallet/getnowblock');
      let heads: BlockHeader[];
      try {
        heads = await transport.runOnDistinctNodes('/wallet/getnowblock', count, async (node) => {
          const header = readBlockHeader(await node.post('/wallet/getnowblock', {}));
          if (!header) throw invalidAnswer('the node has no block at all');
          return header;
        });
      } catch (error) {
        // Fewer nodes answered than asked: the one that does is still a head.
        if (!(error instanceof TronNodeUnavailableError)) throw error;
        heads = [await nowBlock('/wallet/getnowblock')];
      }
      return heads.reduce((newest, head) => (head.number > newest.number ? head : newest));
    },
    getSolidifiedBlock: () => nowBlock('/walletsolidity/getnowblock'),
    getBlock,
    scanBlocks,
    getTransactionOutcome: async (txId, outcomeOptions) => {
      checkTxId(txId);
      const path = outcomeOptions?.solidified
        ? '/walletsolidity/gettransactioninfobyid'
        : '/wallet/gettransactioninfobyid';
      return transport.run(path, async (node) =>
        readTransactionOutcome(await node.post(path, { value: txId.toLowerCase() }), txId.toLowerCase(), usdtHex),
      );
    },
    getSolidifiedOutcomeOnNodes: async (txId, count) => {
      checkTxId(txId);
      const nodes =
        count === 'all'
          ? transport.nodeCount
          : typeof count === 'number'
            ? count
            : Math.min(count.upTo, transport.nodeCount);
      if (transport.nodeCount < nodes) return null;
      const path = '/walletsolidity/gettransactioninfobyid';
      const id = txId.toLowerCase();
      return transport.runOnDistinctNodes(path, nodes, async (node) =>
        readTransactionOutcome(await node.post(path, { value: id }), id, usdtHex),
      );
    },
    getSolidifiedBlockResults: async (number) => {
      checkBlockNumber(number);
      return transport.run('/walletsolidity/getblockbynum+gettransactioninfobyblocknum', async (node) => {
        const block = await node.post('/walletsolidity/getblockbynum', { num: number });
        // `{}`: this node has not solidified the block yet (it lags) or pruned it; another may have it.
        const header = readBlockHeader(block, number);
        if (!header) throw invalidAnswer(`the node has no solidified block ${number}`);
        const hasTransactions =
          Array.isArray((block as { transactions?: unknown }).transactions) &&
          (block as { transactions: unknown[] }).transactions.length > 0;
        const infos = hasTransactions
          ? await node.post('/walletsolidity/gettransactioninfobyblocknum', { num: number })
          : [];
        return readBlockResults(block, header, infos, usdtHex);
      });
    },
    dryRunUsdtTransfer: (from, to, amount) =>
      transport.run('/wallet/triggerconstantcontract', async (node) =>
        readDryRun(
          await node.post('/wallet/triggerconstantcontract', {
            owner_address: tronAddressToHex(from),
            contract_address: usdtHex,
            function_selector: 'transfer(address,uint256)',
            parameter: Buffer.from(transferCalldata(to, amount).subarray(4)).toString('hex'),
            visible: false,
          }),
          'transfer(address,uint256)',
        ),
      ),
    getAccount: (address, accountOptions) => {
      const path = accountOptions?.solidified ? '/walletsolidity/getaccount' : '/wallet/getaccount';
      return transport.run(path, async (node) =>
        readAccount(await node.post(path, { address: tronAddressToHex(address), visible: false }), address),
      );
    },
    getUsdtBalance: (address, balanceOptions) =>
      constantCall(
        'balanceOf(address)',
        tronAddressToHex(address),
        Buffer.from(addressWord(address)).toString('hex'),
        balanceOptions?.solidified ? '/walletsolidity/triggerconstantcontract' : '/wallet/triggerconstantcontract',
      ),
    isUsdtBlacklisted: async (address) => {
      const word = await constantCall(
        'isBlackListed(address)',
        tronAddressToHex(address),
        Buffer.from(addressWord(address)).toString('hex'),
      );
      if (word > 1n) throw new TronNodeAnswerError(`isBlackListed answered ${word}, not a bool`);
      return word === 1n;
    },
    getUsdtEnergyFactor: () =>
      transport.run('/wallet/getcontractinfo', async (node) =>
        readContractEnergyFactor(await node.post('/wallet/getcontractinfo', { value: usdtHex, visible: false })),
      ),
    getUsdtDecimals: async () => {
      // Any address may make a view call; the contract's own is always well-formed.
      const decimals = await constantCall('decimals()', usdtHex, '');
      if (decimals > 255n) throw new TronNodeAnswerError(`the USDT contract's decimals() answered ${decimals}`);
      return Number(decimals);
    },
    getAccountResources: (address) =>
      transport.run('/wallet/getaccountresource', async (node) =>
        readAccountResources(
          await node.post('/wallet/getaccountresource', { address: tronAddressToHex(address), visible: false }),
        ),
      ),
    getAccountStake: (address) =>
      transport.run('/wallet/getaccount', async (node) =>
        readAccountStake(
          await node.post('/wallet/getaccount', { address: tronAddressToHex(address), visible: false }),
          address,
        ),
      ),
    getDelegatedResources: (from, to) =>
      transport.run('/wallet/getdelegatedresourcev2', async (node) =>
        readDelegatedResources(
          await node.post('/wallet/getdelegatedresourcev2', {
            fromAddress: tronAddressToHex(from),
            toAddress: tronAddressToHex(to),
            visible: false,
          }),
          from,
          to,
        ),
      ),
    getDelegationIndex: (address) =>
      transport.run('/wallet/getdelegatedresourceaccountindexv2', async (node) =>
        readDelegationIndex(
          await node.post('/wallet/getdelegatedresourceaccountindexv2', {
            value: tronAddressToHex(address),
            visible: false,
          }),
          address,
        ),
      ),
    getCanDelegatedMaxSize: (address, resource) =>
      transport.run('/wallet/getcandelegatedmaxsize', async (node) =>
        readCanDelegatedMaxSize(
          await node.post('/wallet/getcandelegatedmaxsize', {
            owner_address: tronAddressToHex(address),
            type: resource === 'ENERGY' ? 1 : 0,
            visible: false,
          }),
        ),
      ),
    getChainPrices: () =>
      transport.run('/wallet/getchainparameters', async (node) =>
        readChainPrices(await node.post('/wallet/getchainparameters', {})),
      ),
    broadcast: (transaction) => broadcastHex(transport, transaction),
    close: () => transport.close(),
  };
}

function checkBlockNumber(number: number): void {
  if (!Number.isSafeInteger(number) || number < 0)
    throw new Error(`a block number is a whole number ≥ 0, got ${number}`);
}

function checkTxId(txId: string): void {
  if (!/^[0-9a-fA-F]{64}$/.test(txId))
    throw new Error(`a transaction id is 64 hex digits, got ${JSON.stringify(txId.slice(0, 80))}`);
}

function range(start: number, length: number): number[] {
  return Array.from({ length }, (_, index) => start + index);
}
