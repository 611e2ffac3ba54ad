// `paygate openapi`: prints the OpenAPI document of this gateway, built from the
// routes without opening a database, for SDK generators and `npm run lint`.
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import { Registry } from 'prom-client';
import { buildApp } from '../app.ts';
import type { AppContext } from '../context.ts';
import { DependencyHealth } from '../health/dependency-health.ts';
import { closeModules, createModules } from '../modules.ts';
import { systemClock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Database } from '../db/schema.ts';
import { throwawayKeyring } from '../kms/keyring.ts';
import { createLogger } from '../logger.ts';
import type { CliCommand } from './cli-command.ts';

export async function buildOpenApiDocument(config: Config): Promise<unknown> {
  // Routes only run queries when called; the document needs none, so no database is opened.
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (database) => new PostgresIntrospector(database),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  const logger = createLogger({ logLevel: 'silent' });
  const context: AppContext = {
    db,
    backend: 'postgres',
    clock: systemClock,
    config,
    metrics: new Registry(),
    logger,
    health: new DependencyHealth(logger),
    // Nothing is sealed or opened while describing routes: a throwaway key will do.
    keyring: throwawayKeyring(),
  };
  const modules = createModules(context);
  const app = await buildApp(context, modules);
  try {
    await app.ready();
    return app.swagger();
  } finally {
    await app.close();
    await closeModules(modules.list);
    await db.destroy();
  }
}

export const openapiCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({ args, options: { out: { type: 'string' } } });
    const text = JSON.stringify(await buildOpenApiDocument(config), null, 2);
    if (values.out === undefined) io.out(text);
    else await writeFile(values.out, `${text}\n`);
    return 0;
  },
};
