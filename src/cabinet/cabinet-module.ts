// The cabinet module: the merchant's people use the gateway through a web app
// under /cabinet (docs/cabinet.md). Server-rendered pages, every action a plain
// form; sessions, roles and CSRF in cabinet-http.ts; each area of the cabinet
// (sign-in, account, shops, team, two-factor, settings, audit) adds its routes.
import type { FastifyInstance } from 'fastify';
import type { BuiltModule } from '../gateway-module.ts';
import { accountRoutes } from './account/account-routes.ts';
import { accountingRoutes } from './accounting/accounting-routes.ts';
import { keyRoutes } from './keys/key-routes.ts';
import { auditRoutes } from './audit/audit-routes.ts';
import { createMailer } from './mail/mailer.ts';
import { installAssetRoutes } from './assets/cabinet-assets.ts';
import { createCabinetService, type CabinetModuleDeps, type CabinetService } from './cabinet-context.ts';
import { installCabinetHttp, type CabinetHttpDeps } from './cabinet-http.ts';
import { cryptoRoutes } from './crypto/crypto-routes.ts';
import { methodRoutes } from './methods/method-routes.ts';
import { receivingRoutes } from './receiving/receiving-routes.ts';
import { operationRoutes } from './operations/operation-routes.ts';
import { paymentRoutes } from './payments/payment-routes.ts';
import { overviewRoutes } from './overview/overview-routes.ts';
import { sandboxRoutes } from './sandbox/sandbox-routes.ts';
import { shopRoutes } from './shops/shop-routes.ts';
import { payoutAreaRoutes } from './payouts/payout-area.ts';
import { passwordResetRoutes } from './password-reset/password-reset-routes.ts';
import { signInRoutes } from './sign-in/sign-in-routes.ts';
import { teamRoutes } from './team/team-routes.ts';
import { transferRoutes } from './transfers/transfer-routes.ts';
import { twoFactorRoutes } from './two-factor/two-factor-routes.ts';
import { webhookRoutes } from './webhooks/webhook-routes.ts';
import { withdrawalRoutes } from './withdrawals/withdrawal-routes.ts';

export type { CabinetModuleDeps };

/** Each area's routes, registered inside the cabinet's scope. */
type AreaRoutes = (deps: CabinetModuleDeps, http: CabinetHttpDeps) => (app: FastifyInstance) => Promise<void>;

const AREAS: readonly AreaRoutes[] = [
  signInRoutes,
  twoFactorRoutes,
  passwordResetRoutes,
  accountRoutes,
  teamRoutes,
  shopRoutes,
  overviewRoutes,
  keyRoutes,
  methodRoutes,
  webhookRoutes,
  cryptoRoutes,
  transferRoutes,
  receivingRoutes,
  payoutAreaRoutes,
  sandboxRoutes,
  auditRoutes,
  withdrawalRoutes,
  accountingRoutes,
  paymentRoutes,
  operationRoutes,
];

export interface CabinetModuleService extends CabinetService {
  /** Every cabinet route and its access rule, once the routes are registered. */
  readonly routes: CabinetHttpDeps['routes'];
}

export function createCabinetModule(platform: CabinetModuleDeps): BuiltModule<CabinetModuleService> {
  const deps: CabinetModuleDeps = { ...platform, mailer: platform.mailer ?? createMailer(platform.config) };
  const service = createCabinetService(deps);
  const http: CabinetHttpDeps = { config: deps.config, service, routes: [] };
  return {
    module: {
      name: 'cabinet',
      close: async () => deps.mailer?.close(),
      publicRoutes: async (app) => {
        // Outside the cabinet's scope: a stylesheet needs no session lookup.
        installAssetRoutes(app);
        await app.register(async (cabinet) => {
          await installCabinetHttp(cabinet, http);
          for (const area of AREAS) await cabinet.register(area(deps, http));
        });
      },
    },
    service: { ...service, routes: http.routes },
  };
}
