// The documentation's examples run as shown: every `sh run` and `ts run` block of README.md
// and docs/*.md runs, in order, one file at a time, in one bash session against a started
// service, and each answer shown after a command is compared in shape with what the
// command printed (docs/development.md, "Examples that run"). So an example can no longer
// drift from the service.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startFakeMessagingProvider, type FakeMessagingProvider } from '../helpers/fake-messaging-provider.ts';
import { startTestService, TEST_SECRET_KEY, type TestService } from '../helpers/service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { parseShown, readBlocks, readSteps, RUNNABLE_LANGUAGES, shapeDifferences, shownLogLines, textMatches, type Block } from './markdown-examples.ts';

const root = path.resolve(import.meta.dirname, '../..');

/**
 * Blocks shown but not run, by file and first line: what they do cannot happen inside a
 * test (install, a second service, Docker, a long benchmark, a server left running).
 */
const NOT_RUN: Record<string, Record<string, string>> = {
  'README.md': {
    '$ npm ci': 'installs packages and starts the service the examples run against',
    '$ echo "<!doctype html><title>My shop</title><h1>My shop</h1>$TAG" > site.html': 'serves a page until stopped',
    '$ npm run -s demo': 'run with a started service and a browser by test/foundation/demo.test.ts',
  },
  'docs/api.md': {
    '$ curl -k -X DELETE -H "X-API-Key: $KEY" "$BASE/api-keys/current"': "revokes the key the guide's later examples use",
    '$ npm install openapi-fetch && npm install -D openapi-typescript typescript@5': 'installs packages (the repository has them)',
  },
  'docs/webhooks.md': {
    '$ openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj /CN=localhost \\':
      'a receiver and a second service; the test has its own receiver',
  },
  'docs/operating.md': {
    '$ export SECRET_KEY=$(openssl rand -base64 48)': 'Docker',
  },
  'docs/performance.md': {
    '$ npm run bench                                    # every scenario, about 25 minutes': 'a benchmark of minutes',
    '$ node_modules/.bin/node bench/procedure-runner.ts     # CALLS (20000) and ROUNDS (15) are knobs': 'a benchmark',
    '$ node_modules/.bin/node bench/db-work/visitor-message.ts [messages]   # POST /v1/incoming-chat-widget-message, steady state': 'benchmarks with their own database',
    '$ CPU_AB_BASE=../other-checkout CPU_AB_KIND=read-rest CPU_AB_RATE=1500 CPU_AB_ACCOUNTS=1000 \\': 'needs a second checkout',
  },
  'docs/development.md': {
    '$ npm test                 # typecheck, then the whole suite; ends with "N passed, N failed"': 'runs the whole suite',
  },
};

/** The WhatsApp app's values the guide names; the fake provider accepts exactly these. */
const WHATSAPP = {
  WHATSAPP_TOKEN: 'EAAGexampletoken0001',
  PHONE_NUMBER_ID: '104900000000001',
  BUSINESS_ACCOUNT_ID: '241700000000001',
  MESSAGING_VERIFY_TOKEN: 'verify-example',
  MESSAGING_APP_SECRET: 'app-secret-example',
};

const GUIDES = ['README.md', ...readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];

function blocksOf(file: string): Block[] {
  return readBlocks(file, readFileSync(path.join(root, file), 'utf8'));
}

test('every shell and TypeScript block runs, and every block shown but not run says why', () => {
  const problems: string[] = [];
  const listed = new Set<string>();
  for (const file of GUIDES) {
    for (const block of blocksOf(file)) {
      const where = `${file}:${block.line}`;
      if (RUNNABLE_LANGUAGES.has(block.language) && !block.run) problems.push(`${where}: a ${block.language} block not marked run (mark it, or show it as console with a reason here)`);
      if (block.run && !RUNNABLE_LANGUAGES.has(block.language)) problems.push(`${where}: run on a ${block.language || 'plain'} block`);
      if (block.language === 'console') {
        const first = block.lines.find((line) => line.trim()) ?? '';
        if (NOT_RUN[file]?.[first] === undefined) problems.push(`${where}: a console block not in NOT_RUN: ${first}`);
        listed.add(`${file}\n${first}`);
      }
    }
  }
  for (const [file, firsts] of Object.entries(NOT_RUN)) {
    for (const first of Object.keys(firsts)) if (!listed.has(`${file}\n${first}`)) problems.push(`NOT_RUN names a block ${file} no longer has: ${first}`);
  }
  expect(problems).toEqual([]);
});

test('a shown answer is compared in shape: keys, types, literal strings, ids by prefix', () => {
  const shown = parseShown('201 {"success":true,"data":{"id":"apt_…","status":"booked","notes":null,"created_at":"…","n":1},"list":[…]}   (a note)');
  expect(shown.status).toBe(201);
  const answer = { success: true, data: { id: 'apt_01abc', status: 'booked', notes: null, created_at: '2030-01-01T00:00:00Z', n: 7 }, list: [1, 2] };
  expect(shapeDifferences(shown.json, answer)).toEqual([]);
  expect(shapeDifferences(shown.json, { ...answer, data: { ...answer.data, id: 'ct_01abc' } })).toEqual(['$.data.id: expected "apt_…", got "ct_01abc"']);
  expect(shapeDifferences(shown.json, { ...answer, data: { ...answer.data, status: 'cancelled' } })).toHaveLength(1);
  expect(shapeDifferences(shown.json, { ...answer, success: false })).toHaveLength(1);
  expect(shapeDifferences(shown.json, { ...answer, extra: 1 })).toEqual(['$.extra: not shown']);
  expect(shapeDifferences(shown.json, { success: true, list: [] })).toEqual(['$.data: missing']);
  expect(shapeDifferences(parseShown('{"success":true,…}').json, { success: true, more: 1 })).toEqual([]);
  expect(shapeDifferences(parseShown('[{"id":"tag_…"}]').json, [{ id: 'tag_1' }, { id: 'tag_2' }])).toEqual(['$: expected 1 items, got 2']);
  expect(textMatches('<b data-id="cw_…">', '<b data-id="cw_01x">')).toBe(true);
  expect(textMatches('1158201444', '1158201445')).toBe(false);
});

describe('examples against a started service', () => {
  let service: TestService;
  let receiver: WebhookReceiver;
  let provider: FakeMessagingProvider;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'mapi-docs-'));
    receiver = await startWebhookReceiver();
    provider = await startFakeMessagingProvider();
    provider.grant(WHATSAPP.WHATSAPP_TOKEN, { phoneNumberId: WHATSAPP.PHONE_NUMBER_ID, businessAccountId: WHATSAPP.BUSINESS_ACCOUNT_ID });
    service = await startTestService({
      env: {
        DATA_DIR: dataDir,
        WEBHOOK_ALLOW_HOSTS: 'localhost',
        MESSAGING_API_URL: provider.url,
        MESSAGING_VERIFY_TOKEN: WHATSAPP.MESSAGING_VERIFY_TOKEN,
        MESSAGING_APP_SECRET: WHATSAPP.MESSAGING_APP_SECRET,
      },
    });
  });

  afterAll(async () => {
    await service?.stop();
    await receiver?.close();
    await provider?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  test.each(GUIDES.filter((file) => blocksOf(file).some((block) => block.run)))(
    '%s: every example runs as shown',
    async (file) => {
      const blocks = blocksOf(file).filter((block) => block.run);
      // Guides start where README's first ten minutes leave off: an account, its key, the base URL.
      const account = file === 'README.md' ? undefined : await service.createAccount({ email: `docs-${path.basename(file, '.md')}@example.com` });
      const env = {
        ...process.env,
        PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`,
        // The admin CLI reaches the service's database as README says: the same configuration.
        DATABASE_URL: service.databaseUrl,
        SECRET_KEY: TEST_SECRET_KEY,
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        ...(account ? { BASE: `${service.origin}/v1`, KEY: account.apiKey, USER_ID: account.userId, ...WHATSAPP } : {}),
      };
      const problems = await runExamples(blocks, env, (text) =>
        text
          .replaceAll('127.0.0.1:3000', `127.0.0.1:${service.port}`)
          .replaceAll('https://localhost:8443', receiver.origin)
          .replaceAll('.data/tls-cert.pem', path.join(dataDir, 'tls-cert.pem')),
      dataDir);
      expect(problems).toEqual([]);
    },
    180_000,
  );
});

const MARK = '\u001e';

/**
 * Runs the blocks in one bash session (variables carry from block to block and reach the
 * TypeScript examples, as in a reader's terminal) and returns what differs from what the
 * blocks show. curl is wrapped only to report each answer's status on stderr.
 */
async function runExamples(blocks: Block[], env: NodeJS.ProcessEnv, localise: (text: string) => string, dataDir: string): Promise<string[]> {
  type Check = { where: string; commands: string; shown?: string; logLines?: string[] };
  const checks: Check[] = [];
  const script = [
    'set -a', // every variable reaches the TypeScript examples, as `export` would
    'set -o pipefail',
    `trap 'printf "\\n${MARK}failed %s${MARK}\\n" "$BASH_COMMAND" >&2; exit 1' ERR`,
    `curl() { command curl -w '%{stderr}${MARK}status %{http_code}${MARK}\\n' "$@"; }`,
    `cd ${JSON.stringify(root)}`,
  ];
  const mark = (index: number) => `printf '\\n${MARK}step ${index}${MARK}\\n'; printf '\\n${MARK}step ${index}${MARK}\\n' >&2`;
  for (const block of blocks) {
    if (block.language === 'ts' || block.language === 'typescript') {
      const code = localise(block.lines.join('\n'));
      checks.push({ where: `${block.file}:${block.line}`, commands: code, logLines: shownLogLines(block).map(localise) });
      script.push(mark(checks.length - 1));
      script.push(`API_KEY="$KEY" NODE_EXTRA_CA_CERTS=${JSON.stringify(path.join(dataDir, 'tls-cert.pem'))} node --input-type=module-typescript <<'${MARK}TS'\n${code}\n${MARK}TS`);
      continue;
    }
    for (const step of readSteps(block)) {
      const commands = localise(step.commands.join('\n'));
      checks.push({ where: `${block.file}:${step.line}`, commands, shown: step.shown === undefined ? undefined : localise(step.shown) });
      script.push(mark(checks.length - 1), commands);
    }
  }
  script.push(mark(checks.length));

  const { stdout, stderr } = await runBash(script.join('\n'), env);
  const outputs = splitSteps(stdout);
  const errors = splitSteps(stderr);
  const problems: string[] = [];
  checks.forEach((check, index) => {
    const output = outputs[index];
    const error = errors[index] ?? '';
    const context = `${check.where}\n${check.commands}\n--- printed:\n${output?.trim()}\n--- stderr:\n${error.replaceAll(MARK, '').trim().slice(-2000)}`;
    if (problems.some((problem) => problem.endsWith('--- did not finish'))) return;
    if (output === undefined || outputs[index + 1] === undefined) {
      problems.push(`${context}\n--- did not finish`);
      return;
    }
    const statuses = [...error.matchAll(new RegExp(`${MARK}status (\\d+)${MARK}`, 'g'))].map((match) => Number(match[1]));
    const shown = check.shown === undefined ? undefined : parseShown(check.shown);
    if (shown?.status !== undefined) {
      if (statuses.at(-1) !== shown.status) problems.push(`${context}\n--- expected status ${shown.status}, got ${statuses.join(', ')}`);
    } else if (statuses.some((status) => status >= 400)) {
      problems.push(`${context}\n--- an answer with status ${statuses.join(', ')} where none is shown`);
    }
    const printed = output.trim();
    if (shown?.json !== undefined) {
      let actual: unknown;
      try {
        actual = JSON.parse(printed);
      } catch {
        problems.push(`${context}\n--- expected JSON shaped like ${check.shown}`);
        return;
      }
      const differences = shapeDifferences(shown.json, actual);
      if (differences.length) problems.push(`${context}\n--- differs from ${check.shown}:\n${differences.join('\n')}`);
    } else if (shown?.text !== undefined && !textMatches(shown.text, printed)) {
      problems.push(`${context}\n--- expected: ${shown.text}`);
    }
    if (check.logLines?.length) {
      const lines = printed.split('\n').map((line) => line.trim());
      let from = 0;
      for (const expected of check.logLines) {
        const found = lines.findIndex((line, at) => at >= from && textMatches(expected, line));
        if (found < 0) {
          problems.push(`${context}\n--- expected a line: ${expected}`);
          break;
        }
        from = found + 1;
      }
    }
  });
  return problems;
}

function splitSteps(text: string): string[] {
  const parts = text.split(new RegExp(`\\n${MARK}step \\d+${MARK}\\n`));
  return parts.slice(1);
}

function runBash(script: string, env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { env, cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', () => resolve({ stdout, stderr }));
  });
}
