// An end-to-end test file's setup: the binary built first (when older than the sources), and the
// servers it starts and the directories it makes gone when the file ends, whatever happened.
import { afterAll, beforeAll } from 'bun:test';
import { rmSync } from 'node:fs';
import { ensureBinary, type ServeProcess } from './binary.ts';

export function e2eFile(): { servers: ServeProcess[]; dirs: string[] } {
  const servers: ServeProcess[] = [];
  const dirs: string[] = [];
  beforeAll(() => {
    ensureBinary();
  }, 180_000);
  afterAll(() => {
    servers.forEach((s) => s.kill('SIGKILL'));
    dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
  });
  return { servers, dirs };
}
