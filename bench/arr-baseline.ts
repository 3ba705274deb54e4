// The naive baseline of bench/arr.ts: what a straightforward implementation of the ARR read
// endpoints would be. Elysia and postgres.js, no Drizzle, no rate limiter, no key cache, no
// request log: every request looks its key up (SHA-256 of the bearer token, one query) and then
// runs one query for its data; the rows come back as rows and JavaScript makes the JSON.
//
// It answers the same URLs with the same rows in the same envelope ({ success, data, error, meta },
// a Link header to the next page), and accepts revintel's cursors (base64url JSON of
// [sort, value, id]), so bench/arr.ts can check both answer the same bytes of `data` and `meta`:
//   GET /api/customers?limit=50[&cursor=…]   newest first, with arr, mrr and renewal_date for today
//   GET /api/invoices?overdue=true[&limit=50] open or uncollectible, unpaid, past due, newest first
//   GET /api/me                               the key and its organisation (no rate limiter: null)
// The SQL is the plain correct query for each (the derived values are the same rules as migrations
// 0005/0010, written out): the comparison is about everything around the query, not a cleverer one.
// Two traps a straightforward version falls into are avoided on purpose, so that the baseline is
// correct and walks the same indexes (measured at 100,000 customers on PostgreSQL 15):
//   - `order by created_at desc, id desc` means NULLS FIRST, and the indexes drizzle-kit writes are
//     DESC NULLS LAST: the plain spelling misses them and sorts the whole organisation (customers
//     first page 73 ms instead of 0.2 ms; overdue invoices about 6 ms of database CPU a request).
//   - a cursor's timestamp bound as a timestamptz parameter goes through postgres.js's Date
//     serialiser and loses its microseconds, so the next page comes back empty: it is bound as text.
// BASELINE_SQL=plain falls into both (bench/arr.ts --baseline-sql plain), to show what they cost.
//
// Usage: DATABASE_URL=postgres://… PORT=… [HOST=…] [DATABASE_POOL_SIZE=10] bun bench/arr-baseline.ts
import { Elysia } from 'elysia';
import postgres from 'postgres';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error('usage: DATABASE_URL=postgres://… PORT=… bun bench/arr-baseline.ts');
  process.exit(2);
}
const sql = postgres(databaseUrl, {
  max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
  onnotice: () => {},
  connection: { application_name: 'arr-baseline' },
});

/** `indexed` (default): ORDER BY as the indexes are written, cursors bound as text; `plain`: the
 * two traps above. */
const plain = process.env.BASELINE_SQL === 'plain';
const newestFirst = plain ? 'desc' : 'desc nulls last';
/** The cursor's bound on (created_at, id). */
const after = (alias: string, cursor: { value: string; id: string }) =>
  plain
    ? sql`and (${sql.unsafe(alias)}created_at, ${sql.unsafe(alias)}id) < (${cursor.value}::timestamptz, ${cursor.id})`
    : sql`and (${sql.unsafe(alias)}created_at, ${sql.unsafe(alias)}id) < (${cursor.value}::text::timestamptz, ${cursor.id})`;

const utcToday = () => new Date().toISOString().slice(0, 10);
const iso = (value: Date | null) => (value ? value.toISOString() : null);
const DAY_MS = 86_400_000;

const failure = (status: number, code: string, error: string) =>
  new Response(JSON.stringify({ success: false, data: null, error, code }), { status, headers: { 'content-type': 'application/json' } });

interface Principal {
  key_id: string;
  key_name: string;
  prefix: string;
  expires_at: Date | null;
  org_id: string;
  org_name: string;
  plan: string;
}

/** One query per request: the key by the SHA-256 of the bearer token, with its organisation. */
async function authenticate(request: Request): Promise<Principal | null> {
  const header = request.headers.get('authorization');
  if (!header?.startsWith('Bearer ')) return null;
  const hash = new Bun.CryptoHasher('sha256').update(header.slice(7)).digest('hex');
  const [row] = await sql<Principal[]>`
    select k.id as key_id, k.name as key_name, k.prefix, k.expires_at, o.id as org_id, o.name as org_name, o.plan
    from api_keys k join organisations o on o.id = k.org_id
    where k.hash = ${hash} and k.revoked_at is null and (k.expires_at is null or k.expires_at > now())`;
  return row ?? null;
}

/** revintel's cursor: base64url of JSON [sort, value, id]. */
function decodeCursor(raw: string | undefined): { value: string; id: string } | null {
  if (!raw) return null;
  const [sort, value, id] = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  if (sort !== 'created_at') throw new Error('cursor of another sort');
  return { value, id };
}
const encodeCursor = (value: string, id: string) => Buffer.from(JSON.stringify(['created_at', value, id])).toString('base64url');

/** `limit + 1` rows → the page, its meta and the Link header. */
function page<Row extends { id: string; sort_value: string }>(
  rows: Row[],
  limit: number,
  url: string,
  set: { headers: Record<string, string> },
  present: (row: Row) => unknown,
) {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  const nextCursor = hasMore && last ? encodeCursor(last.sort_value, last.id) : null;
  if (nextCursor) {
    const next = new URL(url);
    next.searchParams.set('cursor', nextCursor);
    set.headers.link = `<${next.pathname}${next.search}>; rel="next"`;
  }
  return { success: true, data: pageRows.map(present), error: null, meta: { has_more: hasMore, next_cursor: nextCursor, limit } };
}

const parseLimit = (raw: string | undefined) => {
  const limit = raw === undefined ? 50 : Number(raw);
  return Number.isInteger(limit) && limit >= 1 && limit <= 200 ? limit : null;
};

const app = new Elysia()
  .get('/readyz', () => 'ok')
  .derive(async ({ request }) => ({ principal: await authenticate(request) }))
  .get('/api/me', ({ principal }) => {
    if (!principal) return failure(401, 'unauthorized', 'Authentication required');
    return {
      success: true,
      data: {
        org: { id: principal.org_id, name: principal.org_name, plan: principal.plan },
        key: { id: principal.key_id, name: principal.key_name, prefix: principal.prefix, expires_at: iso(principal.expires_at) },
        rate_limit: null,
      },
      error: null,
    };
  })
  .get('/api/customers', async ({ principal, query, request, set }) => {
    if (!principal) return failure(401, 'unauthorized', 'Authentication required');
    const limit = parseLimit(query.limit);
    if (limit === null) return failure(400, 'validation_failed', 'Invalid query parameter "limit"');
    const cursor = decodeCursor(query.cursor);
    const today = utcToday();
    const rows = await sql`
      select c.id, c.external_id, c.name, c.domain, c.email, c.status, c.segment, c.country, c.currency, c.csm, c.metadata,
             c.created_at, c.updated_at, c.deleted_at, c.created_at::text as sort_value, d.arr, d.renewal_date::text as renewal_date
      from customers c
      left join lateral (
        select sum(case ct.billing_interval when 'month' then ct.amount * 12 when 'quarter' then ct.amount * 4 when 'year' then ct.amount end) as arr,
               min(ct.end_date) as renewal_date
        from contracts ct
        where ct.org_id = c.org_id and ct.customer_id = c.id and ct.deleted_at is null
          and ct.status = 'active' and ct.start_date <= ${today}::date and (ct.end_date is null or ct.end_date >= ${today}::date)
      ) d on true
      where c.org_id = ${principal.org_id} and c.deleted_at is null
        ${cursor ? after('c.', cursor) : sql``}
      order by c.created_at ${sql.unsafe(newestFirst)}, c.id ${sql.unsafe(newestFirst)}
      limit ${limit + 1}`;
    return page(rows as any[], limit, request.url, set as { headers: Record<string, string> }, (row) => {
      const arr = Number(row.arr ?? 0);
      return {
        id: row.id,
        external_id: row.external_id,
        name: row.name,
        domain: row.domain,
        email: row.email,
        status: row.status,
        segment: row.segment,
        country: row.country,
        currency: row.currency,
        csm: row.csm,
        arr,
        mrr: Math.round(arr / 12),
        renewal_date: row.renewal_date,
        churn_risk: null,
        metadata: row.metadata,
        created_at: iso(row.created_at),
        updated_at: iso(row.updated_at),
        deleted_at: iso(row.deleted_at),
      };
    });
  })
  .get('/api/invoices', async ({ principal, query, request, set }) => {
    if (!principal) return failure(401, 'unauthorized', 'Authentication required');
    const limit = parseLimit(query.limit);
    if (limit === null) return failure(400, 'validation_failed', 'Invalid query parameter "limit"');
    const cursor = decodeCursor(query.cursor);
    const overdue = query.overdue === 'true';
    const today = utcToday();
    const rows = await sql`
      select id, external_id, customer_id, contract_id, number, status, currency, amount_due, amount_paid,
             issued_at, due_date::text as due_date, paid_at, metadata, created_at, updated_at, deleted_at, created_at::text as sort_value
      from invoices
      where org_id = ${principal.org_id} and deleted_at is null
        ${overdue ? sql`and status in ('open', 'uncollectible') and due_date < ${today}::date and amount_paid < amount_due` : sql``}
        ${cursor ? after('', cursor) : sql``}
      order by created_at ${sql.unsafe(newestFirst)}, id ${sql.unsafe(newestFirst)}
      limit ${limit + 1}`;
    const todayMs = Date.parse(`${today}T00:00:00Z`);
    return page(rows as any[], limit, request.url, set as { headers: Record<string, string> }, (row) => {
      const amountDue = Number(row.amount_due);
      const amountPaid = Number(row.amount_paid);
      const dueMs = row.due_date ? Date.parse(`${row.due_date}T00:00:00Z`) : NaN;
      const isOverdue = (row.status === 'open' || row.status === 'uncollectible') && dueMs < todayMs && amountPaid < amountDue;
      return {
        id: row.id,
        external_id: row.external_id,
        customer_id: row.customer_id,
        contract_id: row.contract_id,
        number: row.number,
        status: row.status,
        currency: row.currency,
        amount_due: amountDue,
        amount_paid: amountPaid,
        issued_at: iso(row.issued_at),
        due_date: row.due_date,
        paid_at: iso(row.paid_at),
        days_past_due: isOverdue ? Math.round((todayMs - dueMs) / DAY_MS) : 0,
        metadata: row.metadata,
        created_at: iso(row.created_at),
        updated_at: iso(row.updated_at),
        deleted_at: iso(row.deleted_at),
      };
    });
  })
  .listen({ port: Number(process.env.PORT ?? 0), hostname: process.env.HOST ?? '127.0.0.1' });

const stop = () => {
  app.stop(true);
  sql.end({ timeout: 2 }).finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
