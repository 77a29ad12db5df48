// An independent check of the served OpenAPI document, on its own port and data directory:
// starts the service on a fresh embedded database beside a loopback messaging provider
// that accepts every token (so `PUT /messaging/connection` is answered as a reachable
// provider would), makes an account, runs Schemathesis (`schemathesis.sh`, all checks and
// phases) against it, and stops what it started.
//   npm run schemathesis -- [SECONDS] [extra schemathesis options...]
// SCHEMATHESIS_SH names the tool (default ../shared/tools/schemathesis.sh beside the clone).
// SCHEMATHESIS_PARTS=N splits the document's operations into N parts by their first path
// segment (so an operation's stateful links, which stay within its resource, stay in its
// part), balanced by operation count, and runs one Schemathesis per part at once, each with
// an account (and so a rate-limit budget) of its own: the tool paces itself to the main
// key's limit, so one run over every operation takes hours, and N parts take about 1/N of
// that. Each part's report goes to part-K.log in SCHEMATHESIS_LOG_DIR (default: a new
// directory under the system's temporary one, printed and kept); the exit status is the
// worst part's.
import { execFile, spawn } from 'node:child_process';
import { createServer } from 'node:https';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createLocalCa } from '../helpers/local-ca.ts';

const root = path.resolve(import.meta.dirname, '../..');
const tool = process.env.SCHEMATHESIS_SH ?? path.resolve(root, '../shared/tools/schemathesis.sh');
const [seconds = '3600', ...extra] = process.argv.slice(2);

const dir = await mkdtemp(path.join(tmpdir(), 'schemathesis-run-'));
const ca = await createLocalCa({ dir, name: 'schemathesis run', validForMs: 24 * 3600_000 });

// The provider: any token reaches any object; a business account holds every number read so far.
const numbers = new Set<string>();
const provider = createServer({ key: ca.key, cert: ca.cert }, (req, res) => {
  req.resume();
  req.on('end', () => {
    const url = new URL(req.url ?? '/', 'https://provider.invalid');
    const [objectId = '', edge] = url.pathname.replace(/^\/v21\.0\//, '').split('/').map(decodeURIComponent);
    let body: unknown = { error: { message: 'Unsupported request', type: 'GraphMethodException', code: 100 } };
    let status = 400;
    if (req.method === 'GET' && edge === undefined) {
      numbers.add(objectId);
      [status, body] = [200, { id: objectId, display_phone_number: '+1 555 0100', verified_name: 'Schemathesis', quality_rating: 'GREEN' }];
    } else if (req.method === 'GET' && edge === 'phone_numbers') {
      [status, body] = [200, { data: [...numbers].map((id) => ({ id, display_phone_number: '+1 555 0100', verified_name: 'Schemathesis' })) }];
    } else if (req.method === 'GET' && edge === 'message_templates') {
      [status, body] = [200, { data: [], paging: { cursors: { before: '0', after: '0' } } }];
    } else if (req.method === 'POST' && edge === 'messages') {
      [status, body] = [200, { messaging_product: 'whatsapp', messages: [{ id: `wamid.schemathesis.${Date.now()}` }] }];
    }
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
});
await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
const providerUrl = `https://localhost:${(provider.address() as AddressInfo).port}/v21.0`;

const env = {
  ...process.env,
  PORT: '0',
  DATA_DIR: path.join(dir, 'data'),
  LOG_LEVEL: 'warn',
  NODE_EXTRA_CA_CERTS: ca.caFile,
  MESSAGING_API_URL: providerUrl,
  // Only the provider's loopback name: webhook URLs stay under the public-address rule.
  WEBHOOK_ALLOW_HOSTS: 'localhost',
  // One client from one address sends every widget request of the run: per-address and
  // per-visitor limits (an operator's settings) would answer most of them 429.
  WIDGET_NEW_VISITORS_PER_IP_PER_MINUTE: '100000',
  WIDGET_MESSAGES_PER_IP_PER_MINUTE: '100000',
  WIDGET_REQUESTS_PER_IP_PER_MINUTE: '100000',
  WIDGET_POLLS_PER_VISITOR_PER_MINUTE: '100000',
  WIDGET_READS_PER_VISITOR_PER_MINUTE: '100000',
  WIDGET_MESSAGES_PER_VISITOR_PER_MINUTE: '100000',
  WIDGET_MESSAGES_PER_WIDGET_PER_MINUTE: '100000',
  WIDGET_HANDOFFS_PER_VISITOR_PER_MINUTE: '100000',
};
const service = spawn(process.execPath, ['server/main.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
const baseUrl = await new Promise<string>((resolve, reject) => {
  let printed = '';
  service.stdout.on('data', (chunk: Buffer) => {
    printed += chunk.toString('utf8');
    const address = /listening on (https:\/\/\S+)/.exec(printed)?.[1];
    if (address) resolve(`${address.replace(/\/+$/, "").replace(/\/v1$/, "")}/v1`);
  });
  service.once('exit', (code) => reject(new Error(`the service exited (${code}) before listening`)));
});

/** The served document's operations in `count` parts: each part's path-regex option (one part: none). */
async function partsOf(count: number): Promise<string[][]> {
  if (count <= 1) return [[]];
  const { stdout } = await promisify(execFile)('curl', ['-sk', `${baseUrl}/openapi.json`], { maxBuffer: 64 << 20 });
  const document = JSON.parse(stdout) as { paths: Record<string, object> };
  const sizes = new Map<string, number>();
  for (const [pathName, operations] of Object.entries(document.paths)) {
    const segment = pathName.split('/')[1] ?? '';
    const methods = Object.keys(operations).filter((key) => /^(get|put|post|delete|patch)$/.test(key));
    sizes.set(segment, (sizes.get(segment) ?? 0) + methods.length);
  }
  const parts = Array.from({ length: count }, () => ({ size: 0, segments: [] as string[] }));
  for (const [segment, size] of [...sizes].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) {
    const smallest = parts.reduce((least, part) => (part.size < least.size ? part : least));
    smallest.size += size;
    smallest.segments.push(segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  }
  return parts.map((part) => ['--include-path-regex', `^/(${part.segments.join('|')})(/|$)`]);
}

/**
 * Hypothesis's health checks measure its own generation, not the service: where the document
 * states a rule as a pattern beside a format or a length (e-mail addresses, text that is not
 * blank, phone numbers by country), it discards many candidates or takes long to build one,
 * and would then skip the operation's fuzzing altogether. Suppressed, the operation is fuzzed
 * with the values it does build.
 */
const GENERATION_OPTIONS = ['--suppress-health-check=filter_too_much,too_slow'];

/** Runs the tool over one part with an account of its own; its report goes to `logFile` (null: this terminal). */
async function runPart(index: number, only: string[], logFile: string | null): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, ['server/admin/cli.ts', 'account:create', '--email', `schemathesis-${index + 1}@example.com`], { cwd: root, env });
  const { apiKey } = JSON.parse(stdout) as { apiKey: string };
  const log = logFile ? createWriteStream(logFile) : null;
  // The tool keeps its cache beside the document it fetches (mktemp): a directory per part,
  // so that parts run at once do not write the same cache files.
  const partTmp = await mkdtemp(path.join(dir, `part-${index + 1}-`));
  // Its own process group, so that stopping this early stops the tool and all it started.
  const run = spawn('bash', [tool, baseUrl, apiKey, seconds, ...GENERATION_OPTIONS, ...only, ...extra], {
    stdio: log ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    detached: true,
    env: { ...process.env, TMPDIR: partTmp },
  });
  run.stdout?.pipe(log!, { end: false });
  run.stderr?.pipe(log!, { end: false });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.kill(-run.pid!, signal));
  const code = await new Promise<number>((resolve) => run.once('close', (status) => resolve(status ?? 1)));
  if (log) await new Promise((resolve) => log.end(resolve));
  return code;
}

let exitCode = 1;
try {
  const parts = await partsOf(Number(process.env.SCHEMATHESIS_PARTS ?? 1));
  const logDir = parts.length > 1 ? (process.env.SCHEMATHESIS_LOG_DIR ?? (await mkdtemp(path.join(tmpdir(), 'schemathesis-logs-')))) : null;
  console.log(`service ${baseUrl} (pid ${service.pid}), provider ${providerUrl}, data ${dir}`);
  if (logDir) await mkdir(logDir, { recursive: true });
  const codes = await Promise.all(
    parts.map(async (only, index) => {
      const logFile = logDir ? path.join(logDir, `part-${index + 1}.log`) : null;
      if (logFile) console.log(`part ${index + 1} (${only[1]}): ${logFile}`);
      const code = await runPart(index, only, logFile);
      if (logFile) console.log(`part ${index + 1} ended with status ${code}`);
      return code;
    }),
  );
  exitCode = Math.max(...codes);
} finally {
  service.kill('SIGTERM');
  await new Promise((resolve) => service.once('exit', resolve));
  provider.close();
  await rm(dir, { recursive: true, force: true });
}
process.exit(exitCode);
