// What a module of the gateway is. Each is built once by its `createXModule(deps)` from
// explicit, typed dependencies (the platform parts it uses and other modules' service
// interfaces, never their repositories), owns what it opens, and gives back its routes,
// its workers and the service other modules may call. modules.ts builds them in
// dependency order; app.ts mounts their routes; runtime.ts starts their workers and
// closes them.
//
//   createXModule(deps: XModuleDeps): BuiltModule<XService>
//     deps:    Pick<> of the platform (AppContext: db, clock, config, logger, metrics,
//              health, keyring, notifications, role) and other modules' services
//     returns: { module: GatewayModule; service: XService }
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Worker } from './context.ts';

/** A module's routes: a Fastify plugin that closes over the module's own services. */
export type ModuleRoutes = FastifyPluginAsyncTypebox;

export interface GatewayModule {
  readonly name: string;
  /** Routes under /v1: authenticated by API key and rate limited. */
  readonly routes?: ModuleRoutes;
  /** Routes outside /v1 (the hosted payment and invoice pages, test helpers). */
  readonly publicRoutes?: ModuleRoutes;
  /** The background loops, made only in a process that runs workers (role `all` or `worker`). */
  readonly workers?: () => Worker[];
  /** Releases what the module opened (chain handles, statement batchers, caches). */
  close?(): Promise<void>;
}

/** What `createXModule(deps)` returns: the module the runtime runs, and the service other modules may call. */
export interface BuiltModule<Service> {
  readonly module: GatewayModule;
  readonly service: Service;
}
