// Writes the OpenAPI document this build serves at /api/openapi.json to FILE (stdout without one),
// for `bun run lint:openapi` and for generating a client without a running server. PUBLIC_URL,
// when set, becomes its `servers` entry as on a server. The app is made on a throwaway embedded
// database: the document needs the routes, not their data.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openEmbedded } from '../src/db/client.ts';
import { createLogger } from '../src/lib/log.ts';
import { memoryRateLimiter } from '../src/lib/rate-limiter.ts';
import { createAuthenticator } from '../src/modules/keys/service.ts';

const dir = mkdtempSync(join(tmpdir(), 'revintel-openapi-'));
try {
  const database = await openEmbedded(dir, 'openapi', undefined, undefined, () => {});
  const config = loadConfig({ LOG_LEVEL: 'silent', ...(process.env.PUBLIC_URL ? { PUBLIC_URL: process.env.PUBLIC_URL } : {}) });
  const app = createApp({
    config,
    database,
    limiter: memoryRateLimiter(),
    authenticator: createAuthenticator(database.db),
    log: createLogger('silent'),
    readiness: async () => [],
  });
  const answer = await app.handle(new Request('http://localhost/api/openapi.json'));
  if (answer.status !== 200) throw new Error(`GET /api/openapi.json answered ${answer.status}: ${await answer.text()}`);
  const document = `${JSON.stringify(await answer.json(), null, 2)}\n`;
  const file = process.argv[2];
  if (file) await Bun.write(file, document);
  else process.stdout.write(document);
  await database.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
