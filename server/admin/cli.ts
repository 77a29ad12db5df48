// `npm run -s admin -- <command> [--flags]`: operator commands. Each prints one
// JSON line on stdout and exits 0, or prints {"error": "..."} and exits 1. They
// work with or without a running server, against the same database.
import { createHash, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ZodError } from 'zod';
import { createAccount } from '../accounts/create-account.ts';
import { updateAccount } from '../accounts/update-account.ts';
import { Account } from '../db/entities/index.ts';
import { loadConfig } from '../config.ts';
import { describeZodError } from '../errors.ts';
import { createLogger } from '../log.ts';
import { addTemplate } from '../messaging/add-template.ts';
import { connectMessagingProvider, MessagingConnectionInput } from '../messaging/connection.ts';
import { createServices, openDatabase, serviceBaseUrl } from '../start-service.ts';
import { createWidget } from '../widgets/create-widget.ts';
import type { Services } from '../process-services.ts';

type Flags = Record<string, string | boolean | undefined>;
type Command = { options: Record<string, { type: 'string' | 'boolean' }>; run(services: Services, flags: Flags): Promise<unknown> };

class UsageError extends Error {}

function onOff(value: string | boolean | undefined, flag: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'on') return true;
  if (value === 'off') return false;
  throw new UsageError(`${flag} must be on or off`);
}

function text(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A stable phone-number id per account, so connecting again keeps the same number. */
function defaultPhoneNumberId(userId: string): string {
  const digits = BigInt(`0x${createHash('sha256').update(userId).digest('hex').slice(0, 24)}`) % 10n ** 14n;
  return `1${digits.toString().padStart(14, '0')}`;
}

function integer(value: string | boolean | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^-?\d+$/.test(value)) throw new UsageError(`${flag} must be a whole number`);
  return Number(value);
}

const commands: Record<string, Command> = {
  'account:create': {
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      plan: { type: 'string' },
      agency: { type: 'boolean' },
      webhooks: { type: 'string' },
      credits: { type: 'string' },
      'oidc-subject': { type: 'string' },
    },
    async run(services, flags) {
      if (typeof flags.email !== 'string') throw new UsageError('--email is required');
      const created = await createAccount(services.orm.em.fork(), services.secrets, {
        email: flags.email,
        name: flags.name as string | undefined,
        plan: flags.plan as 'pro' | 'free' | undefined,
        agency: Boolean(flags.agency),
        webhooks: onOff(flags.webhooks, '--webhooks'),
        credits: integer(flags.credits, '--credits'),
        oidcSubject: flags['oidc-subject'] as string | undefined,
      });
      const { userId, apiKey, email, plan, agency, webhooks, credits, oidcSubject } = created;
      return { userId, apiKey, email, plan, agency, webhooks, credits, ...(oidcSubject ? { oidcSubject } : {}) };
    },
  },
  'account:update': {
    options: {
      user: { type: 'string' },
      plan: { type: 'string' },
      webhooks: { type: 'string' },
      credits: { type: 'string' },
      'oidc-subject': { type: 'string' },
    },
    async run(services, flags) {
      if (typeof flags.user !== 'string') throw new UsageError('--user is required');
      return updateAccount(services.orm.em.fork(), {
        userId: flags.user,
        plan: flags.plan as 'pro' | 'free' | undefined,
        webhooks: onOff(flags.webhooks, '--webhooks'),
        credits: integer(flags.credits, '--credits'),
        oidcSubject: flags['oidc-subject'] as string | undefined,
      });
    },
  },
  'template:add': {
    options: {
      user: { type: 'string' },
      name: { type: 'string' },
      body: { type: 'string' },
      language: { type: 'string' },
      category: { type: 'string' },
      status: { type: 'string' },
    },
    async run(services, flags) {
      if (typeof flags.user !== 'string') throw new UsageError('--user is required');
      if (typeof flags.name !== 'string') throw new UsageError('--name is required');
      if (typeof flags.body !== 'string') throw new UsageError('--body is required');
      return addTemplate(services.orm.em.fork(), flags.user, {
        name: flags.name,
        body: flags.body,
        language: text(flags.language),
        category: text(flags.category),
        status: text(flags.status),
      });
    },
  },
  'messaging:connect': {
    options: {
      user: { type: 'string' },
      token: { type: 'string' },
      'phone-number-id': { type: 'string' },
      'business-account-id': { type: 'string' },
    },
    async run(services, flags) {
      if (typeof flags.user !== 'string') throw new UsageError('--user is required');
      const em = services.orm.em.fork();
      if (!(await em.findOne(Account, flags.user, { fields: ['id'] }))) throw new UsageError(`No account ${flags.user}`);
      // Checked as PUT /messaging/connection checks its body, then with the provider.
      const input = MessagingConnectionInput.parse({
        phone_number_id: text(flags['phone-number-id']) ?? defaultPhoneNumberId(flags.user),
        business_account_id: text(flags['business-account-id']) ?? null,
        access_token: text(flags.token) ?? `admin-${randomBytes(24).toString('base64url')}`,
      });
      await connectMessagingProvider(em, services, flags.user, input);
      return { userId: flags.user, connected: true };
    },
  },
  'demo:create': {
    options: { email: { type: 'string' } },
    async run(services, flags) {
      const em = services.orm.em.fork();
      const account = await createAccount(em, services.secrets, {
        email: text(flags.email) ?? `demo-${randomBytes(4).toString('hex')}@example.com`,
        name: 'Demo',
      });
      const widget = await createWidget(em, services.secrets, account.userId, {
        name: 'Demo widget',
        settings: { title: 'Chat with us', greeting: 'Hi! Ask us anything — a person answers from the console.' },
      });
      // The address `npm start` prints with the same configuration.
      const base = serviceBaseUrl(services.config.HOST, services.config.PORT);
      return {
        userId: account.userId,
        apiKey: account.apiKey,
        widgetId: widget.id,
        console: `${base}/inbox`,
        demoSite: `${base}/demo-site/${widget.id}`,
      };
    },
  },
};

/** Registers further commands (templates, messaging credentials) from their own modules. */
export function registerAdminCommand(name: string, command: Command) {
  commands[name] = command;
}

function describeFailure(error: unknown): string {
  if (error instanceof ZodError) return describeZodError(error);
  return error instanceof Error ? error.message : String(error);
}

/** Runs the command; `closers` collects what to close afterwards, in the order opened. */
async function execute(argv: string[], closers: (() => Promise<unknown>)[]): Promise<unknown> {
  const [name, ...rest] = argv;
  const command = name ? commands[name] : undefined;
  if (!command) throw new UsageError(`unknown command ${name ?? '(none)'}; commands: ${Object.keys(commands).join(', ')}`);
  const flags = parseArgs({ args: rest, options: command.options, strict: true, allowPositionals: false }).values as Flags;
  const config = loadConfig();
  const log = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL);
  const database = await openDatabase(config, log).catch((error: unknown) => {
    throw new UsageError(`database unreachable: ${describeFailure(error)}`);
  });
  closers.push(() => database.stop());
  const services = await createServices(config, log, database.url);
  closers.push(
    () => services.orm.close(),
    () => services.messaging.close(),
  );
  return command.run(services, flags);
}

/**
 * Prints the one JSON line and exits once it is written: stdout on a pipe is asynchronous, so
 * exiting right after write() could lose the line. An error nothing caught (an unhandled
 * rejection, an 'error' event without a listener) becomes the command's {"error"} while it
 * runs; once the command has its result, such a late error (a session the database's
 * shutdown ended) goes to stderr and the result stands.
 */
export async function runAdmin(argv: string[]): Promise<void> {
  let result: { line: unknown; code: 0 | 1 } | undefined;
  let crash!: (error: unknown) => void;
  const crashed = new Promise<never>((_, reject) => (crash = reject));
  const stray = (error: unknown) => {
    if (result) process.stderr.write(`after the command finished: ${describeFailure(error)}\n`);
    else crash(error);
  };
  process.on('uncaughtException', stray);
  process.on('unhandledRejection', stray);

  const closers: (() => Promise<unknown>)[] = [];
  try {
    result = { line: (await Promise.race([execute(argv, closers), crashed])) ?? null, code: 0 };
  } catch (error) {
    result = { line: { error: describeFailure(error) }, code: 1 };
  }
  for (const close of closers.reverse()) await close().catch(() => {});
  const { line, code } = result;
  process.exitCode = code;
  await new Promise<void>((resolve) => process.stdout.write(JSON.stringify(line) + '\n', () => resolve()));
  process.exit(code);
}

if (import.meta.main) await runAdmin(process.argv.slice(2));
