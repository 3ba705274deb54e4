// The one place that reads the environment. Every setting has an environment variable and a matching
// `serve` flag (PORT <-> --port); flags win. A bad value is reported by naming the variable, and the
// process exits before it opens anything.

const RATE_LIMIT_STORES = ['memory', 'postgres', 'redis'] as const;
export type RateLimitStoreKind = (typeof RATE_LIMIT_STORES)[number];

const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** How Google Chat's bearer tokens are addressed (its app's "Authentication Audience"): an ID token
 * for the endpoint's URL, or a JWT for the Cloud project's number. */
const GCHAT_AUDIENCE_MODES = ['endpoint_url', 'project_number'] as const;
export type GchatAudienceMode = (typeof GCHAT_AUDIENCE_MODES)[number];

/** Steps of the operator's backup and restore at which a test may have the command kill itself
 * (TEST_CRASH_AT, lib/crash-point.ts). */
const CRASH_POINTS = ['backup.copying', 'restore.unpacked', 'restore.aside', 'restore.swapped', 'restore.deleting'] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

/** `off`: the socket address is the client. `all`: believe any X-Forwarded-For. A list: believe it
 * only from those proxy addresses. */
export type TrustProxy = { mode: 'off' } | { mode: 'all' } | { mode: 'list'; addresses: string[] };

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | null;
  dataDir: string;
  redisUrl: string | null;
  rateLimitStore: RateLimitStoreKind;
  reusePort: boolean;
  publicUrl: string | null;
  trustProxy: TrustProxy;
  secretKey: string | null;
  logLevel: LogLevel;
  /** Embedded database: log each stall of the main thread over 50 ms with what ran in it (db/embedded-stalls.ts). */
  debugStalls: boolean;
  databasePoolSize: number;
  bodyLimitApi: number;
  bodyLimitImport: number;
  bodyLimitWebhook: number;
  /** Memory for list pages kept until their organisation's data changes (lib/list-cache.ts); 0 turns it off. */
  listCacheMb: number;
  anonLimitPerMinute: number;
  anonLimitPerDay: number;
  /** Console sign-in (POST /api/auth/sign-in): wrong passwords per client address and account, and
   * attempts per client address whatever the account; each a minute and a quarter of an hour. */
  signInLimitPerMinute: number;
  signInLimitPer15Minutes: number;
  signInAddressLimitPerMinute: number;
  signInAddressLimitPer15Minutes: number;
  /** Password hashings and verifications (argon2id, 64 MiB each) at once per process, and how many
   * may wait for a turn; past that a sign-in or link acceptance is answered 503 at once. */
  passwordHashingConcurrency: number;
  passwordHashingQueue: number;
  /** Ticket webhook deliveries a connector may make (its own budget: a support platform's bursts
   * must not be refused by the API limits of its organisation's plan). */
  webhookLimitPerMinute: number;
  webhookLimitPerDay: number;
  shutdownTimeoutMs: number;
  /** A request still running after this long is answered 503 and its work abandoned: its
   * transaction is rolled back (the embedded database's units, PostgreSQL's statement timeout). */
  requestTimeoutMs: number;
  /** GET /metrics on the API port takes this as a bearer token (null: not served there). */
  metricsToken: string | null;
  /** A port of its own on 127.0.0.1 for GET /metrics, without a token (null: none). */
  metricsPort: number | null;
  /** Churn predictions (modules/predictions/settings.ts). */
  predictionHorizonDays: number;
  churnGraceDays: number;
  priorAnnualChurn: number;
  riskBands: [number, number, number];
  trainLookbackDays: number;
  trainMaxCustomers: number;
  predictionDebounceS: number;
  predictionNightlyAt: string;
  /** Agent actions (modules/agent-actions/settings.ts). */
  actionTtlHours: number;
  rejectCooldownDays: number;
  allowPrivateEndpoints: boolean;
  /** Slack's Web API (tests point it at a local fake). */
  slackApiBase: string;
  /** A platform base URL may be plain http:// (local fakes only). */
  allowInsecurePlatformUrls: boolean;
  /** Slack's signing secret: inbound requests are verified with it (null: the team-chat webhook refuses all). */
  slackSigningSecret: string | null;
  /** The signing secret before a rotation, accepted too while it lasts. */
  slackSigningSecretPrevious: string | null;
  /** A discount above this percentage needs a manager's (or admin's) approval. */
  discountMaxNoManager: number;
  /** Google Chat's REST API (spaces.messages.create and patch). */
  gchatApiBase: string;
  /** Google's OAuth token endpoint: the service account's JWT is exchanged there. */
  googleTokenUrl: string;
  /** Google's OAuth keys (JWKS): ID tokens of the endpoint-URL audience are verified with them. */
  googleJwksUrl: string;
  /** chat@system.gserviceaccount.com's x509 certificates: the project-number audience's JWTs. */
  googleChatCertsUrl: string;
  gchatAudienceMode: GchatAudienceMode;
  /** The audience Google's tokens must name (null: PUBLIC_URL + the webhook's path, or nothing). */
  gchatAudience: string | null;
  /** The Cloud project's number: add-on events are signed by its add-ons service agent. */
  gchatProjectNumber: string | null;
  /** The Chat app's service-account key file (JSON): the app posts and edits its cards with it. */
  gchatServiceAccountFile: string | null;
  /** Meta's app secret: `X-Hub-Signature-256` of inbound WhatsApp webhooks (null: all refused). */
  whatsappAppSecret: string | null;
  /** The app secret before a rotation, accepted too while it lasts. */
  whatsappAppSecretPrevious: string | null;
  /** The verify token of Meta's GET handshake (null: every handshake is refused). */
  whatsappVerifyToken: string | null;
  /** WhatsApp Cloud API (Meta's Graph API, versioned; tests point it at a local fake). */
  whatsappApiBase: string;
  /** Billing sync (docs/billing.md): Stripe's API, Chargebee's (`{site}` is the connector's site),
   * requests a second a backfill makes at most, and the webhook timestamps' tolerance. */
  stripeApiBase: string;
  chargebeeApiBase: string;
  billingMaxRps: number;
  billingToleranceS: number;
  /** The approved message template sent outside the 24-hour window, and its language code. */
  whatsappApprovalTemplate: string;
  whatsappTemplateLanguage: string;
  /** Tests only: the step at which backup or restore kills itself with SIGKILL (null: never). */
  testCrashAt: CrashPoint | null;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable} ${message}`);
    this.name = 'ConfigError';
  }
}

type Source = Record<string, string | undefined>;
type Parser<T> = (raw: string, name: string) => T;

const MiB = 1024 * 1024;

const integer =
  (min: number, max: number): Parser<number> =>
  (raw, name) => {
    if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be an integer between ${min} and ${max}, got "${raw}"`);
    const value = Number(raw);
    if (value < min || value > max) throw new ConfigError(name, `must be an integer between ${min} and ${max}, got "${raw}"`);
    return value;
  };

const oneOf =
  <T extends string>(values: readonly T[]): Parser<T> =>
  (raw, name) => {
    const value = raw.trim().toLowerCase() as T;
    if (!values.includes(value)) throw new ConfigError(name, `must be one of ${values.join(', ')}, got "${raw}"`);
    return value;
  };

const boolean: Parser<boolean> = (raw, name) => {
  const value = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(value)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
};

const url =
  (protocols: string[]): Parser<string> =>
  (raw, name) => {
    let parsed: URL;
    try {
      parsed = new URL(raw.trim());
    } catch {
      throw new ConfigError(name, `must be a URL (${protocols.join(' or ')}), got an unparsable value`);
    }
    if (!protocols.includes(parsed.protocol)) {
      throw new ConfigError(name, `must be a URL starting with ${protocols.join(' or ')}, got "${parsed.protocol}"`);
    }
    return raw.trim();
  };

const nonEmpty: Parser<string> = (raw, name) => {
  if (!raw.trim()) throw new ConfigError(name, 'must not be empty');
  return raw.trim();
};

const digits: Parser<string> = (raw, name) => {
  if (!/^\d{1,30}$/.test(raw.trim())) throw new ConfigError(name, `must be a Google Cloud project number (digits), got "${raw}"`);
  return raw.trim();
};

/** Meta's template names: lower-case letters, digits and underscores. */
const templateName: Parser<string> = (raw, name) => {
  const value = raw.trim();
  if (!/^[a-z0-9_]{1,512}$/.test(value)) throw new ConfigError(name, `must be a WhatsApp template name (a-z, 0-9, _), got "${value}"`);
  return value;
};

const languageCode: Parser<string> = (raw, name) => {
  const value = raw.trim();
  if (!/^[a-z]{2,3}(_[A-Z]{2})?$/.test(value)) throw new ConfigError(name, `must be a language code such as en or en_US, got "${value}"`);
  return value;
};

const metricsToken: Parser<string> = (raw, name) => {
  const value = raw.trim();
  if (value.length < 16) throw new ConfigError(name, 'must be at least 16 characters (it guards the metrics)');
  return value;
};

const trustProxy: Parser<TrustProxy> = (raw, name) => {
  const value = raw.trim().toLowerCase();
  if (['', '0', 'false', 'off', 'no'].includes(value)) return { mode: 'off' };
  if (['1', 'true', 'on', 'all', 'yes'].includes(value)) return { mode: 'all' };
  const addresses = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const address of addresses) {
    if (!/^[0-9a-f:.]+$/.test(address)) {
      throw new ConfigError(name, `must be off, all, or a comma-separated list of proxy IP addresses, got "${address}"`);
    }
  }
  return { mode: 'list', addresses };
};

/** A share strictly between 0 and 1. */
const fraction: Parser<number> = (raw, name) => {
  const value = /^\s*(0?\.\d+)\s*$/.test(raw) ? Number(raw) : NaN;
  if (!(value > 0 && value < 1)) throw new ConfigError(name, `must be a number between 0 and 1 (e.g. 0.12), got "${raw}"`);
  return value;
};

const riskBands: Parser<[number, number, number]> = (raw, name) => {
  const values = raw.split(',').map((part) => fraction(part, name));
  if (values.length !== 3 || !(values[0]! < values[1]! && values[1]! < values[2]!)) {
    throw new ConfigError(
      name,
      `must be three increasing numbers between 0 and 1, the upper bounds of low, medium and high (e.g. 0.05,0.15,0.35), got "${raw}"`,
    );
  }
  return values as [number, number, number];
};

const timeOfDay: Parser<string> = (raw, name) => {
  if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(raw.trim())) throw new ConfigError(name, `must be a time of day HH:MM (UTC), got "${raw}"`);
  return raw.trim();
};

/** A URL that may hold `{site}` in its host (Chargebee's API is per site). */
const siteUrl: Parser<string> = (raw, name) => {
  url(['http:', 'https:'])(raw.replaceAll('{site}', 'site'), name);
  return raw.trim();
};

const secretKey: Parser<string> = (raw, name) => {
  const value = raw.trim();
  if (value.length < 32) throw new ConfigError(name, 'must be at least 32 characters (e.g. `openssl rand -base64 32`)');
  return value;
};

/** Variable name -> how to parse it -> where it goes, and what --help says of it (`shownDefault`
 * where the fallback alone would not say what happens). The flag is the variable in kebab case. */
const SETTINGS = {
  PORT: {
    key: 'port',
    parse: integer(0, 65535),
    fallback: 3000,
    help: "HTTP port (0 picks a free one; the log line 'revintel serving' says which).",
  },
  HOST: { key: 'host', parse: nonEmpty, fallback: '0.0.0.0', help: 'Address to listen on.' },
  DATABASE_URL: {
    key: 'databaseUrl',
    parse: url(['postgres:', 'postgresql:']),
    fallback: null,
    help: 'postgres://… to run on PostgreSQL (14+); unset, the embedded database in DATA_DIR.',
  },
  DATA_DIR: {
    key: 'dataDir',
    parse: nonEmpty,
    fallback: './data',
    help: 'Where the embedded database, its lock, its admin socket and the generated secret key live.',
  },
  REDIS_URL: {
    key: 'redisUrl',
    parse: url(['redis:', 'rediss:']),
    fallback: null,
    help: 'redis://… to keep rate-limit counters in Redis.',
  },
  RATE_LIMIT_STORE: {
    key: 'rateLimitStore',
    parse: oneOf(RATE_LIMIT_STORES),
    fallback: undefined,
    help: 'Where rate-limit counters live: memory, postgres or redis.',
    shownDefault: 'redis with REDIS_URL, else postgres with DATABASE_URL, else memory',
  },
  REUSE_PORT: {
    key: 'reusePort',
    parse: boolean,
    fallback: false,
    help: 'Let several processes listen on one port (needs DATABASE_URL and a shared rate-limit store).',
  },
  PUBLIC_URL: {
    key: 'publicUrl',
    parse: url(['http:', 'https:']),
    fallback: null,
    help: "The server's public address: connector webhook URLs, sign-in links, the OpenAPI document's server.",
  },
  TRUST_PROXY: {
    key: 'trustProxy',
    parse: trustProxy,
    fallback: { mode: 'off' },
    help: 'Whose X-Forwarded-For to believe for the client address: off, all, or a comma-separated list of proxy IPs (all only behind a proxy that overwrites it).',
  },
  SECRET_KEY: {
    key: 'secretKey',
    parse: secretKey,
    fallback: null,
    help: 'Encrypts stored webhook and chat secrets (at least 32 characters).',
    shownDefault: 'generated into DATA_DIR/secret.key on the embedded database',
  },
  LOG_LEVEL: { key: 'logLevel', parse: oneOf(LOG_LEVELS), fallback: 'info', help: 'debug, info, warn, error or silent.' },
  DEBUG_STALLS: {
    key: 'debugStalls',
    parse: boolean,
    fallback: false,
    help: 'Embedded database: log each stall of the main thread over 50 ms, with the time each kind of work took in it (profiling).',
  },
  DATABASE_POOL_SIZE: {
    key: 'databasePoolSize',
    parse: integer(1, 1000),
    fallback: 10,
    help: "PostgreSQL connections of the server's requests, per process.",
  },
  BODY_LIMIT_API: {
    key: 'bodyLimitApi',
    parse: integer(1024, 1024 * MiB),
    fallback: 1 * MiB,
    help: 'Largest API request body, in bytes (413 above).',
  },
  BODY_LIMIT_IMPORT: {
    key: 'bodyLimitImport',
    parse: integer(1024, 1024 * MiB),
    fallback: 10 * MiB,
    help: 'Largest ticket-import body, in bytes.',
  },
  BODY_LIMIT_WEBHOOK: {
    key: 'bodyLimitWebhook',
    parse: integer(1024, 1024 * MiB),
    fallback: 5 * MiB,
    help: 'Largest webhook body, in bytes.',
  },
  LIST_CACHE_MB: {
    key: 'listCacheMb',
    parse: integer(0, 4096),
    fallback: 64,
    help: 'Memory for kept list pages of the ARR data, in MiB (0 turns it off).',
  },
  RATE_LIMIT_ANON_PER_MINUTE: {
    key: 'anonLimitPerMinute',
    parse: integer(1, 10_000_000),
    fallback: 120,
    help: 'Requests without credentials per client address, per minute.',
  },
  RATE_LIMIT_ANON_PER_DAY: {
    key: 'anonLimitPerDay',
    parse: integer(1, 1_000_000_000),
    fallback: 20_000,
    help: 'Requests without credentials per client address, per day.',
  },
  RATE_LIMIT_SIGN_IN_PER_MINUTE: {
    key: 'signInLimitPerMinute',
    parse: integer(1, 10_000),
    fallback: 5,
    help: 'Console sign-in: wrong passwords per client address and account, per minute.',
  },
  RATE_LIMIT_SIGN_IN_PER_15_MINUTES: {
    key: 'signInLimitPer15Minutes',
    parse: integer(1, 1_000_000),
    fallback: 20,
    help: 'Console sign-in: wrong passwords per client address and account, per quarter of an hour.',
  },
  RATE_LIMIT_SIGN_IN_ADDRESS_PER_MINUTE: {
    key: 'signInAddressLimitPerMinute',
    parse: integer(1, 100_000),
    fallback: 20,
    help: 'Console sign-in attempts per client address, whatever the account, per minute.',
  },
  RATE_LIMIT_SIGN_IN_ADDRESS_PER_15_MINUTES: {
    key: 'signInAddressLimitPer15Minutes',
    parse: integer(1, 10_000_000),
    fallback: 100,
    help: 'Console sign-in attempts per client address, whatever the account, per quarter of an hour.',
  },
  PASSWORD_HASHING_CONCURRENCY: {
    key: 'passwordHashingConcurrency',
    parse: integer(1, 64),
    fallback: 2,
    help: 'Password hashings (argon2id, 64 MiB each) at once per process.',
  },
  PASSWORD_HASHING_QUEUE: {
    key: 'passwordHashingQueue',
    parse: integer(0, 1_000),
    fallback: 4,
    help: 'Password hashings that may wait for a turn; past that 503 busy at once.',
  },
  RATE_LIMIT_WEBHOOK_PER_MINUTE: {
    key: 'webhookLimitPerMinute',
    parse: integer(1, 100_000_000),
    fallback: 60_000,
    help: "Ticket webhook deliveries per connector, per minute (its own budget, not the plan's).",
  },
  RATE_LIMIT_WEBHOOK_PER_DAY: {
    key: 'webhookLimitPerDay',
    parse: integer(1, 10_000_000_000),
    fallback: 20_000_000,
    help: 'Ticket webhook deliveries per connector, per day.',
  },
  SHUTDOWN_TIMEOUT_MS: {
    key: 'shutdownTimeoutMs',
    parse: integer(0, 600_000),
    fallback: 10_000,
    help: 'How long SIGTERM waits for requests in flight and the current job, in ms.',
  },
  REQUEST_TIMEOUT_MS: {
    key: 'requestTimeoutMs',
    parse: integer(100, 3_600_000),
    fallback: 30_000,
    help: 'A request still running after this many ms is answered 503 request_timeout and its work rolled back.',
  },
  METRICS_TOKEN: {
    key: 'metricsToken',
    parse: metricsToken,
    fallback: null,
    help: 'Serve GET /metrics on the API port to a bearer of this token (at least 16 characters); unset, it is a 404 there.',
  },
  METRICS_PORT: {
    key: 'metricsPort',
    parse: integer(1, 65535),
    fallback: null,
    help: 'Serve GET /metrics on this port of 127.0.0.1, without a token.',
  },
  PREDICTION_HORIZON_DAYS: {
    key: 'predictionHorizonDays',
    parse: integer(7, 365),
    fallback: 90,
    help: 'The days ahead a churn prediction speaks of (7-365).',
  },
  CHURN_GRACE_DAYS: {
    key: 'churnGraceDays',
    parse: integer(0, 365),
    fallback: 30,
    help: 'A contract that ends is churn unless another starts within these days.',
  },
  PRIOR_ANNUAL_CHURN: {
    key: 'priorAnnualChurn',
    parse: fraction,
    fallback: 0.12,
    help: "The scorecard's base rate, for an organisation without history.",
  },
  RISK_BANDS: {
    key: 'riskBands',
    parse: riskBands,
    fallback: [0.05, 0.15, 0.35],
    help: 'Upper bounds of the low, medium and high risk bands.',
  },
  TRAIN_LOOKBACK_DAYS: {
    key: 'trainLookbackDays',
    parse: integer(180, 3650),
    fallback: 730,
    help: 'How far back training snapshots go, in days.',
  },
  TRAIN_MAX_CUSTOMERS: {
    key: 'trainMaxCustomers',
    parse: integer(1_000, 10_000_000),
    fallback: 25_000,
    help: 'Above this many customers, training and backtests read a fixed sample.',
  },
  PREDICTION_DEBOUNCE_S: {
    key: 'predictionDebounceS',
    parse: integer(0, 3600),
    fallback: 5,
    help: 'A stale customer is rescored this many seconds after its first mark.',
  },
  PREDICTION_NIGHTLY_AT: {
    key: 'predictionNightlyAt',
    parse: timeOfDay,
    fallback: '02:00',
    help: 'When (HH:MM, UTC) the nightly retrain and rescore run.',
  },
  ACTION_TTL_HOURS: {
    key: 'actionTtlHours',
    parse: integer(1, 24 * 90),
    fallback: 72,
    help: 'An agent action not decided within these hours expires.',
  },
  REJECT_COOLDOWN_DAYS: {
    key: 'rejectCooldownDays',
    parse: integer(0, 365),
    fallback: 14,
    help: 'After a rejection, the same action type for the same customer waits these days.',
  },
  ALLOW_PRIVATE_ENDPOINTS: {
    key: 'allowPrivateEndpoints',
    parse: boolean,
    fallback: false,
    help: 'Outbound events may go to addresses that are not the public internet.',
  },
  SLACK_API_BASE: { key: 'slackApiBase', parse: url(['http:', 'https:']), fallback: 'https://slack.com/api', help: "Slack's Web API." },
  ALLOW_INSECURE_PLATFORM_URLS: {
    key: 'allowInsecurePlatformUrls',
    parse: boolean,
    fallback: false,
    help: 'A platform base URL may be plain http:// (local fakes only).',
  },
  SLACK_SIGNING_SECRET: {
    key: 'slackSigningSecret',
    parse: nonEmpty,
    fallback: null,
    help: "The Slack app's signing secret; unset, the team-chat webhook refuses everything.",
  },
  SLACK_SIGNING_SECRET_PREVIOUS: {
    key: 'slackSigningSecretPrevious',
    parse: nonEmpty,
    fallback: null,
    help: 'The previous Slack signing secret, also accepted during a rotation.',
  },
  DISCOUNT_MAX_NO_MANAGER: {
    key: 'discountMaxNoManager',
    parse: integer(0, 100),
    fallback: 15,
    help: "A discount above this percentage needs a manager's or admin's approval.",
  },
  GCHAT_API_BASE: {
    key: 'gchatApiBase',
    parse: url(['http:', 'https:']),
    fallback: 'https://chat.googleapis.com/v1',
    help: "Google Chat's REST API.",
  },
  GOOGLE_TOKEN_URL: {
    key: 'googleTokenUrl',
    parse: url(['http:', 'https:']),
    fallback: 'https://oauth2.googleapis.com/token',
    help: "Where the Chat app's service account exchanges its JWT for an access token.",
  },
  GOOGLE_JWKS_URL: {
    key: 'googleJwksUrl',
    parse: url(['http:', 'https:']),
    fallback: 'https://www.googleapis.com/oauth2/v3/certs',
    help: "Google's OAuth keys, for ID tokens (endpoint_url audience).",
  },
  GOOGLE_CHAT_CERTS_URL: {
    key: 'googleChatCertsUrl',
    parse: url(['http:', 'https:']),
    fallback: 'https://www.googleapis.com/service_accounts/v1/metadata/x509/chat@system.gserviceaccount.com',
    help: "chat@system's x509 certificates, for its JWTs (project_number audience).",
  },
  GCHAT_AUDIENCE_MODE: {
    key: 'gchatAudienceMode',
    parse: oneOf(GCHAT_AUDIENCE_MODES),
    fallback: 'endpoint_url',
    help: "The Chat app's Authentication Audience: endpoint_url or project_number.",
  },
  GCHAT_AUDIENCE: {
    key: 'gchatAudience',
    parse: nonEmpty,
    fallback: null,
    help: "The audience Google's tokens must name: the endpoint URL, or the project number.",
    shownDefault: 'PUBLIC_URL + /api/webhooks/workspace-chat',
  },
  GCHAT_PROJECT_NUMBER: {
    key: 'gchatProjectNumber',
    parse: digits,
    fallback: null,
    help: "The Cloud project's number: add-on events must be signed by its add-ons service agent.",
  },
  GCHAT_SERVICE_ACCOUNT_FILE: {
    key: 'gchatServiceAccountFile',
    parse: nonEmpty,
    fallback: null,
    help: "The Chat app's service-account key file (JSON); unset, nothing is sent to Google Chat.",
  },
  WHATSAPP_APP_SECRET: {
    key: 'whatsappAppSecret',
    parse: nonEmpty,
    fallback: null,
    help: "The Meta app's App Secret; unset, the messaging webhook refuses everything.",
  },
  WHATSAPP_APP_SECRET_PREVIOUS: {
    key: 'whatsappAppSecretPrevious',
    parse: nonEmpty,
    fallback: null,
    help: 'The previous App Secret, also accepted during a rotation.',
  },
  WHATSAPP_VERIFY_TOKEN: {
    key: 'whatsappVerifyToken',
    parse: nonEmpty,
    fallback: null,
    help: "The verify token of Meta's webhook handshake; unset, every handshake is refused.",
  },
  WHATSAPP_API_BASE: {
    key: 'whatsappApiBase',
    parse: url(['http:', 'https:']),
    fallback: 'https://graph.facebook.com/v21.0',
    help: "Meta's Graph API, with its version.",
  },
  WHATSAPP_APPROVAL_TEMPLATE: {
    key: 'whatsappApprovalTemplate',
    parse: templateName,
    fallback: 'revintel_approval',
    help: 'The approved WhatsApp template sent outside the 24-hour window.',
  },
  WHATSAPP_TEMPLATE_LANGUAGE: {
    key: 'whatsappTemplateLanguage',
    parse: languageCode,
    fallback: 'en',
    help: "The template's language code (en, en_US, de…).",
  },
  STRIPE_API_BASE: {
    key: 'stripeApiBase',
    parse: url(['http:', 'https:']),
    fallback: 'https://api.stripe.com',
    help: "Stripe's API, read by the billing backfill.",
  },
  CHARGEBEE_API_BASE: {
    key: 'chargebeeApiBase',
    parse: siteUrl,
    fallback: 'https://{site}.chargebee.com',
    help: "Chargebee's API; {site} is the connector's site.",
  },
  BILLING_MAX_RPS: {
    key: 'billingMaxRps',
    parse: integer(1, 100),
    fallback: 25,
    help: 'Requests a second a billing backfill makes at most (a 429 also slows it down).',
  },
  BILLING_TOLERANCE_S: {
    key: 'billingToleranceS',
    parse: integer(1, 3600),
    fallback: 300,
    help: "How far a Stripe webhook signature's timestamp may be from now, in seconds.",
  },
  TEST_CRASH_AT: {
    key: 'testCrashAt',
    parse: oneOf(CRASH_POINTS),
    fallback: null,
    help: 'Tests only: the step at which backup or restore kills itself.',
  },
} as const satisfies Record<string, { key: keyof Config; parse: Parser<unknown>; fallback: unknown; help: string; shownDefault?: string }>;

export type SettingName = keyof typeof SETTINGS;
export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

/** What --help says of a setting: its description, and its default as one would type it. */
export function settingHelp(name: SettingName): { description: string; default?: string } {
  const setting: { fallback: unknown; help: string; shownDefault?: string } = SETTINGS[name];
  const { fallback } = setting;
  const shown =
    setting.shownDefault ??
    (fallback === null || fallback === undefined
      ? undefined
      : Array.isArray(fallback)
        ? fallback.join(',')
        : typeof fallback === 'object'
          ? (fallback as { mode?: string }).mode
          : String(fallback));
  return { description: setting.help, ...(shown !== undefined ? { default: shown } : {}) };
}

/** `DATABASE_URL` -> `database-url` */
export const flagName = (name: SettingName) => name.toLowerCase().replaceAll('_', '-');

/**
 * Builds the configuration from the environment, overridden by flags (already parsed, keyed by
 * variable name). Throws ConfigError naming the variable on the first bad value.
 */
export function loadConfig(env: Source = process.env, flags: Partial<Record<SettingName, string>> = {}): Config {
  // Each setting fills its own key, so the whole is a Config once every setting has been read.
  const values: { [K in keyof Config]?: unknown } = {};
  for (const name of SETTING_NAMES) {
    const setting = SETTINGS[name];
    const raw = flags[name] ?? env[name];
    values[setting.key] =
      raw === undefined || (raw === '' && setting.fallback !== undefined && name !== 'TRUST_PROXY')
        ? setting.fallback
        : (setting.parse as Parser<unknown>)(raw, name);
  }
  const config = values as Config & { rateLimitStore: RateLimitStoreKind | undefined };

  config.rateLimitStore ??= config.redisUrl ? 'redis' : config.databaseUrl ? 'postgres' : 'memory';
  if (config.rateLimitStore === 'redis' && !config.redisUrl) {
    throw new ConfigError('RATE_LIMIT_STORE', 'is redis but REDIS_URL is not set');
  }
  if (config.rateLimitStore === 'postgres' && !config.databaseUrl) {
    throw new ConfigError(
      'RATE_LIMIT_STORE',
      'is postgres but DATABASE_URL is not set (the embedded database serves one process: use memory)',
    );
  }
  if (config.reusePort && !config.databaseUrl) {
    throw new ConfigError(
      'REUSE_PORT',
      'needs DATABASE_URL: processes sharing a port must share a PostgreSQL database (the embedded one has a single owner)',
    );
  }
  if (config.reusePort && config.rateLimitStore === 'memory') {
    throw new ConfigError(
      'REUSE_PORT',
      'needs a shared rate-limit store (RATE_LIMIT_STORE=postgres or redis): per-process counters would multiply the limits',
    );
  }
  for (const [name, value] of [
    ['SLACK_API_BASE', config.slackApiBase],
    ['GCHAT_API_BASE', config.gchatApiBase],
    ['GOOGLE_TOKEN_URL', config.googleTokenUrl],
    ['GOOGLE_JWKS_URL', config.googleJwksUrl],
    ['GOOGLE_CHAT_CERTS_URL', config.googleChatCertsUrl],
    ['STRIPE_API_BASE', config.stripeApiBase],
    ['CHARGEBEE_API_BASE', config.chargebeeApiBase],
  ] as const) {
    if (value.startsWith('http:') && !config.allowInsecurePlatformUrls)
      throw new ConfigError(name, 'is plain http://: set ALLOW_INSECURE_PLATFORM_URLS=true (local fakes only)');
  }
  if (config.gchatAudienceMode === 'project_number' && config.gchatAudience !== null && !/^\d{1,30}$/.test(config.gchatAudience)) {
    throw new ConfigError(
      'GCHAT_AUDIENCE',
      `must be the Cloud project's number when GCHAT_AUDIENCE_MODE is project_number, got "${config.gchatAudience}"`,
    );
  }
  if (config.gchatAudienceMode === 'project_number' && config.gchatAudience === null) {
    throw new ConfigError('GCHAT_AUDIENCE', "must be set to the Cloud project's number when GCHAT_AUDIENCE_MODE is project_number");
  }
  if (config.whatsappApiBase.startsWith('http:') && !config.allowInsecurePlatformUrls) {
    throw new ConfigError('WHATSAPP_API_BASE', 'is plain http://: set ALLOW_INSECURE_PLATFORM_URLS=true (local fakes only)');
  }
  return config;
}
