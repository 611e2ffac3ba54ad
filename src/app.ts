// Builds the HTTP application: error handling, validation, OpenAPI, health and
// metrics, then the routes of the modules it is given (built by modules.ts). No
// listening and no workers here, so tests drive the very same app through
// `inject` or a real port.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { TypeBoxValidatorCompiler, registerAjvFormats, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';
import type { Config } from './config.ts';
import type { AppContext } from './context.ts';
import { DATABASE_RETRY_AFTER_SECONDS } from './db/database-errors.ts';
import { AuthFailureLimiter } from './http/auth-failure-limit.ts';
import { installAuthentication } from './http/authentication.ts';
import {
  MAX_PATH_PARAMETER_LENGTH,
  REQUEST_ID_LOG_KEY,
  handleClientError,
  handleFrameworkError,
  installErrorHandling,
} from './http/error-handler.ts';
import { readiness, type Readiness } from './health/readiness.ts';
import { installJsonBodyParser } from './http/json-body-parser.ts';
import { installMetricsRoute } from './http/metrics-route.ts';
import { openApiOptions } from './http/openapi-document.ts';
import { installRateLimit } from './http/rate-limit.ts';
import { installStringInputCheck } from './http/string-inputs.ts';
import type { GatewayModules } from './modules.ts';

const BODY_LIMIT_BYTES = 64 * 1024;

export interface BuildAppOptions {
  /** Shared rate-limit store; in-process counting when absent. */
  readonly redis?: Redis | undefined;
}

registerAjvFormats();

export type App = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** PAYGATE_TRUST_PROXY as Fastify takes it; a hop count trusts that many forwarders next to us. */
function fastifyTrustProxy(
  setting: Config['trustProxy'],
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  return setting === false ? false : [...setting];
}

function downList(checks: Readiness['checks']): string {
  return Object.entries(checks)
    .filter(([, result]) => result === 'down')
    .map(([name]) => name)
    .join(', ');
}

/** When the request arrived, in ms since the epoch (Fastify's request clock is monotonic). */
function requestStartedAt(request: { elapsedTime: number }): number {
  return Date.now() - request.elapsedTime;
}

/** A Fastify instance with the gateway's logger, request ids, proxy trust, limits and error handling. */
function createFastify(context: AppContext): App {
  const app = Fastify({
    loggerInstance: context.logger as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: fastifyTrustProxy(context.config.trustProxy),
    requestIdHeader: 'x-request-id',
    logController: new LogController({ requestIdLogLabel: REQUEST_ID_LOG_KEY }),
    genReqId: () => crypto.randomUUID(),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PATH_PARAMETER_LENGTH },
    frameworkErrors: handleFrameworkError,
    clientErrorHandler: handleClientError,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(TypeBoxValidatorCompiler);
  installErrorHandling(app, context.health);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  return app;
}

/** What every listening process answers: liveness, readiness (one check per dependency) and Prometheus metrics. */
function installOperationsRoutes(
  app: App,
  context: AppContext,
  redis: Redis | undefined,
  authFailures: AuthFailureLimiter,
): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const { ready, checks } = await readiness(context, redis);
    if (ready) return { status: 'ok', database: context.backend, checks };
    return reply
      .code(503)
      .header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS))
      .send({
        status: 'unavailable',
        error: 'service_unavailable',
        message: `Not ready: ${downList(checks)} down.`,
        database: context.backend,
        checks,
      });
  });
  installMetricsRoute(app, context, authFailures);
}

/**
 * A worker process's own listener (`serve --role worker --port N`): /healthz, /readyz and /metrics
 * only, so a process that runs workers alone can be probed and its workers' metrics scraped.
 */
export async function buildOperationsApp(context: AppContext, options: BuildAppOptions = {}): Promise<App> {
  const app = createFastify(context);
  installOperationsRoutes(
    app,
    context,
    options.redis,
    new AuthFailureLimiter(context.clock, context.config.authFailuresPerMinute),
  );
  return app;
}

export async function buildApp(
  context: AppContext,
  modules: Pick<GatewayModules, 'list' | 'merchants'>,
  options: BuildAppOptions = {},
): Promise<App> {
  const app = createFastify(context);
  const health = context.health;
  installStringInputCheck(app);
  // JSON sent as text/plain is 415, not a string that fails the schema (the page adds its form parser).
  app.removeContentTypeParser('text/plain');
  installJsonBodyParser(app);

  await app.register(swagger, openApiOptions(context.config));
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  // A change stored: the database can write again (ends an outage of storage, DependencyHealth.up).
  app.addHook('onResponse', async (request, reply) => {
    if (request.method !== 'GET' && request.method !== 'HEAD' && reply.statusCode < 400)
      health.up('database', requestStartedAt(reply), true);
  });
  const authFailures = new AuthFailureLimiter(context.clock, context.config.authFailuresPerMinute);
  installOperationsRoutes(app, context, options.redis, authFailures);

  await app.register(
    async (v1) => {
      installAuthentication(v1, modules.merchants.authenticate, authFailures);
      await installRateLimit(v1, { perMinute: context.config.rateLimitPerMinute, redis: options.redis, health });
      for (const module of modules.list) if (module.routes) await v1.register(module.routes);
    },
    { prefix: '/v1' },
  );

  for (const module of modules.list) if (module.publicRoutes) await app.register(module.publicRoutes);
  return app;
}
