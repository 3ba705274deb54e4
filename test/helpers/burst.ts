// A burst of ticket webhooks against running servers, as the end-to-end tests send it.

/** Posts tickets `from`…`to - 1` with `concurrency` in flight, spread over `urls`; returns the event
 * ids the server acknowledged (200), by ticket id. Connection errors (a killed server) are not
 * acknowledgements. */
export async function burst(
  urls: string[],
  connector: string,
  from: number,
  to: number,
  concurrency: number,
  onAck?: (count: number) => void,
): Promise<Map<string, string>> {
  const acked = new Map<string, string>();
  let next = from;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, lane) => {
      while (next < to) {
        const i = next++;
        const id = `B-${i}`;
        const body = JSON.stringify({
          ticket: {
            id,
            subject: `Burst ticket ${i}`,
            description: 'The export keeps failing, please help.',
            requester_email: `user${i}@burst.example`,
          },
        });
        try {
          const res = await fetch(`${urls[(i + lane) % urls.length]}/api/webhooks/tickets?connectorId=${connector}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body,
          });
          if (res.status === 200) {
            acked.set(id, ((await res.json()) as { event_id: string }).event_id);
            onAck?.(acked.size);
          } else await res.arrayBuffer();
        } catch {
          // the server is gone: not acknowledged
        }
      }
    }),
  );
  return acked;
}
