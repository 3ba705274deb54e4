// SECRET_KEY encrypts stored webhook secrets (docs/operating.md "Configuration"). On the embedded database,
// when it is not set, one is generated into DATA_DIR at first start so a newcomer configures nothing.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

export function ensureSecretKey(configured: string | null, dataDir: string | null): string | null {
  if (configured) return configured;
  if (!dataDir) return null;
  const path = join(dataDir, 'secret.key');
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  const key = randomBytes(32).toString('base64');
  writeFileSync(path, `${key}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}
