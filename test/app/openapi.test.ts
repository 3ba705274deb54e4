// The API reference (README "API reference"): GET /api/openapi.json is a valid OpenAPI 3.1 document
// naming every route the server registered, with no key; real answers — successes, lists with
// their page, errors — match the schemas it documents; GET /docs is a page that loads nothing from
// another host.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import { buildApp, call, createOrgWithKey, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';

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
    expect(doc.paths['/api/customers/{id}'].get.parameters).toContainEqual(expect.objectContaining({ name: 'id', in: 'path', required: true }));
    expect(doc.paths['/api/customers'].get.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(['limit', 'cursor', 'sort']));
    expect(doc.paths['/api/customers'].post.requestBody.content['application/json'].schema.required).toContain('name');
    expect(doc.components.headers['X-RateLimit-Remaining']).toBeDefined();
  });

  test('real answers match the schemas it documents: a record, a list with its page, an error', async () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
    ajv.addSchema(doc, 'openapi');
    const schemaOf = (path: string, method: string, status: string) =>
      ajv.compile({ $ref: `openapi#/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}/responses/${status}/content/application~1json/schema` });
    const expectDocumented = (path: string, method: string, status: string, body: unknown) => {
      const validate = schemaOf(path, method, status);
      const valid = validate(body);
      expect({ answer: `${method} ${path} ${status}`, errors: valid ? [] : validate.errors }).toEqual({ answer: `${method} ${path} ${status}`, errors: [] });
    };
    const { secret: key } = await createOrgWithKey(database);
    const created = await call(built.app, 'POST', '/api/customers', { key, body: { name: 'Acme', currency: 'EUR', csm: { email: 'ann@example.com' } } });
    expect(created.status).toBe(201);
    expectDocumented('/api/customers', 'post', '2XX', created.body);
    const list = await call(built.app, 'GET', '/api/customers?limit=1', { key });
    expectDocumented('/api/customers', 'get', '200', list.body);
    expect(list.body.meta).toBeDefined();
    // The check can fail: a record is not what the list documents.
    expect(schemaOf('/api/customers', 'get', '200')(created.body)).toBe(false);
    expectDocumented('/api/customers/{id}', 'get', '200', (await call(built.app, 'GET', `/api/customers/${created.body.data.id}`, { key })).body);
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
});
