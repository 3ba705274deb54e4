// Writes build/pgdata.tar.gz: a PGlite cluster with this build's migrations applied, so a new
// embedded database starts from it instead of running initdb and every migration. It is remade
// when the PGlite version or the migration journal changes.
import { existsSync, mkdirSync } from 'node:fs';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { makeSnapshot } from '../src/db/embedded.ts';
import { migrationsFolder } from '../src/db/migrate.ts';

export const SNAPSHOT_PATH = new URL('../build/pgdata.tar.gz', import.meta.url).pathname;

const pgliteVersion = async () =>
  (
    JSON.parse(await Bun.file(new URL('../node_modules/@electric-sql/pglite/package.json', import.meta.url).pathname).text()) as {
      version: string;
    }
  ).version;

/** Makes the snapshot unless one made by this PGlite version exists (a cluster from another
 * version would not open). */
export async function ensureSnapshot(force = false): Promise<void> {
  const versionPath = `${SNAPSHOT_PATH}.version`;
  const journal = await Bun.file(new URL('../drizzle/meta/_journal.json', import.meta.url).pathname).text();
  const version = `${await pgliteVersion()} ${Bun.SHA256.hash(journal, 'hex')}`;
  if (!force && existsSync(SNAPSHOT_PATH) && existsSync(versionPath) && (await Bun.file(versionPath).text()) === version) return;
  mkdirSync(new URL('../build/', import.meta.url).pathname, { recursive: true });
  const tmp = `${SNAPSHOT_PATH}.${process.pid}.tmp`;
  await Bun.write(tmp, await makeSnapshot((pglite) => migrate(drizzle(pglite), { migrationsFolder: migrationsFolder() })));
  const { renameSync } = await import('node:fs');
  renameSync(tmp, SNAPSHOT_PATH);
  await Bun.write(versionPath, version);
}

if (import.meta.main) {
  const started = performance.now();
  await ensureSnapshot(process.argv.includes('--force'));
  console.log(`snapshot ready at ${SNAPSHOT_PATH} (${Math.round(performance.now() - started)} ms)`);
}
