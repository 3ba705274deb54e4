// The API reference (docs/api.md "API reference"): GET /api/openapi.json is a valid OpenAPI 3.1 document
// naming every route the server registered, with no key; real answers — successes, lists with
// their page, errors — match the schemas it documents; GET /docs is a page that loads nothing from
// another host.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import openapiTS, { astToString } from 'openapi-typescript';
import { MAX_PAGE_SIZE } from '../../src/lib/pagination.ts';
import { REQUEST_EXAMPLES } from '../../src/modules/docs/examples.ts';
import { buildApp, call, createOrgWithKey, openTestDatabase, tempDir, testConfig, type TestDatabase } from '../helpers/harness.ts';

const ROOT = join(import.meta.dir, '../..');

/** Every operation of the document with its method and path. */
const operationsOf = (doc: any) =>
  Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
    Object.entries(item).map(([method, op]: [string, any]) => ({ path, method, op })),
  );

/** Every object under `value` with the path to it. */
function* objectsIn(value: unknown, at = '#'): Generator<[string, Record<string, unknown>]> {
  if (!value || typeof value !== 'object') return;
  if (!Array.isArray(value)) yield [at, value as Record<string, unknown>];
  for (const [key, inner] of Object.entries(value)) yield* objectsIn(inner, `${at}/${key}`);
}

describe('the OpenAPI document', () => {
  let database: TestDatabase;
  let built: ReturnType<typeof buildApp>;
  let doc: any;
  beforeAll(async () => {
    database = await openTestDatabase('embedded');
    built = buildApp(database);
    const res = await call(built.app, 'GET', '/api/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    doc = res.body;
  });
  afterAll(() => database.dispose());

  test('is valid OpenAPI 3.1 and holds every registered route, each with an id, a summary and its security', async () => {
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const broken = await new Validator().validate({ ...doc, paths: { '/x': { get: { responses: 'none' } } } });
    expect(broken.valid).toBe(false);
    const registered = built.app.routes.routes.map((r) => [r.method.toLowerCase(), r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')] as const);
    expect(registered.length).toBeGreaterThan(40);
    for (const [method, path] of registered) {
      const operation = doc.paths[path]?.[method];
      expect({ route: `${method} ${path}`, documented: Boolean(operation) }).toEqual({ route: `${method} ${path}`, documented: true });
      expect(operation.summary).toBeTruthy();
      expect(Array.isArray(operation.security)).toBe(true);
    }
    const ids = Object.values(doc.paths).flatMap((item: any) => Object.values(item).map((op: any) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
    // Keys on the API, platforms' own proofs on their webhooks, nothing on the probes.
    expect(doc.paths['/api/customers'].get.security).toEqual([{ bearer: [] }, { session: [] }]);
    expect(doc.paths['/api/keys'].post.security).toEqual([{ session: [] }]);
    expect(doc.components.securitySchemes.session).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'revintel_session' });
    expect(doc.paths['/api/webhooks/team-chat'].post.security).toEqual([{ slack: [] }]);
    expect(doc.paths['/api/webhooks/workspace-chat'].post.security).toEqual([{ 'google-chat': [] }]);
    expect(doc.paths['/healthz'].get.security).toEqual([]);
    // Path and query parameters come from the schemas the routes validate with.
    expect(doc.paths['/api/customers/{id}'].get.parameters).toContainEqual(
      expect.objectContaining({ name: 'id', in: 'path', required: true }),
    );
    expect(doc.paths['/api/customers'].get.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(['limit', 'cursor', 'sort']));
    expect(doc.paths['/api/customers'].post.requestBody.content['application/json'].schema.required).toContain('name');
    expect(doc.components.headers['X-RateLimit-Remaining']).toBeDefined();
  });

  test('real answers match the schemas it documents: a record, a list with its page, an error', async () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
    ajv.addSchema(doc, 'openapi');
    const schemaOf = (path: string, method: string, status: string) =>
      ajv.compile({
        $ref: `openapi#/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}/responses/${status}/content/application~1json/schema`,
      });
    const expectDocumented = (path: string, method: string, status: string, body: unknown) => {
      const validate = schemaOf(path, method, status);
      const valid = validate(body);
      expect({ answer: `${method} ${path} ${status}`, errors: valid ? [] : validate.errors }).toEqual({
        answer: `${method} ${path} ${status}`,
        errors: [],
      });
    };
    const { secret: key } = await createOrgWithKey(database);
    const created = await call(built.app, 'POST', '/api/customers', {
      key,
      body: { name: 'Acme', currency: 'EUR', csm: { email: 'ann@example.com' } },
    });
    expect(created.status).toBe(201);
    expectDocumented('/api/customers', 'post', '2XX', created.body);
    const list = await call(built.app, 'GET', '/api/customers?limit=1', { key });
    expectDocumented('/api/customers', 'get', '200', list.body);
    expect(list.body.meta).toBeDefined();
    // The check can fail: a record is not what the list documents.
    expect(schemaOf('/api/customers', 'get', '200')(created.body)).toBe(false);
    expectDocumented(
      '/api/customers/{id}',
      'get',
      '200',
      (await call(built.app, 'GET', `/api/customers/${created.body.data.id}`, { key })).body,
    );
    expectDocumented('/api/me', 'get', '200', (await call(built.app, 'GET', '/api/me', { key })).body);
    const missing = await call(built.app, 'GET', '/api/customers/cus_nope', { key });
    expect(missing.status).toBe(404);
    // Errors are documented by reference to the shared error answer.
    const error = ajv.compile({ $ref: 'openapi#/components/schemas/Error' });
    expect(doc.paths['/api/customers/{id}'].get.responses['404']).toEqual({ $ref: '#/components/responses/Error404' });
    expect(error(missing.body)).toBe(true);
    const invalid = await call(built.app, 'POST', '/api/customers', { key, body: { currency: 'EUR' } });
    expect(invalid.status).toBe(400);
    expect(error(invalid.body)).toBe(true);
    expect(error((await call(built.app, 'GET', '/api/me')).body)).toBe(true);
  });

  test('no key is needed, and the address pays', async () => {
    const res = await call(built.app, 'GET', '/api/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBeTruthy();
  });

  test('GET /docs: a page served from the binary that loads nothing from another host', async () => {
    const res = await built.app.handle(new Request('http://localhost/docs'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await res.text();
    expect(html).toContain("fetch('/api/openapi.json')");
    expect(html).not.toMatch(/(src|href)="https?:/);
    expect(html).toContain('<label for="filter">');
  });

  test('@redocly/cli lint with the recommended rules finds no error (the license aside, no warning)', async () => {
    const dir = tempDir('revintel-openapi-');
    try {
      const file = join(dir, 'openapi.json');
      await Bun.write(file, JSON.stringify(doc));
      const lint = Bun.spawnSync(
        [
          process.execPath,
          join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'),
          'lint',
          '--config',
          join(ROOT, 'redocly.yaml'),
          '--format=json',
          '--max-problems=1000',
          file,
        ],
        {
          cwd: dir,
          stdout: 'pipe',
          stderr: 'pipe',
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        },
      );
      const report = JSON.parse(lint.stdout.toString()) as {
        problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
      };
      const problems = report.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
      expect(problems.filter((p) => !p.startsWith('warn info-license'))).toEqual([]);
      expect(lint.exitCode).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  test('every parameter is described and typed: limit an integer with its bounds, path placeholders declared', () => {
    for (const { path, method, op } of operationsOf(doc)) {
      for (const parameter of op.parameters ?? [])
        expect({ at: `${method} ${path} ${parameter.name}`, description: Boolean(parameter.description) }).toEqual({
          at: `${method} ${path} ${parameter.name}`,
          description: true,
        });
      for (const [, name] of path.matchAll(/\{([^}]+)\}/g))
        expect(op.parameters).toContainEqual(expect.objectContaining({ name, in: 'path', required: true }));
    }
    const limits = operationsOf(doc).flatMap(({ op }) => (op.parameters ?? []).filter((p: any) => p.name === 'limit'));
    expect(limits.length).toBeGreaterThan(10);
    for (const limit of limits) expect(limit.schema).toEqual({ type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: 50 });
    const predictions = doc.paths['/api/cfo/predictions'].get.parameters;
    expect(predictions.find((p: any) => p.name === 'min_probability').schema).toEqual({ type: 'number', minimum: 0, maximum: 1 });
    expect(doc.paths['/api/customers'].get.parameters.find((p: any) => p.name === 'include_deleted').schema).toEqual({ type: 'boolean' });
    expect(doc.paths['/api/contracts'].get.parameters.find((p: any) => p.name === 'updated_since').schema).toMatchObject({
      type: 'string',
      format: 'date-time',
    });
    expect(doc.paths['/customers/{id}'].get.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'path', required: true })]);
    // The ticket webhook's connector: a required query parameter, and its 404.
    const webhook = doc.paths['/api/webhooks/tickets'].post;
    expect(webhook.parameters).toEqual([expect.objectContaining({ name: 'connectorId', in: 'query', required: true })]);
    expect(webhook.responses['404']).toEqual({ $ref: '#/components/responses/Error404' });
  });

  test('a limit still reads as text and is refused naming the field', async () => {
    const { secret: key } = await createOrgWithKey(database);
    expect((await call(built.app, 'GET', '/api/customers?limit=20', { key })).status).toBe(200);
    for (const limit of ['0', String(MAX_PAGE_SIZE + 1), 'ten']) {
      const refused = await call(built.app, 'GET', `/api/customers?limit=${limit}`, { key });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({
        code: 'validation_failed',
        error: `Invalid query parameter "limit": must be an integer from 1 to ${MAX_PAGE_SIZE}, got "${limit}"`,
      });
    }
  });

  test('every body a route reads is documented, with examples from the tests that fit their schemas', () => {
    const withoutBody = operationsOf(doc)
      .filter(({ method, op }) => ['post', 'put', 'patch'].includes(method) && !op.requestBody)
      .map(({ method, path }) => `${method} ${path}`);
    // These read no body at all.
    expect(withoutBody.sort()).toEqual([
      'post /api/auth/sign-out',
      'post /api/auth/sign-out-everywhere',
      'post /api/billing/connectors/{id}/events/{event_id}/replay',
      'post /api/billing/connectors/{id}/sync',
      'post /api/ticket-events/{id}/replay',
      'post /api/users/{id}/link',
    ]);
    const snooze = doc.paths['/api/agent-actions/{id}/snooze'].post.requestBody;
    expect(snooze.required).toBe(false);
    expect(snooze.content['application/json'].schema.properties.days).toMatchObject({ type: 'integer', minimum: 1, maximum: 30 });
    expect(doc.paths['/api/cfo/backtests'].post.requestBody.content['application/json'].schema.properties.method.enum).toContain(
      'cross_validation',
    );
    expect(doc.paths['/api/action-rules'].put.requestBody).toMatchObject({ required: true });
    const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
    ajv.addSchema(doc, 'openapi');
    expect(Object.keys(REQUEST_EXAMPLES).length).toBeGreaterThan(10);
    for (const [route, example] of Object.entries(REQUEST_EXAMPLES)) {
      const [method, path] = route.split(' ') as [string, string];
      const pointer = `${path
        .replace(/:([A-Za-z0-9_]+)/g, '{$1}')
        .replace(/~/g, '~0')
        .replace(/\//g, '~1')}/${method.toLowerCase()}/requestBody/content/application~1json`;
      expect(
        doc.paths[path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')][method.toLowerCase()].requestBody.content['application/json'].example,
      ).toEqual(example);
      const validate = ajv.compile({ $ref: `openapi#/paths/${pointer}/schema` });
      expect({ route, errors: validate(example) ? [] : validate.errors }).toEqual({ route, errors: [] });
    }
  });

  test('the examples are bodies the server takes', async () => {
    const { secret: key } = await createOrgWithKey(database);
    const customer = await call(built.app, 'POST', '/api/customers', { key, body: REQUEST_EXAMPLES['POST /api/customers'] });
    expect(customer.status).toBe(201);
    // The examples name one customer id: this organisation's customer stands for it.
    const withCustomer = (example: unknown) => JSON.parse(JSON.stringify(example).replaceAll('cus_2mQ8xV', customer.body.data.id));
    for (const route of [
      'POST /api/contracts',
      'POST /api/invoices',
      'POST /api/csms',
      'POST /api/agent-actions',
      'PUT /api/action-rules',
      'POST /api/cfo/predictions/recompute',
      'POST /api/cfo/backtests',
    ]) {
      const [method, path] = route.split(' ') as [string, string];
      const answer = await call(built.app, method, path, { key, body: withCustomer(REQUEST_EXAMPLES[route]) });
      expect({ route, accepted: [200, 201, 202].includes(answer.status), error: answer.body?.error ?? null }).toEqual({
        route,
        accepted: true,
        error: null,
      });
    }
  });

  test('schemas carry no keyword outside JSON Schema; assets and pages say their real content types', () => {
    for (const [at, object] of objectsIn(doc.paths)) {
      // `error` is our validators' wording; as a schema keyword it is not JSON Schema.
      if ('error' in object && !at.endsWith('/properties')) throw new Error(`an \`error\` keyword at ${at}`);
    }
    expect(Object.keys(doc.paths['/assets/{file}'].get.responses['200'].content)).toEqual(['text/javascript', 'text/css']);
    expect(doc.paths['/assets/{file}'].get.responses['404']).toBeDefined();
    expect(Object.keys(doc.paths['/customers'].get.responses['200'].content)).toEqual(['text/html']);
    expect(Object.keys(doc.paths['/metrics'].get.responses['200'].content)).toEqual(['text/plain; version=0.0.4']);
    expect(Object.keys(doc.paths['/api/customers'].get.responses['200'].content)).toEqual(['application/json']);
  });

  test('servers: PUBLIC_URL when set, else the answering server', async () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    const named = buildApp(database, { config: testConfig({ publicUrl: 'https://revenue.example.org/' }) });
    expect((await call(named.app, 'GET', '/api/openapi.json')).body.servers).toEqual([{ url: 'https://revenue.example.org' }]);
  });

  test('openapi-typescript generates a client whose calls type-check, and wrong ones do not', async () => {
    const dir = tempDir('revintel-client-');
    try {
      await Bun.write(join(dir, 'api.d.ts'), astToString(await openapiTS(doc)));
      await Bun.write(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            target: 'ESNext',
            module: 'ESNext',
            moduleResolution: 'bundler',
            lib: ['ESNext'],
            types: [],
          },
          files: ['calls.ts'],
        }),
      );
      await Bun.write(
        join(dir, 'calls.ts'),
        `import type { paths } from './api';
type JsonBody<Op> = Op extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type Query<Op> = Op extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type Path<Op> = Op extends { parameters: { path: infer P } } ? P : never;
type Listed<Op> = Op extends { responses: { 200: { content: { 'application/json': infer R } } } } ? R : never;

export const snooze: JsonBody<paths['/api/agent-actions/{id}/snooze']['post']> = { days: 2, comment: 'back next week' };
// @ts-expect-error days is a whole number
export const snoozeInWords: JsonBody<paths['/api/agent-actions/{id}/snooze']['post']> = { days: 'two' };
export const approved: Path<paths['/api/agent-actions/{id}/approve']['post']> = { id: 'act_1' };
export const backtest: JsonBody<paths['/api/cfo/backtests']['post']> = { method: 'cross_validation', as_of: '2026-06-30', horizon_days: 60 };
// @ts-expect-error not a backtest method
export const astrology: JsonBody<paths['/api/cfo/backtests']['post']> = { method: 'astrology' };
export const secret: JsonBody<paths['/api/connectors/{id}/secret']['post']> = { grace_seconds: 86400 };
export const page: Query<paths['/api/customers']['get']> = { limit: 20, status: 'active', include_deleted: true };
// @ts-expect-error limit is an integer
export const pageInText: Query<paths['/api/customers']['get']> = { limit: '20' };
export const delivery: Query<paths['/api/webhooks/tickets']['post']> = { connectorId: 'con_1' };
export const firstName = (list: Listed<paths['/api/customers']['get']>): string | undefined => list.data[0]?.name;
export const nextCursor = (list: Listed<paths['/api/customers']['get']>): string | null | undefined => list.meta?.next_cursor;
`,
      );
      const tsc = Bun.spawnSync([process.execPath, join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], {
        cwd: dir,
        stdout: 'pipe',
        stderr: 'pipe',
      });
      expect(tsc.stdout.toString() + tsc.stderr.toString()).toBe('');
      expect(tsc.exitCode).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
