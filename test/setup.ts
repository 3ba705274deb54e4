// Preloaded by bunfig.toml before every test file.
import { setDefaultTimeout } from 'bun:test';
import { ensureSnapshot } from '../scripts/pgdata-snapshot.ts';

// bunfig's [test] timeout is ignored on Bun 1.4.4 (seen here); the suites start real processes.
setDefaultTimeout(60_000);

// A new embedded database starts from this snapshot (0.5 s) instead of initdb (about 7 s).
await ensureSnapshot();
