// A crash at a named step of an operator's command, for the tests that prove such a crash loses
// nothing: TEST_CRASH_AT names the step, and the command kills itself there with SIGKILL — no
// handler, no `finally` runs, as when the machine loses power or the OOM killer strikes.
import type { CrashPoint } from '../config.ts';

let armed: CrashPoint | null = null;

export function armCrashPoint(point: CrashPoint | null): void {
  armed = point;
}

export function crashPoint(point: CrashPoint): void {
  if (armed === point) process.kill(process.pid, 'SIGKILL');
}
