// /v1/test_helpers/crypto/*: drive the simulated TRON chain of sandbox shops as
// a payer and the network would (a signed USDT transfer, blocks, a reorg, the
// next transfer to an address failing, the hot wallet out of TRX, the faucet,
// an address on the USDT blacklist).
// On a live shop every one answers 404, like the payments' test helpers.
// Each sandbox shop has a budget of calls per minute (sandbox-helper-budget.ts).
import { Type } from 'typebox';
import { principalOf } from '../../../http/authentication.ts';
import { AUTHENTICATED_ROUTE_ERRORS, REQUEST_BODY_ERRORS, errorResponses } from '../../../http/error-responses.ts';
import { NEXT_TRANSFER_OUTCOMES } from '../../simchain/chain-state.ts';
import {
  armNextTransferOutcome,
  drainHotWalletTrx,
  faucet,
  mineBlocks,
  reorgChain,
  setUsdtBlacklisted,
  simulateDeposit,
} from '../sandbox-chain-service.ts';
import type { CryptoDeps } from '../../chain/chain-module.ts';
import type { ModuleRoutes } from '../../../gateway-module.ts';
import { AmountInput } from './crypto-schemas.ts';
import { SandboxHelperBudget } from '../sandbox-helper-budget.ts';

const MINE_MAX_BLOCKS = 1000;
/** Only unsolidified blocks can be replaced: solidification is at head − 18 (docs/tron.md §1.6). */
const REORG_MAX_DEPTH = 18;

const ADDRESS = Type.String({ minLength: 1, maxLength: 64, description: 'a TRON address in base58 (T…)' });
const LIVE_SHOP_NOTE =
  'Only for sandbox shops; on a live shop the route answers 404. Every sandbox shop shares one simulated chain, so each helper touches only the calling shop’s transfers, and a shop has a budget of helper calls per minute (429 `rate_limited` past it; PAYGATE_SANDBOX_HELPER_CALLS_PER_MINUTE, 120 by default: a shop with several keys gets no more than one key).';

const DepositBody = Type.Object(
  {
    address: { ...ADDRESS, description: 'the recipient: an invoice’s or a wallet’s deposit address' },
    amount: AmountInput,
    from: Type.Optional({
      ...ADDRESS,
      description: 'the payer; a funded payer account of the simulated chain when absent',
    }),
  },
  { additionalProperties: false, examples: [{ address: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH', amount: '25.5' }] },
);

const SimulatedDeposit = Type.Object(
  {
    tx_id: Type.String({
      description: 'the transaction, now in the simulated node’s pool; mine a block to include it',
    }),
  },
  { examples: [{ tx_id: '9f2c7b1d4e8a3f6c0b5d2e9a7c1f4b8e3d6a0c9f2b5e8d1a4c7f0b3e6d9a2c5f' }] },
);

const BlocksBody = Type.Object(
  {
    count: Type.Integer({
      minimum: 1,
      maximum: MINE_MAX_BLOCKS,
      description: `blocks to produce, 1 to ${MINE_MAX_BLOCKS}`,
    }),
  },
  { additionalProperties: false, examples: [{ count: 19 }] },
);

const Mined = Type.Object(
  {
    head_block: Type.Integer({ description: 'the newest block' }),
    solidified_block: Type.Integer({ description: 'the newest final block (head − 18)' }),
  },
  { examples: [{ head_block: 1061, solidified_block: 1043 }] },
);

const ReorgBody = Type.Object(
  {
    depth: Type.Integer({
      minimum: 1,
      maximum: REORG_MAX_DEPTH,
      description: `newest blocks to replace, 1 to ${REORG_MAX_DEPTH} (never a solidified one)`,
    }),
  },
  { additionalProperties: false, examples: [{ depth: 3 }] },
);

const Reorganized = Type.Object(
  { head_block: Type.Integer({ description: 'the newest block of the new canonical chain' }) },
  { examples: [{ head_block: 1061 }] },
);

const NextTransferBody = Type.Object(
  {
    address: {
      ...ADDRESS,
      description:
        'the recipient whose next incoming USDT transfer of the calling shop (its payout, refund or withdrawal, or its helper deposit) is affected',
    },
    outcome: Type.Union(
      NEXT_TRANSFER_OUTCOMES.map((outcome) => Type.Literal(outcome)),
      {
        description:
          '`revert`: included with REVERT (fee charged, no Transfer); `out_of_energy`: included with OUT_OF_ENERGY (every unit of energy the fee_limit allows burned); `never_included`: the broadcast is answered SUCCESS and the transaction is lost',
      },
    ),
  },
  { additionalProperties: false, examples: [{ address: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH', outcome: 'revert' }] },
);

const NextTransferArmed = Type.Object(
  {
    address: Type.String(),
    outcome: Type.String({ description: 'what the next transfer to the address will do (once)' }),
  },
  { examples: [{ address: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH', outcome: 'revert' }] },
);

const DrainBody = Type.Object({}, { additionalProperties: false, description: 'an empty object', examples: [{}] });

const Drained = Type.Object(
  {
    address: Type.String({ description: 'the sandbox hot wallet (m/44’/195’/0’/1/0)' }),
    drained_trx: Type.String({ description: 'the TRX taken away' }),
    trx: Type.String({ description: 'its TRX now: 0' }),
  },
  { examples: [{ address: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8', drained_trx: '5000', trx: '0' }] },
);

const AMOUNT6 = (what: string) =>
  Type.String({ minLength: 1, maxLength: 40, description: `${what} as a decimal string, at most 6 places` });

const FaucetBody = Type.Object(
  {
    address: Type.Optional({
      ...ADDRESS,
      description:
        'one of the calling shop’s deposit addresses, or an address the blacklist helper made for it (TRX activates it); the sandbox hot wallet when absent',
    }),
    usdt: Type.Optional(AMOUNT6('USDT to mint (at most 1000000)')),
    trx: Type.Optional(AMOUNT6('TRX to credit (at most 1000000)')),
  },
  { additionalProperties: false, examples: [{ usdt: '10000', trx: '500' }] },
);

const Funded = Type.Object(
  {
    address: Type.String(),
    usdt: Type.String({ description: 'its USDT now' }),
    trx: Type.String({ description: 'its TRX now' }),
  },
  { examples: [{ address: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8', usdt: '10000', trx: '500' }] },
);

const BlacklistBody = Type.Object(
  {
    address: Type.Optional({
      ...ADDRESS,
      description:
        'an address this helper made for the calling shop before; when absent, it makes a fresh one (listed or not) and answers it',
    }),
    listed: Type.Boolean({
      description: 'true: on the blacklist (Tether’s addBlackList); false: off it (removeBlackList)',
    }),
  },
  { additionalProperties: false, examples: [{ listed: true }] },
);

const Blacklisted = Type.Object(
  {
    address: Type.String({ description: 'the address, the calling shop’s own' }),
    listed: Type.Boolean({ description: 'whether the USDT contract now refuses transfers from and to the address' }),
  },
  { examples: [{ address: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH', listed: true }] },
);

const HELPER_ERRORS = [...AUTHENTICATED_ROUTE_ERRORS, 'forbidden', ...REQUEST_BODY_ERRORS, 'not_found'] as const;
const REORG_ERRORS = [...HELPER_ERRORS, 'invalid_state'] as const;

export const chainTestHelperRoutes =
  (deps: CryptoDeps): ModuleRoutes =>
  async (app) => {
    const budget = new SandboxHelperBudget(deps.clock, deps.config.sandboxHelperCallsPerMinute);
    // Before the body is checked, so malformed calls count too.
    app.addHook('preValidation', async (request) => budget.take(principalOf(request).shopId));
    const shopOf = (request: Parameters<typeof principalOf>[0]) => {
      const principal = principalOf(request);
      return { shopId: principal.shopId, mode: principal.shopMode };
    };

    app.post(
      '/test_helpers/crypto/deposits',
      {
        config: { scopes: ['crypto'] },
        schema: {
          operationId: 'testHelpersCryptoDeposit',
          tags: ['test helpers'],
          summary: 'Sandbox: send USDT to an address on the simulated chain, as a payer would',
          description: `${LIVE_SHOP_NOTE} A payer account of the simulated chain signs and broadcasts a real USDT transfer; it is seen once a block includes it and final 19 blocks later.`,
          body: DepositBody,
          response: {
            200: { ...SimulatedDeposit, description: 'The transfer, broadcast and waiting in the pool' },
            ...errorResponses(...HELPER_ERRORS),
          },
        },
      },
      async (request) => simulateDeposit(deps, shopOf(request), request.body),
    );

    app.post(
      '/test_helpers/crypto/blocks',
      {
        config: { scopes: ['crypto'] },
        schema: {
          operationId: 'testHelpersCryptoMineBlocks',
          tags: ['test helpers'],
          summary: 'Sandbox: produce blocks on the simulated chain',
          description: `${LIVE_SHOP_NOTE} The blocks are squeezed in between the newest block and now (3 s apart when there is room, down to 1 ms): mining never moves the chain’s clock ahead of the wall clock, so the next regular block still comes on time for every shop.`,
          body: BlocksBody,
          response: {
            200: { ...Mined, description: 'The chain after the new blocks' },
            ...errorResponses(...HELPER_ERRORS),
          },
        },
      },
      async (request) => mineBlocks(deps, shopOf(request), request.body.count),
    );

    app.post(
      '/test_helpers/crypto/reorg',
      {
        config: { scopes: ['crypto'] },
        schema: {
          operationId: 'testHelpersCryptoReorg',
          tags: ['test helpers'],
          summary: 'Sandbox: replace the newest unsolidified blocks of the simulated chain by a fork',
          description: `${LIVE_SHOP_NOTE} Transactions of the replaced blocks return to the pool; a deposit the gateway saw in them is orphaned unless a later block includes it again. 409 \`invalid_state\` while those blocks hold a transfer of another sandbox shop (its deposit or payout would be orphaned): mine blocks of your own first.`,
          body: ReorgBody,
          response: {
            200: { ...Reorganized, description: 'The chain after the fork' },
            ...errorResponses(...REORG_ERRORS),
          },
        },
      },
      async (request) => reorgChain(deps, shopOf(request), request.body.depth),
    );

    app.post(
      '/test_helpers/crypto/next_transfer_outcome',
      {
        config: { scopes: ['crypto', 'payouts'] },
        schema: {
          operationId: 'testHelpersCryptoNextTransferOutcome',
          tags: ['test helpers'],
          summary: 'Sandbox: make the next USDT transfer to an address revert, run out of energy, or never be included',
          description: `${LIVE_SHOP_NOTE} One shot: the calling shop’s next transfer to the address (a payout’s, refund’s or withdrawal’s recipient, or one of its deposit addresses for a helper deposit) fails on the simulated chain the way it can on mainnet; the one after it behaves normally again. Other shops’ transfers to the same address are never affected; the shared hot wallet cannot be armed. Arming the address again replaces the outcome. Fee quotes do not see it.`,
          body: NextTransferBody,
          response: { 200: { ...NextTransferArmed, description: 'Armed' }, ...errorResponses(...HELPER_ERRORS) },
        },
      },
      async (request) => armNextTransferOutcome(deps, shopOf(request), request.body),
    );

    app.post(
      '/test_helpers/crypto/hot_wallet/drain_trx',
      {
        config: { scopes: ['crypto', 'payouts'] },
        schema: {
          operationId: 'testHelpersCryptoDrainHotWalletTrx',
          tags: ['test helpers'],
          summary: 'Sandbox: take all TRX from the hot wallet',
          description: `${LIVE_SHOP_NOTE} The hot wallet keeps its USDT but can no longer pay energy: an executor without the sandbox's automatic top-up then lets payouts wait for funds and fail \`insufficient_hot_wallet_funds\`. What transactions already broadcast from it may burn stays, so no shop's transfer in flight fails for it; the sandbox executor tops the wallet up again before it signs. The faucet puts TRX back.`,
          body: DrainBody,
          response: { 200: { ...Drained, description: 'Drained' }, ...errorResponses(...HELPER_ERRORS) },
        },
      },
      async (request) => drainHotWalletTrx(deps, shopOf(request)),
    );

    app.post(
      '/test_helpers/crypto/faucet',
      {
        config: { scopes: ['crypto', 'payouts'] },
        schema: {
          operationId: 'testHelpersCryptoFaucet',
          tags: ['test helpers'],
          summary: 'Sandbox: credit TRX and mint USDT to an address on the simulated chain',
          description: `${LIVE_SHOP_NOTE} Setup, not a deposit: the balance changes outside any block, so no Transfer is seen and nothing is credited to a merchant. Without \`address\` it funds the sandbox hot wallet, the account payouts are sent from. Any other address must be the calling shop’s own (one of its deposit addresses, or one the blacklist helper made for it): 400 \`invalid_request\` otherwise, so no shop funds another’s address.`,
          body: FaucetBody,
          response: { 200: { ...Funded, description: 'The balances after' }, ...errorResponses(...HELPER_ERRORS) },
        },
      },
      async (request) => faucet(deps, shopOf(request), request.body),
    );

    app.post(
      '/test_helpers/crypto/blacklist',
      {
        config: { scopes: ['crypto', 'payouts'] },
        schema: {
          operationId: 'testHelpersCryptoBlacklist',
          tags: ['test helpers'],
          summary: 'Sandbox: put an address on the USDT contract’s blacklist, or take it off',
          description: `${LIVE_SHOP_NOTE} As Tether’s issuer does on mainnet: the simulated USDT contract then reverts every transfer from or to the address and answers \`isBlackListed\` with true. A payout, refund or withdrawal to it is refused with \`400 address_blacklisted\`. Every sandbox shop shares the one contract, so the helper lists only addresses it made for the calling shop: without \`address\` it makes a fresh one (pay it, then list it, to see a transfer fail afterwards); an address it did not make for this shop is 400 \`invalid_request\`. No other shop pays or owns such an address, so a listing never changes another shop’s outcome.`,
          body: BlacklistBody,
          response: {
            200: { ...Blacklisted, description: 'The address’s standing now' },
            ...errorResponses(...HELPER_ERRORS),
          },
        },
      },
      async (request) => setUsdtBlacklisted(deps, shopOf(request), request.body),
    );
  };
