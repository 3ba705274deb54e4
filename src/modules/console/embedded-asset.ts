// Kept apart so that only the binary imports it: build/console.pack is made by `bun run build`
// (scripts/build.ts) and embedded in the executable; a run from source builds the console itself.
import packPath from '../../../build/console.pack' with { type: 'file' };

export { packPath };
