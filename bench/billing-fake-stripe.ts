// The fake Stripe account bench/billing.ts backfills from, in a process of its own so that the
// bench's figure of memory is the server's alone (at 100,000 customers the account's objects
// weigh hundreds of MB). `bun bench/billing-fake-stripe.ts CUSTOMERS API_KEY`: prints its URL on
// one line, then serves until it is killed.
import { startFakeStripe, stripeAccount } from '../test/fakes/billing.ts';

const [customers, apiKey] = process.argv.slice(2);
if (!customers || !apiKey) throw new Error('usage: billing-fake-stripe.ts CUSTOMERS API_KEY');
const stripe = startFakeStripe({ apiKey, ...stripeAccount(Number(customers)) });
console.log(stripe.url);
