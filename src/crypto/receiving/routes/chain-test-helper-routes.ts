// /v1/test_helpers/crypto/*: drive the simulated TRON chain of sandbox shops as
// a payer and the network would (a signed USDT transfer, blocks, a reorg). On a
// live shop every one answers 404, like the payments' test helpers.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../../context.ts';
import { principalOf } from '../../../http/authentication.ts';
import { AUTHENTICATED_ROUTE_ERRORS, REQUEST_BODY_ERRORS, errorResponses } from '../../../http/error-responses.ts';
import { mineBlocks, reorgChain, simulateDeposit } from '../sandbox-chain-service.ts';
import { cryptoDepsFor } from '../crypto-deps.ts';
import { AmountInput } from './crypto-schemas.ts';

export const MINE_MAX_BLOCKS = 1000;
/** Only unsolidified blocks can be replaced: solidification is at head − 18 (TRON.md). */
export const REORG_MAX_DEPTH = 18;

const ADDRESS = Type.String({ minLength: 1, maxLength: 64, description: 'a TRON address in base58 (T…)' });
const LIVE_SHOP_NOTE = 'Only for sandbox shops; on a live shop the route answers 404.';

const DepositBody = Type.Object(
  {
    address: { ...ADDRESS, description: 'the recipient: an invoice’s or a wallet’s deposit address' },
    amount: AmountInput,
    from: Type.Optional({ ...ADDRESS, description: 'the payer; a funded payer account of the simulated chain when absent' }),
  },
  { additionalProperties: false, examples: [{ address: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH', amount: '25.5' }] },
);

const SimulatedDeposit = Type.Object(
  { tx_id: Type.String({ description: 'the transaction, now in the simulated node’s pool; mine a block to include it' }) },
  { examples: [{ tx_id: '9f2c7b1d4e8a3f6c0b5d2e9a7c1f4b8e3d6a0c9f2b5e8d1a4c7f0b3e6d9a2c5f' }] },
);

const BlocksBody = Type.Object(
  { count: Type.Integer({ minimum: 1, maximum: MINE_MAX_BLOCKS, description: `blocks to produce, 1 to ${MINE_MAX_BLOCKS}` }) },
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
  { depth: Type.Integer({ minimum: 1, maximum: REORG_MAX_DEPTH, description: `newest blocks to replace, 1 to ${REORG_MAX_DEPTH} (never a solidified one)` }) },
  { additionalProperties: false, examples: [{ depth: 3 }] },
);

const Reorganized = Type.Object({ head_block: Type.Integer({ description: 'the newest block of the new canonical chain' }) }, { examples: [{ head_block: 1061 }] });

const HELPER_ERRORS = [...AUTHENTICATED_ROUTE_ERRORS, 'forbidden', ...REQUEST_BODY_ERRORS, 'not_found'] as const;

export const chainTestHelperRoutes: FastifyPluginAsyncTypebox<{ context: AppContext }> = async (app, { context }) => {
  const deps = () => cryptoDepsFor(context);
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
        response: { 200: { ...SimulatedDeposit, description: 'The transfer, broadcast and waiting in the pool' }, ...errorResponses(...HELPER_ERRORS) },
      },
    },
    async (request) => simulateDeposit(deps(), shopOf(request), request.body),
  );

  app.post(
    '/test_helpers/crypto/blocks',
    {
      config: { scopes: ['crypto'] },
      schema: {
        operationId: 'testHelpersCryptoMineBlocks',
        tags: ['test helpers'],
        summary: 'Sandbox: produce blocks on the simulated chain',
        description: LIVE_SHOP_NOTE,
        body: BlocksBody,
        response: { 200: { ...Mined, description: 'The chain after the new blocks' }, ...errorResponses(...HELPER_ERRORS) },
      },
    },
    async (request) => mineBlocks(deps(), shopOf(request), request.body.count),
  );

  app.post(
    '/test_helpers/crypto/reorg',
    {
      config: { scopes: ['crypto'] },
      schema: {
        operationId: 'testHelpersCryptoReorg',
        tags: ['test helpers'],
        summary: 'Sandbox: replace the newest unsolidified blocks of the simulated chain by a fork',
        description: `${LIVE_SHOP_NOTE} Transactions of the replaced blocks return to the pool; a deposit the gateway saw in them is orphaned unless a later block includes it again.`,
        body: ReorgBody,
        response: { 200: { ...Reorganized, description: 'The chain after the fork' }, ...errorResponses(...HELPER_ERRORS) },
      },
    },
    async (request) => reorgChain(deps(), shopOf(request), request.body.depth),
  );
};
