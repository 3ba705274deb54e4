// List pages kept until their organisation's ARR data changes. Every customers, contracts and
// invoices write bumps the organisation's data version in its own transaction (migration 0013), so
// one indexed read tells whether a page answered before is still what the query would answer now:
// a page is served again only under the version it was made at, on every instance, and a write is
// visible to the very next read wherever it lands. CFO dashboards and CRMs poll the same pages over
// and over; each poll then costs one primary-key lookup instead of the page's query and its
// serialisation. The key holds the day too: derived values (ARR, days past due) change at midnight
// UTC without a write.
import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../db/client.ts';

export interface CachedPage {
  /** The response body: the envelope's JSON. */
  body: string;
  /** The `Link` header to the next page. */
  link: string | null;
}

/** What a page is kept under: its organisation's data version, or (a page that shows more than
 * ARR data) a version of its own read the same way. */
export type VersionOf = (db: Db, orgId: string) => Promise<number | string>;

export interface ListCache {
  /** The page for `key` of `orgId`'s data: kept, or made by `make` and kept. */
  page(db: Db, orgId: string, key: string, make: () => Promise<CachedPage>, versionOf?: VersionOf): Promise<CachedPage>;
}

interface Entry extends CachedPage {
  version: number | string;
  bytes: number;
}

export const dataVersion: VersionOf = async (db, orgId) => {
  const [row] = await queryRows<{ version: string | number }>(db, sql`select version from org_data_versions where org_id = ${orgId}`);
  return row ? Number(row.version) : 0;
};

/** At most `maxBytes` of pages (the least recently served leave first); 0 keeps nothing. */
export function createListCache(maxBytes: number): ListCache {
  const entries = new Map<string, Entry>();
  const inFlight = new Map<string, Promise<CachedPage>>();
  let bytes = 0;
  const forget = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    bytes -= entry.bytes;
    entries.delete(key);
  };
  return {
    async page(db, orgId, key, make, versionOf = dataVersion) {
      if (maxBytes <= 0) return make();
      const fullKey = `${orgId}\n${key}`;
      // Read before the page is made: the page then holds at least what version says, and if a
      // write lands in between, the version has moved on and this entry is never served.
      const version = await versionOf(db, orgId);
      const kept = entries.get(fullKey);
      if (kept && kept.version === version) {
        entries.delete(fullKey); // most recently served last
        entries.set(fullKey, kept);
        return kept;
      }
      forget(fullKey);
      // Requests that miss together wait for one making of the page: a predictions page sums a
      // whole organisation's predictions, and 32 connections missing at once made it 32 times.
      const flightKey = `${fullKey}\n${version}`;
      const joined = inFlight.get(flightKey);
      if (joined) return joined;
      const flight = make().finally(() => inFlight.delete(flightKey));
      inFlight.set(flightKey, flight);
      const made = await flight;
      const entry: Entry = { ...made, version, bytes: (made.body.length + (made.link?.length ?? 0) + fullKey.length) * 2 };
      if (entry.bytes <= maxBytes / 4) {
        entries.set(fullKey, entry);
        bytes += entry.bytes;
        for (const oldest of entries.keys()) {
          if (bytes <= maxBytes) break;
          forget(oldest);
        }
      }
      return made;
    },
  };
}
