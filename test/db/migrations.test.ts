import { describe, expect, it } from 'vitest';
import { migrate, readMigrationFiles } from '../../src/db/migrate.ts';
import { backends, openTestDatabase } from '../support/databases.ts';

describe.each(backends)('migrations on %s', (backend) => {
  it('apply on an empty database, and a second run applies nothing and fails nothing', async () => {
    const database = await openTestDatabase(backend, { migrated: false });
    try {
      const files = await readMigrationFiles();
      expect(await migrate(database)).toEqual(files.map((file) => file.version));
      expect(await migrate(database)).toEqual([]);
      const applied = await database.db.selectFrom('schema_migrations').select('version').orderBy('version').execute();
      expect(applied.map((row) => row.version)).toEqual(files.map((file) => file.version));
    } finally {
      await database.close();
    }
  });

  it('are numbered in order without gaps or duplicates', async () => {
    const files = await readMigrationFiles();
    files.forEach((file, index) => expect(file.version.slice(0, 4)).toBe(String(index + 1).padStart(4, '0')));
  });
});
