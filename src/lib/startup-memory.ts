// Start-up leaves behind what only start-up needed: the code of every module's top level (run once,
// kept compiled), the migration check's and the first looks' garbage, and allocator pages freed but
// still held. A thread that calls this once it is up gives them back: `Bun.shrink()` asks
// JavaScriptCore to drop code it is not running and shrink its heap, and `Bun.gc(true)` collects at
// once and has mimalloc return its free pages. Measured on PostgreSQL, 5 s after ready: idle RSS
// 91-93 -> 80 MiB; embedded, 197 -> 186 MiB. Code dropped and needed again is compiled again on its
// next call, as on its first. (`Bun.shrink` is marked deprecated in Bun's types, with nothing in
// its place; `Bun.gc` alone freed nothing measurable.)

/** Gives back start-up's memory `afterMs` from now (the timer does not keep the thread alive). */
export function releaseStartupMemory(afterMs = 5_000): void {
  const timer = setTimeout(() => {
    Bun.shrink();
    Bun.gc(true);
  }, afterMs);
  timer.unref?.();
}
