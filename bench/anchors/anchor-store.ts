// Where an anchor route keeps its rows: a `pg` Pool on the PostgreSQL server, or a
// bare PGlite in a data folder on disk (as the gateway's embedded database is).
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { ANCHOR_TABLE_DDL } from './anchor-schema.ts';

export interface AnchorStore {
  query<Row>(statement: string, parameters: readonly unknown[]): Promise<Row[]>;
  close(): Promise<void>;
}

export async function openPostgresStore(url: string, poolSize: number): Promise<AnchorStore> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  await pool.query(ANCHOR_TABLE_DDL);
  return {
    query: async <Row>(statement: string, parameters: readonly unknown[]) =>
      (await pool.query(statement, [...parameters])).rows as Row[],
    close: () => pool.end(),
  };
}

export async function openPGliteStore(dataDir: string): Promise<AnchorStore> {
  const pglite = await PGlite.create({ dataDir });
  await pglite.exec(ANCHOR_TABLE_DDL);
  return {
    query: async <Row>(statement: string, parameters: readonly unknown[]) =>
      (await pglite.query<Row>(statement, [...parameters])).rows,
    close: () => pglite.close(),
  };
}
