// The fuzz run (test/fuzz/run.ts) draws its requests from a list of routes with their query
// parameters; the README says every route is fuzzed. This holds the list to the app's route
// declarations, so a new route fails here until it is added to the fuzz.
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { ROUTES } from './arbitraries.ts';
import { buildApp, openTestDatabase, type TestDatabase } from '../helpers/harness.ts';

let database: TestDatabase;
beforeAll(async () => {
  database = await openTestDatabase('embedded');
});
afterAll(() => database?.dispose());

test('every declared API route and method is in the fuzz run', async () => {
  const { app } = buildApp(database);
  const fuzzed = new Set(ROUTES.flatMap((route) => route.methods.map((method) => `${method} ${route.template}`)));
  const missing = app.declarations
    // The OpenAPI document is not an envelope (the fuzz's first property), and the echo route is a
    // fixture of the tests'.
    .filter(
      (route) => route.path.startsWith('/api/') && route.path !== '/api/openapi.json' && !route.path.startsWith('/api/test-fixtures/'),
    )
    .map((route) => `${route.method} ${route.path}`)
    .filter((route) => !fuzzed.has(route));
  expect(missing).toEqual([]);
});
