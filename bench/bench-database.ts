// A fresh database on the benchmark's PostgreSQL server, dropped when the run ends.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const BENCH_SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: BENCH_SERVER_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** The start of every database name a bench creates (BENCH_DATABASE_PREFIX: several runs sharing a server tell theirs apart). */
const NAME_PREFIX = process.env.BENCH_DATABASE_PREFIX ?? 'paygate_bench';

export async function createBenchDatabase(prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!/^[a-z_][a-z0-9_]*$/.test(NAME_PREFIX))
    throw new Error(`BENCH_DATABASE_PREFIX must be a plain identifier: ${NAME_PREFIX}`);
  const name = `${NAME_PREFIX}_${prefix}_${randomBytes(4).toString('hex')}`;
  await admin(`create database ${name}`);
  const url = new URL(BENCH_SERVER_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}
