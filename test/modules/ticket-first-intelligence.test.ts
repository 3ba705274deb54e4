// A ticket keeps the intelligence of the first event that carried text, whatever later events say
// (churn predictions for a past day read it: what was known when the ticket came in), on both
// backends.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryText } from '../../src/db/client.ts';
import { BACKENDS, buildApp, call, createOrgWithKey, openTestDatabase, testConfig, type TestDatabase } from '../helpers/harness.ts';
import { drainQueue, makeConnector, TEST_SECRET_KEY } from '../helpers/tickets.ts';

for (const backend of BACKENDS) {
  describe(`a ticket's first intelligence (${backend})`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase(backend);
    });
    afterAll(() => database?.dispose());

    async function deliver(connectorId: string, ticket: Record<string, unknown>) {
      const app = buildApp(database, { config: testConfig({ secretKey: TEST_SECRET_KEY }) }).app;
      const res = await call(app, 'POST', `/api/webhooks/tickets?connectorId=${connectorId}`, {
        rawBody: JSON.stringify({ ticket }),
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(200);
      await drainQueue(database);
    }
    const row = async (connectorId: string, externalId: string) =>
      (
        await queryText<{
          churn_signals: string[];
          first_churn_signals: string[] | null;
          first_sentiment: number | null;
          first_urgency: string | null;
          sentiment: number | null;
        }>(
          database.db,
          `select churn_signals, first_churn_signals, first_sentiment, first_urgency, sentiment from tickets where connector_id = $1 and external_id = $2`,
          [connectorId, externalId],
        )
      )[0]!;

    test('later events rewrite the ticket but not what was first known of it', async () => {
      const { org } = await createOrgWithKey(database);
      const connector = await makeConnector(database, org.id);
      await deliver(connector.id, {
        id: 'F-1',
        subject: 'We will cancel our subscription',
        description: 'The export is broken again and we are moving to a competitor.',
        updated_at: '2026-01-01T10:00:00Z',
      });
      const first = await row(connector.id, 'F-1');
      expect(first.first_churn_signals).toEqual(expect.arrayContaining(['cancellation', 'competitor']));
      expect(first.first_sentiment).toBe(first.sentiment);
      await deliver(connector.id, {
        id: 'F-1',
        subject: 'Thanks, all good now',
        description: 'Great support, the export works perfectly.',
        updated_at: '2026-01-05T10:00:00Z',
      });
      const later = await row(connector.id, 'F-1');
      expect(later.churn_signals).toEqual([]);
      expect(later.sentiment!).toBeGreaterThan(0);
      expect(later.first_churn_signals).toEqual(first.first_churn_signals);
      expect(later.first_sentiment).toBe(first.first_sentiment);
      expect(later.first_urgency).toBe(first.first_urgency);
    });

    test('a ticket first seen without text takes its first intelligence from the first event with some', async () => {
      const { org } = await createOrgWithKey(database);
      const connector = await makeConnector(database, org.id, { platform: 'hubspot' });
      // A HubSpot property change: the ticket's id and nothing to judge.
      const app = buildApp(database, { config: testConfig({ secretKey: TEST_SECRET_KEY }) }).app;
      const change = [
        {
          objectId: 4242,
          subscriptionType: 'ticket.propertyChange',
          propertyName: 'hs_pipeline_stage',
          propertyValue: '2',
          occurredAt: Date.parse('2026-01-01T10:00:00Z'),
          eventId: 1,
        },
      ];
      expect(
        (
          await call(app, 'POST', `/api/webhooks/tickets?connectorId=${connector.id}`, {
            rawBody: JSON.stringify(change),
            headers: { 'content-type': 'application/json' },
          })
        ).status,
      ).toBe(200);
      await drainQueue(database);
      expect(await row(connector.id, '4242')).toMatchObject({ first_sentiment: null, first_urgency: null, first_churn_signals: null });
      const created = [
        {
          objectId: 4242,
          subscriptionType: 'ticket.propertyChange',
          propertyName: 'subject',
          propertyValue: 'Refund request, we want to downgrade',
          occurredAt: Date.parse('2026-01-02T10:00:00Z'),
          eventId: 2,
        },
      ];
      expect(
        (
          await call(app, 'POST', `/api/webhooks/tickets?connectorId=${connector.id}`, {
            rawBody: JSON.stringify(created),
            headers: { 'content-type': 'application/json' },
          })
        ).status,
      ).toBe(200);
      await drainQueue(database);
      const judged = await row(connector.id, '4242');
      expect(judged.first_churn_signals).toEqual(expect.arrayContaining(['refund']));
      expect(judged.first_sentiment).toBe(judged.sentiment);
    });
  });
}
