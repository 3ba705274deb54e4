// Kept apart so that a missing snapshot (a fresh source checkout) only fails this dynamic import.
import snapshotPath from '../../build/pgdata.tar.gz' with { type: 'file' };

export { snapshotPath };
